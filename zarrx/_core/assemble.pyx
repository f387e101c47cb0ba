"""Byte-level assembly kernels: strided copy (with byte swapping), fill, and the fill test.

Why it exists: every read copies decoded chunks into the output and every write does the
reverse; C/F layout conversion and endianness fixes are the same copy. These loops are
the hot path, so they run in C without the GIL. Elements are opaque runs of ``itemsize``
bytes: a dtype never matters here beyond its size (and refusing object references).

Each operand is first reduced to a canonical walk: length-1 axes dropped, the written
operand's strides made positive, axes sorted by its stride and contiguous axes merged, so
a contiguous copy is one memcpy and a transposed copy is a cache-blocked 2-d tile loop.
"""

cimport numpy as cnp
from libc.stdint cimport uint8_t, uint16_t, uint32_t, uint64_t
from libc.string cimport memcmp, memcpy, memset


cdef extern from *:
    """
    #if defined(_MSC_VER)
    #include <stdlib.h>
    #define zx_bswap16(x) _byteswap_ushort(x)
    #define zx_bswap32(x) _byteswap_ulong(x)
    #define zx_bswap64(x) _byteswap_uint64(x)
    #else
    #define zx_bswap16(x) __builtin_bswap16(x)
    #define zx_bswap32(x) __builtin_bswap32(x)
    #define zx_bswap64(x) __builtin_bswap64(x)
    #endif

    /* Byte-swap n contiguous units of 2, 4 or 8 bytes. The plain loop vectorises (the
       compiler emits byte shuffles); on x86 an AVX2 build of it is picked at run time,
       since the baseline (SSE2) has no byte shuffle. Wheels stay -march-generic. */
    #define ZX_SWAP_LOOP(name, T, bswap, attr)                                      \
        attr static void name(char* d, const char* s, Py_ssize_t n) {               \
            for (Py_ssize_t i = 0; i < n; i++) {                                    \
                T v;                                                                \
                memcpy(&v, s + i * (Py_ssize_t)sizeof(T), sizeof(T));              \
                v = bswap(v);                                                       \
                memcpy(d + i * (Py_ssize_t)sizeof(T), &v, sizeof(T));              \
            }                                                                       \
        }
    ZX_SWAP_LOOP(zx_swap2, uint16_t, zx_bswap16, )
    ZX_SWAP_LOOP(zx_swap4, uint32_t, zx_bswap32, )
    ZX_SWAP_LOOP(zx_swap8, uint64_t, zx_bswap64, )
    #if defined(__GNUC__) && defined(__x86_64__) && !defined(__APPLE__)
    #define ZX_AVX2 __attribute__((target("avx2")))
    ZX_SWAP_LOOP(zx_swap2_avx2, uint16_t, zx_bswap16, ZX_AVX2)
    ZX_SWAP_LOOP(zx_swap4_avx2, uint32_t, zx_bswap32, ZX_AVX2)
    ZX_SWAP_LOOP(zx_swap8_avx2, uint64_t, zx_bswap64, ZX_AVX2)
    static int zx_have_avx2 = 0;
    static void zx_cpu_init(void) {
        __builtin_cpu_init();
        zx_have_avx2 = __builtin_cpu_supports("avx2");
    }
    static int zx_set_avx2(int on) {  /* for tests: returns whether AVX2 is now used */
        zx_cpu_init();
        zx_have_avx2 = zx_have_avx2 && on;
        return zx_have_avx2;
    }
    #else
    static const int zx_have_avx2 = 0;
    static void zx_cpu_init(void) {}
    static int zx_set_avx2(int on) { (void)on; return 0; }
    #define zx_swap2_avx2 zx_swap2
    #define zx_swap4_avx2 zx_swap4
    #define zx_swap8_avx2 zx_swap8
    #endif
    /* Streaming (non-temporal) stores: a row copied into memory that is not read again
       soon (a result larger than the caches) is written around the cache, which saves
       reading each destination line from memory before writing it (and the eviction of
       useful lines). Only whole 64-byte lines are streamed; the partial lines at either
       end of the row are plain stores. SSE2, the x86-64 baseline; a plain memcpy
       elsewhere. Visible to other threads after zx_stream_fence(). */
    #if defined(__SSE2__) || defined(_M_X64)
    #include <emmintrin.h>
    static void zx_stream_copy(char* d, const char* s, Py_ssize_t n) {
        Py_ssize_t head = (Py_ssize_t)((64 - ((size_t)d & 63)) & 63);
        if (n - head < 64) { memcpy(d, s, (size_t)n); return; }
        memcpy(d, s, (size_t)head);
        d += head; s += head; n -= head;
        for (; n >= 64; n -= 64, d += 64, s += 64) {
            __m128i a = _mm_loadu_si128((const __m128i*)s);
            __m128i b = _mm_loadu_si128((const __m128i*)(s + 16));
            __m128i c = _mm_loadu_si128((const __m128i*)(s + 32));
            __m128i e = _mm_loadu_si128((const __m128i*)(s + 48));
            _mm_stream_si128((__m128i*)d, a);
            _mm_stream_si128((__m128i*)(d + 16), b);
            _mm_stream_si128((__m128i*)(d + 32), c);
            _mm_stream_si128((__m128i*)(d + 48), e);
        }
        memcpy(d, s, (size_t)n);
    }
    static void zx_stream_fence(void) { _mm_sfence(); }
    #else
    static void zx_stream_copy(char* d, const char* s, Py_ssize_t n) {
        memcpy(d, s, (size_t)n);
    }
    static void zx_stream_fence(void) {}
    #endif
    static void zx_swap_units(char* d, const char* s, Py_ssize_t n, int size) {
        if (size == 2) (zx_have_avx2 ? zx_swap2_avx2 : zx_swap2)(d, s, n);
        else if (size == 4) (zx_have_avx2 ? zx_swap4_avx2 : zx_swap4)(d, s, n);
        else (zx_have_avx2 ? zx_swap8_avx2 : zx_swap8)(d, s, n);
    }
    """
    uint16_t zx_bswap16(uint16_t) noexcept nogil
    uint32_t zx_bswap32(uint32_t) noexcept nogil
    uint64_t zx_bswap64(uint64_t) noexcept nogil
    void zx_cpu_init() noexcept nogil
    int zx_set_avx2(int on) noexcept nogil
    void zx_swap_units(char* d, const char* s, Py_ssize_t n, int size) noexcept nogil
    void zx_stream_copy(char* d, const char* s, Py_ssize_t n) noexcept nogil
    void zx_stream_fence() noexcept nogil

