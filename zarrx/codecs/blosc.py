"""The ``blosc`` codec: Blosc 1 frames (shuffle + a fast compressor, in blocks).

- Spec: https://zarr-specs.readthedocs.io/en/latest/v3/codecs/blosc/index.html
- v3 name: ``blosc``
- v2 id: ``blosc`` (``numcodecs.Blosc``)
- Draft URI: ``https://purl.org/zarr/spec/codec/blosc/1.0``
- Known incompatibilities: none in the data (zarrx writes what numcodecs and zarr-python
  write, byte for byte). ``snappy`` is accepted only when the installed c-blosc has it
  (the numcodecs wheels do not). Reading is lenient where other writers differ:
  ``shuffle`` may be the integer of Zarr v2 / the 2020 draft (0, 1, 2; -1 for automatic),
  and absent ``typesize`` / ``shuffle`` are filled by :meth:`BloscCodec.evolve` as
  zarr-python 3.1 does (``typesize`` = item size; ``shuffle`` = ``"bitshuffle"`` for 1-byte
  items, ``"shuffle"`` otherwise). Other defaults follow zarr-python: ``cname`` ``"zstd"``,
  ``clevel`` 5, ``blocksize`` 0 (automatic).

Part of a frame (a small read of a large chunk, :meth:`BloscCodec.decode_span`): an lz4
frame is decoded by :mod:`zarrx._core.blosc_part`, which stops each stream of the blocks
it needs once it has the bytes asked for, with the ``LZ4_decompress_safe_partial`` that
numcodecs' blosc extension exports (LZ4 1.9.0 or later, looked up once by address in
:mod:`zarrx.codecs.libraries`); any other frame, or an extension without that symbol, is
decoded whole as below.

Batches (:meth:`BloscCodec.native_step`): the batch kernels call c-blosc's
``blosc_decompress_ctx`` and ``blosc_compress_ctx`` by address (the calls numcodecs makes,
so the frames are the same), and a chunk's byte shuffle can be done by the pass that lays
its image out (:meth:`BloscCodec.shuffled_layout`): the image is gathered already
shuffled and compressed with the shuffle off, and the header then says "shuffled"; without
those functions, chunks go through numcodecs one by one.

Library: numcodecs' c-blosc 1, the library zarr-python and numcodecs write with, for both
directions: ``blosc_compress_ctx`` / ``blosc_decompress_ctx`` with one internal thread and
the GIL released (the engine parallelises across chunks), decoding straight into a
preallocated buffer. numcodecs' global-context path (a process-wide lock and thread pool)
is switched off with ``numcodecs.blosc.use_threads = False``, as zarr-python does on import.
python-blosc2 is *not* used to decode: as of 4.14 it returns wrong trailing bytes for
Blosc 1 bit-shuffled frames whose size is not a multiple of ``8 * typesize``. c-blosc 1 is
not told the input length, so the header's ``nbytes`` and ``cbytes`` are checked against
``max_size`` and the input length before anything is allocated or decompressed.

Configuration example::

    >>> import numpy as np
    >>> from zarrx.abc.codec import ChunkSpec
    >>> codec = BloscCodec.from_config({"cname": "lz4", "clevel": 5})
    >>> spec = ChunkSpec((100,), np.dtype("float32"), np.float32(0))
    >>> codec.evolve(spec).to_dict()  # doctest: +NORMALIZE_WHITESPACE
    {'name': 'blosc', 'configuration': {'typesize': 4, 'cname': 'lz4', 'clevel': 5,
     'shuffle': 'shuffle', 'blocksize': 0}}
    >>> data = np.arange(100, dtype="float32").tobytes()
    >>> bytes(codec.decode(codec.evolve(spec).encode(data), max_size=400)) == data
    True
"""

from __future__ import annotations

import dataclasses
import struct
import threading
from bisect import bisect_right
from collections.abc import Mapping
from types import ModuleType
from typing import Any, ClassVar, Self

