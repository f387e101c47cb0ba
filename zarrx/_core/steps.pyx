"""Bytes→bytes steps as C functions, for the batch kernels (``batch.pyx``), and CRC-32C.

Why it exists: decoding or encoding a batch of small chunks in one call without the GIL
needs each codec of the chain as a C function, not a Python method. The steps here follow
the native step ABI of ``steps.pxd`` (documented in ``zarrx/_core/README.md``): c-blosc 1,
zstd and zlib are called through functions whose addresses the caller looked up in the
libraries already loaded (this module links none of them); CRC-32C is computed here, with
the CPU's CRC32 instruction where it has one (SSE4.2, detected at run time) and a
slicing-by-8 table otherwise. A step's context (a C struct held by a :class:`Context`)
carries the function addresses and the codec's settings and is only read, so one context
serves any number of concurrent calls; what a step keeps between the chunks of one call
(a zstd or zlib stream) lives in the call's own state.
"""

cimport cython
from libc.stdint cimport uint8_t, uint32_t
from libc.stdlib cimport calloc, free
from libc.string cimport memcmp, memcpy, memset


cdef extern from *:
    """
    #include <stdint.h>
    #include <string.h>
    /* CRC-32C (Castagnoli, reflected polynomial 0x82F63B78). */
    static uint32_t zx_crc_table[8][256];
    static int zx_crc_hardware = 0;

    static uint32_t zx_crc_soft(uint32_t crc, const unsigned char* p, size_t n) {
        while (n && ((uintptr_t)p & 7)) {
            crc = zx_crc_table[0][(crc ^ *p++) & 0xFF] ^ (crc >> 8);
            n--;
        }
        while (n >= 8) {  /* slicing by 8: one table lookup per byte, no dependency chain */
            uint32_t lo, hi;
            memcpy(&lo, p, 4);
            memcpy(&hi, p + 4, 4);
    #if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
            lo = __builtin_bswap32(lo);
            hi = __builtin_bswap32(hi);
    #endif
            lo ^= crc;
            crc = zx_crc_table[7][lo & 0xFF] ^ zx_crc_table[6][(lo >> 8) & 0xFF]
                ^ zx_crc_table[5][(lo >> 16) & 0xFF] ^ zx_crc_table[4][lo >> 24]
                ^ zx_crc_table[3][hi & 0xFF] ^ zx_crc_table[2][(hi >> 8) & 0xFF]
                ^ zx_crc_table[1][(hi >> 16) & 0xFF] ^ zx_crc_table[0][hi >> 24];
            p += 8;
            n -= 8;
        }
        while (n--) crc = zx_crc_table[0][(crc ^ *p++) & 0xFF] ^ (crc >> 8);
        return crc;
    }

    #if defined(__GNUC__) && defined(__x86_64__)
    #include <nmmintrin.h>
    __attribute__((target("sse4.2")))
    static uint32_t zx_crc_hard(uint32_t crc, const unsigned char* p, size_t n) {
        uint64_t c = crc;
        while (n && ((uintptr_t)p & 7)) { c = _mm_crc32_u8((uint32_t)c, *p++); n--; }
        while (n >= 8) {
            uint64_t v;
            memcpy(&v, p, 8);
            c = _mm_crc32_u64(c, v);
            p += 8;
            n -= 8;
        }
        while (n--) c = _mm_crc32_u8((uint32_t)c, *p++);
        return (uint32_t)c;
    }
    static int zx_crc_cpu(void) {
        __builtin_cpu_init();
        return __builtin_cpu_supports("sse4.2");
    }
    #else
    static uint32_t zx_crc_hard(uint32_t crc, const unsigned char* p, size_t n) {
        return zx_crc_soft(crc, p, n);
    }
    static int zx_crc_cpu(void) { return 0; }
    #endif

    static void zx_crc_init(void) {
        for (uint32_t i = 0; i < 256; i++) {
            uint32_t c = i;
            for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1)));
            zx_crc_table[0][i] = c;
        }
        for (int t = 1; t < 8; t++)
            for (int i = 0; i < 256; i++)
                zx_crc_table[t][i] = (zx_crc_table[t - 1][i] >> 8)
                    ^ zx_crc_table[0][zx_crc_table[t - 1][i] & 0xFF];
        zx_crc_hardware = zx_crc_cpu();
    }
    static int zx_crc_use_hardware(int on) {  /* for tests: whether the instruction is used */
        zx_crc_hardware = on && zx_crc_cpu();
        return zx_crc_hardware;
    }
    static uint32_t zx_crc32c(uint32_t value, const unsigned char* p, size_t n) {
        uint32_t crc = ~value;
        crc = zx_crc_hardware ? zx_crc_hard(crc, p, n) : zx_crc_soft(crc, p, n);
        return ~crc;
    }

    /* zlib's z_stream, as zlib 1.x lays it out (checked by zlib itself: its Init calls
       refuse a stream_size other than their own). */
    typedef struct {
        const unsigned char* next_in;
        unsigned int avail_in;
        unsigned long total_in;
        unsigned char* next_out;
        unsigned int avail_out;
        unsigned long total_out;
        const char* msg;
        void* state;
        void* zalloc;
        void* zfree;
        void* opaque;
        int data_type;
        unsigned long adler;
        unsigned long reserved;
    } zx_z_stream;
    """
    void zx_crc_init() noexcept nogil
    int zx_crc_use_hardware(int on) noexcept nogil
    uint32_t zx_crc32c(uint32_t value, const unsigned char* p, size_t n) noexcept nogil
    ctypedef struct zx_z_stream:
        const unsigned char* next_in
        unsigned int avail_in
        unsigned char* next_out
        unsigned int avail_out