cdef extern from "numpy/arrayobject.h":
    bint PyDataType_REFCHK(cnp.PyArray_Descr*) noexcept nogil

cnp.import_array()
zx_cpu_init()

cdef enum:
    TILE = 64             # elements per side of a transpose tile (at most TILE_BYTES a row)
    TILE_BYTES = 256
    NOGIL_BYTES = 16384   # below this, releasing the GIL costs more than it gives
    STREAM_ROW = 128      # rows shorter than this are copied with plain stores
    STREAM_PIECE = 2048   # bytes gathered at a time for a streamed row of a strided source

ctypedef fused word:
    uint8_t
    uint16_t
    uint32_t
    uint64_t

# MAXDIMS and the Walk (a copy's or fill's operands) are declared in assemble.pxd.


# ---------------------------------------------------------------------- canonical walk

cdef void _setup(Walk* w, cnp.ndarray dst, cnp.ndarray src) noexcept:
    cdef int i
    w.nd = cnp.PyArray_NDIM(dst)
    w.d = <char*>cnp.PyArray_DATA(dst)
    w.s = NULL
    if src is not None:
        w.s = <const char*>cnp.PyArray_DATA(src)
    for i in range(w.nd):
        w.shape[i] = cnp.PyArray_DIMS(dst)[i]
        w.ds[i] = cnp.PyArray_STRIDES(dst)[i]
        w.ss[i] = 0 if src is None else cnp.PyArray_STRIDES(src)[i]


cdef inline Py_ssize_t _abs(Py_ssize_t x) noexcept nogil:
    return -x if x < 0 else x


cdef inline void _swap_axes(Walk* w, int a, int b) noexcept nogil:
    w.shape[a], w.shape[b] = w.shape[b], w.shape[a]
    w.ds[a], w.ds[b] = w.ds[b], w.ds[a]
    w.ss[a], w.ss[b] = w.ss[b], w.ss[a]


