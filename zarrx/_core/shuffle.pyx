"""The gather of a strided chunk fused with Blosc's byte shuffle.

Why it exists: a chunk written from a view of a larger array must be laid out in C order
before compression, and Blosc's byte shuffle then reads that image again to write each
block's bytes grouped by their position in the element. This kernel does both in one pass:
it reads the elements where they lie and writes the shuffled image straight away, so the
compressor can run with its shuffle off (the batch encoder, ``batch.pyx``, does that for
runs of chunks). The image is cut into blocks of ``blocksize`` bytes (the last one
shorter), and each block is shuffled on its own, as c-blosc 1 does: byte ``j`` of element
``i`` of a block of ``m`` elements goes to offset ``j * m + i`` of the block. Elements are
opaque runs of ``itemsize`` bytes (the shuffle's type size).
"""

cimport numpy as cnp
from libc.stdint cimport uint8_t


cdef extern from *:
    """
    #include <string.h>
    #if defined(__SSE2__) || defined(_M_X64) || defined(__x86_64__)
    #include <emmintrin.h>
    #define ZX_HAVE_SSE2 1
    #else
    #define ZX_HAVE_SSE2 0
    #endif

    /* Scatter n elements of T bytes (the first at s, the next ss bytes on) into T byte
       streams: byte j of element k goes to out[j][k]. */
    static void zx_scatter_any(const char* s, Py_ssize_t ss, Py_ssize_t n, int T,
                               uint8_t* const* out) {
        for (Py_ssize_t k = 0; k < n; k++) {
            const uint8_t* p = (const uint8_t*)(s + k * ss);
            for (int j = 0; j < T; j++) out[j][k] = p[j];
        }
    }

    #if ZX_HAVE_SSE2
    /* The same for contiguous elements of T = 2, 4, 8 or 16 bytes, 16 elements at a time.
       The 16 elements fill T registers; a byte's index in them is (element, byte) in
       binary, element bits high. One round of unpacking register r with register
       r + T/2 (low halves into register 2r, high halves into 2r + 1) rotates that index
       left by one bit, so four rounds rotate the four element bits to the bottom:
       register j then holds byte j of the 16 elements in order. Returns the elements
       done (a multiple of 16); the caller does the rest. */
    static inline Py_ssize_t zx_planes(const int T, const char* s, Py_ssize_t n,
                                       uint8_t* const* out) {
        __m128i a[16], b[16];
        Py_ssize_t g, ng = n / 16;
        for (g = 0; g < ng; g++) {
            const char* p = s + g * 16 * T;
            for (int r = 0; r < T; r++) a[r] = _mm_loadu_si128((const __m128i*)(p + 16 * r));
            for (int round = 0; round < 4; round++) {
                for (int r = 0; r < T / 2; r++) {
                    b[2 * r] = _mm_unpacklo_epi8(a[r], a[r + T / 2]);
                    b[2 * r + 1] = _mm_unpackhi_epi8(a[r], a[r + T / 2]);
                }
                for (int r = 0; r < T; r++) a[r] = b[r];
            }
            for (int j = 0; j < T; j++) _mm_storeu_si128((__m128i*)(out[j] + 16 * g), a[j]);
        }
        return ng * 16;
    }
    static Py_ssize_t zx_planes2(const char* s, Py_ssize_t n, uint8_t* const* o) {
        return zx_planes(2, s, n, o);
    }
    static Py_ssize_t zx_planes4(const char* s, Py_ssize_t n, uint8_t* const* o) {
        return zx_planes(4, s, n, o);
    }
    static Py_ssize_t zx_planes8(const char* s, Py_ssize_t n, uint8_t* const* o) {
        return zx_planes(8, s, n, o);
    }
    static Py_ssize_t zx_planes16(const char* s, Py_ssize_t n, uint8_t* const* o) {
        return zx_planes(16, s, n, o);
    }
    #endif

    /* Ask for the n bytes at p ahead of use (a hint: never faults, even out of bounds). */
    static inline void zx_prefetch(const char* p, Py_ssize_t n) {
    #if defined(__GNUC__)
        for (Py_ssize_t i = 0; i < n; i += 64) __builtin_prefetch(p + i, 0, 3);
        __builtin_prefetch(p + n - 1, 0, 3);
    #else
        (void)p; (void)n;
    #endif
    }

    static int zx_use_sse2 = ZX_HAVE_SSE2;
    static int zx_set_sse2(int on) {  /* for tests: returns whether SSE2 is now used */
        zx_use_sse2 = ZX_HAVE_SSE2 && on;
        return zx_use_sse2;
    }

    /* n elements, T bytes each, into the streams out[0..T) (out[j]: where byte j of the
       first element goes). */
    static void zx_scatter(const char* s, Py_ssize_t ss, Py_ssize_t n, int T,
                           uint8_t** out) {
        Py_ssize_t done = 0;
    #if ZX_HAVE_SSE2
        if (zx_use_sse2 && ss == T && n >= 16) {
            if (T == 2) done = zx_planes2(s, n, out);
            else if (T == 4) done = zx_planes4(s, n, out);
            else if (T == 8) done = zx_planes8(s, n, out);
            else if (T == 16) done = zx_planes16(s, n, out);
        }
    #endif
        if (done < n) {
            uint8_t* rest[256];
            for (int j = 0; j < T; j++) rest[j] = out[j] + done;
            zx_scatter_any(s + done * ss, ss, n - done, T, rest);
        }
    }
    """
    int zx_set_sse2(int on) noexcept nogil
    void zx_prefetch(const char* p, Py_ssize_t n) noexcept nogil
    void zx_scatter(const char* s, Py_ssize_t ss, Py_ssize_t n, int T,
                    uint8_t** out) noexcept nogil