zx_crc_init()

# -- the library functions, as the steps call them ---------------------------------------
ctypedef int (*blosc_compress_t)(int clevel, int doshuffle, size_t typesize, size_t nbytes,
                                 const void* src, void* dest, size_t destsize,
                                 const char* compressor, size_t blocksize,
                                 int numinternalthreads) noexcept nogil
ctypedef int (*blosc_decompress_t)(const void* src, void* dest, size_t destsize,
                                   int numinternalthreads) noexcept nogil
ctypedef void* (*create_t)() noexcept nogil
ctypedef size_t (*free_t)(void* ctx) noexcept nogil
ctypedef size_t (*zstd_run_t)(void* ctx, void* dst, size_t capacity, const void* src,
                              size_t n) noexcept nogil
ctypedef size_t (*zstd_set_t)(void* cctx, int parameter, int value) noexcept nogil
ctypedef unsigned (*zstd_is_error_t)(size_t code) noexcept nogil
ctypedef int (*inflate_init2_t)(zx_z_stream* s, int window_bits, const char* version,
                                int stream_size) noexcept nogil
ctypedef int (*deflate_init2_t)(zx_z_stream* s, int level, int method, int window_bits,
                                int mem_level, int strategy, const char* version,
                                int stream_size) noexcept nogil
ctypedef int (*z_run_t)(zx_z_stream* s, int flush) noexcept nogil
ctypedef int (*z_stream_t)(zx_z_stream* s) noexcept nogil
ctypedef unsigned long (*z_crc32_t)(unsigned long crc, const unsigned char* p,
                                    unsigned int n) noexcept nogil

cdef enum:
    BLOSC_HEADER = 16       # BLOSC_MAX_OVERHEAD: the header, and the most a frame adds
    ZSTD_LEVEL = 100        # ZSTD_c_compressionLevel
    ZSTD_CHECKSUM = 201     # ZSTD_c_checksumFlag
    Z_OK = 0
    Z_STREAM_END = 1
    Z_BUF_ERROR = -5
    Z_NO_FLUSH = 0
    Z_FINISH = 4
    GZIP_HEADER = 10
    GZIP_TRAILER = 8

cdef uint32_t ZSTD_MAGIC = 0xFD2FB528U
cdef uint32_t ZSTD_SKIPPABLE = 0x184D2A50U  # the first of 16 skippable-frame magic numbers
cdef unsigned int UINT_MAX_ = 0xFFFFFFFFU


cdef struct BloscContext:
    blosc_decompress_t decompress
    blosc_compress_t compress
    int clevel
    int doshuffle
    size_t typesize
    size_t blocksize
    char cname[16]
    int fused               # a frame of a pre-shuffled image: patched and checked below
    int bits                # or'ed into a fused frame's flags byte
    int unless              # a fused frame whose flags byte has any of these is declined
    unsigned char head[12]  # ... and so is one whose first 12 bytes differ from these


cdef struct ZstdContext:
    create_t create_dctx
    free_t free_dctx
    zstd_run_t decompress
    create_t create_cctx
    free_t free_cctx
    zstd_set_t set_parameter
    zstd_run_t compress
    zstd_is_error_t is_error
    int level
    int checksum