cdef void _normalize(Walk* w, Py_ssize_t itemsize) noexcept nogil:
    """Drop length-1 and all-zero-stride axes, make ``ds`` positive, sort, merge."""
    cdef int i, j, k = 0
    cdef Py_ssize_t n
    for i in range(w.nd):
        n = w.shape[i]
        if n == 1 or (w.ds[i] == 0 and w.ss[i] == 0):
            continue
        if w.ds[i] < 0:                     # walk both operands backwards along this axis
            w.d += (n - 1) * w.ds[i]
            w.ds[i] = -w.ds[i]
            if w.ss[i] != 0:
                w.s += (n - 1) * w.ss[i]
                w.ss[i] = -w.ss[i]
        w.shape[k] = n
        w.ds[k] = w.ds[i]
        w.ss[k] = w.ss[i]
        k += 1
    w.nd = k
    for i in range(1, w.nd):                # insertion sort: ds descending, then |ss|
        j = i
        while j > 0 and (w.ds[j] > w.ds[j - 1] or (
                w.ds[j] == w.ds[j - 1] and _abs(w.ss[j]) > _abs(w.ss[j - 1]))):
            _swap_axes(w, j, j - 1)
            j -= 1
    k = 0
    for i in range(1, w.nd):                # merge axis i into the outer axis k
        if w.ds[k] == w.ds[i] * w.shape[i] and w.ss[k] == w.ss[i] * w.shape[i]:
            w.shape[k] *= w.shape[i]
            w.ds[k] = w.ds[i]
            w.ss[k] = w.ss[i]
        else:
            k += 1
            w.shape[k] = w.shape[i]
            w.ds[k] = w.ds[i]
            w.ss[k] = w.ss[i]
    w.nd = k + 1 if w.nd else 0
    if w.nd == 0:                           # a single element
        w.nd = 1
        w.shape[0] = 1
        w.ds[0] = itemsize
        w.ss[0] = itemsize


cdef inline bint _next(Walk* w, int nouter, Py_ssize_t* idx, char** d,
                       const char** s) noexcept nogil:
    """Advance the outer-axis counter; False when the walk is done."""
    cdef int k = nouter - 1
    while k >= 0:
        idx[k] += 1
        d[0] += w.ds[k]
        s[0] += w.ss[k]
        if idx[k] < w.shape[k]:
            return True
        d[0] -= w.ds[k] * w.shape[k]
        s[0] -= w.ss[k] * w.shape[k]
        idx[k] = 0
        k -= 1
    return False


# ---------------------------------------------------------------------- element rows

cdef inline word _bswap(word v) noexcept nogil:
    if word is uint16_t:
        return zx_bswap16(v)
    elif word is uint32_t:
        return zx_bswap32(v)
    elif word is uint64_t:
        return zx_bswap64(v)
    else:
        return v


cdef void _row(word* tag, char* d, Py_ssize_t ds, const char* s, Py_ssize_t ss,
               Py_ssize_t n, bint swap) noexcept nogil:
    """Copy n words; fixed-size memcpy compiles to plain (unaligned-safe) moves."""
    cdef word v
    cdef Py_ssize_t _
    if swap:
        for _ in range(n):
            memcpy(&v, s, sizeof(word))
            v = _bswap(v)
            memcpy(d, &v, sizeof(word))
            s += ss
            d += ds
    else:
        for _ in range(n):
            memcpy(&v, s, sizeof(word))
            memcpy(d, &v, sizeof(word))
            s += ss
            d += ds


cdef void _row_pair(word* tag, char* d, Py_ssize_t ds, const char* s, Py_ssize_t ss,
                    Py_ssize_t n, Py_ssize_t itemsize) noexcept nogil:
    """Copy n elements of sizeof(word) < itemsize <= 2 * sizeof(word) bytes as two words
    that overlap in the middle (src and dst never overlap here)."""
    cdef word a, b
    cdef Py_ssize_t _, off = itemsize - sizeof(word)
    for _ in range(n):
        memcpy(&a, s, sizeof(word))
        memcpy(&b, s + off, sizeof(word))
        memcpy(d, &a, sizeof(word))
        memcpy(d + off, &b, sizeof(word))
        s += ss
        d += ds