cdef extern from "numpy/arrayobject.h":
    bint PyDataType_REFCHK(cnp.PyArray_Descr*) noexcept nogil

cnp.import_array()

# MAXDIMS, MAXTYPE and the Gather are declared in shuffle.pxd.
cdef enum:
    AHEAD = 8             # rows read ahead, at least: a view's rows lie apart
    AHEAD_ROWS_BYTES = 2048  # ... and at least this many bytes of rows ahead
    AHEAD_BYTES = 4096    # rows longer than this stream well enough without the hint
    NOGIL_BYTES = 16384   # below this, releasing the GIL costs more than it gives


cdef void _run(Gather* g, const char* s, Py_ssize_t e, Py_ssize_t n) noexcept nogil:
    """Shuffle n elements (C-order numbers e, e+1, ...; the first at s) into place."""
    cdef uint8_t* out[MAXTYPE]
    cdef Py_ssize_t T = g.itemsize, ss = g.strides[g.nd - 1]
    cdef Py_ssize_t blk, i, m, width, j
    cdef uint8_t* base
    while n > 0:
        blk = e // g.per_block
        i = e - blk * g.per_block
        width = g.last if blk == g.nblocks - 1 else g.per_block
        m = width - i
        if m > n:
            m = n
        base = g.d + blk * g.per_block * T + i
        for j in range(T):      # source byte j is image byte j ^ xmask
            out[j] = base + (j ^ g.xmask) * width
        zx_scatter(s, ss, m, <int>T, out)
        s += m * ss
        e += m
        n -= m


cdef struct Cursor:
    Py_ssize_t idx[MAXDIMS]
    const char* s           # the current row's first element
    int done


cdef inline void _next_row(Gather* g, Cursor* c) noexcept nogil:
    """Move ``c`` to the next row of the walk (C order over every axis but the last)."""
    cdef int k = g.nd - 2
    while k >= 0:
        c.idx[k] += 1
        c.s += g.strides[k]
        if c.idx[k] < g.shape[k]:
            return
        c.s -= g.strides[k] * g.shape[k]
        c.idx[k] = 0
        k -= 1
    c.done = 1