cdef struct ZstdState:
    void* dctx
    void* cctx


cdef struct ZlibContext:
    inflate_init2_t inflate_init2
    z_run_t inflate
    z_stream_t inflate_reset
    z_stream_t inflate_end
    deflate_init2_t deflate_init2
    z_run_t deflate
    z_stream_t deflate_reset
    z_stream_t deflate_end
    z_crc32_t crc32
    char version[32]
    int level


cdef struct ZlibState:
    zx_z_stream inflater
    zx_z_stream deflater
    int inflating           # inflater set up
    int deflating           # deflater set up


cdef inline uint32_t _le32(const unsigned char* p) noexcept nogil:
    return p[0] | (<uint32_t>p[1] << 8) | (<uint32_t>p[2] << 16) | (<uint32_t>p[3] << 24)


cdef inline void _put_le32(unsigned char* p, uint32_t v) noexcept nogil:
    p[0] = v & 0xFF
    p[1] = (v >> 8) & 0xFF
    p[2] = (v >> 16) & 0xFF
    p[3] = v >> 24


# -- blosc ---------------------------------------------------------------------------------

cdef Py_ssize_t _blosc_decode(const void* context, void** state, const unsigned char* src,
                              Py_ssize_t n, unsigned char* dst, Py_ssize_t capacity,
                              const unsigned char** out) noexcept nogil:
    """c-blosc 1 is not told the input's length: the header's sizes are checked first."""
    cdef const BloscContext* c = <const BloscContext*>context
    cdef uint32_t nbytes, cbytes
    cdef int got
    if n < BLOSC_HEADER:
        return STEP_FAILED
    nbytes = _le32(src + 4)
    cbytes = _le32(src + 12)
    if cbytes > n or cbytes < BLOSC_HEADER or nbytes > capacity:
        return STEP_FAILED
    out[0] = dst
    if nbytes == 0:
        return 0
    got = c.decompress(src, dst, <size_t>capacity, 1)
    return got if got > 0 else STEP_FAILED


cdef Py_ssize_t _blosc_encode(const void* context, void** state, const unsigned char* src,
                              Py_ssize_t n, unsigned char* dst,
                              Py_ssize_t capacity) noexcept nogil:
    """numcodecs' call (blosc_compress_ctx, one internal thread, room for n + 16 bytes:
    the room changes the frame c-blosc writes); a fused frame is patched and checked."""
    cdef const BloscContext* c = <const BloscContext*>context
    cdef int got
    if capacity < n + BLOSC_HEADER:
        return STEP_FAILED
    got = c.compress(c.clevel, c.doshuffle, c.typesize, <size_t>n, src, dst,
                     <size_t>(n + BLOSC_HEADER), c.cname, c.blocksize, 1)
    if got <= 0:
        return STEP_FAILED
    if c.fused:
        if got < BLOSC_HEADER or dst[2] & c.unless:
            return STEP_DECLINED
        dst[2] |= <uint8_t>c.bits
        if memcmp(dst, c.head, 12) != 0:
            return STEP_DECLINED
    return got


# -- zstd ----------------------------------------------------------------------------------

cdef ZstdState* _zstd_state(void** state) noexcept nogil:
    if state[0] == NULL:
        state[0] = calloc(1, sizeof(ZstdState))
    return <ZstdState*>state[0]


cdef Py_ssize_t _zstd_decode(const void* context, void** state, const unsigned char* src,
                             Py_ssize_t n, unsigned char* dst, Py_ssize_t capacity,
                             const unsigned char** out) noexcept nogil:
    """ZSTD_decompressDCtx, never past capacity; a first frame that is neither a zstd
    frame nor a skippable one (a legacy frame) is refused, as the Python path does."""
    cdef const ZstdContext* c = <const ZstdContext*>context
    cdef ZstdState* st = _zstd_state(state)
    cdef uint32_t magic
    cdef size_t got
    if st == NULL:
        return STEP_FAILED
    if st.dctx == NULL:
        st.dctx = c.create_dctx()
        if st.dctx == NULL:
            return STEP_FAILED
    if n < 4:
        return STEP_FAILED
    magic = _le32(src)
    if magic != ZSTD_MAGIC and (magic & 0xFFFFFFF0U) != ZSTD_SKIPPABLE:
        return STEP_FAILED
    got = c.decompress(st.dctx, dst, <size_t>capacity, src, <size_t>n)
    if c.is_error(got):
        return STEP_FAILED
    out[0] = dst
    return <Py_ssize_t>got


