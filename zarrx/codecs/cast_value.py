"""The ``cast_value`` codec: store each element as its value cast to another numeric type.

- Spec: https://github.com/zarr-developers/zarr-extensions/tree/main/codecs/cast_value
- v3 name: ``cast_value``
- v2 id: none. Draft URI: none.
- Configuration: ``data_type`` (the stored type: an integer or float type), ``rounding``
  (``nearest-even`` by default, ``towards-zero``, ``towards-positive``, ``towards-negative``,
  ``nearest-away``), ``out_of_range`` (absent: an error; ``clamp``; ``wrap``, integer types
  only) and ``scalar_map`` (``{"encode": [[in, out], ...], "decode": [...]}``, each scalar
  in the fill value encoding of its type). Written as zarr-python 3.4 writes it: the
  defaults left out.
- The casts themselves: :mod:`zarrx.codecs.casting` (exact; zarr-python 3.4's backend,
  cast-value-rs, is the reference, and zarrs for the types it does not take). The fill
  value is cast like an element (an error when it cannot be). Decoding casts back with the
  same rounding and range rules and the ``decode`` map.
- Data types: ``int8``…``uint64``, ``float16``/``32``/``64`` and the machine-learning
  integers and floats (``zarrx[ml]``), except ``float8_e8m0fnu``.
- Known incompatibilities: a key repeated in a ``scalar_map`` list takes its first value,
  as the spec says (zarr-python 3.4 keeps the last); zarr-python 3.4 (cast-value-rs 0.5)
  casts none of the machine-learning types. Like zarr-python, zarrx does not refuse a fill
  value that does not survive the cast there and back (the spec says it should).

Configuration example::

    >>> import numpy as np
    >>> from zarrx.abc.codec import ChunkSpec
    >>> codec = CastValueCodec.from_config({"data_type": "uint8", "out_of_range": "clamp",
    ...                                     "scalar_map": {"encode": [["NaN", 0]],
    ...                                                    "decode": [[0, "NaN"]]}})
    >>> codec.to_dict()["configuration"]["scalar_map"]
    {'encode': [['NaN', 0]], 'decode': [[0, 'NaN']]}
    >>> spec = ChunkSpec((4,), np.dtype("float64"), np.float64("nan"))
    >>> codec = codec.evolve(spec)
    >>> encoded = codec.encode(np.array([np.nan, 1.5, 2.5, 300.0]), spec)
    >>> encoded.tolist()
    [0, 2, 2, 255]
    >>> codec.decode(encoded, spec).tolist()
    [nan, 2.0, 2.0, 255.0]
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, ClassVar, Self

import numpy as np

from zarrx.abc.codec import ArrayArrayCodec, ChunkSpec
from zarrx.codecs.casting import OUT_OF_RANGE, ROUNDINGS, cast, numeric
from zarrx.errors import CodecError, MetadataError

_FIELDS = ("data_type", "rounding", "out_of_range", "scalar_map")


def data_type_of(value: Any, *, where: str) -> Any:
    """A v3 ``data_type`` value resolved through the registry (``.dtype``, fill codecs)."""
    from zarrx.data_types.struct import resolve

    try:
        return resolve(value)
    except MetadataError as e:
        raise type(e)(f"{where}: {e}") from None


def data_type_for(dtype: np.dtype) -> Any:
    """The data type object of a NumPy dtype (its fill value codecs read scalars' JSON)."""
    from zarrx.data_types.core import DataType
    from zarrx.data_types.ml import MLDataType, ml_name

    return MLDataType.from_numpy(dtype) if ml_name(dtype) else DataType.from_numpy(dtype)


def _pairs(value: Any, direction: str) -> tuple[tuple[Any, Any], ...]:
    where = f"codec 'cast_value': scalar_map {direction!r}"
    if not isinstance(value, list | tuple):
        raise MetadataError(f"{where} must be a list of [input, output] pairs, got {value!r}")
    pairs = []
    for pair in value:
        if not isinstance(pair, list | tuple) or len(pair) != 2:
            raise MetadataError(f"{where}: each entry must be [input, output], got {pair!r}")
        pairs.append((pair[0], pair[1]))
    return tuple(pairs)


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class CastValueCodec(ArrayArrayCodec):
    """Cast values to ``data_type`` on encode and back on decode."""

    name: ClassVar[str] = "cast_value"

    data_type: Any  # the resolved data type object (``.dtype``, ``.to_json()``)
    rounding: str = "nearest-even"
    out_of_range: str | None = None
    encode_map: tuple[tuple[Any, Any], ...] | None = None  # JSON pairs, as written
    decode_map: tuple[tuple[Any, Any], ...] | None = None
    #: The array-side dtype this codec was evolved for, and the maps parsed for it.
    source: np.dtype | None = dataclasses.field(default=None, compare=False)
    _parsed: tuple[tuple[tuple[Any, Any], ...], tuple[tuple[Any, Any], ...]] = (
        dataclasses.field(default=((), ()), compare=False))

    def __post_init__(self) -> None:
        if self.rounding not in ROUNDINGS:
            raise MetadataError(
                f"codec 'cast_value': rounding must be one of {list(ROUNDINGS)}, "
                f"got {self.rounding!r}"
            )
        if self.out_of_range not in OUT_OF_RANGE:
            raise MetadataError(
                f"codec 'cast_value': out_of_range must be 'clamp' or 'wrap' (or absent), "
                f"got {self.out_of_range!r}"
            )
        target = self.target
        if numeric(target) is None:
            raise MetadataError(
                f"codec 'cast_value': data_type must be an integer or float type (not "
                f"float8_e8m0fnu), got {self.data_type.to_json()!r}"
            )
        kind = numeric(target)
        if self.out_of_range == "wrap" and not (kind is not None and kind.integer):
            raise MetadataError(
                f"codec 'cast_value': out_of_range 'wrap' needs an integer data_type, got "
                f"{self.data_type.to_json()!r}"
            )

    @property
    def target(self) -> np.dtype:
        return np.dtype(self.data_type.dtype)

    @classmethod
    def from_config(cls, configuration: Mapping[str, Any]) -> Self:
        if not isinstance(configuration, Mapping):
            raise MetadataError(
                f"codec 'cast_value': configuration must be an object, got {configuration!r}"
            )
        unknown = set(configuration) - set(_FIELDS)
        if unknown:
            raise MetadataError(
                f"codec 'cast_value': unknown configuration field(s) {sorted(unknown)!r}; "
                f"expected {', '.join(_FIELDS)}"
            )
        if "data_type" not in configuration:
            raise MetadataError("codec 'cast_value': configuration field 'data_type' is "
                                "required")
        scalar_map = configuration.get("scalar_map")
        if scalar_map is not None and (not isinstance(scalar_map, Mapping)
                                       or set(scalar_map) - {"encode", "decode"}):
            raise MetadataError(
                f"codec 'cast_value': scalar_map must be an object with 'encode' and/or "
                f"'decode', got {scalar_map!r}"
            )
        scalar_map = scalar_map or {}
        return cls(
            data_type=data_type_of(configuration["data_type"], where="codec 'cast_value'"),
            rounding=configuration.get("rounding", "nearest-even"),
            out_of_range=configuration.get("out_of_range"),
            encode_map=_pairs(scalar_map["encode"], "encode") if "encode" in scalar_map
            else None,
            decode_map=_pairs(scalar_map["decode"], "decode") if "decode" in scalar_map
            else None,
        )

    def to_config(self) -> dict[str, Any]:
        config: dict[str, Any] = {"data_type": self.data_type.to_json()}
        if self.rounding != "nearest-even":
            config["rounding"] = self.rounding
        if self.out_of_range is not None:
            config["out_of_range"] = self.out_of_range
        if self.encode_map is not None or self.decode_map is not None:
            config["scalar_map"] = {
                direction: [list(p) for p in pairs]
                for direction, pairs in (("encode", self.encode_map),
                                         ("decode", self.decode_map)) if pairs is not None
            }
        return config

    # -- bound to the array's data type ---------------------------------------------------
    def _parse_maps(self, source: np.dtype
                    ) -> tuple[tuple[tuple[Any, Any], ...], tuple[tuple[Any, Any], ...]]:
        """The maps as NumPy scalars: encode (source → target), decode (target → source)."""
        types = {"source": data_type_for(source), "target": self.data_type}
        out = []
        for pairs, key_of, value_of, direction in (
            (self.encode_map, "source", "target", "encode"),
            (self.decode_map, "target", "source", "decode"),
        ):
            parsed = []
            for key, value in pairs or ():
                try:
                    parsed.append((types[key_of].fill_from_json(key),
                                   types[value_of].fill_from_json(value)))
                except MetadataError as e:
                    raise MetadataError(
                        f"codec 'cast_value': scalar_map {direction!r} entry {[key, value]!r}: "
                        f"{e}"
                    ) from None
            out.append(tuple(parsed))
        return out[0], out[1]

    def _bound_to(self, dtype: np.dtype) -> bool:
        # (not ``==``: NumPy reads ``None`` as float64)
        return self.source is not None and self.source == dtype

    def evolve(self, spec: ChunkSpec) -> Self:
        if self._bound_to(spec.dtype):
            return self
        self.validate(spec)
        return dataclasses.replace(self, source=spec.dtype, _parsed=self._parse_maps(spec.dtype))

    def validate(self, spec: ChunkSpec) -> None:
        if numeric(spec.dtype) is None:
            raise MetadataError(
                f"codec 'cast_value' casts integer and float arrays (not float8_e8m0fnu), "
                f"not {spec.dtype}"
            )
        self._parse_maps(spec.dtype)

    def _bound(self, spec: ChunkSpec) -> Self:
        return self if self._bound_to(spec.dtype) else self.evolve(spec)

    def resolve_spec(self, spec: ChunkSpec) -> ChunkSpec:
        bound = self._bound(spec)
        try:
            fill = bound._cast(np.asarray(spec.fill_value, dtype=spec.dtype), True)
        except CodecError as e:
            raise MetadataError(f"codec 'cast_value': the fill value: {e}") from None
        return ChunkSpec(spec.shape, self.target, fill[()])

    def _cast(self, values: np.ndarray, encode: bool) -> np.ndarray:
        target = self.target if encode else self.source
        assert target is not None
        return cast(values, target, self.rounding, self.out_of_range,
                    self._parsed[0 if encode else 1])

    def encode(self, chunk: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        if chunk.shape != spec.shape:
            raise CodecError(
                f"codec 'cast_value': chunk of shape {chunk.shape} does not match the chunk "
                f"shape {spec.shape}"
            )
        return self._bound(spec)._cast(chunk, True)

    def decode(self, chunk: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        return self._bound(spec)._cast(chunk, False)