cdef void _walk(Gather* g) noexcept nogil:
    cdef Cursor at, ahead
    cdef int k, last = g.nd - 1
    cdef Py_ssize_t e = 0, inner = g.shape[last], row = inner * g.strides[last], n
    cdef Py_ssize_t low = 0
    if row < 0:             # a row with a negative step starts at its highest address
        low, row = row - g.strides[last], g.strides[last] - row + g.itemsize
    else:
        row += g.itemsize - g.strides[last]
    for k in range(last):
        at.idx[k] = 0
    at.s, at.done = g.s, 0
    ahead.s, ahead.done = g.s, 1  # (no hints unless set below)
    if last > 0 and row <= AHEAD_BYTES:
        # A second cursor walks the same rows AHEAD_ROWS_BYTES of rows ahead (at least
        # AHEAD rows), across the ends of the outer axes as the walk does, and asks for
        # each row it reaches: rows of a view lie apart, each a fresh miss, and short rows
        # go by faster than memory answers (a 32³ float32 view of a large array: 63 ms
        # for 256 MiB with a fixed 8 rows ahead along one axis, 38 ms with this).
        ahead = at
        n = max(AHEAD, AHEAD_ROWS_BYTES // row)
        while n > 0 and not ahead.done:
            _next_row(g, &ahead)
            n -= 1
    while True:
        if not ahead.done:
            zx_prefetch(ahead.s + low, row)
            _next_row(g, &ahead)
        _run(g, at.s, e, inner)
        e += inner
        if last == 0:
            return
        _next_row(g, &at)
        if at.done:
            return


cdef void _gather_setup(Gather* g, const char* s, int nd, const Py_ssize_t* shape,
                        const Py_ssize_t* strides, Py_ssize_t itemsize, uint8_t* d,
                        Py_ssize_t blocksize, int swap) noexcept nogil:
    """Fill ``g`` for the gather of the ``nd``-dimensional array at ``s`` (at least one
    element) into the image at ``d``; the arguments were checked by the caller."""
    cdef Py_ssize_t n = 1
    cdef int i
    # Axes in C order: length-1 axes dropped, an axis merged into the next when they
    # step through memory as one.
    g.nd = 0
    for i in range(nd):
        n *= shape[i]
        if shape[i] == 1:
            continue
        if g.nd and g.strides[g.nd - 1] == strides[i] * shape[i]:
            g.shape[g.nd - 1] *= shape[i]
            g.strides[g.nd - 1] = strides[i]
            continue
        g.shape[g.nd] = shape[i]
        g.strides[g.nd] = strides[i]
        g.nd += 1
    if g.nd == 0:
        g.nd, g.shape[0], g.strides[0] = 1, 1, itemsize
    g.s = s
    g.d = d
    g.itemsize = itemsize
    g.per_block = blocksize // itemsize
    if g.per_block > n:
        g.per_block = n
    g.nblocks = (n + g.per_block - 1) // g.per_block
    g.last = n - (g.nblocks - 1) * g.per_block
    g.xmask = swap - 1 if swap else 0


cdef Py_ssize_t _prepare(Gather* g, cnp.ndarray src, dst, Py_ssize_t blocksize, int swap,
                         str name) except -1:
    """Check the arguments of a gather of ``src`` into ``dst`` and fill ``g``; the image's
    size in bytes (0: nothing to do)."""
    cdef Py_ssize_t T = cnp.PyArray_ITEMSIZE(src), n = cnp.PyArray_SIZE(src), nbytes
    cdef Py_ssize_t lo, hi, span, ext
    cdef int nd = cnp.PyArray_NDIM(src), i
    cdef unsigned char[::1] out
    if PyDataType_REFCHK(cnp.PyArray_DESCR(src)):
        raise TypeError(f"{name}: a dtype holding Python objects ({src.dtype}) "
                        "cannot be shuffled as bytes")
    if T < 1 or T > MAXTYPE:
        raise ValueError(f"{name}: itemsize must be 1 to {MAXTYPE}, got {T}")
    try:
        out = dst
    except (TypeError, ValueError, BufferError) as e:
        raise ValueError(f"{name}: dst must be a writable C-contiguous byte "
                         f"buffer ({e})") from None
    nbytes = n * T
    if out.shape[0] != nbytes:
        raise ValueError(f"{name}: dst has {out.shape[0]} bytes, the image of "
                         f"src has {nbytes}")
    if blocksize < T or blocksize % T:
        raise ValueError(f"{name}: blocksize must be a positive multiple of the "
                         f"itemsize {T}, got {blocksize}")
    if swap not in (0, 2, 4, 8, 16) or (swap and T % swap):
        raise ValueError(f"{name}: swap must be 0, 2, 4, 8 or 16 and divide the "
                         f"itemsize {T}, got {swap}")
    if n == 0:
        return 0
    # The source's memory must not be dst's (the image is written while src is read).
    lo = hi = <Py_ssize_t>cnp.PyArray_DATA(src)
    for i in range(nd):
        span = (cnp.PyArray_DIMS(src)[i] - 1) * cnp.PyArray_STRIDES(src)[i]
        if span < 0:
            lo += span
        else:
            hi += span
    hi += T
    ext = <Py_ssize_t>&out[0]
    if lo < ext + nbytes and ext < hi:
        raise ValueError(f"{name}: src and dst overlap")
    _gather_setup(g, <const char*>cnp.PyArray_DATA(src), nd,
                  <const Py_ssize_t*>cnp.PyArray_DIMS(src),
                  <const Py_ssize_t*>cnp.PyArray_STRIDES(src), T, &out[0], blocksize, swap)
    return nbytes


def shuffle_strided(cnp.ndarray src not None, dst, Py_ssize_t blocksize, int swap=0):
    """Write the byte-shuffled C-order image of src into dst; see shuffle.pyi."""
    cdef Gather g
    cdef Py_ssize_t nbytes = _prepare(&g, src, dst, blocksize, swap, "shuffle_strided")
    cdef unsigned char[::1] _held = dst  # dst cannot be resized during the walk
    if nbytes == 0:
        return
    if nbytes < NOGIL_BYTES:
        _walk(&g)
    else:
        with nogil:
            _walk(&g)


def _use_sse2(bint on):
    """Testing hook: use the SSE2 loops if on and available; returns whether used."""
    return bool(zx_set_sse2(on))
