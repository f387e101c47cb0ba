"""The codec chain of an array: array→array codecs, one array→bytes codec, bytes→bytes codecs.

A :class:`CodecPipeline` is built once per array from its metadata; :meth:`prepare` resolves
it for one chunk shape (dtype-dependent defaults, intermediate specs and the size bound each
bytes→bytes decoder may produce) and the result is cached and reused for every chunk of
that shape.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np

from zarrx import registry
from zarrx._core.assemble import copy_strided
from zarrx.abc.codec import ArrayArrayCodec, ArrayBytesCodec, BytesBytesCodec, ChunkSpec, Codec
from zarrx.config import get as setting
from zarrx.errors import CodecError, MetadataError
from zarrx.runtime.scratch import scratch

if TYPE_CHECKING:  # loaded with the first chain that can read in part, or in batches
    from zarrx.codecs.native import BatchDecoder, BatchEncoder
    from zarrx.codecs.partial import PartialRead


def codec_from_json(value: Any, *, where: str) -> Codec:
    """Build a codec from its metadata form (``{"name": ..., "configuration": ...}``)."""
    if isinstance(value, str):
        value = {"name": value}
    if not isinstance(value, Mapping) or not isinstance(value.get("name"), str):
        raise MetadataError(f"{where}: a codec must be an object with a 'name', got {value!r}")
    extra = set(value) - {"name", "configuration"}
    if extra:
        raise MetadataError(f"{where}: codec {value['name']!r} has unknown keys {sorted(extra)}")
    config = value.get("configuration", {})
    if not isinstance(config, Mapping):
        raise MetadataError(f"{where}: configuration of codec {value['name']!r} must be an object")
    name = value["name"]
    try:
        cls = registry.codecs.find(name)
        if cls is None and name.startswith("numcodecs."):
            # A numcodecs codec another package registers with numcodecs, not with zarrx.
            from zarrx.codecs.numcodecs_compat import numcodecs_v3

            return numcodecs_v3(name.removeprefix("numcodecs."), config)
        if cls is None:
            cls = registry.codecs.get(name)
        return cls.from_config(config)
    except MetadataError as e:
        raise type(e)(f"{where}: {e}") from None


def coerce_codec(value: Any, *, where: str) -> Codec:
    """Accept a codec object, a metadata dict (v3 ``name`` or v2 ``id`` form), a
    numcodecs codec object or a zarr-python one."""
    if isinstance(value, Codec):
        return value
    if hasattr(value, "to_dict") and not isinstance(value, Mapping):
        from zarrx.codecs.zarr_python_compat import codec_json, is_zarr_python_codec

        if is_zarr_python_codec(value):
            value = codec_json(value, where=where)
    if hasattr(value, "get_config") and hasattr(value, "codec_id"):
        value = dict(value.get_config())
    if isinstance(value, Mapping) and "id" in value and "name" not in value:
        from zarrx.codecs.numcodecs_compat import numcodecs_codec

        return numcodecs_codec(value["id"], value)
    return codec_from_json(value, where=where)


#: Parsed pipelines by their canonical JSON (see :meth:`CodecPipeline.from_json`), with the
#: :func:`resolution_state` they were parsed in.
_SHARED: dict[str, tuple[Any, CodecPipeline]] = {}


def resolution_state() -> tuple[int, bool]:
    """What parsing a codec list depends on besides the list: the registry's bindings and
    whether unpickling codecs are allowed. A cache of parsed metadata is valid while this
    stays the same (read it before parsing: a change during the parse is then not missed)."""
    return registry.generation(), setting("allow_pickle")


@dataclass(frozen=True)
class PreparedChain:
    """A pipeline resolved for one chunk spec: ready to encode and decode chunks."""

    spec: ChunkSpec
    array_array: tuple[tuple[ArrayArrayCodec, ChunkSpec], ...]
    array_bytes: ArrayBytesCodec
    bytes_spec: ChunkSpec
    bytes_bytes: tuple[tuple[BytesBytesCodec, int | None], ...]  # (codec, max decoded size)

    def decode(self, data: Any) -> np.ndarray:
        """Stored bytes → array of ``spec.shape`` (any byte order or strides; maybe read-only)."""
        for codec, max_size in reversed(self.bytes_bytes):
            data = codec.decode(data, max_size)
        return self._from_bytes(data)

    def decoded(
        self, data: Any, selection: tuple[Any, ...] | None = None
    ) -> AbstractContextManager[np.ndarray]:
        """:meth:`decode`, for a chunk that is only read inside the ``with`` block: the
        innermost bytes→bytes codec decodes into a per-thread scratch buffer that the
        next chunk reuses, instead of fresh memory. With ``selection`` (a slice or index
        per axis, or index arrays) only ``chunk[selection]`` is read from it: a chain
        that can decode part of a frame (``bytes`` then an lz4 ``blosc``) may then decode
        only the bytes from the selection's first element to its last, when that is a
        small share of the chunk (:func:`zarrx.codecs.partial.in_memory_span`); the other
        elements of the chunk yielded are then meaningless."""
        if self._scratch_size is None:
            return nullcontext(self.decode(data))
        return _Decoded(self, data, selection)

    @cached_property
    def _spans(self) -> Any:
        """The rule giving the decoded bytes ``[start, stop)`` of a chunk a selection
        needs (``None``: not worth a part) when this chain's one bytes→bytes codec reads
        frames in part (``bytes`` then ``blosc``: ``BloscCodec.decode_span``); else
        ``None``."""
        if self._partial_kind is None or not self.bytes_bytes:
            return None
        from zarrx.codecs.partial import in_memory_span  # loaded already

        return in_memory_span

    @cached_property
    def batch_decoder(self) -> BatchDecoder | None:
        """Decodes and places many chunks of this chain in one call without the GIL
        (:class:`zarrx.codecs.native.BatchDecoder`), or ``None`` when the chain cannot
        (then chunks are decoded one by one: :func:`zarrx.runtime.place.place`)."""
        from zarrx.codecs import native

        return native.batch_decoder(self)

    @cached_property
    def _batch_encoder(self) -> BatchEncoder | None:
        from zarrx.codecs import native

        return native.batch_encoder(self)

    def __getstate__(self) -> dict[str, Any]:
        """The chain without its batch decoder and encoder (C functions and contexts of
        this process), which are made again where it is unpickled."""
        return {k: v for k, v in self.__dict__.items()
                if k not in ("batch_decoder", "_batch_encoder")}

    def decode_into(self, data: Any, out: np.ndarray) -> bool:
        """Decode straight into ``out`` when it is the whole chunk and either its memory is
        the stored bytes' image (C order, the stored dtype, only bytes→bytes codecs after
        ``bytes``: the decompressor writes the output itself) or the chain is an
        array→bytes codec that writes any layout (sharding: each inner chunk goes to its
        place). Returns ``False``, having done nothing, otherwise."""
        if out.shape != self.spec.shape or not out.flags.writeable:
            return False
        if self._decodes_into_any_layout:
            if out.dtype != self.spec.dtype:
                return False
            self.array_bytes.decode_into(data, self.bytes_spec, out)
            return True
        if (
            self._image_dtype is None
            or out.dtype != self._image_dtype
            or not out.flags.c_contiguous
        ):
            return False
        for codec, max_size in reversed(self.bytes_bytes[1:]):
            data = codec.decode(data, max_size)
        self.bytes_bytes[0][0].decode_into(data, out.reshape(-1).view(np.uint8))
        return True

    def partial_read(self, chunk_selection: tuple[Any, ...]) -> PartialRead | None:
        """A read of only the stored bytes that ``chunk_selection`` (a slice per axis)
        needs, when this chain can decode part of a chunk and the selection is small
        enough to be worth it (:mod:`zarrx.codecs.partial`); ``None``: read it whole."""
        kind = self._partial_kind
        if kind is None:
            return None
        stored = self._stored_dtype
        span = kind.touched(self.spec.shape, stored.itemsize, chunk_selection)
        return None if span is None else kind(self._nbytes, stored, self.spec.shape, *span)

    def reads_in_part(self) -> bool:
        """Whether some selections of a chunk are read in part (cheap: asked per batch)."""
        kind = self._partial_kind
        return kind is not None and kind.worth_it(self._nbytes)

    @cached_property
    def _partial_kind(self) -> type[PartialRead] | None:
        """How chunks of this chain are read in part, or ``None`` when they are only
        read whole: the chunks must be images (no array→array codec, an array→bytes codec
        with an :meth:`~zarrx.abc.codec.ArrayBytesCodec.image_dtype`), with no
        bytes→bytes codec or one that reads its frames in part
        (:meth:`~zarrx.abc.codec.BytesBytesCodec.partial_kind`; a checksum needs every
        byte)."""
        if self.array_array or self.array_bytes.image_dtype(self.bytes_spec) is None:
            return None
        from zarrx.codecs import partial

        if not self.bytes_bytes:
            return partial.RawPartial
        if len(self.bytes_bytes) != 1:
            return None
        kind = self.bytes_bytes[0][0].partial_kind()
        if isinstance(kind, str):
            kind = getattr(partial, kind, None)
        return kind if isinstance(kind, type) and issubclass(kind, partial.PartialRead) else None

    @cached_property
    def _plain_image(self) -> np.dtype | None:
        """The dtype whose C-order memory the bytes of the array→bytes codec are, when
        that codec alone makes the chunk (no array→array codec): its decode is then a view
        of the bytes."""
        return None if self.array_array else self.array_bytes.image_dtype(self.bytes_spec)

    @cached_property
    def _nbytes(self) -> int:
        return self.bytes_spec.nbytes

    @cached_property
    def _stored_dtype(self) -> np.dtype:
        image = self.array_bytes.image_dtype(self.bytes_spec)
        assert image is not None  # (asked only of chains read in part)
        return image

    def _from_bytes(self, data: Any) -> np.ndarray:
        image = self._plain_image
        if image is not None:  # a view of the bytes, when they are a buffer of bytes
            kind = type(data)
            if (kind is bytes or ((kind is memoryview or kind is np.ndarray)
                    and data.ndim == 1 and data.itemsize == 1)) and len(data) == self._nbytes:
                return np.frombuffer(data, image).reshape(self.spec.shape)
        chunk = self.array_bytes.decode(data, self.bytes_spec)
        for codec, spec in reversed(self.array_array):
            chunk = codec.decode(chunk, spec)
        if chunk.shape != self.spec.shape:
            raise CodecError(
                f"decoded chunk has shape {chunk.shape}, expected {self.spec.shape}"
            )
        return chunk

    @cached_property
    def _scratch_size(self) -> int | None:
        """The innermost bytes→bytes decoder's exact output size, when there is one."""
        return self.array_bytes.encoded_size(self.bytes_spec) if self.bytes_bytes else None

    @cached_property
    def _decodes_into_any_layout(self) -> bool:
        """The array→bytes codec alone, able to write any strided array (sharding)."""
        return not self.array_array and not self.bytes_bytes and self.array_bytes.writes_any_layout

    @cached_property
    def _image_dtype(self) -> np.dtype | None:
        """The dtype whose C-order memory the decompressed bytes are, when the chain is an
        image (``bytes``) plus at least one bytes→bytes codec (without one, the stored
        value already is the image, and a view of it costs nothing)."""
        if self.array_array or not self.bytes_bytes:
            return None
        return self.array_bytes.image_dtype(self.bytes_spec)

    def encode(self, chunk: np.ndarray) -> Any:
        """Array of ``spec.shape`` (any strides) → stored bytes. The result may be a view
        of ``chunk`` (the ``bytes`` codec alone), never of memory the chain reuses. A
        strided or byte-swapped chunk of a chain the batch encoder takes is laid out and
        encoded by it (:meth:`encode_many` of one chunk)."""
        image = self._image_dtype
        if (image is not None and self._batch_encoder is not None
                and not (chunk.flags.c_contiguous and chunk.dtype == image)):
            return self._batch_encoder.encode([chunk])[0]
        return self.encode_general(chunk)

    def encode_general(self, chunk: np.ndarray) -> Any:
        """:meth:`encode` by the codecs' Python methods, without the batch kernels: the
        general path, which the fast ones equal byte for byte."""
        for codec, spec in self.array_array:
            chunk = codec.encode(chunk, spec)
        image = self._image_dtype
        if image is None or (chunk.flags.c_contiguous and chunk.dtype == image):
            return self._compress(self.array_bytes.encode(chunk, self.bytes_spec))
        # A strided or byte-swapped chunk: lay out the stored image in a scratch buffer
        # (the compressor reads it and writes fresh memory), not in a new array.
        from zarrx.codecs.native import swap_between

        with scratch(self.bytes_spec.nbytes) as memory:
            laid_out = memory.view(image).reshape(self.bytes_spec.shape)
            swap = swap_between(chunk.dtype, image)
            if swap >= 0:
                copy_strided(chunk, laid_out, swap)
            else:
                np.copyto(laid_out, chunk)
            # ``memory`` is the stored image itself (what ``bytes`` would return of it).
            return self._compress(memory)

    def encode_many(self, chunks: list[np.ndarray]) -> list[Any]:
        """:meth:`encode` of each of ``chunks`` (arrays of ``spec.shape`` of one dtype,
        any strides and byte order), all laid out and encoded in one call without the
        GIL when the chain has a batch encoder (:class:`zarrx.codecs.native.BatchEncoder`:
        the image gathered and byte-swapped, Blosc's byte shuffle done by that pass, the
        compressors and the checksum); the results are ``bytes`` made for them, equal to
        :meth:`encode_general`'s. Without one, chunk by chunk."""
        encoder = self._batch_encoder
        if encoder is None:
            return [self.encode(chunk) for chunk in chunks]
        return encoder.encode(chunks)

    def _compress(self, data: Any) -> Any:
        for codec, _ in self.bytes_bytes:
            data = codec.encode(data)
        return data


