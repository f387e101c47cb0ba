"""The ``bitround`` codec: keep ``keepbits`` significant bits of each element, rounded.

- Spec: https://github.com/zarr-developers/zarr-extensions/tree/main/codecs/bitround
- v3 name: ``bitround``. The registry's deprecated alias ``numcodecs.bitround`` stays
  numcodecs' own filter in zarrx (``zarrx/codecs/numcodecs_compat.py``), bit for bit what
  zarr-python writes.
- v2 id: none here (numcodecs' ``bitround`` filter, floats only).
- Draft URI: none.
- Data types: ``float16`` (10 mantissa bits), ``bfloat16`` (7), ``float32`` (23), ``float64``
  (52), ``complex64``/``complex128`` (each part as its float), every integer type, and
  ``numpy.datetime64``/``numpy.timedelta64`` (as ``int64``).
- Format (zarrs' reading of the spec, which zarrx follows bit for bit): the element's bits,
  as an unsigned integer ``u``, keep their top ``keepbits`` bits of the mantissa (floats:
  ``maxbits`` is the mantissa width) or from the most significant set bit (integers:
  ``maxbits`` is ``u``'s bit length, so a negative integer counts all its bits). When
  ``keepbits < maxbits``, with ``m = maxbits - keepbits``: ``u += ((u >> m) & 1) + 2**(m-1)
  - 1`` (ties to even), saturating at the type's all-ones value, then the low ``m`` bits
  are cleared. Decoding returns the elements unchanged; the fill value is rounded alike.
- Known incompatibilities: numcodecs' ``bitround`` wraps where this saturates (a NaN whose
  bits are all ones becomes ``+0.0`` there, stays a NaN here), refuses integers, and refuses
  ``keepbits`` above the mantissa width, which this codec leaves unrounded.

Configuration example::

    >>> import numpy as np
    >>> from zarrx.abc.codec import ChunkSpec
    >>> codec = BitroundCodec.from_config({"keepbits": 3})
    >>> codec.to_dict()
    {'name': 'bitround', 'configuration': {'keepbits': 3}}
    >>> spec = ChunkSpec((4,), np.dtype("uint8"), np.uint8(0))
    >>> codec.encode(np.array([11, 123, 209, 255], dtype="uint8"), spec).tolist()
    [12, 128, 224, 224]
    >>> spec = ChunkSpec((3,), np.dtype("float32"), np.float32(0))
    >>> codec.encode(np.array([0.1, 1.2, 1234.5], dtype="float32"), spec).tolist()
    [0.1015625, 1.25, 1280.0]
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, ClassVar, Self

import numpy as np

from zarrx.abc.codec import ArrayArrayCodec, ChunkSpec
from zarrx.data_types.ml import ml_name
from zarrx.errors import CodecError, MetadataError

#: Mantissa bits of the float types (bfloat16 by its ml_dtypes name).
MANTISSA = {"float16": 10, "bfloat16": 7, "float32": 23, "float64": 52}


def layout(dtype: np.dtype) -> tuple[np.dtype, int | None] | None:
    """``(unsigned view, mantissa bits)`` of a data type bitround rounds (``None`` bits:
    an integer, rounded from its most significant set bit), or ``None`` when it cannot."""
    name = ml_name(dtype)
    if name is not None:
        return (np.dtype("u2"), MANTISSA[name]) if name in MANTISSA else None
    if dtype.fields is not None or dtype.subdtype is not None:
        return None
    if dtype.kind == "f" and dtype.name in MANTISSA:
        return np.dtype(f"u{dtype.itemsize}"), MANTISSA[dtype.name]
    if dtype.kind == "c" and dtype.itemsize in (8, 16):
        half = dtype.itemsize // 2
        return np.dtype(f"u{half}"), MANTISSA[f"float{8 * half}"]
    if dtype.kind in "iu" and dtype.itemsize in (1, 2, 4, 8):
        return np.dtype(f"u{dtype.itemsize}"), None
    if dtype.kind in "mM" and dtype.itemsize == 8:
        return np.dtype("u8"), None
    return None


def _bit_length(u: np.ndarray) -> np.ndarray:
    """Each element's bit length (0 for 0), exact for 64-bit values too."""
    _, exponent = np.frexp(u.astype(np.float64))
    exponent = exponent.astype(u.dtype)
    # float64 rounds values just below 2**k up to 2**k: one bit too many then.
    high = exponent > 0
    too_long = high & ((u >> np.where(high, exponent - 1, 0).astype(u.dtype)) == 0)
    return exponent - too_long.astype(u.dtype)


