"""Many chunks decoded and placed, or laid out and encoded, in one call without the GIL.

Why it exists: a shard of 65 536 small inner chunks spent ~20 µs of Python on each (a
codec call, a view, a copy, an error check); the decoding itself is a fraction of that.
Here a whole batch runs in C: each chunk's stored bytes go through the chain's
bytes→bytes steps (C functions of the native step ABI, ``steps.pxd``; the built-in ones are
in ``steps.pyx``, a plugin may give its own), and the decoded image (C order, the stored
dtype) is copied into its place in the output with the strided walk of ``assemble.pyx``
(byte-swapped as asked); a chunk whose whole image lands C-contiguous in the output is
decoded straight into it. Encoding is the reverse: each chunk (any strides) is laid out
as its image (gathered, byte-swapped, or gathered and byte-shuffled for Blosc by
``shuffle.pyx``'s walk) and run through the steps into a ``bytes`` object made for it.
Elements are opaque runs of ``itemsize`` bytes.
"""

cimport numpy as cnp
from cpython.buffer cimport PyBUF_SIMPLE, PyBuffer_Release, PyObject_GetBuffer
from cpython.bytes cimport PyBytes_AS_STRING
from cpython.object cimport PyObject
from cpython.ref cimport Py_XDECREF
from libc.stdint cimport int64_t, uint8_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcpy

import numpy as np

from .assemble cimport Walk, _copy_walk, _fill_walk, _normalize
from .shuffle cimport Gather, _gather_setup, _walk
from .steps cimport STEP_DECLINED, step_decode_t, step_encode_t, step_release_t

cdef extern from "Python.h":
    PyObject* PyBytes_FromStringAndSize(const char* v, Py_ssize_t n) except NULL
    int _PyBytes_Resize(PyObject** b, Py_ssize_t n) except -1

cdef extern from "numpy/arrayobject.h":
    bint PyDataType_REFCHK(cnp.PyArray_Descr*) noexcept nogil

cnp.import_array()

cdef enum:
    MAX_DIMS = 32
    MAX_STEPS = 8
    MAX_TYPE = 255        # the largest type size a Blosc 1 header records (the shuffle's)


cdef struct Steps:
    int count
    void* run[MAX_STEPS]             # step_decode_t or step_encode_t
    const void* context[MAX_STEPS]
    step_release_t release[MAX_STEPS]
    Py_ssize_t capacity[MAX_STEPS]
    void* state[MAX_STEPS]


cdef struct Failure:
    Py_ssize_t chunk                 # -1: none
    Py_ssize_t step                  # the step that failed; -1: the decoded size
    Py_ssize_t code                  # its code, or the size decoded


cdef int _steps(Steps* s, runs, contexts, releases, capacities, str name) except -1:
    """Fill ``s`` from the per-step sequences (chain order)."""
    cdef Py_ssize_t k, count = len(runs)
    if count > MAX_STEPS or not len(contexts) == len(releases) == len(capacities) == count:
        raise ValueError(f"{name}: at most {MAX_STEPS} steps, each with a function, a "
                         f"context, a release and a capacity")
    s.count = <int>count
    for k in range(count):
        if not 0 < runs[k] < 2**64 or not 0 <= contexts[k] < 2**64:
            raise ValueError(f"{name}: step {k} has no function")
        if not 0 <= releases[k] < 2**64 or not 0 <= capacities[k] < 2**62:
            raise ValueError(f"{name}: step {k}: bad release or capacity")
        s.run[k] = <void*><size_t>runs[k]
        s.context[k] = <const void*><size_t>contexts[k]
        s.release[k] = <step_release_t><size_t>releases[k]
        s.capacity[k] = capacities[k]
        s.state[k] = NULL
    return 0


cdef void _release(Steps* s) noexcept nogil:
    cdef int k
    for k in range(s.count):
        if s.state[k] != NULL and s.release[k] != NULL:
            s.release[k](s.context[k], s.state[k])
        s.state[k] = NULL


