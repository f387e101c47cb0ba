"""The ``scale_offset`` codec: store ``(x - offset) * scale``, read ``x / scale + offset``.

- Spec: https://github.com/zarr-developers/zarr-extensions/tree/main/codecs/scale_offset
- v3 name: ``scale_offset``
- v2 id: none (numcodecs' ``fixedscaleoffset`` also casts; in v3 it stays
  ``numcodecs.fixedscaleoffset``, served by numcodecs). Draft URI: none.
- Configuration: ``offset`` (default 0) and ``scale`` (default 1), each in the fill value
  encoding of the array's data type; without either the configuration may be left out.
  Written as zarr-python 3.4 writes it: the values as they were given, the defaults left
  out (``{"name": "scale_offset"}`` when both are).
- Arithmetic is the data type's own, as zarr-python 3.4 does it: floats in their type
  (overflow gives ±inf, no error); integers exactly, an error when a result (or an
  intermediate) leaves the type's range, and decoding requires every stored value to be a
  multiple of ``scale`` (an error otherwise, not a truncation). The fill value is encoded
  like an element. Usually followed by ``cast_value`` to a narrower type.
- Known incompatibilities: none known.

Configuration example::

    >>> import numpy as np
    >>> from zarrx.abc.codec import ChunkSpec
    >>> codec = ScaleOffsetCodec.from_config({"offset": 1000})
    >>> codec.to_dict()
    {'name': 'scale_offset', 'configuration': {'offset': 1000}}
    >>> spec = ChunkSpec((3,), np.dtype("uint16"), np.uint16(1000))
    >>> codec.encode(np.array([1000, 1001, 1255], dtype="uint16"), spec).tolist()
    [0, 1, 255]
    >>> codec.resolve_spec(spec).fill_value
    np.uint16(0)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, ClassVar, Self

import numpy as np

from zarrx.abc.codec import ArrayArrayCodec, ChunkSpec
from zarrx.codecs.casting import numeric
from zarrx.errors import CodecError, MetadataError

_WIDE = np.dtype(np.int64)


def _scalar(dtype: np.dtype, value: Any, field: str) -> Any:
    """A JSON ``offset``/``scale`` as a NumPy scalar of ``dtype`` (fill value encoding)."""
    from zarrx.codecs.cast_value import data_type_for

    try:
        return data_type_for(dtype).fill_from_json(value)
    except MetadataError as e:
        raise MetadataError(
            f"codec 'scale_offset': {field} {value!r} is not a value of {dtype}: {e}"
        ) from None


def _range_check(values: np.ndarray, dtype: np.dtype, what: str) -> None:
    if values.size == 0:
        return
    info = np.iinfo(dtype)
    low, high = values.min(), values.max()
    if low < info.min or high > info.max:
        bad = values[(values < info.min) | (values > info.max)][0]
        raise CodecError(
            f"codec 'scale_offset': {what} gives {bad}, outside the range of {dtype} "
            f"[{info.min}, {info.max}]"
        )


def _fits(dtype: np.dtype, offset: int, scale: int, decode: bool) -> bool:
    """Whether every value of ``dtype`` stays in range through the arithmetic (a proof
    over the type's bounds, so the arithmetic may run in the type itself)."""
    info = np.iinfo(dtype)
    low, high = int(info.min), int(info.max)
    ends: tuple[int, ...]
    if decode:  # ``x // scale`` too (the minimum // -1 does not fit)
        quotients = (low // scale, high // scale)
        ends = (*quotients, quotients[0] + offset, quotients[1] + offset)
    else:  # ``x - offset`` may wrap around and come back in range: NumPy's arrays do
        ends = ((low - offset) * scale, (high - offset) * scale)
    return all(low <= e <= high for e in ends)


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class ScaleOffsetCodec(ArrayArrayCodec):
    """``(x - offset) * scale`` in the array's own data type."""

    name: ClassVar[str] = "scale_offset"

    offset: Any = 0  # JSON, as given
    scale: Any = 1

    @classmethod
    def from_config(cls, configuration: Mapping[str, Any]) -> Self:
        if not isinstance(configuration, Mapping):
            raise MetadataError(
                f"codec 'scale_offset': configuration must be an object, got {configuration!r}"
            )
        unknown = set(configuration) - {"offset", "scale"}
        if unknown:
            raise MetadataError(
                f"codec 'scale_offset': unknown configuration field(s) {sorted(unknown)!r}; "
                "expected 'offset' and 'scale'"
            )
        for field in ("offset", "scale"):
            value = configuration.get(field, 0)
            if isinstance(value, bool) or not isinstance(value, int | float | str | list):
                raise MetadataError(
                    f"codec 'scale_offset': {field} must be a number or a fill-value string, "
                    f"got {value!r}"
                )
        return cls(configuration.get("offset", 0), configuration.get("scale", 1))

    def to_config(self) -> dict[str, Any]:
        config = {}
        if self.offset != 0:
            config["offset"] = self.offset
        if self.scale != 1:
            config["scale"] = self.scale
        return config

    def _parameters(self, dtype: np.dtype) -> tuple[Any, Any]:
        kind = numeric(dtype)
        if kind is None:
            raise MetadataError(
                f"codec 'scale_offset' works on integer and float arrays, not {dtype}"
            )
        offset = _scalar(dtype, self.offset, "offset")
        scale = _scalar(dtype, self.scale, "scale")
        if scale == 0:
            raise MetadataError("codec 'scale_offset': scale must not be zero")
        return offset, scale

    def validate(self, spec: ChunkSpec) -> None:
        self._parameters(spec.dtype)

    def resolve_spec(self, spec: ChunkSpec) -> ChunkSpec:
        try:
            fill = self._encode(np.asarray(spec.fill_value, dtype=spec.dtype), spec.dtype)
        except CodecError as e:
            raise MetadataError(f"codec 'scale_offset': the fill value: {e}") from None
        return ChunkSpec(spec.shape, spec.dtype, fill[()])

    def encode(self, chunk: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        if chunk.shape != spec.shape:
            raise CodecError(
                f"codec 'scale_offset': chunk of shape {chunk.shape} does not match the "
                f"chunk shape {spec.shape}"
            )
        return self._encode(np.asarray(chunk, dtype=spec.dtype), spec.dtype)

    def decode(self, chunk: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        return self._decode(np.asarray(chunk, dtype=spec.dtype), spec.dtype)

    def _encode(self, x: np.ndarray, dtype: np.dtype) -> np.ndarray:
        offset, scale = self._parameters(dtype)
        if not numeric(dtype).integer:  # type: ignore[union-attr]
            with np.errstate(over="ignore", invalid="ignore"):
                out = np.subtract(x, offset, dtype=dtype)
                out *= scale
            return out
        o, s = int(offset), int(scale)
        if _fits(dtype, o, s, decode=False):
            return ((x - offset) * scale).astype(dtype, copy=False)
        if dtype.itemsize == 8:  # Python integers: 64-bit values and products are exact
            result = np.asarray((x.astype(object) - o) * s, dtype=object)
        else:  # |values| < 2**32: differences and products are exact in int64
            result = (x.astype(_WIDE) - np.int64(o)) * np.int64(s)
        _range_check(result, dtype, "encoding")
        return result.astype(dtype)

    def _decode(self, x: np.ndarray, dtype: np.dtype) -> np.ndarray:
        offset, scale = self._parameters(dtype)
        if not numeric(dtype).integer:  # type: ignore[union-attr]
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                out = np.divide(x, scale, dtype=dtype)
                out += offset
            return out
        o, s = int(offset), int(scale)
        if s != 1 and np.any(x % scale):
            bad = x[x % scale != 0].reshape(-1)[0]
            raise CodecError(
                f"codec 'scale_offset': stored value {bad} is not a multiple of the scale "
                f"{self.scale!r}: it has no exact value in {dtype}"
            )
        if _fits(dtype, o, s, decode=True):
            return (x // scale + offset).astype(dtype, copy=False)
        if dtype.itemsize == 8:
            result = np.asarray(x.astype(object) // s + o, dtype=object)
        else:
            result = x.astype(_WIDE) // np.int64(s) + np.int64(o)
        _range_check(result, dtype, "decoding")
        return result.astype(dtype)
