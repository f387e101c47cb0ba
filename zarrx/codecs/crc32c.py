"""The ``crc32c`` codec: append the CRC-32C (Castagnoli) checksum of the data.

- Spec: https://zarr-specs.readthedocs.io/en/latest/v3/codecs/crc32c/index.html
- v3 name: ``crc32c``
- v2 id: ``crc32c`` (``numcodecs.CRC32C``, which also appends the checksum by default)
- Draft URI: none
- Known incompatibilities: none. The checksum is 4 bytes, little endian, after the data.

The checksum is computed by zarrx's own kernel (:func:`zarrx._core.steps.crc32c`: the
CPU's CRC32 instruction where it has one, a table otherwise; the GIL released for large
buffers), which the batch kernels also call for every chunk of a batch
(:meth:`Crc32cCodec.native_step`). Decoding returns a zero-copy view of the data without
its checksum.

Configuration example::

    >>> codec = Crc32cCodec.from_config({})
    >>> codec.to_dict()
    {'name': 'crc32c'}
    >>> bytes(codec.encode(b"123456789")).hex()  # the CRC-32C check value is 0xe3069283
    '313233343536373839839206e3'
    >>> bytes(codec.decode(codec.encode(b"zarr"), max_size=4))
    b'zarr'
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Self

from zarrx._core.steps import FUNCTIONS, crc32c
from zarrx.abc.codec import Buffer, BytesBytesCodec, NativeStep
from zarrx.codecs.bytes import as_byte_view
from zarrx.errors import ChecksumError, CodecError, MetadataError


class Crc32cCodec(BytesBytesCodec):
    """CRC-32C checksum appended to the data (4 bytes, little endian)."""

    name: ClassVar[str] = "crc32c"
    aliases: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def from_config(cls, configuration: Mapping[str, Any]) -> Self:
        if not isinstance(configuration, Mapping):
            raise MetadataError(
                f"codec 'crc32c': configuration must be an object, got {configuration!r}"
            )
        if configuration:
            raise MetadataError(
                f"codec 'crc32c': unknown configuration field(s) {sorted(configuration)!r}; "
                "it takes none"
            )
        return cls()

    def to_config(self) -> dict[str, Any]:
        return {}

    def encode(self, data: Buffer) -> Buffer:
        view = as_byte_view(data, "crc32c")
        return b"".join((view, crc32c(view).to_bytes(4, "little")))

    def decode(self, data: Buffer, max_size: int | None) -> Buffer:
        view = as_byte_view(data, "crc32c")
        n = len(view)
        if n < 4:
            raise ChecksumError(
                f"codec 'crc32c': {n} bytes are too few to hold the 4-byte checksum"
            )
        if max_size is not None and n - 4 > max_size:
            raise CodecError(
                f"codec 'crc32c': {n - 4} bytes of data, more than the expected {max_size}"
            )
        body = view[: n - 4]
        stored = int.from_bytes(view[n - 4 :], "little")
        computed = crc32c(body)
        if computed != stored:
            raise ChecksumError(
                f"codec 'crc32c': checksum mismatch (stored {stored:#010x}, computed "
                f"{computed:#010x}): the chunk is corrupt"
            )
        return body

    def max_encoded_size(self, n: int) -> int:
        return n + 4

    def native_step(self) -> NativeStep | None:
        """The check and the append, in C (:mod:`zarrx._core.steps`); decoding leaves the
        data where it lies."""
        decode, encode, release = FUNCTIONS["crc32c"]
        return NativeStep(decode, encode, 0, release)