cdef Py_ssize_t _largest(Steps* s, int first, int stop) noexcept:
    cdef Py_ssize_t most = 0
    cdef int k
    for k in range(first, stop):
        if s.capacity[k] > most:
            most = s.capacity[k]
    return most


cdef const int64_t* _table(name, values, Py_ssize_t n, Py_ssize_t columns, list keep) except NULL:
    """``values`` as a C-contiguous int64 array of n rows (of ``columns``; 0: 1-d)."""
    array = np.asarray(values)
    if array.dtype.kind not in "iu":
        raise TypeError(f"decode_place: {name} must be an integer array, got {array.dtype}")
    array = np.ascontiguousarray(array, dtype=np.int64)
    shape = (n,) if columns == 0 else (n, int(columns))
    if array.shape != shape:
        raise ValueError(f"decode_place: {name} has shape {array.shape}, expected {shape}")
    keep.append(array)
    return <const int64_t*>cnp.PyArray_DATA(<cnp.ndarray>array)


# -- decoding -----------------------------------------------------------------------------

cdef struct Placing:
    Py_ssize_t n
    int ndim
    Py_ssize_t itemsize
    Py_ssize_t image                 # bytes of a chunk's decoded image
    const int64_t* which
    const int64_t* offsets
    const int64_t* sizes
    const int64_t* starts
    const int64_t* steps
    const int64_t* counts
    const int64_t* outs
    const unsigned char** sources
    char* out
    Py_ssize_t ostrides[MAX_DIMS]
    Py_ssize_t chunk[MAX_DIMS]
    Py_ssize_t cstrides[MAX_DIMS]    # bytes per step of an axis in the image
    const char* fill
    int swap
    bint stream
    bint direct                      # a whole chunk lands C-contiguous in the stored order
    unsigned char* image_buffer
    unsigned char* between[2]


cdef void _place_all(Placing* p, Steps* s, Failure* f) noexcept nogil:
    cdef Py_ssize_t i, d, at, got, m
    cdef int k, held, other
    cdef bint whole, empty
    cdef char* base
    cdef const unsigned char* src
    cdef const unsigned char* result
    cdef unsigned char* dst
    cdef Py_ssize_t room
    cdef Walk w
    for i in range(p.n):
        at = i * p.ndim
        whole = p.direct
        empty = False
        base = p.out
        for d in range(p.ndim):
            empty = empty or p.counts[at + d] == 0
            base += p.outs[at + d] * p.ostrides[d]
            whole = whole and (p.starts[at + d] == 0 and p.counts[at + d] == p.chunk[d])
        if empty:
            continue  # nothing selected
        w.nd = p.ndim
        w.d = base
        for d in range(p.ndim):
            w.shape[d] = p.counts[at + d]
            w.ds[d] = p.ostrides[d]
        if p.sizes[i] < 0:  # absent: the fill value
            for d in range(p.ndim):
                w.ss[d] = 0
            w.s = base
            _normalize(&w, p.itemsize)
            _fill_walk(&w, p.fill, p.itemsize)
            continue
        src = p.sources[p.which[i]] + p.offsets[i]
        m = p.sizes[i]
        held = -1  # where src lies: the stored bytes, or one of the two buffers
        for k in range(s.count - 1, -1, -1):
            if k == 0:
                dst = <unsigned char*>base if whole else p.image_buffer
                room = p.image
            else:
                other = 1 if held == 0 else 0
                dst = p.between[other]
                room = s.capacity[k]
            result = NULL
            got = (<step_decode_t>s.run[k])(s.context[k], &s.state[k], src, m, dst, room,
                                            &result)
            if got < 0 or got > room or result == NULL:
                f.chunk, f.step, f.code = i, k, got if got < 0 else -1
                return
            if k > 0 and result == dst:
                held = other
            src = result
            m = got
        if m != p.image:
            f.chunk, f.step, f.code = i, -1, m
            return
        if whole and src == <const unsigned char*>base:
            continue  # decoded in place
        w.s = <const char*>src
        for d in range(p.ndim):
            w.s += p.starts[at + d] * p.cstrides[d]
            w.ss[d] = p.steps[at + d] * p.cstrides[d]
        _normalize(&w, p.itemsize)
        _copy_walk(&w, p.itemsize, p.swap, p.stream)


