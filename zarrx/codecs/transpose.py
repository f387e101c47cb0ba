"""The ``transpose`` codec: permute the axes of a chunk before it is serialised.

- Spec: https://zarr-specs.readthedocs.io/en/latest/v3/codecs/transpose/index.html
- v3 name: ``transpose``
- v2 id: none (Zarr v2 has only ``order: "C" | "F"``)
- Draft URI: none (the 2020 draft has ``chunk_memory_layout`` instead)
- Known incompatibilities: the pre-2023 drafts of the v3 spec (and zarr-python 3 alphas)
  also allowed ``"order": "C"`` / ``"F"``; the final spec and zarr-python 3.1 accept only
  a permutation, and so does zarrx.

``order[i]`` is the decoded axis that becomes encoded axis ``i``. Decoding returns a
transposed *view* (no copy): the engine's kernel copies strided views efficiently.

Configuration example::

    >>> import numpy as np
    >>> from zarrx.abc.codec import ChunkSpec
    >>> codec = TransposeCodec.from_config({"order": [1, 0]})
    >>> codec.to_dict()
    {'name': 'transpose', 'configuration': {'order': [1, 0]}}
    >>> spec = ChunkSpec((2, 3), np.dtype("int8"), np.int8(0))
    >>> codec.resolve_spec(spec).shape
    (3, 2)
    >>> x = np.arange(6, dtype="int8").reshape(2, 3)
    >>> encoded = codec.encode(x, spec)
    >>> encoded.shape, encoded.flags.c_contiguous
    ((3, 2), True)
    >>> bool((codec.decode(encoded, spec) == x).all())
    True
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, ClassVar, Self

import numpy as np

from zarrx.abc.codec import ArrayArrayCodec, ChunkSpec
from zarrx.errors import CodecError, MetadataError

_FIELDS = frozenset({"order"})


def _parse_order(order: Any) -> tuple[int, ...]:
    if isinstance(order, str | bytes) or not isinstance(order, list | tuple):
        raise MetadataError(
            f"codec 'transpose': configuration field 'order' must be a list of integers, "
            f"got {order!r}"
        )
    if not all(isinstance(i, int | np.integer) and not isinstance(i, bool) for i in order):
        raise MetadataError(
            f"codec 'transpose': configuration field 'order' must contain only integers, "
            f"got {order!r}"
        )
    parsed = tuple(int(i) for i in order)
    if sorted(parsed) != list(range(len(parsed))):
        raise MetadataError(
            f"codec 'transpose': configuration field 'order' must be a permutation of "
            f"0..{len(parsed) - 1}, got {list(parsed)!r}"
        )
    return parsed


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class TransposeCodec(ArrayArrayCodec):
    """Permute the axes of a chunk: encoded axis ``i`` is decoded axis ``order[i]``."""

    name: ClassVar[str] = "transpose"
    aliases: ClassVar[tuple[str, ...]] = ()

    order: tuple[int, ...]
    _inverse: tuple[int, ...] = dataclasses.field(init=False, compare=False)

    def __post_init__(self) -> None:
        order = _parse_order(self.order)
        object.__setattr__(self, "order", order)
        object.__setattr__(self, "_inverse", tuple(int(i) for i in np.argsort(order)))

    @classmethod
    def from_config(cls, configuration: Mapping[str, Any]) -> Self:
        if not isinstance(configuration, Mapping):
            raise MetadataError(
                f"codec 'transpose': configuration must be an object, got {configuration!r}"
            )
        unknown = set(configuration) - _FIELDS
        if unknown:
            raise MetadataError(
                f"codec 'transpose': unknown configuration field(s) {sorted(unknown)!r}; "
                "expected only 'order'"
            )
        if "order" not in configuration:
            raise MetadataError("codec 'transpose': configuration field 'order' is required")
        return cls(order=configuration["order"])

    def to_config(self) -> dict[str, Any]:
        return {"order": list(self.order)}

    def validate(self, spec: ChunkSpec) -> None:
        if len(self.order) != len(spec.shape):
            raise MetadataError(
                f"codec 'transpose': configuration field 'order' {list(self.order)!r} has "
                f"{len(self.order)} entries but the chunk has {len(spec.shape)} dimensions"
            )

    def resolve_spec(self, spec: ChunkSpec) -> ChunkSpec:
        self.validate(spec)
        shape = tuple(spec.shape[i] for i in self.order)
        return ChunkSpec(shape=shape, dtype=spec.dtype, fill_value=spec.fill_value)

    def encode(self, chunk: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        if chunk.shape != spec.shape:
            raise CodecError(
                f"codec 'transpose': chunk of shape {chunk.shape} does not match the chunk "
                f"shape {spec.shape}"
            )
        return np.ascontiguousarray(chunk.transpose(self.order))

    def decode(self, chunk: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        expected = tuple(spec.shape[i] for i in self.order)
        if chunk.shape != expected:
            raise CodecError(
                f"codec 'transpose': encoded chunk of shape {chunk.shape} does not match "
                f"the expected shape {expected}"
            )
        return chunk.transpose(self._inverse)
