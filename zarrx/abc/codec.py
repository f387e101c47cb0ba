"""The codec contract: array→array, array→bytes and bytes→bytes codecs (Zarr v3 §codecs).

A codec object is immutable and holds its own configuration. The pipeline prepares a chain
once per chunk shape: it calls :meth:`Codec.evolve` to fill dtype-dependent defaults, then
:meth:`Codec.validate`, then reuses the chain for every chunk of that shape.

Decoders never trust sizes written in the data: a bytes→bytes codec is told the largest
output it may produce (``max_size``) and raises :class:`zarrx.errors.CodecError` rather
than allocating more.

Capabilities. Besides encoding and decoding, a codec may declare what the engine's fast
paths need; the defaults here say "not capable" (or do the general thing), so a codec that
declares nothing works everywhere, and one that declares a capability joins the fast path
that uses it, whatever its type:

- array→bytes: :meth:`ArrayBytesCodec.image_dtype` ("my encoded bytes are the C-order image
  of the chunk in this dtype": the chunk can be laid out, read in part, decoded in batches)
  and :attr:`ArrayBytesCodec.writes_any_layout` (:meth:`~ArrayBytesCodec.decode_into`
  writes any strided array without a chunk-sized buffer, as sharding does);
- bytes→bytes: :meth:`BytesBytesCodec.decode_into` (into a given buffer),
  :meth:`~BytesBytesCodec.decode_span` (part of a frame), :meth:`~BytesBytesCodec.partial_kind`
  (read in part from a store), :meth:`~BytesBytesCodec.shuffled_layout` (a byte shuffle
  done by the layout pass) and :meth:`~BytesBytesCodec.native_step` (C functions the batch
  kernels call without the GIL; see :class:`NativeStep`).
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


@dataclass(frozen=True)
class NativeStep:
    """A bytes→bytes codec as C functions that the batch kernels (:mod:`zarrx._core.batch`)
    call for every chunk of a batch, without the GIL and without Python in between.

    The functions, given by address (0: none), follow this ABI (``zarrx/_core/steps.pxd``)::

        Py_ssize_t decode(const void* context, void** state,
                          const unsigned char* src, Py_ssize_t n,
                          unsigned char* dst, Py_ssize_t capacity,
                          const unsigned char** out);
        Py_ssize_t encode(const void* context, void** state,
                          const unsigned char* src, Py_ssize_t n,
                          unsigned char* dst, Py_ssize_t capacity);
        void release(const void* context, void* state);

    ``decode`` reads exactly the ``n`` bytes at ``src`` (never more: they come from a
    store) and writes at most ``capacity`` bytes at ``dst``; it returns how many bytes the
    data decodes to and sets ``*out`` to where they are (``dst``, or a part of ``src`` for a
    step that only strips bytes, such as a checksum), or -1 when the data cannot be decoded
    into ``capacity`` bytes (corrupt, truncated, too large). ``encode`` writes at most
    ``capacity`` bytes (at least :meth:`BytesBytesCodec.max_encoded_size` of ``n``) and
    returns how many, -1 on failure, or -2 to leave this input to the codec's Python
    :meth:`~BytesBytesCodec.encode`. The bytes a step makes must be those of the codec's
    Python methods. ``context`` is passed as given and is only read, by any number of
    threads at once; ``owner`` keeps it (and the code) alive. ``*state`` is ``NULL`` at the
    start of each kernel call and is the step's own for that call (e.g. a decompression
    context reused across its chunks); ``release``, when given, is called once at the end
    of the call if ``*state`` is not ``NULL``. A step may be a ctypes callback (it takes
    the GIL itself); the built-in steps are C functions of :mod:`zarrx._core.steps`.
    """

    decode: int = 0
    encode: int = 0
    context: int = 0
    release: int = 0
    owner: Any = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class ShuffledLayout:
    """A bytes→bytes codec's byte shuffle, done by the layout pass that writes a chunk's
    image: the image is written byte-shuffled in blocks of ``blocksize`` bytes (byte ``j``
    of element ``i`` of a block of ``m`` elements at ``j * m + i``; c-blosc 1's shuffle),
    and ``step``'s encode function then makes of it the bytes the codec's
    :meth:`~BytesBytesCodec.encode` makes of the plain image, or declines (-2)."""

    blocksize: int
    step: NativeStep


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

    # -- capabilities ------------------------------------------------------------------

    #: Whether :meth:`decode_into` writes a chunk into any strided array without a
    #: chunk-sized buffer in between (sharding: each inner chunk straight to its place).
    writes_any_layout: ClassVar[bool] = False

    def image_dtype(self, spec: ChunkSpec) -> np.dtype | None:
        """The dtype ``X`` such that :meth:`encode` gives the C-order image of the chunk in
        ``X`` (its memory, as ``np.ascontiguousarray(chunk, X)`` holds it) and
        :meth:`decode` reads that image back; ``None`` (the default) when the encoded
        bytes are anything else. Chains whose array→bytes codec says so are laid out,
        read in part and decoded in batches by the engine's kernels."""
        return None

    def decode_into(self, data: Buffer, spec: ChunkSpec, out: np.ndarray) -> None:
        """Decode into ``out`` (``spec.shape`` and ``spec.dtype``, any strides). This
        default copies :meth:`decode`'s result; a codec that writes the chunk in place
        overrides it and sets :attr:`writes_any_layout`."""
        out[...] = self.decode(data, spec)


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

    # -- capabilities ------------------------------------------------------------------

    def decode_span(self, data: Buffer, start: int, stop: int, out: Any) -> bool:
        """Decode at least bytes ``[start, stop)`` of ``data`` into ``out`` (a writable
        byte buffer of the whole decoded size; its other bytes are left meaningless) and
        return ``True``; or return ``False`` (the default), having written nothing anyone
        may read, when only a whole decode can."""
        return False

    def partial_kind(self) -> Any:
        """The :class:`zarrx.codecs.partial.PartialRead` subclass (or the name of one in
        that module) that reads this codec's frames in part from a store (e.g. a Blosc
        frame's header, then its blocks), when it is the chain's only bytes→bytes codec
        after an image (see :meth:`ArrayBytesCodec.image_dtype`); ``None`` (the default):
        frames are read whole."""
        return None

    def shuffled_layout(self, itemsize: int, nbytes: int) -> ShuffledLayout | None:
        """How the layout pass may do this codec's byte shuffle for images of ``nbytes``
        bytes of ``itemsize``-byte elements (see :class:`ShuffledLayout`); ``None`` (the
        default): the image is laid out plain and :meth:`encode` shuffles it."""
        return None

    def native_step(self) -> NativeStep | None:
        """This codec as C functions for the batch kernels (see :class:`NativeStep`), or
        ``None`` (the default): chains holding it are decoded and encoded chunk by chunk.
        Asked once per prepared chain."""
        return None