cdef Py_ssize_t _zstd_encode(const void* context, void** state, const unsigned char* src,
                             Py_ssize_t n, unsigned char* dst,
                             Py_ssize_t capacity) noexcept nogil:
    """numcodecs' call: ZSTD_compress2 with the level and checksum flag set."""
    cdef const ZstdContext* c = <const ZstdContext*>context
    cdef ZstdState* st = _zstd_state(state)
    cdef size_t got
    if st == NULL:
        return STEP_FAILED
    if st.cctx == NULL:
        st.cctx = c.create_cctx()
        if st.cctx == NULL:
            return STEP_FAILED
        if (c.is_error(c.set_parameter(st.cctx, ZSTD_LEVEL, c.level))
                or c.is_error(c.set_parameter(st.cctx, ZSTD_CHECKSUM, c.checksum))):
            c.free_cctx(st.cctx)
            st.cctx = NULL
            return STEP_FAILED
    got = c.compress(st.cctx, dst, <size_t>capacity, src, <size_t>n)
    if c.is_error(got):
        return STEP_FAILED
    return <Py_ssize_t>got


cdef void _zstd_release(const void* context, void* state) noexcept nogil:
    cdef const ZstdContext* c = <const ZstdContext*>context
    cdef ZstdState* st = <ZstdState*>state
    if st.dctx != NULL:
        c.free_dctx(st.dctx)
    if st.cctx != NULL:
        c.free_cctx(st.cctx)
    free(st)


# -- gzip ----------------------------------------------------------------------------------

cdef Py_ssize_t _gzip_decode(const void* context, void** state, const unsigned char* src,
                             Py_ssize_t n, unsigned char* dst, Py_ssize_t capacity,
                             const unsigned char** out) noexcept nogil:
    """Members one after another (zero bytes between and after them skipped), as the
    Python path reads them, all into at most capacity bytes."""
    cdef const ZlibContext* c = <const ZlibContext*>context
    cdef ZlibState* st
    cdef zx_z_stream* s
    cdef Py_ssize_t produced = 0, at = 0
    if state[0] == NULL:
        state[0] = calloc(1, sizeof(ZlibState))
        if state[0] == NULL:
            return STEP_FAILED
    st = <ZlibState*>state[0]
    s = &st.inflater
    if not st.inflating:
        if c.inflate_init2(s, 31, c.version, sizeof(zx_z_stream)) != Z_OK:
            return STEP_FAILED
        st.inflating = 1
    while True:
        if n - at > UINT_MAX_ or capacity - produced > UINT_MAX_:
            return STEP_FAILED
        if c.inflate_reset(s) != Z_OK:
            return STEP_FAILED
        s.next_in = src + at
        s.avail_in = <unsigned int>(n - at)
        s.next_out = dst + produced
        s.avail_out = <unsigned int>(capacity - produced)
        if c.inflate(s, Z_FINISH) != Z_STREAM_END:
            return STEP_FAILED  # corrupt, truncated, or more than capacity
        produced = capacity - s.avail_out
        at = n - s.avail_in
        while at < n and src[at] == 0:
            at += 1
        if at == n:
            break
    out[0] = dst
    return produced


cdef Py_ssize_t _gzip_encode(const void* context, void** state, const unsigned char* src,
                             Py_ssize_t n, unsigned char* dst,
                             Py_ssize_t capacity) noexcept nogil:
    """The Python path's member: its header, raw deflate (compress, then finish), the
    CRC-32 and the size."""
    cdef const ZlibContext* c = <const ZlibContext*>context
    cdef ZlibState* st
    cdef zx_z_stream* s
    cdef Py_ssize_t room = capacity - GZIP_HEADER - GZIP_TRAILER, body
    cdef int got
    if room < 0 or n > UINT_MAX_ or room > UINT_MAX_:
        return STEP_FAILED
    if state[0] == NULL:
        state[0] = calloc(1, sizeof(ZlibState))
        if state[0] == NULL:
            return STEP_FAILED
    st = <ZlibState*>state[0]
    s = &st.deflater
    if not st.deflating:
        # deflateInit2(level, Z_DEFLATED, -15: raw, memLevel 8, Z_DEFAULT_STRATEGY)
        if c.deflate_init2(s, c.level, 8, -15, 8, 0, c.version, sizeof(zx_z_stream)) != Z_OK:
            return STEP_FAILED
        st.deflating = 1
    elif c.deflate_reset(s) != Z_OK:
        return STEP_FAILED
    memset(dst, 0, GZIP_HEADER)
    dst[0], dst[1], dst[2] = 0x1F, 0x8B, 8
    dst[8] = 2 if c.level == 9 else 4 if c.level == 1 else 0
    dst[9] = 255
    s.next_in = src
    s.avail_in = <unsigned int>n
    s.next_out = dst + GZIP_HEADER
    s.avail_out = <unsigned int>room
    got = c.deflate(s, Z_NO_FLUSH)
    if (got != Z_OK and got != Z_BUF_ERROR) or s.avail_in != 0:
        return STEP_FAILED
    if c.deflate(s, Z_FINISH) != Z_STREAM_END:
        return STEP_FAILED
    body = room - s.avail_out
    _put_le32(dst + GZIP_HEADER + body, <uint32_t>c.crc32(0, src, <unsigned int>n))
    _put_le32(dst + GZIP_HEADER + body + 4, <uint32_t>n)  # (the size mod 2**32)
    return GZIP_HEADER + body + GZIP_TRAILER


