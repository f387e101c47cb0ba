"""Chunk-index math for one axis of a regular chunk grid.

Why it exists: a selection is projected onto the chunk grid axis by axis, and the engine
iterates the product of these per-axis arrays. Doing the math here, once per axis and
without the GIL, keeps the cost O(chunks touched) (or O(n log n) for point lists) with no
Python object per chunk. The Python-level functions validate; the nogil loops trust.
"""

import operator

import numpy as np

from libc.stdint cimport int64_t, uint64_t
from libc.stdlib cimport free, malloc

cdef int64_t INT64_MAX = 0x7FFFFFFFFFFFFFFF
cdef int RADIX_BITS = 11
cdef Py_ssize_t RADIX = 1 << 11


cdef int64_t _int64(value, str name, int64_t lo) except? -1:
    """Return ``value`` as an int64 within [lo, 2**63-1], else raise a clear error."""
    if type(value) is int and lo <= value <= INT64_MAX:
        return value
    try:
        v = operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}") from None
    if v < lo or v > INT64_MAX:
        raise ValueError(f"{name} must be in [{lo}, 2**63-1], got {v}")
    return v


# ----------------------------------------------------------------------------- slices

cdef void _slice_kernel(int64_t start, int64_t step, int64_t count, int64_t cs,
                        int64_t dim_len, int64_t* chunk, int64_t* cstart, int64_t* ccount,
                        int64_t* ostart, int64_t* complete) noexcept nogil:
    cdef int64_t c, c0, c_last, e, lo, k, k_next, extent, i = 0
    cdef int64_t last = start + (count - 1) * step    # validated: < dim_len
    if step >= cs:                                     # one element per chunk
        e = start
        for k in range(count):
            c = e // cs
            chunk[k] = c
            cstart[k] = e - c * cs
            ccount[k] = 1
            ostart[k] = k
            complete[k] = (dim_len - c * cs) == 1 or cs == 1
            if k + 1 < count:
                e += step
        return
    c0 = start // cs                                   # step < cs: no chunk is skipped
    c_last = last // cs
    k = 0
    for c in range(c0, c_last + 1):
        lo = c * cs                                    # <= last: no overflow
        if c < c_last:                                 # then (c + 1) * cs <= last
            k_next = ((c + 1) * cs - start - 1) // step + 1
        else:
            k_next = count
        extent = dim_len - lo
        if extent > cs:
            extent = cs
        chunk[i] = c
        cstart[i] = start + k * step - lo
        ccount[i] = k_next - k
        ostart[i] = k
        complete[i] = (k_next - k) == extent
        k = k_next
        i += 1