def decode_place(list sources not None, which, offsets, sizes, starts, steps, counts, outs,
                 cnp.ndarray out not None, fill, chunk_shape, int swap, bint stream,
                 decoders, contexts, releases, capacities):
    """Decode each chunk and put its selection into out; see batch.pyi."""
    cdef Placing p
    cdef Steps s
    cdef Failure f
    cdef Py_ssize_t i, d, n, nsrc = len(sources), c, start, step, o, lo, hi, span
    cdef Py_buffer* views = NULL
    cdef Py_ssize_t* lengths = NULL
    cdef Py_ssize_t held = 0, between = 0, stride
    cdef unsigned char* scratch = NULL
    cdef bytes pattern
    keep = []
    if PyDataType_REFCHK(cnp.PyArray_DESCR(out)):
        raise TypeError(f"decode_place: out's dtype {out.dtype} holds Python objects")
    if not out.flags.writeable:
        raise ValueError("decode_place: out is read-only")
    p.ndim = out.ndim
    p.itemsize = out.itemsize
    shape = tuple(int(x) for x in chunk_shape)
    if not 1 <= p.ndim <= MAX_DIMS or len(shape) != p.ndim:
        raise ValueError(f"decode_place: out has {p.ndim} dimensions and the chunks "
                         f"{len(shape)}; 1 to {MAX_DIMS} are supported")
    if swap not in (0, 2, 4, 8, 16) or (swap and p.itemsize % swap):
        raise ValueError(f"decode_place: swap must be 0, 2, 4, 8 or 16 and divide the "
                         f"itemsize {p.itemsize}, got {swap}")
    pattern = bytes(memoryview(fill).cast("B"))
    if len(pattern) != p.itemsize:
        raise ValueError(f"decode_place: fill has {len(pattern)} bytes, out's elements "
                         f"{p.itemsize}")
    p.image = p.itemsize
    stride = p.itemsize
    p.direct = swap == 0
    for d in range(p.ndim - 1, -1, -1):
        if not 1 <= shape[d] < 2**31:
            raise ValueError(f"decode_place: chunk_shape {shape} must be positive")
        p.chunk[d] = shape[d]
        p.cstrides[d] = stride
        p.ostrides[d] = out.strides[d]
        if p.ostrides[d] == 0 and out.shape[d] > 1 and out.size:
            raise ValueError("decode_place: out is a broadcast array (a zero stride)")
        if shape[d] > 1 and p.ostrides[d] != stride:
            p.direct = False
        stride *= shape[d]
        if stride >= 2**62:
            raise ValueError(f"decode_place: chunks of {shape} are too large")
    p.image = stride
    _steps(&s, decoders, contexts, releases, capacities, "decode_place")
    if s.count and s.capacity[0] != p.image:
        raise ValueError(f"decode_place: the first step must decode to the image's "
                         f"{p.image} bytes, not {s.capacity[0]}")
    n = len(np.asarray(sizes).reshape(-1))
    p.n = n
    p.which = _table("which", which, n, 0, keep)
    p.offsets = _table("offsets", offsets, n, 0, keep)
    p.sizes = _table("sizes", sizes, n, 0, keep)
    p.starts = _table("starts", starts, n, p.ndim, keep)
    p.steps = _table("steps", steps, n, p.ndim, keep)
    p.counts = _table("counts", counts, n, p.ndim, keep)
    p.outs = _table("outs", outs, n, p.ndim, keep)
    # The output's extent, which no source may meet.
    lo = hi = <Py_ssize_t>cnp.PyArray_DATA(out)
    for d in range(p.ndim):
        span = (out.shape[d] - 1) * out.strides[d]
        if span < 0:
            lo += span
        else:
            hi += span
    hi += p.itemsize
    views = <Py_buffer*>calloc(nsrc + 1, sizeof(Py_buffer))
    lengths = <Py_ssize_t*>calloc(nsrc + 1, sizeof(Py_ssize_t))
    p.sources = <const unsigned char**>calloc(nsrc + 1, sizeof(unsigned char*))
    try:
        if views == NULL or lengths == NULL or p.sources == NULL:
            raise MemoryError("decode_place: no memory for the sources")
        for i in range(nsrc):
            try:
                PyObject_GetBuffer(sources[i], &views[i], PyBUF_SIMPLE)
            except (BufferError, TypeError, ValueError) as e:
                raise TypeError(f"decode_place: source {i} must be a contiguous bytes-like "
                                f"object ({e})") from None
            held = i + 1
            p.sources[i] = <const unsigned char*>views[i].buf
            lengths[i] = views[i].len
            start = <Py_ssize_t>views[i].buf
            if lengths[i] and start < hi and lo < start + lengths[i] and out.size:
                raise ValueError(f"decode_place: out overlaps source {i}")
        for i in range(n):
            if p.sizes[i] >= 0:
                c = p.which[i]
                if not 0 <= c < nsrc:
                    raise ValueError(f"decode_place: chunk {i} names source {c} of {nsrc}")
                if not 0 <= p.offsets[i] <= lengths[c] or p.sizes[i] > lengths[c] - p.offsets[i]:
                    raise ValueError(
                        f"decode_place: chunk {i} ({p.sizes[i]} bytes at {p.offsets[i]}) "
                        f"lies outside source {c} of {lengths[c]} bytes")
            for d in range(p.ndim):
                c = p.counts[i * p.ndim + d]
                start = p.starts[i * p.ndim + d]
                step = p.steps[i * p.ndim + d]
                o = p.outs[i * p.ndim + d]
                if c < 0:
                    raise ValueError(f"decode_place: chunk {i} has a negative count")
                if c == 0:
                    continue
                if (start < 0 or step < 1 or c > p.chunk[d] or (c > 1 and step >= p.chunk[d])
                        or start + (c - 1) * step >= p.chunk[d]):
                    raise ValueError(
                        f"decode_place: chunk {i} selects {start} + k * {step}, k < {c}, "
                        f"outside its {p.chunk[d]} elements on axis {d}")
                if o < 0 or c > out.shape[d] - o:
                    raise ValueError(
                        f"decode_place: chunk {i} writes {c} elements from {o} outside "
                        f"out's {out.shape[d]} on axis {d}")
        # One scratch block: the image, and two buffers for the steps between.
        if s.count > 1:
            between = _largest(&s, 1, s.count)
        if s.count:
            scratch = <unsigned char*>malloc(p.image + 2 * between + 1)
            if scratch == NULL:
                raise MemoryError(f"decode_place: no memory for {p.image} bytes of scratch")
        p.image_buffer = scratch
        p.between[0] = scratch + p.image if scratch != NULL else NULL
        p.between[1] = scratch + p.image + between if scratch != NULL else NULL
        p.out = <char*>cnp.PyArray_DATA(out)
        p.fill = pattern
        p.swap = swap
        p.stream = stream
        f.chunk, f.step, f.code = -1, -1, 0
        with nogil:
            _place_all(&p, &s, &f)
            _release(&s)
        if f.chunk >= 0:
            return (f.chunk, f.step, f.code)
        return None
    finally:
        for i in range(held):
            PyBuffer_Release(&views[i])
        free(views)
        free(lengths)
        free(p.sources)
        free(scratch)


