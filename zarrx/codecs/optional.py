r"""The ``optional`` codec: nullable values stored as a mask and the present values only.

- Spec: https://github.com/zarr-developers/zarr-extensions/pull/33 (``codecs/optional``, an
  open proposal), as zarrs implements it.
- v3 name: ``optional`` (the proposal's, and zarrs' committed test data); zarrs writes
  ``zarrs.optional`` today (:class:`ZarrsOptionalCodec`); the name read is written back.
- v2 id: none. Draft URI: none.
- Known incompatibilities: zarr-python 3.4 and tensorstore 0.1.86 have no ``optional``
  data type, so zarrs is the only other implementation.
- Configuration: ``mask_codecs`` (a codec chain for the chunk's mask, a ``bool`` array of
  the chunk's shape: true where present) and ``data_codecs`` (a codec chain for the
  present values of the underlying type, in C order, as a one-dimensional array).
- Data types: ``optional`` only (:mod:`zarrx.data_types.optional`: records ``(value,
  valid)``); a nested optional type takes another ``optional`` codec in ``data_codecs``.
- Format: the encoded mask's length and the encoded values' length (two little-endian
  uint64), the encoded mask, the encoded values; a chunk with no present value has no
  value bytes (the data chain is not run).
- Decoding checks that the two lengths add up to the stored chunk before reading, and
  each chain bounds what its decoders may produce (the mask's and values' sizes).

Configuration example::

    >>> import numpy as np
    >>> from zarrx.abc.codec import ChunkSpec
    >>> from zarrx.data_types.optional import OptionalDataType
    >>> t = OptionalDataType.from_json({"name": "optional", "configuration": {"name": "uint8"}})
    >>> codec = OptionalCodec.from_config({"mask_codecs": [{"name": "packbits"}],
    ...                                    "data_codecs": [{"name": "bytes"}]})
    >>> spec = ChunkSpec((4,), t.dtype, t.default_fill())
    >>> encoded = bytes(codec.encode(t.absorb(np.ma.masked_equal([7, 0, 9, 0], 0)), spec))
    >>> encoded[:16].hex(), encoded[16:].hex()  # 1 mask byte, 2 value bytes; mask; values
    ('01000000000000000200000000000000', '050709')
    >>> t.present(codec.decode(encoded, spec)).tolist()
    [7, None, 9, None]
"""

from __future__ import annotations

import math
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Self

import numpy as np

from zarrx.abc.codec import ArrayBytesCodec, Buffer, ChunkSpec
from zarrx.codecs.bytes import as_byte_view
from zarrx.codecs.pipeline import CodecPipeline, PreparedChain
from zarrx.data_types.optional import is_element_dtype
from zarrx.errors import CodecError, MetadataError

_HEADER = struct.Struct("<QQ")
_FIELDS = frozenset({"mask_codecs", "data_codecs"})


def _mask_spec(spec: ChunkSpec) -> ChunkSpec:
    return ChunkSpec(spec.shape, np.dtype(np.bool_), np.False_)


def _data_spec(spec: ChunkSpec, n: int) -> ChunkSpec:
    inner = spec.dtype.fields["value"][0]  # type: ignore[index]
    return ChunkSpec((n,), inner, np.zeros((), inner)[()])


def _bound(chain: PreparedChain) -> int | None:
    """The most bytes ``chain`` encodes a chunk of its spec to (``None``: no bound)."""
    bound = chain.array_bytes.max_encoded_size(chain.bytes_spec)
    for codec, _ in chain.bytes_bytes:
        bound = None if bound is None else codec.max_encoded_size(bound)
    return bound


