"""Part of a Blosc 1 frame decoded: only the bytes of its blocks that a span needs.

Why it exists: a small read of a large chunk needs a few of its elements, but c-blosc 1
decodes whole blocks (one block can be the whole chunk). LZ4 can stop decoding a stream
once it has written the bytes asked for, so this kernel walks the frame itself and asks
each stream of the blocks a span meets for no more than the span needs.

The layout it reads (c-blosc 1's ``blosc_d``, checked against c-blosc 1.21): a 16-byte
header (format version 2; compressor format version; flags; type size; decoded size;
block size; frame size, little-endian 32-bit fields), then one 32-bit start per block
(from the frame's first byte), then the blocks. Every block holds ``blocksize`` decoded
bytes but the last, which holds the rest. A block is ``typesize`` streams when it is
*split* (flag 0x10 clear, a type size of at most 16, at least 128 elements in the block,
and not the short last block), else one stream. A stream is a 32-bit compressed size and
that many bytes; a size equal to the stream's decoded length means the bytes are stored
as they are. A byte-shuffled block (flag 0x01, type size above 1) of ``m`` whole elements
holds byte ``j`` of element ``i`` at ``j * m + i`` and its last ``blocksize % typesize``
bytes as they are; a split block's stream ``j`` is then byte ``j`` of every element.
"""

from libc.stdint cimport int32_t, uint8_t, uint32_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy


cdef extern from *:
    """
    /* Elements [e0, e1) of a shuffled block (byte j of element i at s[j * m + i]) put
       together at d (element i at d[i * T]). T a constant in the specialised loops, so
       that the compiler turns them into vector shuffles. */
    #define ZX_GATHER(T) \
        for (Py_ssize_t i = e0; i < e1; i++) \
            for (int j = 0; j < (T); j++) d[i * (T) + j] = s[j * m + i];
    static void zx_gather2(const uint8_t* s, Py_ssize_t m, uint8_t* d, Py_ssize_t e0,
                           Py_ssize_t e1) { ZX_GATHER(2) }
    static void zx_gather4(const uint8_t* s, Py_ssize_t m, uint8_t* d, Py_ssize_t e0,
                           Py_ssize_t e1) { ZX_GATHER(4) }
    static void zx_gather8(const uint8_t* s, Py_ssize_t m, uint8_t* d, Py_ssize_t e0,
                           Py_ssize_t e1) { ZX_GATHER(8) }
    static void zx_gather_any(const uint8_t* s, Py_ssize_t m, uint8_t* d, Py_ssize_t e0,
                              Py_ssize_t e1, Py_ssize_t T) {
        for (Py_ssize_t j = 0; j < T; j++) {
            const uint8_t* sj = s + j * m;
            uint8_t* dj = d + j;
            for (Py_ssize_t i = e0; i < e1; i++) dj[i * T] = sj[i];
        }
    }
    """
    void zx_gather2(const uint8_t* s, Py_ssize_t m, uint8_t* d, Py_ssize_t e0,
                    Py_ssize_t e1) noexcept nogil
    void zx_gather4(const uint8_t* s, Py_ssize_t m, uint8_t* d, Py_ssize_t e0,
                    Py_ssize_t e1) noexcept nogil
    void zx_gather8(const uint8_t* s, Py_ssize_t m, uint8_t* d, Py_ssize_t e0,
                    Py_ssize_t e1) noexcept nogil
    void zx_gather_any(const uint8_t* s, Py_ssize_t m, uint8_t* d, Py_ssize_t e0,
                       Py_ssize_t e1, Py_ssize_t T) noexcept nogil


ctypedef int (*lz4_partial_t)(const char* src, char* dst, int src_size, int target,
                              int capacity) noexcept nogil
ctypedef int (*lz4_whole_t)(const char* src, char* dst, int src_size,
                            int capacity) noexcept nogil

