"""A shard's inner chunks placed into an output region in one call (nogil).

Why it exists: a shard of uncompressed inner chunks (the ``bytes`` codec alone, the usual
layout for tiny inner chunks) costs nothing to decode, so reading it is the per-inner-chunk
work around the copy: a shard of a million 4 x 4 inner chunks spent ~15 us of Python on
each. Here the index is walked in C: each stored inner chunk is copied (byte-swapped if
asked) from the shard's bytes to its place in the region, and each missing one is filled.
Inner chunks are C-ordered runs of ``itemsize``-byte elements; a dtype matters only by
its size.
"""

cimport numpy as cnp
from libc.stdint cimport int64_t, uint64_t
from libc.string cimport memcpy, memset

import operator

import numpy as np

cnp.import_array()

cdef enum:
    MAX_DIMS = 32
    NOGIL_BYTES = 16384  # below this, releasing the GIL costs more than it gives

cdef uint64_t EMPTY = 0xFFFFFFFFFFFFFFFFULL


cdef inline void _copy_row(char* d, const char* s, Py_ssize_t n, Py_ssize_t itemsize,
                           Py_ssize_t dstep, Py_ssize_t sstep, int swap) noexcept nogil:
    """``n`` elements, ``sstep`` bytes apart at ``s`` and ``dstep`` bytes apart at ``d``."""
    cdef Py_ssize_t i, u, b
    if swap == 0:
        if dstep == itemsize and sstep == itemsize:
            memcpy(d, s, n * itemsize)
        else:
            for i in range(n):
                memcpy(d + i * dstep, s + i * sstep, itemsize)
        return
    for i in range(n):
        for u in range(itemsize // swap):
            for b in range(swap):
                d[i * dstep + u * swap + b] = s[i * sstep + (u + 1) * swap - 1 - b]


cdef inline void _fill_row(char* d, const char* value, Py_ssize_t n, Py_ssize_t itemsize,
                           Py_ssize_t dstep, int one_byte) noexcept nogil:
    """``n`` elements ``dstep`` bytes apart at ``d`` set to ``value``; ``one_byte``: every
    byte of ``value`` is the same (a memset where the row is contiguous)."""
    cdef Py_ssize_t i
    if one_byte and dstep == itemsize:
        memset(d, value[0], n * itemsize)
        return
    for i in range(n):
        memcpy(d + i * dstep, value, itemsize)


cdef void _place(const unsigned char* shard, const uint64_t* index, int ndim,
                 const Py_ssize_t* chunk, const Py_ssize_t* grid, const Py_ssize_t* step,
                 const int64_t* table, Py_ssize_t columns, const Py_ssize_t* first,
                 const Py_ssize_t* touched, char* dst, const Py_ssize_t* dstrides,
                 Py_ssize_t itemsize, const char* value, int one_byte, int swap) noexcept nogil:
    """Every inner chunk the selection meets copied or filled into its share of ``dst``.
    ``table`` has four rows (chunk index, first selected index in it, how many, where in
    ``dst``) of ``columns`` entries: axis ``d``'s ``touched[d]`` chunks from ``first[d]``.
    Trusts the entry point for everything."""
    cdef Py_ssize_t at[MAX_DIMS]  # position in each axis' list of chunks
    cdef Py_ssize_t istride[MAX_DIMS]  # index entries per step on each axis
    cdef Py_ssize_t cstride[MAX_DIMS]  # bytes per step in a stored inner chunk
    cdef Py_ssize_t sstride[MAX_DIMS]  # bytes per selected step in a stored inner chunk
    cdef Py_ssize_t count[MAX_DIMS]
    cdef Py_ssize_t row[MAX_DIMS]  # position in the chunk's share (all axes but the last)
    cdef Py_ssize_t d, col, entry, skip, total = 1, _k
    cdef uint64_t offset
    cdef char* base
    cdef char* dp
    cdef const char* sp
    cdef int last = ndim - 1
    istride[last] = 1
    cstride[last] = itemsize
    for d in range(last, -1, -1):
        total *= touched[d]
        at[d] = 0
        if d < last:
            istride[d] = istride[d + 1] * grid[d + 1]
            cstride[d] = cstride[d + 1] * chunk[d + 1]
        sstride[d] = cstride[d] * step[d]
    for _k in range(total):
        entry = 0
        skip = 0
        base = dst
        for d in range(ndim):
            col = first[d] + at[d]
            entry += table[col] * istride[d]
            skip += table[columns + col] * cstride[d]
            count[d] = table[2 * columns + col]
            base += table[3 * columns + col] * dstrides[d]
            row[d] = 0
        offset = index[2 * entry]
        # Rows of the chunk's share (its last axis) in C order.
        while True:
            dp = base
            for d in range(last):
                dp += row[d] * dstrides[d]
            if offset == EMPTY:
                _fill_row(dp, value, count[last], itemsize, dstrides[last], one_byte)
            else:
                sp = <const char*>shard + offset + skip
                for d in range(last):
                    sp += row[d] * sstride[d]
                _copy_row(dp, sp, count[last], itemsize, dstrides[last], sstride[last], swap)
            d = last - 1
            while d >= 0:
                row[d] += 1
                if row[d] < count[d]:
                    break
                row[d] = 0
                d -= 1
            if d < 0:
                break
        d = last
        while d >= 0:  # the next inner chunk, C order
            at[d] += 1
            if at[d] < touched[d]:
                break
            at[d] = 0
            d -= 1


def place_chunks(shard, cnp.ndarray index, chunk_shape, cnp.ndarray dst, value, int swap=0,
                 start=None, step=None):
    """Put the selection of the shard's elements ``start[d] + k * step[d]`` (``k <
    dst.shape[d]``; by default the region from the shard's origin) into ``dst``, from
    the inner chunks holding them: ``index`` is the shard's decoded ``(offset, nbytes)``
    pairs (``grid + (2,)``, native ``uint64``), ``chunk_shape`` the inner chunks' shape.
    A stored inner chunk is ``prod(chunk_shape)`` elements in C order, each ``swap``-byte
    unit reversed when ``swap`` is set; an entry whose offset is ``2**64 - 1`` is missing
    and its share of ``dst`` is set to ``value``."""
    cdef const unsigned char[::1] data
    cdef Py_ssize_t chunk[MAX_DIMS]
    cdef Py_ssize_t grid[MAX_DIMS]
    cdef Py_ssize_t steps[MAX_DIMS]
    cdef Py_ssize_t first[MAX_DIMS]
    cdef Py_ssize_t touched[MAX_DIMS]
    cdef Py_ssize_t strides[MAX_DIMS]
    cdef Py_ssize_t itemsize, d, ndim, columns
    cdef int one_byte
    cdef bytes fill
    if dst.dtype.hasobject or index.dtype.hasobject:
        raise TypeError("place_chunks: arrays holding Python objects cannot be copied")
    if isinstance(shard, np.ndarray) and shard.dtype.hasobject:
        raise TypeError("place_chunks: shard must be bytes-like, not an object array")
    try:
        data = memoryview(shard).cast("B")
    except TypeError as e:
        raise TypeError(f"place_chunks: shard must be bytes-like: {e}") from None
    try:
        fill = bytes(memoryview(value).cast("B"))
    except TypeError as e:
        raise TypeError(f"place_chunks: value must be bytes-like: {e}") from None
    ndim = dst.ndim
    itemsize = dst.itemsize
    shape = (<object>dst).shape
    if ndim < 1 or ndim > MAX_DIMS:
        raise ValueError(f"place_chunks: dst must have 1 to {MAX_DIMS} dimensions, got {ndim}")
    if not dst.flags.writeable:
        raise ValueError("place_chunks: dst is read-only")
    if len(fill) != itemsize:
        raise ValueError(
            f"place_chunks: value has {len(fill)} bytes, dst's elements {itemsize}")
    if swap not in (0, 2, 4, 8, 16) or (swap and itemsize % swap):
        raise ValueError(f"place_chunks: swap {swap} is not 0 or a unit size dividing "
                         f"the itemsize {itemsize}")
    sizes = _integers("chunk_shape", chunk_shape, ndim, 1)
    starts = _integers("start", (0,) * ndim if start is None else start, ndim, 0)
    step_of = _integers("step", (1,) * ndim if step is None else step, ndim, 1)
    if index.dtype != np.dtype(np.uint64) or index.ndim != ndim + 1 or index.shape[ndim] != 2:
        raise ValueError(f"place_chunks: index must be native uint64 of shape grid + (2,), "
                         f"got {index.dtype} {(<object>index).shape}")
    if dst.size == 0:
        return
    chunk_items = 1
    columns = 0
    for d in range(ndim):
        chunk[d] = sizes[d]
        grid[d] = index.shape[d]
        steps[d] = step_of[d]
        strides[d] = dst.strides[d]
        chunk_items *= sizes[d]
        if strides[d] == 0 and shape[d] > 1:
            raise ValueError("place_chunks: dst is a broadcast array (a zero stride)")
        extent = grid[d] * sizes[d]
        if extent >= 2**62:
            raise ValueError(f"place_chunks: {grid[d]} inner chunks of {sizes[d]} on axis "
                             f"{d} are too many elements")
        if starts[d] + (shape[d] - 1) * step_of[d] >= extent:
            raise ValueError(
                f"place_chunks: the selection {starts[d]} + k * {step_of[d]}, k < "
                f"{shape[d]}, leaves the shard's {extent} elements on axis {d}")
        first[d] = columns
        columns += min(shape[d], grid[d])  # at most this many chunks met
    # per axis, the chunks the selection meets (as the indexer projects a run)
    table = np.empty((4, columns), dtype=np.int64)
    cdef int64_t* table_ptr = <int64_t*>cnp.PyArray_DATA(table)
    for d in range(ndim):
        touched[d] = _project(starts[d], steps[d], shape[d], chunk[d], table_ptr + first[d],
                              columns)
    axes = [table[:, first[d]:first[d] + touched[d]] for d in range(ndim)]
    chunk_nbytes = chunk_items * itemsize
    index = np.ascontiguousarray(index)
    entries = index[np.ix_(*[a[0] for a in axes])].reshape(-1, 2)
    offsets, nbytes = entries[:, 0], entries[:, 1]
    stored = offsets != EMPTY
    if chunk_nbytes >= 2**63:  # no shard holds one
        bad = stored
    else:
        limit = np.uint64(len(data))
        bad = stored & ((nbytes != np.uint64(chunk_nbytes)) | (offsets > limit)
                        | (nbytes > limit - np.minimum(offsets, limit)))
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        where = np.unravel_index(k, [len(a[0]) for a in axes])
        at = tuple(int(a[0][w]) for a, w in zip(axes, where))
        raise ValueError(
            f"place_chunks: inner chunk {at} (offset {int(offsets[k])}, {int(nbytes[k])} "
            f"bytes) is not {chunk_nbytes} bytes inside the shard of {len(data)} bytes")
    if len(data) and _overlap(dst, data):
        raise ValueError("place_chunks: dst overlaps the shard's memory")
    one_byte = fill.count(fill[:1]) == itemsize
    cdef const unsigned char* shard_ptr = &data[0] if len(data) else NULL
    cdef const uint64_t* index_ptr = <const uint64_t*>cnp.PyArray_DATA(index)
    cdef char* dst_ptr = <char*>cnp.PyArray_DATA(dst)
    cdef const char* value_ptr = fill
    if dst.nbytes >= NOGIL_BYTES:
        with nogil:
            _place(shard_ptr, index_ptr, <int>ndim, chunk, grid, steps, table_ptr, columns,
                   first, touched, dst_ptr, strides, itemsize, value_ptr, one_byte, swap)
    else:
        _place(shard_ptr, index_ptr, <int>ndim, chunk, grid, steps, table_ptr, columns,
               first, touched, dst_ptr, strides, itemsize, value_ptr, one_byte, swap)


cdef Py_ssize_t _project(Py_ssize_t start, Py_ssize_t step, Py_ssize_t count,
                         Py_ssize_t chunk, int64_t* out, Py_ssize_t columns) noexcept:
    """The chunks of size ``chunk`` that ``start + k * step`` (``k < count``) meet, in
    order, written as columns of ``out`` (rows ``columns`` apart: chunk index, first
    selected index in it, how many, the first ``k``); returns how many chunks."""
    cdef Py_ssize_t k = 0, n = 0, index, c, stop
    while k < count:
        index = start + k * step
        c = index // chunk
        stop = ((c + 1) * chunk - start + step - 1) // step  # the first k past chunk c
        if stop > count:
            stop = count
        out[n] = c
        out[columns + n] = index - c * chunk
        out[2 * columns + n] = stop - k
        out[3 * columns + n] = k
        n += 1
        k = stop
    return n


def _integers(name, values, Py_ssize_t ndim, Py_ssize_t least):
    """``values`` as ``ndim`` Python integers of at least ``least`` (and below 2**62)."""
    out = [operator.index(v) for v in values]
    if len(out) != ndim or any(v < least or v >= 2**62 for v in out):
        raise ValueError(f"place_chunks: {name} {tuple(out)} must be {ndim} integers "
                         f">= {least}")
    return out


cdef bint _overlap(cnp.ndarray dst, const unsigned char[::1] data):
    """The bytes ``dst`` spans meet ``data``'s."""
    cdef Py_ssize_t lo = <Py_ssize_t>cnp.PyArray_DATA(dst)
    cdef Py_ssize_t hi = lo
    cdef Py_ssize_t d, step
    for d in range(dst.ndim):
        step = dst.strides[d] * (dst.shape[d] - 1)
        if step < 0:
            lo += step
        else:
            hi += step
    hi += dst.itemsize
    cdef Py_ssize_t start = <Py_ssize_t>&data[0]
    return lo < start + <Py_ssize_t>data.shape[0] and start < hi