@dataclass(frozen=True, eq=False, repr=False)
class OptionalCodec(ArrayBytesCodec):
    """The mask through ``mask_codecs``, the present values through ``data_codecs``."""

    mask_codecs: CodecPipeline
    data_codecs: CodecPipeline

    name: ClassVar[str] = "optional"

    @classmethod
    def from_config(cls, configuration: Mapping[str, Any]) -> Self:
        where = "codec 'optional'"
        if not isinstance(configuration, Mapping) or set(configuration) != _FIELDS:
            raise MetadataError(
                f"{where}: configuration must hold exactly 'mask_codecs' and 'data_codecs', "
                f"got {configuration!r}"
            )
        return cls(
            CodecPipeline.from_json(configuration["mask_codecs"], where=f"{where} mask_codecs"),
            CodecPipeline.from_json(configuration["data_codecs"], where=f"{where} data_codecs"),
        )

    def to_config(self) -> dict[str, Any]:
        return {"mask_codecs": self.mask_codecs.to_json(),
                "data_codecs": self.data_codecs.to_json()}

    def evolve(self, spec: ChunkSpec) -> Self:
        if not is_element_dtype(spec.dtype):
            return self  # validate says why
        n = math.prod(spec.shape)
        return type(self)(self.mask_codecs.evolve(_mask_spec(spec)),
                          self.data_codecs.evolve(_data_spec(spec, n)))

    def validate(self, spec: ChunkSpec) -> None:
        if not is_element_dtype(spec.dtype):
            raise MetadataError(
                f"codec 'optional' encodes the optional data type only, not {spec.dtype}"
            )
        self.mask_codecs.prepare(_mask_spec(spec))
        self.data_codecs.prepare(_data_spec(spec, math.prod(spec.shape)))

    def max_encoded_size(self, spec: ChunkSpec) -> int | None:
        mask = _bound(self.mask_codecs.prepare(_mask_spec(spec)))
        data = _bound(self.data_codecs.prepare(_data_spec(spec, math.prod(spec.shape))))
        return None if mask is None or data is None else _HEADER.size + mask + data

    # -- encode / decode -------------------------------------------------------------------
    def encode(self, chunk: np.ndarray, spec: ChunkSpec) -> Buffer:
        chunk = np.asarray(chunk)
        if chunk.shape != spec.shape or chunk.dtype != spec.dtype:
            raise CodecError(f"codec 'optional': chunk of shape {chunk.shape} and dtype "
                             f"{chunk.dtype} does not match {spec.shape} {spec.dtype}")
        valid = np.ascontiguousarray(chunk["valid"])
        mask = bytes(self.mask_codecs.prepare(_mask_spec(spec)).encode(valid))
        present = chunk["value"][valid]  # C order
        data = b""
        if len(present):
            data = bytes(self.data_codecs.prepare(_data_spec(spec, len(present))).encode(
                np.ascontiguousarray(present)))
        return _HEADER.pack(len(mask), len(data)) + mask + data

    def decode(self, data: Buffer, spec: ChunkSpec) -> np.ndarray:
        raw = as_byte_view(data, "optional")
        if len(raw) < _HEADER.size:
            raise CodecError(f"codec 'optional': {len(raw)} bytes, shorter than its header")
        mask_len, data_len = _HEADER.unpack_from(raw)
        if _HEADER.size + mask_len + data_len != len(raw):
            raise CodecError(
                f"codec 'optional': the header says {mask_len} mask bytes and {data_len} value "
                f"bytes, the chunk holds {len(raw) - _HEADER.size} after the header"
            )
        mask_end = _HEADER.size + mask_len
        valid = np.asarray(self.mask_codecs.prepare(_mask_spec(spec)).decode(
            raw[_HEADER.size:mask_end]))
        if valid.dtype != np.bool_:
            valid = valid.astype(np.bool_)
        out = np.zeros(spec.shape, spec.dtype)
        out["valid"] = valid
        n = int(np.count_nonzero(valid))
        if n:
            values = self.data_codecs.prepare(_data_spec(spec, n)).decode(raw[mask_end:])
            out["value"][valid] = np.asarray(values).reshape(n)
        elif data_len:
            raise CodecError(
                f"codec 'optional': {data_len} value bytes for a chunk with no present value"
            )
        return out


class ZarrsOptionalCodec(OptionalCodec):
    """The same codec under the name zarrs writes, ``zarrs.optional`` (and writes back)."""

    name: ClassVar[str] = "zarrs.optional"