cdef void _row16(char* d, Py_ssize_t ds, const char* s, Py_ssize_t ss, Py_ssize_t n,
                 int swap) noexcept nogil:
    """16-byte elements; swap 0, 8 (e.g. complex128) or 16 (the whole element)."""
    cdef uint64_t a, b
    cdef Py_ssize_t _
    for _ in range(n):
        memcpy(&a, s, 8)
        memcpy(&b, s + 8, 8)
        if swap == 8:
            a = zx_bswap64(a)
            b = zx_bswap64(b)
        elif swap == 16:
            a, b = zx_bswap64(b), zx_bswap64(a)
        memcpy(d, &a, 8)
        memcpy(d + 8, &b, 8)
        s += ss
        d += ds


cdef void _row_c8(char* d, Py_ssize_t ds, const char* s, Py_ssize_t ss,
                  Py_ssize_t n) noexcept nogil:
    """8-byte elements made of two 4-byte units (complex64): swap each unit."""
    cdef uint64_t v
    cdef Py_ssize_t _
    for _ in range(n):
        memcpy(&v, s, 8)
        v = zx_bswap64(v)
        v = (v >> 32) | (v << 32)
        memcpy(d, &v, 8)
        s += ss
        d += ds


cdef void _row_units(char* d, Py_ssize_t ds, const char* s, Py_ssize_t ss, Py_ssize_t n,
                     Py_ssize_t itemsize, int swap) noexcept nogil:
    """Any itemsize: plain memcpy per element, or swap every ``swap``-byte unit."""
    cdef Py_ssize_t _, u
    cdef uint8_t tmp[16]
    for _ in range(n):
        if swap == 0:
            memcpy(d, s, itemsize)
        else:
            for u in range(itemsize // swap):
                memcpy(tmp, s + u * swap, swap)   # read the whole unit first: in-place safe
                if swap == 2:
                    _row(<uint16_t*>NULL, d + u * swap, 0, <const char*>tmp, 0, 1, True)
                elif swap == 4:
                    _row(<uint32_t*>NULL, d + u * swap, 0, <const char*>tmp, 0, 1, True)
                elif swap == 8:
                    _row(<uint64_t*>NULL, d + u * swap, 0, <const char*>tmp, 0, 1, True)
                else:
                    _row16(d + u * swap, 0, <const char*>tmp, 0, 1, 16)
        s += ss
        d += ds


cdef void _stream_gathered(char* d, const char* s, Py_ssize_t ss, Py_ssize_t n,
                           Py_ssize_t itemsize, int swap) noexcept nogil:
    """A contiguous destination row from a strided (or byte-swapped) source: gathered
    piece by piece into a buffer that stays in L1, each piece then streamed out."""
    cdef char piece[STREAM_PIECE]
    cdef Py_ssize_t k, per = STREAM_PIECE // itemsize
    while n > 0:
        k = n if n < per else per
        _copy_row(piece, itemsize, s, ss, k, itemsize, swap)
        zx_stream_copy(d, piece, k * itemsize)
        d += k * itemsize
        s += k * ss
        n -= k


cdef void _copy_row(char* d, Py_ssize_t ds, const char* s, Py_ssize_t ss, Py_ssize_t n,
                    Py_ssize_t itemsize, int swap, bint stream=False) noexcept nogil:
    """Copy one row of n elements: the innermost loop of every kernel here. ``stream``:
    a row of at least ``STREAM_ROW`` bytes contiguous in the destination is written with
    streaming stores (from a strided or swapped source through a gathering buffer)."""
    if ds == itemsize and ss == itemsize and swap == 0:
        if stream and n * itemsize >= STREAM_ROW:
            zx_stream_copy(d, s, n * itemsize)
        else:
            memcpy(d, s, n * itemsize)
    elif (stream and ds == itemsize and n * itemsize >= STREAM_ROW
          and STREAM_PIECE % itemsize == 0):
        _stream_gathered(d, s, ss, n, itemsize, swap)
    elif ds == itemsize and ss == itemsize and swap <= 8:
        zx_swap_units(d, s, n * (itemsize // swap), swap)
    elif swap == 0 or swap == itemsize:
        if itemsize == 1:
            _row(<uint8_t*>NULL, d, ds, s, ss, n, False)
        elif itemsize == 2:
            _row(<uint16_t*>NULL, d, ds, s, ss, n, swap != 0)
        elif itemsize == 4:
            _row(<uint32_t*>NULL, d, ds, s, ss, n, swap != 0)
        elif itemsize == 8:
            _row(<uint64_t*>NULL, d, ds, s, ss, n, swap != 0)
        elif itemsize == 16:
            _row16(d, ds, s, ss, n, swap)
        elif swap == 0 and itemsize < 4:
            _row_pair(<uint16_t*>NULL, d, ds, s, ss, n, itemsize)
        elif swap == 0 and itemsize < 8:
            _row_pair(<uint32_t*>NULL, d, ds, s, ss, n, itemsize)
        elif swap == 0 and itemsize < 16:
            _row_pair(<uint64_t*>NULL, d, ds, s, ss, n, itemsize)
        else:
            _row_units(d, ds, s, ss, n, itemsize, swap)
    elif itemsize == 8 and swap == 4:
        _row_c8(d, ds, s, ss, n)
    elif itemsize == 16 and swap == 8:
        _row16(d, ds, s, ss, n, swap)
    else:
        _row_units(d, ds, s, ss, n, itemsize, swap)


# ---------------------------------------------------------------------- copy

cdef void _copy_tiled(char* d, Py_ssize_t d0, Py_ssize_t d1, const char* s, Py_ssize_t s0,
                      Py_ssize_t s1, Py_ssize_t n0, Py_ssize_t n1, Py_ssize_t itemsize,
                      int swap) noexcept nogil:
    """Axis 1 is the destination's inner axis, axis 0 the source's: copy tile by tile."""
    cdef Py_ssize_t t = TILE_BYTES // itemsize
    cdef Py_ssize_t i, i0, j0, ni, nj
    if t > TILE:
        t = TILE
    elif t < 8:
        t = 8
    i0 = 0
    while i0 < n0:
        ni = n0 - i0 if n0 - i0 < t else t
        j0 = 0
        while j0 < n1:
            nj = n1 - j0 if n1 - j0 < t else t
            for i in range(i0, i0 + ni):
                _copy_row(d + i * d0 + j0 * d1, d1, s + i * s0 + j0 * s1, s1, nj,
                          itemsize, swap)
            j0 += t
        i0 += t


cdef void _copy_walk(Walk* w, Py_ssize_t itemsize, int swap, bint stream) noexcept nogil:
    cdef Py_ssize_t idx[MAXDIMS]
    cdef char* d = w.d
    cdef const char* s = w.s
    cdef int last = w.nd - 1, m = -1, k, nouter
    # Transposed layout: the source is contiguous-ish along some outer axis m while the
    # inner (destination) axis is far apart in the source. Move m next to the inner axis
    # and copy 2-d tiles that fit in L1, so both sides reuse every cache line they touch.
    if _abs(w.ss[last]) > 64:
        for k in range(last):
            if w.ss[k] != 0 and (m < 0 or _abs(w.ss[k]) < _abs(w.ss[m])):
                m = k
        if m >= 0 and _abs(w.ss[m]) < _abs(w.ss[last]):
            for k in range(m, last - 1):    # rotate axis m to position last - 1
                _swap_axes(w, k, k + 1)
        else:
            m = -1
    nouter = last - (1 if m >= 0 else 0)
    for k in range(nouter):
        idx[k] = 0
    while True:
        if m >= 0:
            _copy_tiled(d, w.ds[last - 1], w.ds[last], s, w.ss[last - 1], w.ss[last],
                        w.shape[last - 1], w.shape[last], itemsize, swap)
        else:
            _copy_row(d, w.ds[last], s, w.ss[last], w.shape[last], itemsize, swap, stream)
        if not _next(w, nouter, idx, &d, &s):
            break
    if stream:
        zx_stream_fence()


cdef inline bint _has_refs(cnp.ndarray a) noexcept:
    return PyDataType_REFCHK(cnp.PyArray_DESCR(a))


cdef void _extent(cnp.ndarray a, Py_ssize_t itemsize, char** lo, char** hi) noexcept:
    cdef int i
    cdef Py_ssize_t span
    lo[0] = hi[0] = <char*>cnp.PyArray_DATA(a)
    for i in range(cnp.PyArray_NDIM(a)):
        span = (cnp.PyArray_DIMS(a)[i] - 1) * cnp.PyArray_STRIDES(a)[i]
        if span < 0:
            lo[0] += span
        else:
            hi[0] += span
    hi[0] += itemsize


def copy_strided(cnp.ndarray src not None, cnp.ndarray dst not None, int swap=0,
                 bint stream=False):
    """Copy src into dst element by element, optionally byte-swapping, optionally with
    streaming stores; see assemble.pyi."""
    cdef int nd = cnp.PyArray_NDIM(dst), i
    cdef Py_ssize_t itemsize = cnp.PyArray_ITEMSIZE(dst), n
    cdef char* slo
    cdef char* shi
    cdef char* dlo
    cdef char* dhi
    cdef bint same
    cdef Walk w
    same = cnp.PyArray_NDIM(src) == nd
    for i in range(nd if same else 0):
        same = same and cnp.PyArray_DIMS(src)[i] == cnp.PyArray_DIMS(dst)[i]
    if not same:
        raise ValueError(f"copy_strided: shape mismatch: src {(<object>src).shape}, "
                         f"dst {(<object>dst).shape}")
    if cnp.PyArray_ITEMSIZE(src) != itemsize:
        raise ValueError(f"copy_strided: itemsize mismatch: src {src.dtype} "
                         f"({src.itemsize} bytes), dst {dst.dtype} ({itemsize} bytes)")
    if not cnp.PyArray_ISWRITEABLE(dst):
        raise ValueError("copy_strided: dst is read-only")
    if _has_refs(src) or _has_refs(dst):
        raise TypeError(f"copy_strided: dtypes holding Python objects cannot be copied "
                        f"as bytes (src {src.dtype}, dst {dst.dtype})")
    if swap not in (0, 2, 4, 8, 16) or (swap and itemsize % swap):
        raise ValueError(f"copy_strided: swap must be 0, 2, 4, 8 or 16 and divide the "
                         f"itemsize {itemsize}, got {swap}")
    n = cnp.PyArray_SIZE(dst)
    if n == 0:
        return
    for i in range(nd):
        if (cnp.PyArray_DIMS(dst)[i] > 1 and cnp.PyArray_STRIDES(dst)[i] == 0
                and cnp.PyArray_STRIDES(src)[i] != 0):
            raise ValueError(f"copy_strided: dst has stride 0 on axis {i} (a broadcast "
                             "view): its elements overlap and cannot all be written")
    _extent(src, itemsize, &slo, &shi)
    _extent(dst, itemsize, &dlo, &dhi)
    if slo < dhi and dlo < shi:             # memory may overlap
        same = cnp.PyArray_DATA(src) == cnp.PyArray_DATA(dst)
        for i in range(nd):
            same = same and (cnp.PyArray_STRIDES(src)[i] == cnp.PyArray_STRIDES(dst)[i]
                             or cnp.PyArray_DIMS(dst)[i] == 1)
        if same and swap == 0:
            return
        if not same:                        # element order would matter: copy first
            src = src.copy(order="K")
    _setup(&w, dst, src)
    _normalize(&w, itemsize)
    if n * itemsize < NOGIL_BYTES:
        _copy_walk(&w, itemsize, swap, stream)
    else:
        with nogil:
            _copy_walk(&w, itemsize, swap, stream)


# ---------------------------------------------------------------------- fill and test

cdef bytes _pattern(value, Py_ssize_t itemsize, str fname):
    cdef bytes b
    if type(value) is bytes:
        b = value
    else:
        try:
            b = memoryview(value).tobytes()
        except TypeError:
            raise TypeError(f"{fname}: value must be bytes-like, "
                            f"got {type(value).__name__}") from None
    if len(b) != itemsize:
        raise ValueError(f"{fname}: value has {len(b)} bytes, expected the itemsize "
                         f"{itemsize}")
    return b


cdef void _fill_walk(Walk* w, const char* pat, Py_ssize_t itemsize) noexcept nogil:
    cdef Py_ssize_t idx[MAXDIMS]
    cdef int last = w.nd - 1, k
    cdef char* d = w.d
    cdef const char* unused = w.d           # the walk has no source: strides are 0
    cdef char* first = NULL
    cdef Py_ssize_t n = w.shape[last], ds = w.ds[last], nbytes = n * itemsize, done, step
    cdef bint uniform = True
    for k in range(1, itemsize):
        uniform = uniform and pat[k] == pat[0]
    for k in range(last):
        idx[k] = 0
    while True:
        if ds == itemsize and uniform:
            memset(d, pat[0], nbytes)
        elif ds == itemsize and first != NULL:
            memcpy(d, first, nbytes)        # every later row copies the first one
        elif ds == itemsize:
            memcpy(d, pat, itemsize)        # doubling copies of the pattern
            done = itemsize
            while done < nbytes:
                step = done if done < nbytes - done else nbytes - done
                memcpy(d + done, d, step)
                done += step
            first = d
        else:                               # strided: copy from a zero-stride source
            _copy_row(d, ds, pat, 0, n, itemsize, 0)
        if not _next(w, last, idx, &d, &unused):
            break


cdef bint _equal_row(word* tag, const char* s, Py_ssize_t ss, Py_ssize_t n,
                     const char* pat) noexcept nogil:
    cdef word v, p
    cdef Py_ssize_t _
    memcpy(&p, pat, sizeof(word))
    for _ in range(n):
        memcpy(&v, s, sizeof(word))
        if v != p:
            return False
        s += ss
    return True


cdef bint _equal_walk(Walk* w, const char* pat, Py_ssize_t itemsize) noexcept nogil:
    cdef Py_ssize_t idx[MAXDIMS]
    cdef int last = w.nd - 1, k
    cdef char* s = w.d
    cdef const char* unused = w.d
    cdef Py_ssize_t n = w.shape[last], ss = w.ds[last], i
    cdef bint ok
    for k in range(last):
        idx[k] = 0
    while True:
        if ss == itemsize:                  # first element, then the row is periodic
            ok = memcmp(s, pat, itemsize) == 0 and (
                n == 1 or memcmp(s, s + itemsize, (n - 1) * itemsize) == 0)
        elif itemsize == 1:
            ok = _equal_row(<uint8_t*>NULL, s, ss, n, pat)
        elif itemsize == 2:
            ok = _equal_row(<uint16_t*>NULL, s, ss, n, pat)
        elif itemsize == 4:
            ok = _equal_row(<uint32_t*>NULL, s, ss, n, pat)
        elif itemsize == 8:
            ok = _equal_row(<uint64_t*>NULL, s, ss, n, pat)
        else:
            ok = True
            for i in range(n):
                if memcmp(s + i * ss, pat, itemsize) != 0:
                    ok = False
                    break
        if not ok:
            return False
        if not _next(w, last, idx, &s, &unused):
            return True


def fill(cnp.ndarray dst not None, value):
    """Set every element of dst to the itemsize-byte pattern value; see assemble.pyi."""
    cdef Py_ssize_t itemsize = cnp.PyArray_ITEMSIZE(dst), n = cnp.PyArray_SIZE(dst)
    cdef bytes pat = _pattern(value, itemsize, "fill")
    cdef const char* p = pat
    cdef Walk w
    if not cnp.PyArray_ISWRITEABLE(dst):
        raise ValueError("fill: dst is read-only")
    if _has_refs(dst):
        raise TypeError(f"fill: dtype {dst.dtype} holds Python objects")
    if n == 0:
        return
    _setup(&w, dst, None)
    _normalize(&w, itemsize)
    if n * itemsize < NOGIL_BYTES:
        _fill_walk(&w, p, itemsize)
    else:
        with nogil:
            _fill_walk(&w, p, itemsize)


def all_equal(cnp.ndarray arr not None, value):
    """True iff every element of arr has exactly the bytes of value; see assemble.pyi."""
    cdef Py_ssize_t itemsize = cnp.PyArray_ITEMSIZE(arr), n = cnp.PyArray_SIZE(arr)
    cdef bytes pat = _pattern(value, itemsize, "all_equal")
    cdef const char* p = pat
    cdef bint ok
    cdef Walk w
    if _has_refs(arr):
        raise TypeError(f"all_equal: dtype {arr.dtype} holds Python objects")
    if n == 0:
        return True
    _setup(&w, arr, None)
    _normalize(&w, itemsize)
    # The first element decides most chunks of data (they differ there): no GIL hand-off
    # for those.
    if n * itemsize < NOGIL_BYTES or memcmp(w.d, p, itemsize) != 0:
        return _equal_walk(&w, p, itemsize)
    with nogil:
        ok = _equal_walk(&w, p, itemsize)
    return ok


def _use_avx2(bint on):
    """Testing hook: use the AVX2 byte-swap loops if ``on`` and the CPU has AVX2.

    Returns whether they are used now. Not thread-safe; tests only.
    """
    return bool(zx_set_avx2(on))
