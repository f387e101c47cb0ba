"""The ``zstd`` codec: Zstandard frames (RFC 8878).

- Spec: https://github.com/zarr-developers/zarr-extensions/tree/main/codecs/zstd
  (a registered extension of Zarr v3)
- v3 name: ``zstd`` (zarr-python's ``numcodecs.zarr3.Zstd`` writes ``numcodecs.zstd``,
  which the numcodecs compatibility layer maps)
- v2 id: ``zstd`` (``numcodecs.Zstd``)
- Draft URI: ``https://purl.org/zarr/spec/codec/zstd/1.0``
- Known incompatibilities: frames that need a dictionary and legacy (pre-1.0) frames are
  refused. A frame whose header omits ``Frame_Content_Size`` (streaming writers) is decoded
  only when its block structure bounds the output by ``max_size`` plus one block
  (128 KiB); the frames numcodecs and zarr-python write always carry the size.

Decoders never trust sizes in the data: ``Frame_Content_Size`` is read here, refused when
it exceeds ``max_size`` or what the frame's blocks could hold, and only then is an output
buffer of that size allocated and handed to libzstd (through numcodecs, without the GIL).

Batches (:meth:`ZstdCodec.native_step`): the batch kernels call numcodecs' libzstd by
address (:mod:`zarrx.codecs.libraries`): ``ZSTD_decompressDCtx`` into the chunk's image,
never past its size, and ``ZSTD_compress2`` with the level and checksum flag numcodecs
sets, so the frames are numcodecs' own; one context serves all the chunks of a call.

Configuration example::

    >>> codec = ZstdCodec.from_config({"level": 0, "checksum": False})
    >>> codec.to_dict()
    {'name': 'zstd', 'configuration': {'level': 0, 'checksum': False}}
    >>> bytes(codec.decode(codec.encode(b"zarr" * 100), max_size=400)) == b"zarr" * 100
    True
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from types import ModuleType
from typing import Any, ClassVar, Self

import numpy as np

from zarrx import imports
from zarrx._core.steps import FUNCTIONS, zstd_context
from zarrx.abc.codec import Buffer, BytesBytesCodec, NativeStep
from zarrx.codecs import libraries
from zarrx.codecs.bytes import as_byte_view
from zarrx.errors import CodecError, MetadataError

_FIELDS = frozenset({"level", "checksum"})
#: ZSTD_minCLevel() and ZSTD_maxCLevel() of libzstd 1.5.
MIN_LEVEL = -131072
MAX_LEVEL = 22

_MAGIC = 0xFD2FB528
_SKIPPABLE_FIRST = 0x184D2A50
_SKIPPABLE_LAST = 0x184D2A5F
_BLOCK_MAX = 128 * 1024  # ZSTD_BLOCKSIZE_MAX: the most one block decodes to
_BLOCK_FIELD_MAX = (1 << 21) - 1  # largest Block_Size a 3-byte block header can state
_DICT_ID_SIZES = (0, 1, 2, 4)

_numcodecs_zstd: ModuleType | None = None


def _lib() -> ModuleType:
    global _numcodecs_zstd
    if _numcodecs_zstd is None:
        _numcodecs_zstd = imports.import_module("numcodecs.zstd")
    return _numcodecs_zstd


def _frame_header(view: memoryview, pos: int) -> tuple[int, int | None]:
    """Parse the frame header at ``pos``: (offset of the first block, content size or None)."""
    n = len(view)
    if n - pos < 6:
        raise CodecError("codec 'zstd': truncated frame header")
    descriptor = view[pos + 4]
    if descriptor & 0x08:
        raise CodecError("codec 'zstd': corrupt frame header (reserved bit set)")
    fcs_flag = descriptor >> 6
    single_segment = (descriptor >> 5) & 1
    p = pos + 5 + (0 if single_segment else 1) + _DICT_ID_SIZES[descriptor & 3]
    fcs_size = (single_segment, 2, 4, 8)[fcs_flag]
    if p + fcs_size > n:
        raise CodecError("codec 'zstd': truncated frame header")
    if fcs_size == 0:
        return p, None
    fcs = int.from_bytes(view[p : p + fcs_size], "little")
    return p + fcs_size, fcs + 256 if fcs_size == 2 else fcs


def _walk(view: memoryview) -> list[tuple[int | None, int]]:
    """Check the frame and block structure; per frame, (declared size, most it can decode to).

    Reads only the 3-byte block headers, so it costs microseconds per MiB.
    """
    n = len(view)
    if n == 0:
        raise CodecError("codec 'zstd': empty input is not a zstd frame")
    frames: list[tuple[int | None, int]] = []
    pos = 0
    while pos < n:
        if n - pos < 8:
            raise CodecError("codec 'zstd': truncated data (incomplete frame)")
        magic = int.from_bytes(view[pos : pos + 4], "little")
        if _SKIPPABLE_FIRST <= magic <= _SKIPPABLE_LAST:
            pos += 8 + int.from_bytes(view[pos + 4 : pos + 8], "little")
            if pos > n:
                raise CodecError("codec 'zstd': truncated skippable frame")
            continue
        if magic != _MAGIC:
            raise CodecError(f"codec 'zstd': not a zstd frame (magic number {magic:#010x})")
        has_checksum = (view[pos + 4] >> 2) & 1
        p, declared = _frame_header(view, pos)
        bound = 0
        while True:
            if p + 3 > n:
                raise CodecError("codec 'zstd': truncated data (incomplete block header)")
            header = int.from_bytes(view[p : p + 3], "little")
            p += 3
            block_type = (header >> 1) & 3
            block_size = header >> 3
            if block_type == 0:  # raw
                p += block_size
                bound += block_size
            elif block_type == 1:  # RLE: one byte repeated block_size times
                p += 1
                bound += block_size
            elif block_type == 2:  # compressed
                if block_size >= _BLOCK_MAX:
                    raise CodecError("codec 'zstd': corrupt block (compressed size too large)")
                p += block_size
                bound += _BLOCK_MAX
            else:
                raise CodecError("codec 'zstd': corrupt block (reserved block type)")
            if p > n:
                raise CodecError("codec 'zstd': truncated data (incomplete block)")
            if header & 1:  # last block
                break
        p += 4 * has_checksum
        if p > n:
            raise CodecError("codec 'zstd': truncated data (missing checksum)")
        if declared is not None and declared > bound:
            raise CodecError(
                f"codec 'zstd': corrupt frame: it claims {declared} bytes but its blocks "
                f"hold at most {bound}"
            )
        frames.append((declared, bound))
        pos = p
    return frames


def _too_large(size: int, max_size: int) -> CodecError:
    return CodecError(
        f"codec 'zstd': the data decompresses to {size} bytes, more than the expected {max_size}"
    )


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class ZstdCodec(BytesBytesCodec):
    """Zstandard compression (libzstd through numcodecs, GIL released)."""

    name: ClassVar[str] = "zstd"
    aliases: ClassVar[tuple[str, ...]] = ("https://purl.org/zarr/spec/codec/zstd/1.0",)

    #: Compression level, -131072..22; 0 selects libzstd's default (3).
    level: int = 0
    #: Store a 32-bit content checksum (XXH64) in each frame, verified on decode.
    checksum: bool = False

    def __post_init__(self) -> None:
        level = self.level
        if not isinstance(level, int) or isinstance(level, bool):
            raise MetadataError(
                f"codec 'zstd': configuration field 'level' must be an integer, got {level!r}"
            )
        if not MIN_LEVEL <= level <= MAX_LEVEL:
            raise MetadataError(
                f"codec 'zstd': configuration field 'level' must be from {MIN_LEVEL} to "
                f"{MAX_LEVEL}, got {level}"
            )
        if not isinstance(self.checksum, bool):
            raise MetadataError(
                f"codec 'zstd': configuration field 'checksum' must be a boolean, "
                f"got {self.checksum!r}"
            )

    @classmethod
    def from_config(cls, configuration: Mapping[str, Any]) -> Self:
        if not isinstance(configuration, Mapping):
            raise MetadataError(
                f"codec 'zstd': configuration must be an object, got {configuration!r}"
            )
        unknown = set(configuration) - _FIELDS
        if unknown:
            raise MetadataError(
                f"codec 'zstd': unknown configuration field(s) {sorted(unknown)!r}; "
                "expected 'level' and 'checksum'"
            )
        return cls(**configuration)

    def to_config(self) -> dict[str, Any]:
        return {"level": self.level, "checksum": self.checksum}

    def encode(self, data: Buffer) -> Buffer:
        view = as_byte_view(data, "zstd")
        try:
            return _lib().compress(view, self.level, self.checksum)
        except (RuntimeError, ValueError, MemoryError) as e:
            raise CodecError(f"codec 'zstd': compression failed: {e}") from e

    def _declared_size(self, view: memoryview, max_size: int | None) -> int | None:
        """The first frame's content size when it is present, plausible and allowed."""
        if len(view) < 6 or int.from_bytes(view[:4], "little") != _MAGIC:
            return None
        _, declared = _frame_header(view, 0)
        if declared is None or declared == 0:
            return None
        if max_size is not None and declared > max_size:
            raise _too_large(declared, max_size)
        # A block of >= 3 input bytes decodes to at most 2**21 - 1 bytes: anything more is
        # corrupt or hostile, and is left to the exact walk (which refuses it).
        if declared > (len(view) // 3 + 1) * _BLOCK_FIELD_MAX:
            return None
        return declared

    def decode(self, data: Buffer, max_size: int | None) -> Buffer:
        view = as_byte_view(data, "zstd")
        size = self._declared_size(view, max_size)
        if size is not None:
            out = np.empty(size, dtype=np.uint8)
            try:
                _lib().decompress(view, out)
            except (RuntimeError, ValueError):
                pass  # several frames, or corrupt: the exact walk below tells which
            else:
                return out
        return self._decode_walked(view, max_size)

    def _decode_walked(self, view: memoryview, max_size: int | None) -> Buffer:
        frames = _walk(view)
        if all(declared is not None for declared, _ in frames):
            total = sum(declared for declared, _ in frames)  # type: ignore[misc]
            if max_size is not None and total > max_size:
                raise _too_large(total, max_size)
            out = np.empty(total, dtype=np.uint8)
            if total:
                self._decompress(view, out)
            return out
        # Some frame does not state its size: bound the output by the blocks' capacity.
        bound = sum(b if declared is None else declared for declared, b in frames)
        slack = _BLOCK_MAX * sum(declared is None for declared, _ in frames)
        if max_size is not None and bound > max_size + slack:
            raise CodecError(
                f"codec 'zstd': a frame without a content size may decompress to {bound} "
                f"bytes, more than the expected {max_size}"
            )
        result = self._decompress(view, None)
        if max_size is not None and len(result) > max_size:
            raise _too_large(len(result), max_size)
        return result

    @staticmethod
    def _decompress(view: memoryview, out: Any) -> Any:
        try:
            return _lib().decompress(view, out)
        except (RuntimeError, ValueError, MemoryError) as e:
            raise CodecError(f"codec 'zstd': corrupt data: {e}") from e

    def decode_into(self, data: Buffer, out: Buffer) -> None:
        """Decode into ``out``, a writable contiguous buffer of exactly the decoded size."""
        view = as_byte_view(data, "zstd")
        target = memoryview(out)
        if target.readonly or not target.c_contiguous:
            raise CodecError("codec 'zstd': the output buffer must be writable and contiguous")
        target = as_byte_view(target, "zstd")
        nbytes = target.nbytes
        size = self._declared_size(view, nbytes)
        if size == nbytes:
            try:
                _lib().decompress(view, target)
            except (RuntimeError, ValueError):
                pass
            else:
                return
        result = as_byte_view(self._decode_walked(view, nbytes), "zstd")
        if result.nbytes != nbytes:
            raise CodecError(
                f"codec 'zstd': the data decompresses to {result.nbytes} bytes, expected {nbytes}"
            )
        target[:] = result

    def native_step(self) -> NativeStep | None:
        """libzstd's functions from numcodecs' extension, when
        :func:`zarrx.codecs.libraries.find` has them."""
        lib = libraries.find("zstd")
        if lib is None:
            return None
        context = zstd_context(
            lib["ZSTD_createDCtx"], lib["ZSTD_freeDCtx"], lib["ZSTD_decompressDCtx"],
            lib["ZSTD_createCCtx"], lib["ZSTD_freeCCtx"], lib["ZSTD_CCtx_setParameter"],
            lib["ZSTD_compress2"], lib["ZSTD_isError"], self.level, self.checksum)
        decode, encode, release = FUNCTIONS["zstd"]
        return NativeStep(decode, encode, context.address, release, context)

    def max_encoded_size(self, n: int) -> int:
        # ZSTD_COMPRESSBOUND(n) from zstd.h: it covers the frame header and checksum.
        return n + (n >> 8) + ((_BLOCK_MAX - n) >> 11 if n < _BLOCK_MAX else 0)