import numpy as np

from zarrx import imports
from zarrx._core.blosc_part import decode_span
from zarrx._core.steps import FUNCTIONS, blosc_context
from zarrx.abc.codec import Buffer, BytesBytesCodec, ChunkSpec, NativeStep, ShuffledLayout
from zarrx.codecs import libraries
from zarrx.codecs.bytes import as_byte_view
from zarrx.errors import CodecError, MetadataError

CNAMES = ("lz4", "lz4hc", "blosclz", "zstd", "zlib", "snappy")
SHUFFLES = ("noshuffle", "shuffle", "bitshuffle")
#: BLOSC_MAX_OVERHEAD: a Blosc 1 frame is at most its input plus this header.
MAX_OVERHEAD = 16
#: BLOSC_MAX_BUFFERSIZE: the largest input Blosc 1 compresses.
MAX_BUFFERSIZE = 2**31 - 1 - MAX_OVERHEAD
_FIELDS = ("typesize", "cname", "clevel", "shuffle", "blocksize")
_HEADER = struct.Struct("<III")  # nbytes, blocksize, cbytes at offset 4
#: The whole 16-byte header: version, compressor version, flags, typesize, nbytes,
#: blocksize, cbytes (c-blosc's README_CHUNK_FORMAT; little endian).
_FRAME_HEADER = struct.Struct("<BBBBIII")
#: BLOSC_VERSION_FORMAT, the only frame version c-blosc 1 decodes.
FORMAT_VERSION = 2
_SHUFFLED = 0x01  # BLOSC_DOSHUFFLE: each block was byte-shuffled before compression
_MEMCPYED = 0x02  # the blocks are the data as it is, after the header
_RESERVED = 0x08  # must be zero
_DONT_SPLIT = 0x10  # each block is one stream, not one per byte of the type

#: MIN_BUFFERSIZE: c-blosc stores smaller inputs as a plain copy.
_MIN_BUFFERSIZE = 128
#: Per (cname, clevel, typesize, blocksize setting, nbytes): the first 12 header bytes of
#: a byte-shuffled frame and the block size to request with the shuffle off (see
#: BloscCodec._head).
_HEADS: dict[tuple[bytes, int, int, int, int], tuple[bytes, int]] = {}

_lib: ModuleType | None = None


def _load() -> ModuleType:
    """numcodecs.blosc, configured for calls from many threads at once."""
    global _lib
    if _lib is None:
        lib: Any = imports.import_module("numcodecs.blosc")
        # The *_ctx calls: one internal thread, no global context, no lock. A process-wide
        # flag, set once (zarr-python sets it on import); numcodecs also takes this path
        # on its own in any thread but the main one.
        lib.use_threads = False
        _lib = lib
    return _lib


def _lz4() -> tuple[int, int]:
    """The addresses of ``LZ4_decompress_safe_partial`` and ``LZ4_decompress_safe`` in
    the LZ4 that numcodecs' c-blosc bundles, or zeros when :mod:`~zarrx.codecs.libraries`
    finds none usable (older than 1.9.0): then frames are decoded whole."""
    lib = libraries.find("lz4")
    if lib is None:
        return 0, 0
    return lib["LZ4_decompress_safe_partial"], lib["LZ4_decompress_safe"]


_thread = threading.local()
#: A scratch block larger than this is not kept by its thread once used.
_KEEP_WORK = 16 << 20


def _work(nbytes: int) -> np.ndarray:
    """This thread's scratch block for :func:`decode_span` (which uses it only during
    the call, and calls nothing that could use it meanwhile), at least ``nbytes`` long:
    memory whose pages are already there, not fresh pages faulted in on every read."""
    work: np.ndarray | None = getattr(_thread, "work", None)
    if work is None or len(work) < nbytes:
        work = np.empty(nbytes, dtype=np.uint8)
        if nbytes <= _KEEP_WORK:
            _thread.work = work
    return work