cdef void _gzip_release(const void* context, void* state) noexcept nogil:
    cdef const ZlibContext* c = <const ZlibContext*>context
    cdef ZlibState* st = <ZlibState*>state
    if st.inflating:
        c.inflate_end(&st.inflater)
    if st.deflating:
        c.deflate_end(&st.deflater)
    free(st)


# -- crc32c --------------------------------------------------------------------------------

cdef Py_ssize_t _crc32c_decode(const void* context, void** state, const unsigned char* src,
                               Py_ssize_t n, unsigned char* dst, Py_ssize_t capacity,
                               const unsigned char** out) noexcept nogil:
    """The data without its checksum, where it lies, once the checksum matches."""
    if n < 4 or n - 4 > capacity:
        return STEP_FAILED
    if zx_crc32c(0, src, <size_t>(n - 4)) != _le32(src + n - 4):
        return STEP_FAILED
    out[0] = src
    return n - 4


cdef Py_ssize_t _crc32c_encode(const void* context, void** state, const unsigned char* src,
                               Py_ssize_t n, unsigned char* dst,
                               Py_ssize_t capacity) noexcept nogil:
    if capacity < n + 4:
        return STEP_FAILED
    memcpy(dst, src, <size_t>n)
    _put_le32(dst + n, zx_crc32c(0, src, <size_t>n))
    return n + 4


# -- Python side ---------------------------------------------------------------------------

@cython.auto_pickle(False)  # (memory of this process: nothing to pickle)
cdef class Context:
    """A step's context: a C struct this object owns, at :attr:`address`."""

    cdef void* data

    def __dealloc__(self):
        free(self.data)

    @property
    def address(self):
        """Where the struct lies: the ``context`` argument of the steps."""
        return <size_t>self.data


cdef Context _context(size_t size):
    cdef Context made = Context.__new__(Context)
    made.data = calloc(1, size)
    if made.data == NULL:
        raise MemoryError("steps: no memory for a context")
    return made


def _address(name, value):
    if not isinstance(value, int) or value <= 0 or value >= 2**64:
        raise ValueError(f"steps: {name} must be a function's address, got {value!r}")
    return value


def blosc_context(decompress, compress, int clevel, int shuffle, size_t typesize,
                  size_t blocksize, bytes cname not None, bytes head=None, int bits=0,
                  int unless=0):
    """The context of the blosc steps; see steps.pyi."""
    if not 0 < len(cname) < 16 or b"\0" in cname:
        raise ValueError(f"steps: cname must be a short name, got {cname!r}")
    if shuffle not in (0, 1, 2) or not 0 <= clevel <= 9 or typesize < 1:
        raise ValueError(f"steps: bad blosc settings (clevel {clevel}, shuffle {shuffle}, "
                         f"typesize {typesize})")
    if head is not None and len(head) != 12:
        raise ValueError(f"steps: head must be 12 bytes, got {len(head)}")
    if not 0 <= bits <= 255 or not 0 <= unless <= 255:
        raise ValueError(f"steps: bits and unless must be byte values, got {bits}, {unless}")
    cdef Context made = _context(sizeof(BloscContext))
    cdef BloscContext* c = <BloscContext*>made.data
    c.decompress = <blosc_decompress_t><size_t>_address("decompress", decompress)
    c.compress = <blosc_compress_t><size_t>_address("compress", compress)
    c.clevel, c.doshuffle, c.typesize, c.blocksize = clevel, shuffle, typesize, blocksize
    memcpy(c.cname, <const char*>cname, len(cname))
    if head is not None:
        c.fused, c.bits, c.unless = 1, bits, unless
        memcpy(c.head, <const char*>head, 12)
    return made