def round_bits(u: np.ndarray, keepbits: int, mantissa: int | None) -> np.ndarray:
    """``u`` (unsigned integers, the elements' bits) rounded to ``keepbits`` bits (see the
    module docs); a new array."""
    width = 8 * u.dtype.itemsize
    one = u.dtype.type(1)
    top = np.iinfo(u.dtype).max
    if mantissa is not None:
        if keepbits >= mantissa:
            return u.copy()
        m = u.dtype.type(mantissa - keepbits)
        mask = u.dtype.type(top >> m << m)
        increment = ((u >> m) & one) + u.dtype.type((1 << (mantissa - keepbits - 1)) - 1)
    else:
        bits = _bit_length(u)
        rounded = bits > keepbits
        m = np.where(rounded, bits - u.dtype.type(keepbits), 0).astype(u.dtype)
        # a shift by the whole width is undefined: those elements (keepbits 0) become 0
        whole = m >= width
        shift = np.minimum(m, u.dtype.type(width - 1))
        mask = np.where(whole, 0, top >> shift << shift).astype(u.dtype)
        half = np.where(rounded, (one << np.maximum(shift, one) - one) - one, 0)
        increment = np.where(rounded, ((u >> shift) & one) * (~whole) + half, 0).astype(u.dtype)
    total = u + increment
    total[total < u] = top  # saturate where the addition wrapped
    return total & mask


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class BitroundCodec(ArrayArrayCodec):
    """Round each element to ``keepbits`` significant bits (lossy; decoding is a no-op)."""

    name: ClassVar[str] = "bitround"

    keepbits: int

    def __post_init__(self) -> None:
        if not isinstance(self.keepbits, int | np.integer) or isinstance(self.keepbits, bool) \
                or self.keepbits < 0:
            raise MetadataError(
                f"codec 'bitround': configuration field 'keepbits' must be a non-negative "
                f"integer, got {self.keepbits!r}"
            )
        object.__setattr__(self, "keepbits", int(self.keepbits))

    @classmethod
    def from_config(cls, configuration: Mapping[str, Any]) -> Self:
        if not isinstance(configuration, Mapping):
            raise MetadataError(
                f"codec 'bitround': configuration must be an object, got {configuration!r}"
            )
        unknown = set(configuration) - {"keepbits"}
        if unknown:
            raise MetadataError(
                f"codec 'bitround': unknown configuration field(s) {sorted(unknown)!r}; "
                "expected only 'keepbits'"
            )
        if "keepbits" not in configuration:
            raise MetadataError("codec 'bitround': configuration field 'keepbits' is required")
        return cls(keepbits=configuration["keepbits"])

    def to_config(self) -> dict[str, Any]:
        return {"keepbits": self.keepbits}

    def _layout(self, dtype: np.dtype) -> tuple[np.dtype, int | None]:
        found = layout(dtype)
        if found is None:
            raise MetadataError(
                f"codec 'bitround' cannot round the data type {dtype}: it rounds float16, "
                "bfloat16, float32, float64, complex64, complex128, integers and times"
            )
        return found

    def validate(self, spec: ChunkSpec) -> None:
        self._layout(spec.dtype)

    def round(self, values: np.ndarray, dtype: np.dtype) -> np.ndarray:
        """``values`` (of ``dtype``) rounded, as a new C-contiguous array of that shape."""
        unsigned, mantissa = self._layout(dtype)
        data = np.asarray(values, dtype=dtype, order="C")
        flat = data.reshape(-1).view(unsigned)
        return round_bits(flat, self.keepbits, mantissa).view(dtype).reshape(data.shape)

    def resolve_spec(self, spec: ChunkSpec) -> ChunkSpec:
        fill = self.round(np.asarray(spec.fill_value, dtype=spec.dtype), spec.dtype)
        return ChunkSpec(spec.shape, spec.dtype, fill[()])

    def encode(self, chunk: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        if chunk.shape != spec.shape:
            raise CodecError(
                f"codec 'bitround': chunk of shape {chunk.shape} does not match the chunk "
                f"shape {spec.shape}"
            )
        return self.round(chunk, spec.dtype)

    def decode(self, chunk: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        return chunk