def _available_cnames() -> tuple[str, ...]:
    return tuple(_load().list_compressors())


def _error(field: str, message: str) -> MetadataError:
    return MetadataError(f"codec 'blosc': configuration field {field!r} {message}")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class BloscCodec(BytesBytesCodec):
    """Blosc 1 compression; ``typesize`` and ``shuffle`` may be left for :meth:`evolve`."""

    name: ClassVar[str] = "blosc"
    aliases: ClassVar[tuple[str, ...]] = ("https://purl.org/zarr/spec/codec/blosc/1.0",)

    cname: str = "zstd"
    clevel: int = 5
    #: ``"noshuffle"``, ``"shuffle"``, ``"bitshuffle"``, or ``None``: chosen by :meth:`evolve`.
    shuffle: str | int | None = None
    #: Item size in bytes for the shuffle, or ``None``: the dtype's, set by :meth:`evolve`.
    typesize: int | None = None
    #: Block size in bytes; 0 lets Blosc choose.
    blocksize: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.cname, str) or self.cname not in CNAMES:
            raise _error("cname", f"must be one of {', '.join(CNAMES)}; got {self.cname!r}")
        if self.cname == "snappy" and "snappy" not in _available_cnames():
            raise _error("cname", "is 'snappy', which the installed c-blosc does not support")
        if not _is_int(self.clevel) or not 0 <= self.clevel <= 9:
            raise _error("clevel", f"must be an integer from 0 to 9, got {self.clevel!r}")
        shuffle = self.shuffle
        if _is_int(shuffle):
            # Zarr v2 and the 2020 draft write the shuffle as numcodecs' integer.
            if shuffle not in (-1, 0, 1, 2):
                raise _error("shuffle", f"must be -1, 0, 1 or 2 as an integer, got {shuffle}")
            object.__setattr__(self, "shuffle", None if shuffle == -1 else SHUFFLES[shuffle])
        elif shuffle is not None and (not isinstance(shuffle, str) or shuffle not in SHUFFLES):
            raise _error("shuffle", f"must be one of {', '.join(SHUFFLES)}; got {shuffle!r}")
        if self.typesize is not None and (not _is_int(self.typesize) or self.typesize < 1):
            raise _error("typesize", f"must be a positive integer, got {self.typesize!r}")
        if not _is_int(self.blocksize) or self.blocksize < 0:
            raise _error(
                "blocksize",
                f"must be a non-negative integer (0: automatic), got {self.blocksize!r}",
            )

    @classmethod
    def from_config(cls, configuration: Mapping[str, Any]) -> Self:
        if not isinstance(configuration, Mapping):
            raise MetadataError(
                f"codec 'blosc': configuration must be an object, got {configuration!r}"
            )
        unknown = set(configuration) - set(_FIELDS)
        if unknown:
            raise MetadataError(
                f"codec 'blosc': unknown configuration field(s) {sorted(unknown)!r}; "
                f"expected {', '.join(_FIELDS)}"
            )
        # null typesize / shuffle means "left to evolve()", as zarr-python reads it.
        return cls(**configuration)

    def to_config(self) -> dict[str, Any]:
        # zarr-python's key order; fields still left to evolve() are omitted.
        config: dict[str, Any] = {}
        if self.typesize is not None:
            config["typesize"] = self.typesize
        config["cname"] = self.cname
        config["clevel"] = self.clevel
        if self.shuffle is not None:
            config["shuffle"] = self.shuffle
        config["blocksize"] = self.blocksize
        return config

    def evolve(self, spec: ChunkSpec) -> Self:
        if self.typesize is not None and self.shuffle is not None:
            return self
        dtype = spec.dtype
        itemsize = 1 if dtype.hasobject or dtype.kind == "T" else max(dtype.itemsize, 1)
        return dataclasses.replace(
            self,
            typesize=itemsize if self.typesize is None else self.typesize,
            shuffle=(
                ("bitshuffle" if itemsize == 1 else "shuffle")
                if self.shuffle is None
                else self.shuffle
            ),
        )

    def encode(self, data: Buffer) -> Buffer:
        view = as_byte_view(data, "blosc")
        if view.nbytes > MAX_BUFFERSIZE:
            raise CodecError(
                f"codec 'blosc': cannot compress {view.nbytes} bytes; Blosc 1 takes at most "
                f"{MAX_BUFFERSIZE} per chunk"
            )
        # Not evolved: zarr-python's placeholders (typesize 1, bitshuffle).
        shuffle = SHUFFLES.index(self.shuffle or "bitshuffle")
        try:
            return _load().compress(
                view,
                self.cname.encode("ascii"),
                self.clevel,
                shuffle,
                self.blocksize,
                self.typesize or 1,
            )
        except (RuntimeError, ValueError) as e:
            raise CodecError(f"codec 'blosc': compression failed: {e}") from e

    def native_step(self) -> NativeStep | None:
        """c-blosc's ``blosc_decompress_ctx`` and ``blosc_compress_ctx``, called as
        :meth:`decode` and :meth:`encode` call them (through numcodecs), when
        :func:`zarrx.codecs.libraries.find` has them."""
        lib = libraries.find("blosc")
        if lib is None:
            return None
        context = blosc_context(
            lib["blosc_decompress_ctx"], lib["blosc_compress_ctx"], self.clevel,
            SHUFFLES.index(self.shuffle or "bitshuffle"), self.typesize or 1, self.blocksize,
            self.cname.encode("ascii"))
        decode, encode, release = FUNCTIONS["blosc"]
        return NativeStep(decode, encode, context.address, release, context)

    def shuffled_layout(self, itemsize: int, nbytes: int) -> ShuffledLayout | None:
        """For a byte shuffle over exactly the images' ``itemsize``-byte elements (a level
        that compresses, images Blosc compresses rather than copies): the layout pass
        writes each block of the image shuffled as c-blosc would, and the step compresses
        it with the shuffle off at the block size :meth:`encode` would pick (found once
        per size and settings from frames of zeros, :meth:`_head`), then sets the
        header's "shuffled" flag. That is byte for byte the frame of the plain image (the
        shuffle is c-blosc's own definition, per block, and nothing else in the frame
        depends on where it happened); the step declines a frame c-blosc stored as a plain
        copy (which holds the data unshuffled) and one whose header differs from the one
        :meth:`encode` writes, checked on every frame."""
        if not (self.shuffle == "shuffle" and self.typesize == itemsize
                and 1 < itemsize <= 255 and self.clevel > 0):
            return None
        lib = libraries.find("blosc")
        plan = None if lib is None else self._fused_plan(itemsize, nbytes)
        if lib is None or plan is None:
            return None
        cname, head, forced, blocksize = plan
        context = blosc_context(
            lib["blosc_decompress_ctx"], lib["blosc_compress_ctx"], self.clevel, 0, itemsize,
            forced, cname, head, _SHUFFLED, _MEMCPYED | _SHUFFLED)
        _, encode, release = FUNCTIONS["blosc"]
        return ShuffledLayout(blocksize, NativeStep(0, encode, context.address, release,
                                                    context))

    def partial_kind(self) -> Any:
        """Frames are read in part from a store: the header and block starts, then only
        the blocks a selection needs (:class:`zarrx.codecs.partial.BloscPartial`, named:
        that module reads frames with this one's functions)."""
        return "BloscPartial"

    def _fused_plan(self, typesize: int, nbytes: int) -> tuple[bytes, bytes, int, int] | None:
        """For images of ``nbytes`` bytes of ``typesize``-byte elements: the cname, the
        header :meth:`encode` writes, the block size to ask c-blosc for with the shuffle
        off, and the block size it will use; ``None`` when they cannot be fused."""
        if not _MIN_BUFFERSIZE <= nbytes <= MAX_BUFFERSIZE:
            return None
        cname = self.cname.encode("ascii")
        key = (cname, self.clevel, typesize, self.blocksize, nbytes)
        known = _HEADS.get(key)
        if known is None:
            known = _HEADS[key] = self._head(cname, typesize, nbytes)
        head, forced = known
        if forced == 0:
            return None
        return cname, head, forced, int.from_bytes(head[8:12], "little")

    def _head(self, cname: bytes, typesize: int, nbytes: int) -> tuple[bytes, int]:
        """The first 12 header bytes :meth:`encode` writes for ``nbytes`` bytes, and the
        ``blocksize`` argument that makes c-blosc pick the same block size with the
        shuffle off (0: none found). Both depend on the sizes and settings only, not the
        data, so frames of zeros tell them. c-blosc treats a requested block size as a
        start, not the answer (it enlarges it for codecs that split blocks, as it does its
        own choice), so the candidates are the block size itself, it divided by the type
        size, and the whole input; the first whose header matches is kept."""
        lib = _load()
        zeros = np.zeros(nbytes, dtype=np.uint8)
        frame = lib.compress(zeros, cname, self.clevel, 1, self.blocksize, typesize)
        head = bytes([frame[0], frame[1], frame[2] & ~_MEMCPYED]) + frame[3:12]
        blocksize = int.from_bytes(head[8:12], "little")
        for forced in (blocksize // typesize, blocksize, nbytes):
            if forced:
                plain = lib.compress(zeros, cname, self.clevel, 0, forced, typesize)
                if bytes([plain[0], plain[1], plain[2] | _SHUFFLED]) + plain[3:12] == head:
                    return head, forced
        return head, 0

    def decode(self, data: Buffer, max_size: int | None) -> Buffer:
        view = as_byte_view(data, "blosc")
        nbytes = _check_header(view, max_size)
        out = np.empty(nbytes, dtype=np.uint8)
        _decompress_into(view, out, nbytes)
        return out

    def decode_into(self, data: Buffer, out: Buffer) -> None:
        """Decode into ``out``, a writable contiguous buffer of exactly the decoded size."""
        view = as_byte_view(data, "blosc")
        target = memoryview(out)
        if target.readonly or not target.c_contiguous:
            raise CodecError("codec 'blosc': the output buffer must be writable and contiguous")
        target = as_byte_view(target, "blosc")
        nbytes = _check_header(view, target.nbytes)
        if nbytes != target.nbytes:
            raise CodecError(
                f"codec 'blosc': the data decompresses to {nbytes} bytes, expected {target.nbytes}"
            )
        _decompress_into(view, target, nbytes)

    def decode_span(self, data: Buffer, start: int, stop: int, out: Any) -> bool:
        """Decode at least bytes ``[start, stop)`` of ``data`` into ``out`` (a writable
        byte buffer of the whole decoded size; its other bytes are left meaningless) and
        return ``True``, or return ``False`` when only a whole decode can
        (:func:`zarrx._core.blosc_part.decode_span`: lz4 frames and plain copies only)."""
        # The chunk's size holds any of its blocks.
        return decode_span(as_byte_view(data, "blosc"), start, stop, out, *_lz4(),
                           _work(len(out)))

    def max_encoded_size(self, n: int) -> int:
        # c-blosc 1 falls back to a plain copy after the 16-byte header when it cannot
        # compress, so the frame never exceeds n + BLOSC_MAX_OVERHEAD.
        return n + MAX_OVERHEAD


def _check_header(view: memoryview, max_size: int | None) -> int:
    """Validate the frame header against the input and ``max_size``; return ``nbytes``."""
    n = len(view)
    if n < MAX_OVERHEAD:
        raise CodecError(
            f"codec 'blosc': truncated data ({n} bytes, shorter than the 16-byte header)"
        )
    nbytes, _, cbytes = _HEADER.unpack_from(view, 4)
    if cbytes > n:
        raise CodecError(
            f"codec 'blosc': truncated data (the header states {cbytes} bytes, got {n})"
        )
    if cbytes < MAX_OVERHEAD:
        raise CodecError(f"codec 'blosc': corrupt header (compressed size {cbytes})")
    if max_size is not None and nbytes > max_size:
        raise CodecError(
            f"codec 'blosc': the header states {nbytes} decompressed bytes, more than the "
            f"expected {max_size}"
        )
    return nbytes


def _decompress_into(view: memoryview, out: Any, nbytes: int) -> None:
    if nbytes == 0:
        return
    try:
        # blosc_decompress_ctx(src, dest, nbytes, 1): one thread, GIL released.
        _load().decompress(view, out)
    except (RuntimeError, ValueError) as e:
        raise CodecError(f"codec 'blosc': corrupt data: {e}") from e


# -- frames read in part -------------------------------------------------------------------
# A frame is the header, then (unless memcpy'ed) one int32 start per block, counted from
# the frame's first byte, then the blocks: each a sequence of streams (one, or one per
# byte of the type when split), each an int32 size and its bytes. Blocks hold ``blocksize``
# decoded bytes each (the last one the rest) and decode alone, so a part of the chunk
# needs only the header, the starts and the blocks that hold it. Blocks compressed on
# several threads may lie out of order, so a block ends where the next higher start is.


def frame_prefix(nbytes: int) -> int:
    """How many leading bytes of the frame of ``nbytes`` decoded bytes to read first: the
    header and the block starts of any frame whose blocks hold at least 4 KiB (smaller
    blocks, which only an explicit ``blocksize`` makes, cost one more read)."""
    return MAX_OVERHEAD + 4 * -(-nbytes // 4096)


@dataclasses.dataclass(frozen=True)
class Frame:
    """The header and block starts of one Blosc 1 frame, checked against each other."""

    head: bytes  # the header and the block starts, as stored
    nbytes: int
    blocksize: int
    cbytes: int
    #: Per block, where its bytes lie in the frame; ``None`` for a memcpy'ed frame.
    blocks: tuple[tuple[int, int], ...] | None

    @property
    def flags(self) -> int:
        return self.head[2]

    def block_span(self, start: int, stop: int) -> tuple[int, int]:
        """The first and last block (inclusive) holding decoded bytes ``[start, stop)``."""
        return start // self.blocksize, (stop - 1) // self.blocksize

    def ranges(self, start: int, stop: int) -> list[tuple[int, int]]:
        """The byte ranges of the frame needed to decode bytes ``[start, stop)``: the
        data itself in a memcpy'ed frame, else the blocks that hold it (merged where
        adjacent)."""
        if self.blocks is None:
            return [(MAX_OVERHEAD + start, MAX_OVERHEAD + stop)]
        first, last = self.block_span(start, stop)
        merged: list[tuple[int, int]] = []
        for lo, hi in sorted(self.blocks[first : last + 1]):
            if merged and merged[-1][1] == lo:
                merged[-1] = (merged[-1][0], hi)
            else:
                merged.append((lo, hi))
        return merged


def read_frame(data: bytes, nbytes: int) -> Frame | int:
    """The :class:`Frame` whose first bytes are ``data`` (read from a frame that should
    decode to ``nbytes``), or how many leading bytes are needed when ``data`` stops before
    the block starts end. A malformed header or block start is a CodecError: nothing is
    read outside the frame it describes."""
    if len(data) < MAX_OVERHEAD:
        raise CodecError(
            f"codec 'blosc': truncated data ({len(data)} bytes, shorter than the 16-byte header)"
        )
    version, _, flags, typesize, size, blocksize, cbytes = _FRAME_HEADER.unpack_from(data)
    if version != FORMAT_VERSION or flags & _RESERVED or typesize == 0:
        raise CodecError(
            f"codec 'blosc': corrupt header (version {version}, flags {flags:#x}, "
            f"typesize {typesize})"
        )
    if size != nbytes:
        raise CodecError(
            f"codec 'blosc': the header states {size} decompressed bytes, expected {nbytes}"
        )
    if not 0 < blocksize <= nbytes or cbytes < MAX_OVERHEAD:
        raise CodecError(
            f"codec 'blosc': corrupt header (block size {blocksize}, compressed size "
            f"{cbytes}, for {nbytes} bytes)"
        )
    if flags & _MEMCPYED:
        if cbytes != nbytes + MAX_OVERHEAD:
            raise CodecError(
                f"codec 'blosc': corrupt header (a plain copy of {nbytes} bytes states "
                f"{cbytes} bytes)"
            )
        return Frame(bytes(data[:MAX_OVERHEAD]), nbytes, blocksize, cbytes, None)
    nblocks = -(-nbytes // blocksize)
    end = MAX_OVERHEAD + 4 * nblocks
    if end > cbytes:
        raise CodecError(
            f"codec 'blosc': corrupt header ({nblocks} blocks do not fit in {cbytes} bytes)"
        )
    if len(data) < end:
        return end
    starts = np.frombuffer(data, dtype="<i4", count=nblocks, offset=MAX_OVERHEAD).tolist()
    order = sorted(starts)
    if len(set(order)) != nblocks or order[0] < end or order[-1] >= cbytes:
        raise CodecError(
            f"codec 'blosc': corrupt block starts (they must be distinct and lie between "
            f"{end} and {cbytes})"
        )
    stop = dict(zip(order, [*order[1:], cbytes]))
    blocks = tuple((s, stop[s]) for s in starts)
    return Frame(bytes(data[:end]), nbytes, blocksize, cbytes, blocks)


def decode_blocks(frame: Frame, start: int, stop: int, parts: list[Any], out: Any) -> None:
    """Decode decoded bytes ``[start, stop)`` of ``frame`` into ``out`` (the chunk's
    decoded bytes; only those of the blocks holding the span are written, and only the
    span's are meaningful), from ``parts``: the bytes of :meth:`Frame.ranges` for the same
    bounds, in that order."""
    if frame.blocks is None:
        (data,) = parts
        out[start:stop] = np.frombuffer(data, dtype=np.uint8)
        return
    first, last = frame.block_span(start, stop)
    bases = [lo for lo, _ in frame.ranges(start, stop)]  # sorted: where each part begins
    # The blocks in one piece (the usual case): only the bytes the span needs, read
    # where they lie (an lz4 frame; its header and block starts are the frame's).
    if len(parts) == 1 and decode_span(frame.head, start, stop, out, *_lz4(),
                                       _work(frame.blocksize), parts[0], bases[0]):
        return
    # A frame of just these blocks: the same header but for its sizes (and the split
    # flag: a last block shorter than the block size was never split), its own starts,
    # and the blocks' bytes.
    count = last - first + 1
    head = MAX_OVERHEAD + 4 * count
    blobs: list[Any] = []
    starts: list[int] = []
    at = head
    for lo, hi in frame.blocks[first : last + 1]:
        k = bisect_right(bases, lo) - 1  # the part holding the block
        blobs.append(memoryview(parts[k])[lo - bases[k] : hi - bases[k]])
        starts.append(at)
        at += hi - lo
    lo_byte = first * frame.blocksize
    hi_byte = min((last + 1) * frame.blocksize, frame.nbytes)
    size = hi_byte - lo_byte
    blocksize, flags = frame.blocksize, frame.flags
    if size < blocksize:  # the short last block alone
        blocksize, flags = size, flags | _DONT_SPLIT
    version, versionlz, _, typesize = frame.head[:4]
    header = _FRAME_HEADER.pack(version, versionlz, flags, typesize, size, blocksize, at)
    synthetic = b"".join([header, np.asarray(starts, dtype="<i4").tobytes(), *blobs])
    _decompress_into(memoryview(synthetic), out[lo_byte:hi_byte], size)