def zstd_context(create_dctx, free_dctx, decompress_dctx, create_cctx, free_cctx,
                 cctx_set_parameter, compress2, is_error, int level, bint checksum):
    """The context of the zstd steps; see steps.pyi."""
    cdef Context made = _context(sizeof(ZstdContext))
    cdef ZstdContext* c = <ZstdContext*>made.data
    c.create_dctx = <create_t><size_t>_address("create_dctx", create_dctx)
    c.free_dctx = <free_t><size_t>_address("free_dctx", free_dctx)
    c.decompress = <zstd_run_t><size_t>_address("decompress_dctx", decompress_dctx)
    c.create_cctx = <create_t><size_t>_address("create_cctx", create_cctx)
    c.free_cctx = <free_t><size_t>_address("free_cctx", free_cctx)
    c.set_parameter = <zstd_set_t><size_t>_address("cctx_set_parameter", cctx_set_parameter)
    c.compress = <zstd_run_t><size_t>_address("compress2", compress2)
    c.is_error = <zstd_is_error_t><size_t>_address("is_error", is_error)
    c.level, c.checksum = level, checksum
    return made


def zlib_context(inflate_init2, inflate, inflate_reset, inflate_end, deflate_init2, deflate,
                 deflate_reset, deflate_end, crc32, bytes version not None, int level):
    """The context of the gzip steps; see steps.pyi."""
    if not 0 < len(version) < 32 or b"\0" in version:
        raise ValueError(f"steps: version must be zlib's version string, got {version!r}")
    if not 0 <= level <= 9:
        raise ValueError(f"steps: level must be 0 to 9, got {level}")
    cdef Context made = _context(sizeof(ZlibContext))
    cdef ZlibContext* c = <ZlibContext*>made.data
    c.inflate_init2 = <inflate_init2_t><size_t>_address("inflate_init2", inflate_init2)
    c.inflate = <z_run_t><size_t>_address("inflate", inflate)
    c.inflate_reset = <z_stream_t><size_t>_address("inflate_reset", inflate_reset)
    c.inflate_end = <z_stream_t><size_t>_address("inflate_end", inflate_end)
    c.deflate_init2 = <deflate_init2_t><size_t>_address("deflate_init2", deflate_init2)
    c.deflate = <z_run_t><size_t>_address("deflate", deflate)
    c.deflate_reset = <z_stream_t><size_t>_address("deflate_reset", deflate_reset)
    c.deflate_end = <z_stream_t><size_t>_address("deflate_end", deflate_end)
    c.crc32 = <z_crc32_t><size_t>_address("crc32", crc32)
    memcpy(c.version, <const char*>version, len(version))
    c.level = level
    return made


#: Per step: the addresses of its decode, encode and release functions (0: none).
FUNCTIONS = {
    "blosc": (<size_t>&_blosc_decode, <size_t>&_blosc_encode, 0),
    "zstd": (<size_t>&_zstd_decode, <size_t>&_zstd_encode, <size_t>&_zstd_release),
    "gzip": (<size_t>&_gzip_decode, <size_t>&_gzip_encode, <size_t>&_gzip_release),
    "crc32c": (<size_t>&_crc32c_decode, <size_t>&_crc32c_encode, 0),
}


def crc32c(data, unsigned int value=0):
    """The CRC-32C of data, continuing from value; see steps.pyi."""
    cdef const unsigned char[::1] view
    cdef uint32_t got
    try:
        view = memoryview(data).cast("B")
    except TypeError as e:
        raise TypeError(f"crc32c: data must be a contiguous bytes-like object ({e})") from None
    cdef Py_ssize_t n = view.shape[0]
    if n == 0:
        return value
    if n < 65536:
        return zx_crc32c(value, &view[0], <size_t>n)
    with nogil:
        got = zx_crc32c(value, &view[0], <size_t>n)
    return got


def _use_hardware(bint on):
    """Testing hook: use the CRC32 instruction if on and the CPU has it; returns whether
    it is used now. Not thread-safe; tests only."""
    return bool(zx_crc_use_hardware(on))
