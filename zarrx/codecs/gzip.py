"""The ``gzip`` codec: DEFLATE in the gzip container (RFC 1952).

- Spec: https://zarr-specs.readthedocs.io/en/latest/v3/codecs/gzip/index.html
- v3 name: ``gzip``
- v2 id: ``gzip`` (``numcodecs.GZip``; ``zlib`` is a different codec: no gzip header)
- Draft URI: ``https://purl.org/zarr/spec/codec/gzip/1.0``
- Known incompatibilities: none in the data. zarrx writes the stream numcodecs' ``GZip``
  (used by zarr-python) writes, byte for byte, except the header's modification time,
  which zarrx sets to 0 so that equal chunks give equal bytes. Decoding accepts several
  concatenated members and zero padding after a member, as Python's ``gzip`` does.

Batches (:meth:`GzipCodec.native_step`): the batch kernels call the zlib that Python's
``zlib`` module uses, by address (:mod:`zarrx.codecs.libraries`), with the same calls as
the methods below: decoding always; encoding when that library is the very version
Python's ``zlib`` runs (``zlib.ZLIB_RUNTIME_VERSION``) and the level is 1 to 9 (at level 0,
zlib cuts stored blocks by the room it is given, which Python's buffers decide).

Configuration example::

    >>> codec = GzipCodec.from_config({"level": 5})
    >>> codec.to_dict()
    {'name': 'gzip', 'configuration': {'level': 5}}
    >>> bytes(codec.decode(codec.encode(b"zarr" * 100), max_size=400)) == b"zarr" * 100
    True
"""

from __future__ import annotations

import dataclasses
import zlib
from collections.abc import Mapping
from typing import Any, ClassVar, Self

from zarrx._core.steps import FUNCTIONS, zlib_context
from zarrx.abc.codec import Buffer, BytesBytesCodec, NativeStep
from zarrx.codecs import libraries
from zarrx.codecs.bytes import as_byte_view
from zarrx.errors import CodecError, MetadataError

_FIELDS = frozenset({"level"})
_GZIP_WBITS = 31  # 16 + 15: gzip container, 32 KiB window
_HEADER_SIZE = 10
_TRAILER_SIZE = 8
# zlib-ng's deflateBound differs from zlib's; use zlib's conservative bound for it.
_TIGHT_BOUND = "ng" not in zlib.ZLIB_RUNTIME_VERSION.lower()


def _header(level: int) -> bytes:
    # As Python's gzip.GzipFile writes it (numcodecs.GZip), with mtime 0 and OS 255.
    xfl = 2 if level == 9 else 4 if level == 1 else 0
    return bytes((0x1F, 0x8B, 8, 0, 0, 0, 0, 0, xfl, 255))


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class GzipCodec(BytesBytesCodec):
    """gzip (RFC 1952) compression with zlib, levels 0-9."""

    name: ClassVar[str] = "gzip"
    aliases: ClassVar[tuple[str, ...]] = ("https://purl.org/zarr/spec/codec/gzip/1.0",)

    level: int = 5

    def __post_init__(self) -> None:
        level = self.level
        if not isinstance(level, int) or isinstance(level, bool) or not 0 <= level <= 9:
            raise MetadataError(
                f"codec 'gzip': configuration field 'level' must be an integer from 0 to 9, "
                f"got {level!r}"
            )

    @classmethod
    def from_config(cls, configuration: Mapping[str, Any]) -> Self:
        if not isinstance(configuration, Mapping):
            raise MetadataError(
                f"codec 'gzip': configuration must be an object, got {configuration!r}"
            )
        unknown = set(configuration) - _FIELDS
        if unknown:
            raise MetadataError(
                f"codec 'gzip': unknown configuration field(s) {sorted(unknown)!r}; "
                "expected only 'level'"
            )
        return cls(**configuration)

    def to_config(self) -> dict[str, Any]:
        return {"level": self.level}

    def encode(self, data: Buffer) -> Buffer:
        view = as_byte_view(data, "gzip")
        # The same calls as gzip.GzipFile (compressobj + flush, crc32 of the input), so the
        # deflate stream equals numcodecs' at every level, including 0 (stored blocks).
        compressor = zlib.compressobj(self.level, zlib.DEFLATED, -zlib.MAX_WBITS, 8, 0)
        body = compressor.compress(view)
        tail = compressor.flush()
        trailer = (zlib.crc32(view) & 0xFFFFFFFF).to_bytes(4, "little") + (
            view.nbytes & 0xFFFFFFFF
        ).to_bytes(4, "little")
        return b"".join((_header(self.level), body, tail, trailer))

    def decode(self, data: Buffer, max_size: int | None) -> Buffer:
        view = as_byte_view(data, "gzip")
        parts: list[bytes] = []
        produced = 0
        while True:
            inflater = zlib.decompressobj(_GZIP_WBITS)
            budget = None if max_size is None else max_size - produced
            try:
                # max_length = budget + 1 reveals an oversized stream without inflating it all.
                out = inflater.decompress(view, 0 if budget is None else budget + 1)
            except zlib.error as e:
                raise CodecError(f"codec 'gzip': corrupt data: {e}") from e
            if budget is not None and len(out) > budget:
                raise CodecError(
                    f"codec 'gzip': the data decompresses to more than the expected "
                    f"{max_size} bytes"
                )
            if not inflater.eof:
                raise CodecError("codec 'gzip': truncated data (the gzip stream does not end)")
            parts.append(out)
            produced += len(out)
            rest = inflater.unused_data
            if not rest or not rest.strip(b"\0"):
                break
            view = memoryview(rest.lstrip(b"\0"))
        return parts[0] if len(parts) == 1 else b"".join(parts)

    def native_step(self) -> NativeStep | None:
        """zlib's functions, when :func:`zarrx.codecs.libraries.find` has them (the
        encoder only where its output is the Python path's, above)."""
        lib = libraries.find("zlib")
        if lib is None:
            return None
        context = zlib_context(
            lib["inflateInit2_"], lib["inflate"], lib["inflateReset"], lib["inflateEnd"],
            lib["deflateInit2_"], lib["deflate"], lib["deflateReset"], lib["deflateEnd"],
            lib["crc32"], lib.version.encode("ascii"), self.level)
        decode, encode, release = FUNCTIONS["gzip"]
        same = lib.version == zlib.ZLIB_RUNTIME_VERSION and self.level > 0
        return NativeStep(decode, encode if same else 0, context.address, release, context)

    def max_encoded_size(self, n: int) -> int:
        wrap = _HEADER_SIZE + _TRAILER_SIZE
        if _TIGHT_BOUND:
            # zlib's deflateBound() for windowBits 15, memLevel 8 (what encode uses).
            return n + (n >> 12) + (n >> 14) + (n >> 25) + 7 + wrap
        # zlib's bound for non-default parameters: the larger of fixed codes and stored blocks.
        fixed = n + (n >> 3) + (n >> 8) + (n >> 9) + 4
        stored = n + (n >> 5) + (n >> 7) + (n >> 11) + 7
        return max(fixed, stored) + wrap