cdef enum:
    HEADER = 16
    VERSION = 2
    DOSHUFFLE = 0x01
    MEMCPYED = 0x02
    DOBITSHUFFLE = 0x04
    RESERVED = 0x08
    DONT_SPLIT = 0x10
    LZ4_FORMAT = 1          # flags >> 5; lz4 and lz4hc write the same streams
    LZ4_VERSION_FORMAT = 1  # the header's second byte for an lz4 frame
    MAX_SPLITS = 16
    MIN_BUFFERSIZE = 128
    # A stream compressed to at most 1/WHOLE_RATIO of its size is decoded whole: it is
    # made of long matches, which LZ4's partial decoding copies a byte at a time when
    # they reach the end of the bytes asked for (tens of microseconds for a run of
    # 32 KiB), while the whole decode copies them in words.
    WHOLE_RATIO = 8

#: BLOSC_MAX_BLOCKSIZE: (INT_MAX - 255 * 4) / 3.
cdef Py_ssize_t MAX_BLOCKSIZE = (2147483647 - 255 * 4) // 3


cdef inline Py_ssize_t rd32(const uint8_t* p) noexcept nogil:
    """A little-endian int32 (negative values stay negative)."""
    return <int32_t>(<uint32_t>p[0] | (<uint32_t>p[1] << 8) | (<uint32_t>p[2] << 16)
                     | (<uint32_t>p[3] << 24))


cdef struct Frame:
    const uint8_t* f      # the header and block starts (checked to be there)
    const uint8_t* body   # the frame's bytes [lo, hi): streams are read from here only
    Py_ssize_t lo
    Py_ssize_t hi
    Py_ssize_t cbytes     # the frame's size (its header's)
    Py_ssize_t nbytes
    Py_ssize_t blocksize
    Py_ssize_t typesize
    Py_ssize_t nblocks
    int shuffled
    int dont_split
    lz4_partial_t lz4
    lz4_whole_t lz4_whole  # NULL: none


cdef int stream(const Frame* fr, Py_ssize_t* at, Py_ssize_t length, uint8_t* dst,
                Py_ssize_t target) noexcept nogil:
    """Decode at least the first ``target`` bytes (0: none) of the stream at ``at[0]``
    of ``length`` decoded bytes into ``dst`` (room for ``length``), and move ``at[0]``
    past it. 0 when the stream does not lie inside the frame or does not decode to the
    bytes asked for (a stream decoded whole must decode to exactly ``length``)."""
    cdef Py_ssize_t off = at[0], size
    cdef int got
    cdef const uint8_t* src
    if off < fr.lo or off > fr.hi - 4:
        return 0
    size = rd32(fr.body + (off - fr.lo))
    off += 4
    if size < 0 or size > fr.hi - off:
        return 0
    at[0] = off + size
    if target <= 0:
        return 1
    src = fr.body + (off - fr.lo)
    if size == length:  # stored as it is
        memcpy(dst, src, target)
        return 1
    if fr.lz4_whole != NULL and size * WHOLE_RATIO <= length:
        got = fr.lz4_whole(<const char*>src, <char*>dst, <int>size, <int>length)
        return got == length
    got = fr.lz4(<const char*>src, <char*>dst, <int>size, <int>target, <int>target)
    return got == target


cdef Py_ssize_t block_end(const Frame* fr, Py_ssize_t at) noexcept nogil:
    """Where the block starting at ``at`` ends: at the next higher block start, or the
    frame's end (c-blosc writes the blocks one after the other, in any order)."""
    cdef Py_ssize_t k, s, end = fr.cbytes
    for k in range(fr.nblocks):
        s = rd32(fr.f + HEADER + 4 * k)
        if at < s < end:
            end = s
    return end