# -- encoding -----------------------------------------------------------------------------

cdef struct Laying:
    Py_ssize_t n
    int ndim
    Py_ssize_t itemsize
    Py_ssize_t image
    Py_ssize_t shape[MAX_DIMS]
    Py_ssize_t cstrides[MAX_DIMS]    # the image's strides
    const char** data                # per chunk: its first element
    const Py_ssize_t* strides        # per chunk: ndim strides
    const uint8_t* plain             # per chunk: 1 when it already is the image
    int swap
    Py_ssize_t shuffle               # block size of a fused byte shuffle (0: none)
    unsigned char* image_buffer
    unsigned char* between[2]
    unsigned char** results          # per chunk: its bytes object's buffer
    Py_ssize_t* sizes                # per chunk: its encoded size (-1: declined)


cdef void _lay_out(Laying* p, Py_ssize_t i, unsigned char* into) noexcept nogil:
    """Chunk i's image (byte-shuffled in blocks when asked) written at ``into``."""
    cdef Walk w
    cdef Gather g
    cdef int d
    if p.shuffle:
        _gather_setup(&g, p.data[i], p.ndim, p.shape, p.strides + i * p.ndim, p.itemsize,
                      into, p.shuffle, p.swap)
        _walk(&g)
        return
    w.nd = p.ndim
    w.d = <char*>into
    w.s = p.data[i]
    for d in range(p.ndim):
        w.shape[d] = p.shape[d]
        w.ds[d] = p.cstrides[d]
        w.ss[d] = p.strides[i * p.ndim + d]
    _normalize(&w, p.itemsize)
    _copy_walk(&w, p.itemsize, p.swap, False)