def slice_chunks(start, step, count, chunk_size, dim_len):
    """Project ``start + k*step`` (k < count) onto a regular grid axis; see indexing.pyi."""
    cdef int64_t st = _int64(start, "start", 0), sp = _int64(step, "step", 1)
    cdef int64_t cnt = _int64(count, "count", 0), cs = _int64(chunk_size, "chunk_size", 1)
    cdef int64_t dl = _int64(dim_len, "dim_len", 0), n
    if cnt and (st >= dl or (cnt - 1) > (dl - 1 - st) // sp):
        raise ValueError(f"slice out of bounds: start={st}, step={sp}, count={cnt} "
                         f"selects past dim_len={dl}")
    if cnt == 0:
        n = 0
    elif sp >= cs:
        n = cnt
    else:
        n = (st + (cnt - 1) * sp) // cs - st // cs + 1
    block = np.empty((5, n), dtype=np.int64)            # one allocation, five rows
    cdef int64_t[:, ::1] o = block
    if n:
        with nogil:
            _slice_kernel(st, sp, cnt, cs, dl, &o[0, 0], &o[1, 0], &o[2, 0], &o[3, 0],
                          &o[4, 0])
    return tuple(block)


# ----------------------------------------------------------------------------- points

cdef int _scan(const int64_t* idx, Py_ssize_t n, int64_t cs, int64_t* cmin,
               int64_t* cmax) noexcept nogil:
    """Chunk range of ``idx``; returns -1 if an index is negative, 1 if sorted by chunk."""
    cdef Py_ssize_t i
    cdef int64_t c, prev = -1
    cdef bint ordered = True
    cmin[0] = INT64_MAX
    cmax[0] = 0
    for i in range(n):
        if idx[i] < 0:
            return -1
        c = idx[i] // cs
        if c < prev:
            ordered = False
        prev = c
        if c < cmin[0]:
            cmin[0] = c
        if c > cmax[0]:
            cmax[0] = c
    return 1 if ordered else 0


cdef Py_ssize_t _count_bins(const int64_t* idx, Py_ssize_t n, int64_t cs, int64_t cmin,
                            int64_t* counts, Py_ssize_t nbins) noexcept nogil:
    """Histogram of chunk ids into ``counts`` (zeroed, len nbins); returns bins used."""
    cdef Py_ssize_t i, used = 0
    for i in range(n):
        counts[idx[i] // cs - cmin] += 1
    for i in range(nbins):
        used += counts[i] != 0
    return used


cdef void _counting_sort(const int64_t* idx, Py_ssize_t n, int64_t cs, int64_t cmin,
                         int64_t* counts, Py_ssize_t nbins, int64_t* order,
                         uint64_t* keys) noexcept nogil:
    """Stable scatter of positions by chunk id; ``keys`` gets the sorted (id - cmin)."""
    cdef Py_ssize_t i, b
    cdef int64_t total = 0, t
    for b in range(nbins):
        t = counts[b]
        counts[b] = total
        total += t
    for i in range(n):
        b = idx[i] // cs - cmin
        order[counts[b]] = i
        keys[counts[b]] = b
        counts[b] += 1


cdef int _radix_sort(const int64_t* idx, Py_ssize_t n, int64_t cs, int64_t cmin,
                     int64_t bits, int64_t* order, int64_t* order_tmp, uint64_t* keys,
                     uint64_t* keys_tmp) noexcept nogil:
    """Stable LSD radix sort of positions by (chunk id - cmin); result in order/keys.

    Returns -1 if scratch memory could not be allocated.
    """
    cdef int passes = <int>((bits + RADIX_BITS - 1) // RADIX_BITS)
    cdef Py_ssize_t i, b, p
    cdef int64_t total, t
    cdef int64_t* hist = <int64_t*>malloc(passes * RADIX * sizeof(int64_t))
    cdef int64_t* h
    cdef int64_t* src_o = order
    cdef int64_t* dst_o = order_tmp
    cdef uint64_t* src_k = keys
    cdef uint64_t* dst_k = keys_tmp
    cdef int64_t* swap_o
    cdef uint64_t* swap_k
    cdef uint64_t mask = RADIX - 1, k
    if hist == NULL:
        return -1
    for i in range(passes * RADIX):
        hist[i] = 0
    for i in range(n):                                  # all histograms in one pass
        k = <uint64_t>(idx[i] // cs - cmin)
        keys[i] = k
        order[i] = i
        for p in range(passes):
            hist[p * RADIX + ((k >> (p * RADIX_BITS)) & mask)] += 1
    for p in range(passes):
        h = hist + p * RADIX
        if h[(src_k[0] >> (p * RADIX_BITS)) & mask] == n:
            continue                                    # every key has this digit
        total = 0
        for b in range(RADIX):
            t = h[b]
            h[b] = total
            total += t
        for i in range(n):
            b = (src_k[i] >> (p * RADIX_BITS)) & mask
            dst_o[h[b]] = src_o[i]
            dst_k[h[b]] = src_k[i]
            h[b] += 1
        swap_o = src_o
        src_o = dst_o
        dst_o = swap_o
        swap_k = src_k
        src_k = dst_k
        dst_k = swap_k
    free(hist)
    if src_o != order:                                  # result ended in the scratch pair
        for i in range(n):
            order[i] = src_o[i]
            keys[i] = src_k[i]
    return 0


cdef Py_ssize_t _count_unique(const uint64_t* keys, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t j, u = 1
    for j in range(1, n):
        u += keys[j] != keys[j - 1]
    return u


cdef void _emit(const int64_t* idx, Py_ssize_t n, int64_t cs, int64_t cmin,
                const int64_t* order, const uint64_t* keys, int64_t* chunk,
                int64_t* offsets, int64_t* in_chunk) noexcept nogil:
    """Unique chunks, group offsets and in-chunk indices from the sorted keys."""
    cdef Py_ssize_t j, u = 0
    cdef int64_t c
    for j in range(n):
        c = <int64_t>keys[j] + cmin
        if j == 0 or keys[j] != keys[j - 1]:
            chunk[u] = c
            offsets[u] = j
            u += 1
        in_chunk[j] = idx[order[j]] - c * cs
    offsets[u] = n


cdef Py_ssize_t _sorted_emit(const int64_t* idx, Py_ssize_t n, int64_t cs, int64_t* chunk,
                             int64_t* offsets, int64_t* in_chunk,
                             int64_t* order) noexcept nogil:
    """Already grouped input: identity order; returns the number of unique chunks.

    With ``chunk`` NULL only counts; otherwise fills every output.
    """
    cdef Py_ssize_t j, u = 0
    cdef int64_t c, prev = -1
    for j in range(n):
        c = idx[j] // cs
        if c != prev:
            if chunk != NULL:
                chunk[u] = c
                offsets[u] = j
            u += 1
            prev = c
        if chunk != NULL:
            order[j] = j
            in_chunk[j] = idx[j] - c * cs
    if chunk != NULL:
        offsets[u] = n
    return u


def _as_indices(indices):
    arr = np.asarray(indices)
    if arr.ndim != 1:
        raise ValueError(f"indices must be 1-d, got shape {arr.shape}")
    if arr.dtype.kind not in "iu":
        raise TypeError(f"indices must be an integer array, got dtype {arr.dtype}")
    if arr.dtype == np.uint64 and arr.size and arr.max() > INT64_MAX:
        raise ValueError("indices must be < 2**63")
    return np.ascontiguousarray(arr, dtype=np.int64)


def points_chunks(indices, chunk_size):
    """Group point indices by chunk (stable); see indexing.pyi."""
    arr = _as_indices(indices)
    cdef int64_t cs = _int64(chunk_size, "chunk_size", 1)
    cdef const int64_t[::1] idx = arr
    cdef Py_ssize_t n = idx.shape[0], nbins = 0, nuniq = 0
    cdef int64_t cmin = 0, cmax = 0, span
    cdef int status = 1, rc = 0
    cdef const int64_t* p = &idx[0] if n else NULL
    if n == 0:
        e = np.empty(0, dtype=np.int64)
        return e, e.copy(), np.zeros(1, dtype=np.int64), e.copy()
    with nogil:
        status = _scan(p, n, cs, &cmin, &cmax)
        if status == 1:
            nuniq = _sorted_emit(p, n, cs, NULL, NULL, NULL, NULL)
    if status < 0:
        raise ValueError("indices must be non-negative (normalise negative indices first)")
    order = np.empty(n, dtype=np.int64)
    in_chunk = np.empty(n, dtype=np.int64)
    cdef int64_t[::1] o = order, ic = in_chunk
    cdef int64_t[::1] ch, off
    if status == 1:
        chunk = np.empty(nuniq, dtype=np.int64)
        offsets = np.empty(nuniq + 1, dtype=np.int64)
        ch, off = chunk, offsets
        with nogil:
            _sorted_emit(p, n, cs, &ch[0], &off[0], &ic[0], &o[0])
        return order, chunk, offsets, in_chunk
    span = cmax - cmin                                  # >= 1 here: input not grouped
    keys = np.empty(n, dtype=np.uint64)
    cdef uint64_t[::1] k = keys, k2
    cdef int64_t[::1] counts, o2
    cdef int64_t bits = int(span).bit_length()
    if span < 2 * n + 4096:                             # dense: counting sort
        nbins = span + 1
        counts = np.zeros(nbins, dtype=np.int64)
        with nogil:
            nuniq = _count_bins(p, n, cs, cmin, &counts[0], nbins)
            _counting_sort(p, n, cs, cmin, &counts[0], nbins, &o[0], &k[0])
    else:                                               # sparse: radix sort on chunk ids
        k2 = np.empty(n, dtype=np.uint64)
        o2 = np.empty(n, dtype=np.int64)
        with nogil:
            rc = _radix_sort(p, n, cs, cmin, bits, &o[0], &o2[0], &k[0], &k2[0])
        if rc < 0:
            raise MemoryError("points_chunks: cannot allocate radix histograms")
        with nogil:
            nuniq = _count_unique(&k[0], n)
    chunk = np.empty(nuniq, dtype=np.int64)
    offsets = np.empty(nuniq + 1, dtype=np.int64)
    ch, off = chunk, offsets
    with nogil:
        _emit(p, n, cs, cmin, &o[0], &k[0], &ch[0], &off[0], &ic[0])
    return order, chunk, offsets, in_chunk
