"""The codec contract: array→array, array→bytes and bytes→bytes codecs (Zarr v3 §codecs).

A codec object is immutable and holds its own configuration. The pipeline prepares a chain
once per chunk shape: it calls :meth:`Codec.evolve` to fill dtype-dependent defaults, then
:meth:`Codec.validate`, then reuses the chain for every chunk of that shape.

Decoders never trust sizes written in the data: a bytes→bytes codec is told the largest
output it may produce (``max_size``) and raises :class:`zarrx.errors.CodecError` rather
than allocating more.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Self

import numpy as np

from zarrx.errors import CodecError

#: Anything exposing the buffer protocol: bytes, bytearray, memoryview, numpy arrays.
Buffer = Any


@dataclass(frozen=True)
class ChunkSpec:
    """What a codec sees of one chunk: its shape, native-endian dtype and fill value."""

    shape: tuple[int, ...]
    dtype: np.dtype
    #: A NumPy scalar of ``dtype``. Compared through ``fill_key``, not itself: NaN and
    #: void scalars do not compare equal to themselves.
    fill_value: Any = field(compare=False, hash=False)
    #: The fill value's bits (its repr for object and variable-length strings). Part of
    #: equality and hashing: arrays with the same codecs share one pipeline (see
    #: ``CodecPipeline.from_json``), and a chain or shard layout prepared for one array's
    #: fill value must never serve another's (a shard would then leave out, as "fill",
    #: inner chunks that are not).
    fill_key: Any = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "fill_key", _fill_key(self.dtype, self.fill_value))

    @property
    def nbytes(self) -> int:
        n = self.dtype.itemsize
        for s in self.shape:
            n *= s
        return n


def _fill_key(dtype: np.dtype, value: Any) -> Any:
    if dtype.hasobject or dtype.kind == "T":
        return repr(value)
    try:
        return np.asarray(value, dtype=dtype).tobytes()
    except (TypeError, ValueError):
        return repr(value)


class Codec(ABC):
    """Common part of every codec."""

    #: Canonical Zarr v3 name, e.g. ``"blosc"`` or ``"numcodecs.delta"``.
    name: ClassVar[str]
    #: Other names that resolve to this codec (v2 ids, draft URIs).
    aliases: ClassVar[tuple[str, ...]] = ()

    @classmethod
    @abstractmethod
    def from_config(cls, configuration: Mapping[str, Any]) -> Self:
        """Build from the ``configuration`` object of the metadata (``{}`` when absent).

        Raises :class:`zarrx.errors.MetadataError` naming the bad field.
        """

    @abstractmethod
    def to_config(self) -> dict[str, Any]:
        """The ``configuration`` object to write; ``{}`` when there is none."""

    def to_dict(self) -> dict[str, Any]:
        """The metadata form ``{"name": ..., "configuration": {...}}``."""
        config = self.to_config()
        return {"name": self.name, "configuration": config} if config else {"name": self.name}

    def evolve(self, spec: ChunkSpec) -> Self:
        """Fill defaults that depend on the chunk (e.g. blosc ``typesize``)."""
        return self

    def validate(self, spec: ChunkSpec) -> None:  # noqa: B027 - optional hook
        """Raise :class:`zarrx.errors.MetadataError` if this codec cannot encode ``spec``."""

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash((type(self), repr(self.to_dict())))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.to_config()!r})"


class ArrayArrayCodec(Codec):
    """Transforms an array into another array (e.g. ``transpose``)."""

    @abstractmethod
    def resolve_spec(self, spec: ChunkSpec) -> ChunkSpec:
        """The spec of the encoded array, given the spec of the decoded one."""

    @abstractmethod
    def encode(self, chunk: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        """``spec`` describes ``chunk`` (the decoded side)."""

    @abstractmethod
    def decode(self, chunk: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        """``spec`` describes the result (the decoded side)."""


class ArrayBytesCodec(Codec):
    """Serialises an array into bytes (``bytes``, ``sharding_indexed``, ``vlen-utf8``)."""

    @abstractmethod
    def encode(self, chunk: np.ndarray, spec: ChunkSpec) -> Buffer:
        """Serialise ``chunk`` (shape and dtype of ``spec``)."""

    @abstractmethod
    def decode(self, data: Buffer, spec: ChunkSpec) -> np.ndarray:
        """Return an array of ``spec.shape`` and ``spec.dtype`` (may be read-only)."""

    def encoded_size(self, spec: ChunkSpec) -> int | None:
        """Exact encoded size when it depends only on ``spec``; ``None`` when variable."""
        return None

    def max_encoded_size(self, spec: ChunkSpec) -> int | None:
        """An upper bound of the encoded size, or ``None`` when unbounded."""
        return self.encoded_size(spec)

    def inner_chunks(self, spec: ChunkSpec) -> Any:
        """A capability: when this codec stores a chunk of ``spec`` as many inner chunks
        and an index (sharding), the chunk seen as a store of them — what the engine then
        plans, reads and writes inner chunk by inner chunk (for ``sharding_indexed``, a
        :class:`~zarrx.codecs.sharding.ShardLayout`). ``None``, the default: the chunk is
        one value."""
        return None


class BytesBytesCodec(Codec):
    """Transforms bytes into bytes (compressors, checksums)."""

    @abstractmethod
    def encode(self, data: Buffer) -> Buffer:
        """Encode a contiguous buffer."""

    @abstractmethod
    def decode(self, data: Buffer, max_size: int | None) -> Buffer:
        """Decode, producing at most ``max_size`` bytes (when not ``None``).

        Raises :class:`zarrx.errors.CodecError` on corrupt or oversized input.
        """

    def decode_into(self, data: Buffer, out: Buffer) -> None:
        """Decode into ``out``, a writable contiguous buffer of exactly the decoded size.

        The engine decodes into the output array or a reused buffer this way. This default
        copies :meth:`decode`'s result; codecs whose library writes into a given buffer
        (blosc, zstd) override it to skip the allocation and the copy.
        """
        target = memoryview(out).cast("B")
        decoded = memoryview(self.decode(data, target.nbytes)).cast("B")
        if decoded.nbytes != target.nbytes:
            raise CodecError(
                f"codec {self.name!r}: decoded {decoded.nbytes} bytes, expected {target.nbytes}"
            )
        target[:] = decoded

    @abstractmethod
    def max_encoded_size(self, n: int) -> int:
        """The largest output :meth:`encode` can produce for ``n`` input bytes."""