cdef void _encode_all(Laying* p, Steps* s, Failure* f) noexcept nogil:
    cdef Py_ssize_t i, got, m
    cdef int k, held
    cdef const unsigned char* src
    cdef unsigned char* dst
    for i in range(p.n):
        if p.data[i] == NULL:
            continue  # not one of these chunks
        if s.count == 0:
            if p.plain[i]:
                memcpy(p.results[i], p.data[i], p.image)
            else:
                _lay_out(p, i, p.results[i])
            p.sizes[i] = p.image
            continue
        if p.plain[i]:
            src = <const unsigned char*>p.data[i]
        else:
            _lay_out(p, i, p.image_buffer)
            src = p.image_buffer
        m = p.image
        held = -1
        for k in range(s.count):
            if k == s.count - 1:
                dst = p.results[i]
            else:
                held = 1 if held == 0 else 0
                dst = p.between[held]
            got = (<step_encode_t>s.run[k])(s.context[k], &s.state[k], src, m, dst,
                                            s.capacity[k])
            if got == STEP_DECLINED:
                break
            if got < 0 or got > s.capacity[k]:
                f.chunk, f.step, f.code = i, k, got if got < 0 else -1
                return
            src = dst
            m = got
        else:
            p.sizes[i] = m


def encode_chunks(list chunks not None, dtype, shape, int swap, Py_ssize_t shuffle, encoders,
                  contexts, releases, capacities):
    """Lay out and encode each chunk into a new bytes object; see batch.pyi."""
    cdef Laying p
    cdef Steps s
    cdef Failure f
    cdef Py_ssize_t i, d, n = len(chunks), stride, last_room
    cdef cnp.ndarray chunk
    cdef cnp.dtype descr = np.dtype(dtype)
    cdef PyObject** objects = NULL
    cdef unsigned char* scratch = NULL
    cdef Py_ssize_t between = 0
    cdef bint same
    _steps(&s, encoders, contexts, releases, capacities, "encode_chunks")
    out = [None] * n
    dims = tuple(int(x) for x in shape)
    p.n = n
    p.ndim = len(dims)
    p.itemsize = descr.itemsize
    if descr.hasobject:
        raise TypeError(f"encode_chunks: the dtype {descr} holds Python objects")
    if not 1 <= p.ndim <= MAX_DIMS:
        raise ValueError(f"encode_chunks: chunks must have 1 to {MAX_DIMS} dimensions")
    if swap not in (0, 2, 4, 8, 16) or (swap and p.itemsize % swap):
        raise ValueError(f"encode_chunks: swap must be 0, 2, 4, 8 or 16 and divide the "
                         f"itemsize {p.itemsize}, got {swap}")
    if shuffle and (s.count == 0 or p.itemsize > MAX_TYPE or shuffle < p.itemsize
                    or shuffle % p.itemsize):
        raise ValueError(f"encode_chunks: a shuffle block must be a multiple of the "
                         f"itemsize {p.itemsize}, before a step; got {shuffle}")
    stride = p.itemsize
    for d in range(p.ndim - 1, -1, -1):
        p.shape[d] = dims[d]
        p.cstrides[d] = stride
        stride *= dims[d]
        if dims[d] < 1 or stride >= 2**62:
            raise ValueError(f"encode_chunks: chunks of shape {dims} cannot be encoded")
    p.image = stride
    if n == 0:
        return out, 0, -1, 0
    p.swap = swap
    p.shuffle = shuffle
    last_room = s.capacity[s.count - 1] if s.count else p.image
    if s.count > 1:
        between = _largest(&s, 0, s.count - 1)
    # Per chunk: where it lies (NULL: not one of these chunks, left to the caller), its
    # strides, whether it is its image already; where its result goes and how long it is.
    strides = np.empty((n, p.ndim), dtype=np.intp)
    data = np.zeros(n, dtype=np.uintp)
    plain = np.empty(n, dtype=np.uint8)
    sizes = np.full(n, -1, dtype=np.intp)
    results = np.empty(n, dtype=np.uintp)
    p.data = <const char**>cnp.PyArray_DATA(data)
    p.strides = <const Py_ssize_t*>cnp.PyArray_DATA(strides)
    p.plain = <const uint8_t*>cnp.PyArray_DATA(plain)
    p.sizes = <Py_ssize_t*>cnp.PyArray_DATA(sizes)
    p.results = <unsigned char**>cnp.PyArray_DATA(results)
    cdef Py_ssize_t* stride_of = <Py_ssize_t*>p.strides
    cdef uint8_t* plain_of = <uint8_t*>p.plain
    for i in range(n):
        if not isinstance(chunks[i], np.ndarray):
            continue
        chunk = chunks[i]
        kind = <object>cnp.PyArray_DESCR(chunk)
        same = chunk.ndim == p.ndim and (kind is descr or cnp.PyArray_EquivTypes(kind, descr))
        for d in range(p.ndim if same else 0):
            same = same and cnp.PyArray_DIMS(chunk)[d] == p.shape[d]
        if not same:
            continue
        p.data[i] = <const char*>cnp.PyArray_DATA(chunk)
        for d in range(p.ndim):
            stride_of[i * p.ndim + d] = cnp.PyArray_STRIDES(chunk)[d]
        plain_of[i] = swap == 0 and shuffle == 0 and cnp.PyArray_IS_C_CONTIGUOUS(chunk)
    objects = <PyObject**>calloc(n, sizeof(PyObject*))
    try:
        if objects == NULL:
            raise MemoryError("encode_chunks: no memory for its bookkeeping")
        if s.count:
            scratch = <unsigned char*>malloc(p.image + 2 * between + 1)
            if scratch == NULL:
                raise MemoryError(f"encode_chunks: no memory for {p.image} bytes of scratch")
            p.image_buffer = scratch
            p.between[0] = scratch + p.image
            p.between[1] = scratch + p.image + between
        for i in range(n):  # the results: new objects nobody sees before the call returns
            if p.data[i] != NULL:
                objects[i] = PyBytes_FromStringAndSize(NULL, last_room)
                p.results[i] = <unsigned char*>PyBytes_AS_STRING(<object>objects[i])
        f.chunk, f.step, f.code = -1, -1, 0
        with nogil:  # (the chunks are held by the list, their arrays by the chunks)
            _encode_all(&p, &s, &f)
            _release(&s)
        stop = n if f.chunk < 0 else f.chunk
        for i in range(stop):
            if p.sizes[i] < 0:
                continue
            if p.sizes[i] < last_room:
                _PyBytes_Resize(&objects[i], p.sizes[i])
            out[i] = <object>objects[i]
        return out, stop, f.step, f.code
    finally:
        if objects != NULL:
            for i in range(n):
                Py_XDECREF(objects[i])  # (out holds its own references)
        free(objects)
        free(scratch)
