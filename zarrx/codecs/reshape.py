"""The ``reshape`` codec: give a chunk another shape, its elements in the same C order.

- Spec: https://github.com/zarr-developers/zarr-extensions/tree/main/codecs/reshape
- v3 name: ``reshape``
- v2 id: none. Draft URI: none.
- Configuration: ``shape``, one entry per encoded axis: a positive size, a list of decoded
  axes whose sizes multiply (``[]`` is 1), or ``-1`` (at most once: whatever makes the
  element counts equal). Axes named in lists must increase strictly across the whole
  ``shape`` (a reshape never transposes), and an axis given by a list must start where the
  decoded axes before its first one end and stop where those after its last one begin.
- Known incompatibilities: none known; zarrs writes it (no other peer here does).

Encoding and decoding are views whenever the chunk is C-contiguous (NumPy's ``reshape``).

Configuration example::

    >>> import numpy as np
    >>> from zarrx.abc.codec import ChunkSpec
    >>> codec = ReshapeCodec.from_config({"shape": [[0, 1], -1]})
    >>> codec.to_dict()
    {'name': 'reshape', 'configuration': {'shape': [[0, 1], -1]}}
    >>> codec.resolve_spec(ChunkSpec((2, 3, 4), np.dtype("int8"), np.int8(0))).shape
    (6, 4)
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Mapping
from typing import Any, ClassVar, Self

import numpy as np

from zarrx.abc.codec import ArrayArrayCodec, ChunkSpec
from zarrx.errors import CodecError, MetadataError

#: One encoded axis: a size, a tuple of decoded axes, or -1.
Dim = int | tuple[int, ...]


def _is_int(value: Any) -> bool:
    return isinstance(value, int | np.integer) and not isinstance(value, bool)


def _parse_shape(shape: Any) -> tuple[Dim, ...]:
    where = "codec 'reshape': configuration field 'shape'"
    if isinstance(shape, str | bytes) or not isinstance(shape, list | tuple):
        raise MetadataError(f"{where} must be a list, got {shape!r}")
    out: list[Dim] = []
    axes: list[int] = []
    for item in shape:
        if _is_int(item):
            if item < 1 and item != -1:
                raise MetadataError(f"{where}: sizes must be positive or -1, got {item!r}")
            out.append(int(item))
        elif isinstance(item, list | tuple) and all(_is_int(i) and i >= 0 for i in item):
            out.append(tuple(int(i) for i in item))
            axes.extend(int(i) for i in item)
        else:
            raise MetadataError(
                f"{where}: each entry must be a size, a list of input axes or -1, got {item!r}"
            )
    if out.count(-1) > 1:
        raise MetadataError(f"{where}: -1 may appear at most once, got {list(shape)!r}")
    if any(b <= a for a, b in itertools.pairwise(axes)):
        raise MetadataError(
            f"{where}: the input axes must increase strictly across the shape (a reshape "
            f"never transposes), got {list(shape)!r}"
        )
    return tuple(out)


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class ReshapeCodec(ArrayArrayCodec):
    """Reshape a chunk; ``ravel(encoded) == ravel(decoded)``."""

    name: ClassVar[str] = "reshape"

    shape: tuple[Dim, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "shape", _parse_shape(self.shape))

    @classmethod
    def from_config(cls, configuration: Mapping[str, Any]) -> Self:
        if not isinstance(configuration, Mapping):
            raise MetadataError(
                f"codec 'reshape': configuration must be an object, got {configuration!r}"
            )
        unknown = set(configuration) - {"shape"}
        if unknown:
            raise MetadataError(
                f"codec 'reshape': unknown configuration field(s) {sorted(unknown)!r}; "
                "expected only 'shape'"
            )
        if "shape" not in configuration:
            raise MetadataError("codec 'reshape': configuration field 'shape' is required")
        return cls(shape=configuration["shape"])

    def to_config(self) -> dict[str, Any]:
        return {"shape": [list(d) if isinstance(d, tuple) else d for d in self.shape]}

    def encoded_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        """The encoded shape of a chunk of ``shape``; MetadataError when it has none."""
        out = []
        for dim in self.shape:
            if isinstance(dim, tuple):
                if any(i >= len(shape) for i in dim):
                    raise MetadataError(
                        f"codec 'reshape': shape {self.to_config()['shape']} names an axis "
                        f"the {len(shape)}-dimensional chunk does not have"
                    )
                out.append(math.prod(shape[i] for i in dim))
            else:
                out.append(dim)
        total = math.prod(shape)
        if -1 in out:
            known = math.prod(d for d in out if d != -1)
            if total % known:
                raise MetadataError(
                    f"codec 'reshape': no size for -1 in {self.to_config()['shape']} gives "
                    f"the {total} elements of a chunk of shape {shape}"
                )
            out[out.index(-1)] = total // known
        if math.prod(out) != total:
            raise MetadataError(
                f"codec 'reshape': shape {self.to_config()['shape']} makes {tuple(out)} "
                f"({math.prod(out)} elements) of a chunk of shape {shape} ({total})"
            )
        for i, dim in enumerate(self.shape):
            if isinstance(dim, tuple) and dim and (
                math.prod(out[:i]) != math.prod(shape[:dim[0]])
                or math.prod(out[i + 1:]) != math.prod(shape[dim[-1] + 1:])
            ):
                raise MetadataError(
                    f"codec 'reshape': encoded axis {i} of {tuple(out)} is given by input "
                    f"axes {list(dim)} of {shape}, but the axes before and after it do not "
                    "hold as many elements as the input axes before and after those"
                )
        return tuple(out)

    def validate(self, spec: ChunkSpec) -> None:
        self.encoded_shape(spec.shape)

    def resolve_spec(self, spec: ChunkSpec) -> ChunkSpec:
        return ChunkSpec(self.encoded_shape(spec.shape), spec.dtype, spec.fill_value)

    def encode(self, chunk: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        if chunk.shape != spec.shape:
            raise CodecError(
                f"codec 'reshape': chunk of shape {chunk.shape} does not match the chunk "
                f"shape {spec.shape}"
            )
        return chunk.reshape(self.encoded_shape(spec.shape))

    def decode(self, chunk: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        expected = self.encoded_shape(spec.shape)
        if chunk.shape != expected:
            raise CodecError(
                f"codec 'reshape': encoded chunk of shape {chunk.shape} does not match the "
                f"expected shape {expected}"
            )
        return chunk.reshape(spec.shape)