cdef int block(const Frame* fr, Py_ssize_t b, Py_ssize_t lo, Py_ssize_t hi, uint8_t* out,
               uint8_t* tmp) noexcept nogil:
    """Decoded bytes ``[lo, hi)`` of block ``b`` into ``out`` (the block's first byte);
    ``tmp`` holds at least a block. 1 when done, 0 when it cannot be. Every stream size
    of the block is read, and they must add up to the block's extent: a damaged size
    (which c-blosc would notice by the size a stream decodes to, where this decodes only
    a stream's first bytes) leaves the chain of streams off its end."""
    cdef Py_ssize_t base = b * fr.blocksize
    cdef Py_ssize_t bsize = fr.nbytes - base
    cdef Py_ssize_t T = fr.typesize, nsplits = 1, neblock, j, i, need
    cdef Py_ssize_t quot, body, e0, e1, target
    cdef Py_ssize_t start = rd32(fr.f + HEADER + 4 * b), at = start
    cdef int leftover = bsize < fr.blocksize
    if not leftover:
        bsize = fr.blocksize
    if (not fr.dont_split and T <= MAX_SPLITS and bsize // T >= MIN_BUFFERSIZE
            and not leftover):
        nsplits = T
        if bsize % T:  # streams that do not cover the block: not c-blosc's
            return 0
    neblock = bsize // nsplits
    if not fr.shuffled:
        # The streams are consecutive pieces of the block.
        for j in range(nsplits):
            need = 0 if (j + 1) * neblock <= lo else max(0, min(hi - j * neblock, neblock))
            if not stream(fr, &at, neblock, out + j * neblock, need):
                return 0
        return at == block_end(fr, start)
    quot = bsize // T
    body = quot * T
    e0 = lo // T
    e1 = min((hi + T - 1) // T, quot) if lo < body else e0
    if nsplits > 1:
        # Stream j is byte j of every element: each stream's first e1 bytes, in its
        # place in tmp (the shuffled block), then gathered.
        for j in range(T):
            if not stream(fr, &at, neblock, tmp + j * neblock, e1):
                return 0
        if at != block_end(fr, start):
            return 0
    else:
        # One stream, in the shuffled layout: up to the last byte the span needs.
        target = bsize if hi > body else ((T - 1) * quot + e1 if e1 > e0 else 0)
        if not stream(fr, &at, bsize, tmp, target) or at != block_end(fr, start):
            return 0
    if e1 > e0:
        if T == 4:
            zx_gather4(tmp, quot, out, e0, e1)
        elif T == 8:
            zx_gather8(tmp, quot, out, e0, e1)
        elif T == 2:
            zx_gather2(tmp, quot, out, e0, e1)
        else:
            zx_gather_any(tmp, quot, out, e0, e1, T)
    if hi > body:
        i = max(lo, body)
        memcpy(out + i, tmp + i, hi - i)
    return 1


cdef int blocks(const Frame* fr, Py_ssize_t start, Py_ssize_t stop, uint8_t* out,
                uint8_t* tmp) noexcept nogil:
    cdef Py_ssize_t b, base
    for b in range(start // fr.blocksize, (stop - 1) // fr.blocksize + 1):
        base = b * fr.blocksize
        if not block(fr, b, max(start, base) - base,
                     min(stop, base + fr.blocksize) - base, out + base, tmp):
            return 0
    return 1


cdef bint _overlap(const uint8_t* a, Py_ssize_t na, const uint8_t* b, Py_ssize_t nb):
    return a < b + nb and b < a + na


def decode_span(frame, Py_ssize_t start, Py_ssize_t stop, out, size_t lz4_partial=0,
                size_t lz4_whole=0, work=None, body=None, Py_ssize_t at=0):
    """Decoded bytes [start, stop) of a Blosc 1 frame into out; see blosc_part.pyi."""
    cdef const uint8_t[::1] src, part
    cdef uint8_t[::1] dst, scratch
    cdef Py_ssize_t room = 0
    cdef Frame fr
    cdef Py_ssize_t n
    cdef int flags, ok
    cdef uint8_t* tmp = NULL
    cdef uint8_t* owned = NULL
    try:
        src = frame
    except (TypeError, ValueError, BufferError) as e:
        raise TypeError(f"decode_span: frame must be a C-contiguous byte buffer ({e})") from None
    try:
        dst = out
    except (TypeError, ValueError, BufferError) as e:
        raise ValueError(f"decode_span: out must be a writable C-contiguous byte buffer "
                         f"({e})") from None
    n = src.shape[0]
    if body is None:
        part, at = src, 0
    else:
        try:
            part = body
        except (TypeError, ValueError, BufferError) as e:
            raise TypeError(f"decode_span: body must be a C-contiguous byte buffer "
                            f"({e})") from None
        if at < 0:
            raise ValueError(f"decode_span: at must not be negative, got {at}")
        if (part.shape[0] and dst.shape[0]
                and _overlap(&part[0], part.shape[0], &dst[0], dst.shape[0])):
            raise ValueError("decode_span: body and out overlap")
    if not 0 <= start <= stop <= dst.shape[0]:
        raise ValueError(f"decode_span: the span [{start}, {stop}) does not lie in the "
                         f"{dst.shape[0]} bytes of out")
    if work is not None:
        try:
            scratch = work
        except (TypeError, ValueError, BufferError) as e:
            raise ValueError(f"decode_span: work must be a writable C-contiguous byte "
                             f"buffer ({e})") from None
        room = scratch.shape[0]
        if room and dst.shape[0] and _overlap(&scratch[0], room, &dst[0], dst.shape[0]):
            raise ValueError("decode_span: work and out overlap")
        if room and n and _overlap(&scratch[0], room, &src[0], n):
            raise ValueError("decode_span: work and frame overlap")
        if room and part.shape[0] and _overlap(&scratch[0], room, &part[0], part.shape[0]):
            raise ValueError("decode_span: work and body overlap")
    if n and dst.shape[0] and _overlap(&src[0], n, &dst[0], dst.shape[0]):
        raise ValueError("decode_span: frame and out overlap")
    if start == stop:
        return True
    # The header, as c-blosc checks it; anything else is left to c-blosc (False).
    if n < HEADER:
        return False
    fr.f = &src[0]
    flags = fr.f[2]
    fr.typesize = fr.f[3]
    fr.nbytes = rd32(fr.f + 4)
    fr.blocksize = rd32(fr.f + 8)
    fr.cbytes = rd32(fr.f + 12)
    if (fr.f[0] != VERSION or flags & RESERVED or fr.typesize == 0
            or fr.nbytes != dst.shape[0] or fr.cbytes < HEADER
            or (body is None and fr.cbytes > n)
            or not 0 < fr.blocksize <= min(fr.nbytes, MAX_BLOCKSIZE)):
        return False
    # What the streams are read from: the frame itself, or its bytes from ``at`` on.
    fr.lo = at
    fr.hi = min(at + part.shape[0], fr.cbytes)
    if fr.hi <= fr.lo:
        return False
    fr.body = &part[0]
    if flags & MEMCPYED:
        if (fr.cbytes != fr.nbytes + HEADER or HEADER + start < fr.lo
                or HEADER + stop > fr.hi):
            return False
        with nogil:
            memcpy(&dst[start], fr.body + (HEADER + start - fr.lo), stop - start)
        return True
    if (lz4_partial == 0 or flags >> 5 != LZ4_FORMAT or fr.f[1] != LZ4_VERSION_FORMAT
            or flags & DOBITSHUFFLE):
        return False
    fr.nblocks = (fr.nbytes + fr.blocksize - 1) // fr.blocksize  # (cdivision: no -(-a // b))
    if fr.nblocks > (fr.cbytes - HEADER) // 4 or HEADER + 4 * fr.nblocks > n:
        return False
    fr.shuffled = (flags & DOSHUFFLE) != 0 and fr.typesize > 1
    fr.dont_split = (flags & DONT_SPLIT) != 0
    fr.lz4 = <lz4_partial_t>lz4_partial
    fr.lz4_whole = <lz4_whole_t>lz4_whole
    if fr.shuffled:
        if room >= fr.blocksize:
            tmp = &scratch[0]
        else:
            tmp = owned = <uint8_t*>malloc(fr.blocksize)
            if tmp == NULL:
                raise MemoryError(f"decode_span: no scratch memory for a block of "
                                  f"{fr.blocksize} bytes")
    try:
        with nogil:
            ok = blocks(&fr, start, stop, &dst[0], tmp)
    finally:
        free(owned)
    return ok == 1