def _as_slice(s: Any) -> Any:
    """An integer index as the one-element slice it selects (others as they are)."""
    if type(s) is slice:
        return s
    if isinstance(s, int | np.integer) and s >= 0:
        return slice(int(s), int(s) + 1, 1)
    return s


_ROLES = ("array→array", "array→bytes", "bytes→bytes")


def role_of(codec: Any) -> int:
    """A codec's place in a chain: 0 array→array, 1 array→bytes, 2 bytes→bytes, -1 none."""
    if isinstance(codec, ArrayArrayCodec):
        return 0
    if isinstance(codec, ArrayBytesCodec):
        return 1
    if isinstance(codec, BytesBytesCodec):
        return 2
    return -1


class CodecPipeline:
    """An array's codecs, validated for order: array→array*, array→bytes, bytes→bytes*."""

    def __init__(self, codecs: Sequence[Codec], *, where: str = "array") -> None:
        self.where = where
        roles = [role_of(c) for c in codecs]
        for codec, role in zip(codecs, roles):
            if role < 0:
                raise MetadataError(f"{where}: {codec!r} is not a codec")
        if roles.count(1) != 1 or roles != sorted(roles):
            listed = ", ".join(f"{c.name} ({_ROLES[r]})" for c, r in zip(codecs, roles))
            problem = (
                f"found {roles.count(1)} array→bytes codecs" if roles.count(1) != 1
                else "they are out of order"
            )
            raise MetadataError(
                f"{where}: codecs must be array→array codecs, then exactly one array→bytes "
                f"codec (such as 'bytes'), then bytes→bytes codecs; {problem}: [{listed}]"
            )
        self.codecs: tuple[Codec, ...] = tuple(codecs)
        self._prepare = lru_cache(maxsize=64)(self._prepare_uncached)

    def __getstate__(self) -> dict[str, Any]:  # the cache does not pickle; rebuild it
        return {"codecs": self.codecs, "where": self.where}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["codecs"], where=state["where"])  # type: ignore[misc]

    @classmethod
    def from_json(cls, value: Any, *, where: str) -> CodecPipeline:
        """Parse a ``codecs`` list. Pipelines are immutable, so arrays with the same codec
        list (a hierarchy of many similar arrays) share one, and its prepared chains."""
        if not isinstance(value, list | tuple) or not value:
            raise MetadataError(f"{where}: 'codecs' must be a non-empty list, got {value!r}")
        try:
            key = json.dumps(value, sort_keys=True)
        except (TypeError, ValueError):
            key = None
        state = resolution_state()
        found = _SHARED.get(key) if key is not None else None
        if found is not None and found[0] == state:
            return found[1]
        shared = cls([codec_from_json(v, where=where) for v in value], where=where)
        if key is not None:
            if len(_SHARED) >= 256:
                _SHARED.clear()
            _SHARED[key] = (state, shared)
        return shared

    def to_json(self) -> list[dict[str, Any]]:
        return [c.to_dict() for c in self.codecs]

    def evolve(self, spec: ChunkSpec) -> CodecPipeline:
        """The pipeline with dtype-dependent defaults filled in (what metadata should record)."""
        out: list[Codec] = []
        for codec in self.codecs:
            codec = codec.evolve(spec)
            codec.validate(spec)
            out.append(codec)
            if isinstance(codec, ArrayArrayCodec):
                spec = codec.resolve_spec(spec)
        return CodecPipeline(out, where=self.where)

    def prepare(self, spec: ChunkSpec) -> PreparedChain:
        return self._prepare(spec)

    def _prepare_uncached(self, spec: ChunkSpec) -> PreparedChain:
        array_array: list[tuple[ArrayArrayCodec, ChunkSpec]] = []
        array_bytes: ArrayBytesCodec | None = None
        bytes_codecs: list[BytesBytesCodec] = []
        current = spec
        for codec in self.codecs:
            codec = codec.evolve(current)
            codec.validate(current)
            if isinstance(codec, ArrayArrayCodec):
                array_array.append((codec, current))
                current = codec.resolve_spec(current)
            elif isinstance(codec, ArrayBytesCodec):
                array_bytes = codec
            else:
                bytes_codecs.append(codec)  # type: ignore[arg-type]
        assert array_bytes is not None
        bound = array_bytes.max_encoded_size(current)
        bounded: list[tuple[BytesBytesCodec, int | None]] = []
        for codec in bytes_codecs:
            bounded.append((codec, bound))
            bound = None if bound is None else codec.max_encoded_size(bound)
        return PreparedChain(spec, tuple(array_array), array_bytes, current, tuple(bounded))

    def __iter__(self) -> Iterable[Codec]:
        return iter(self.codecs)

    def __repr__(self) -> str:
        return f"CodecPipeline({[c.name for c in self.codecs]})"


class _Decoded:
    """:meth:`PreparedChain.decoded` for a chain with a bytes→bytes codec: the chunk
    decoded into a per-thread scratch buffer, lent until the block ends. (A class, not a
    generator: it runs once per chunk.)"""

    __slots__ = ("_chain", "_data", "_scratch", "_selection")

    def __init__(self, chain: PreparedChain, data: Any, selection: tuple[Any, ...] | None):
        self._chain, self._data, self._selection = chain, data, selection

    def __enter__(self) -> np.ndarray:
        chain, data, selection = self._chain, self._data, self._selection
        for codec, max_size in reversed(chain.bytes_bytes[1:]):
            data = codec.decode(data, max_size)
        self._scratch = scratch(chain._scratch_size)  # type: ignore[arg-type]
        buffer = self._scratch.__enter__()
        try:
            span = None
            if selection is not None and chain._spans is not None:
                if any(type(s) is not slice for s in selection):
                    selection = tuple(_as_slice(s) for s in selection)
                span = chain._spans(chain.spec.shape, chain._stored_dtype.itemsize, selection)
            innermost = chain.bytes_bytes[0][0]
            if span is None or not innermost.decode_span(data, span[0], span[1], buffer):
                innermost.decode_into(data, buffer)
            return chain._from_bytes(buffer)
        except BaseException:
            self._scratch.__exit__(None, None, None)
            raise

    def __exit__(self, *exc: object) -> None:
        self._scratch.__exit__(*exc)
