"""The ``sharding_indexed`` codec: many inner chunks stored in one object, with an index.

- Spec: https://zarr-specs.readthedocs.io/en/latest/v3/codecs/sharding-indexed/index.html
- v3 name: ``sharding_indexed``; no v2 id; the draft's sharding is a storage transformer.
- Layout: the encoded inner chunks, in any order, and an index of ``(offset, nbytes)``
  uint64 pairs per inner chunk (C order), encoded with ``index_codecs`` (default ``bytes``
  little endian + ``crc32c``), at the ``end`` (default) or ``start`` of the shard. An
  inner chunk equal to the fill value is not stored: both its index entries are 2**64-1.
- A shard is a small store of inner chunks (:class:`ShardLayout`): an array whose codecs
  are this codec alone is read and written by the engine inner chunk by inner chunk
  (:mod:`zarrx.engine.shards`: the index, then only the byte ranges needed; a partial
  write re-encodes only the inner chunks it touches). :meth:`ShardingCodec.encode` and
  :meth:`ShardingCodec.decode` handle a whole shard (nested sharding, longer chains).

>>> codec = ShardingCodec.from_config({"chunk_shape": [32, 32], "codecs": [{"name": "bytes"}]})
>>> codec.to_dict()["configuration"]["index_location"]
'end'
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from itertools import pairwise
from typing import Any, ClassVar, Self

import numpy as np

from zarrx.abc.codec import ArrayBytesCodec, Buffer, ChunkSpec
from zarrx.abc.store import ByteRange, Part, joined
from zarrx.chunk_grids.regular import RegularChunkGrid
from zarrx.codecs.pipeline import CodecPipeline, PreparedChain, coerce_codec
from zarrx.config import get as setting
from zarrx.errors import CodecError, MetadataError
from zarrx.runtime.elements import Elements
from zarrx.runtime.executor import run_all
from zarrx.runtime.place import place
from zarrx.runtime.plan import ChunkProjection, plan_ranges

EMPTY = np.uint64(2**64 - 1)
EMPTY_INT = 2**64 - 1
_KEPT = object()  # an inner chunk the update leaves as stored
DEFAULT_CODECS = [{"name": "bytes", "configuration": {"endian": "little"}}]
DEFAULT_INDEX_CODECS = [
    {"name": "bytes", "configuration": {"endian": "little"}},
    {"name": "crc32c"},
]


@dataclass(frozen=True)
class ShardLayout:
    """A sharding codec resolved for one shard spec: the shard seen as a small store of
    inner chunks. The engine reads and writes inner chunks through it (their byte ranges
    from the index, their codec chain :attr:`inner`), and the codec's own
    :meth:`~ShardingCodec.encode` and :meth:`~ShardingCodec.decode_into` use the same
    pieces, so each rule of the layout is written once."""

    spec: ChunkSpec
    inner: PreparedChain  # the inner chunks' codec chain
    index: PreparedChain  # the index's codec chain
    chunks_per_shard: tuple[int, ...]
    index_nbytes: int
    location: str  # "start" or "end"
    grid: RegularChunkGrid  # the inner chunks' grid over one shard
    elements: Elements

    @property
    def chunk_shape(self) -> tuple[int, ...]:
        return self.grid.chunk_shape

    @cached_property
    def whole_plan(self) -> list[ChunkProjection]:
        """Every inner chunk's projection onto the whole shard, in C order of the grid."""
        shape = self.spec.shape
        return list(plan_ranges(self.grid, shape, [slice(0, n) for n in shape]))

    @property
    def index_range(self) -> ByteRange:
        """Where the index is in a shard: its first or last :attr:`index_nbytes` bytes."""
        n = self.index_nbytes
        return ByteRange(0, n) if self.location == "start" else ByteRange(-n)

    def empty_index(self) -> np.ndarray:
        """The index of a shard that holds no inner chunk."""
        return np.full((*self.chunks_per_shard, 2), EMPTY, dtype="uint64")

    def index_span(self, size: int) -> ByteRange:
        """Where the index lies in a stored shard of ``size`` bytes (an explicit range);
        a shard shorter than its index is refused."""
        n = self.index_nbytes
        if size < n:
            raise CodecError(f"shard of {size} bytes is shorter than its index ({n} bytes)")
        return ByteRange(0 if self.location == "start" else size - n, n)

    def index_of(self, shard: Any) -> np.ndarray:
        """The decoded, checked index of a whole stored shard."""
        view = memoryview(shard).cast("B")
        at = self.index_span(len(view))
        return self.decode_index(view[at.start:at.start + self.index_nbytes], len(view))

    def decode_index(self, raw: Any, shard_nbytes: int | None) -> np.ndarray:
        """The index (``chunks_per_shard + (2,)`` uint64 ``(offset, nbytes)`` pairs) from
        its stored bytes ``raw`` (``None``: absent). Entries pointing outside a shard of
        ``shard_nbytes`` bytes are refused (when that size is known)."""
        if raw is None or len(raw) != self.index_nbytes:
            got = 0 if raw is None else len(raw)
            raise CodecError(
                f"shard index is truncated: expected {self.index_nbytes} bytes, got {got}"
            )
        index = np.asarray(self.index.decode(raw), dtype="uint64")
        if shard_nbytes is not None:
            offsets, sizes = index[..., 0], index[..., 1]
            empty = (offsets == EMPTY) & (sizes == EMPTY)
            limit = np.uint64(shard_nbytes)
            bad = ~empty & ((offsets > limit) | (sizes > limit - np.minimum(offsets, limit)))
            if bad.any():
                where = tuple(int(i) for i in np.argwhere(bad)[0])
                raise CodecError(
                    f"shard index entry {where} (offset {int(offsets[where])}, "
                    f"{int(sizes[where])} bytes) points outside the shard of {shard_nbytes} bytes"
                )
        return index

    @staticmethod
    def entry(index: np.ndarray, coords: tuple[int, ...]) -> ByteRange | None:
        """The byte range of the inner chunk at ``coords``, or ``None`` when it is not
        stored (the fill value)."""
        offset, nbytes = index[coords].tolist()
        return None if offset == EMPTY_INT else ByteRange(offset, nbytes)

    def stored(self, shard: Any, index: np.ndarray) -> dict[tuple[int, ...], memoryview]:
        """The stored bytes of every inner chunk of a whole shard (views of ``shard``)."""
        view = memoryview(shard).cast("B")
        flat = index.reshape(-1, 2).tolist()
        return {
            p.coords: view[offset:offset + nbytes]
            for p, (offset, nbytes) in zip(self.whole_plan, flat) if offset != EMPTY_INT
        }

    def assemble(self, entries: Mapping[tuple[int, ...], Any]) -> bytes:
        """The stored shard holding ``entries`` (inner coords → encoded bytes; ``None`` or
        absent: the fill value), in one buffer (see :meth:`parts`)."""
        return joined(self.parts(entries), None)

    def parts(self, entries: Mapping[tuple[int, ...], Any], index: np.ndarray | None = None,
              base: int = 0) -> list[Part]:
        """The parts of the stored shard holding ``entries`` (inner coords → encoded bytes;
        ``None``: the fill value) and every other inner chunk the stored shard of ``index``
        holds, kept as its byte range there (``index`` ``None``: the fill value; ranges
        kept one after the other are one part): inner chunks in C order of the grid, the
        index at the start or the end. A shard that holds no inner chunk is its index
        alone (one part).

        Nested sharding: an entry may itself be a list of parts (a shard inside this one:
        bytes and byte ranges of the stored value), and ``base`` is where this shard lies
        in the stored value, which kept ranges are counted from."""
        flat = [EMPTY_INT] * (2 * len(self.whole_plan))
        old = None if index is None else index.reshape(-1).tolist()
        body: list[Any] = []  # bytes, or [start, stop) lists of the stored shard
        offset = self.index_nbytes if self.location == "start" else 0

        def keep(start: int, nbytes: int) -> None:
            if body and isinstance(body[-1], list) and body[-1][1] == start:
                body[-1][1] += nbytes  # continues the range kept before it
            else:
                body.append([start, start + nbytes])

        for i, p in enumerate(self.whole_plan):
            data = entries.get(p.coords, _KEPT)
            if data is None:
                continue
            if type(data) is list:  # a shard inside this one, in parts
                nbytes = 0
                for part in data:
                    if isinstance(part, ByteRange):
                        assert part.length is not None
                        keep(part.start, part.length)
                        nbytes += part.length
                    else:
                        body.append(part)
                        nbytes += len(part)
            elif data is not _KEPT:
                if type(data) is not bytes:  # (bytes, the codecs' usual output, as they are)
                    data = memoryview(data).cast("B")
                nbytes = len(data)
                body.append(data)
            elif old is None or old[2 * i] == EMPTY_INT:
                continue
            else:
                nbytes = old[2 * i + 1]
                keep(base + old[2 * i], nbytes)
            flat[2 * i] = offset
            flat[2 * i + 1] = nbytes
            offset += nbytes
        new_index = np.array(flat, dtype="uint64").reshape(*self.chunks_per_shard, 2)
        index_bytes = self.index.encode(new_index)
        kept: list[Part] = [ByteRange(b[0], b[1] - b[0]) if isinstance(b, list) else b
                            for b in body]
        return [index_bytes, *kept] if self.location == "start" else [*kept, index_bytes]

    @cached_property
    def _whole_geometry(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Per inner chunk of :attr:`whole_plan`: its selection (all of it) and where it
        goes in the shard, as :meth:`BatchDecoder.place` takes them."""
        n, ndim = len(self.whole_plan), len(self.chunk_shape)
        shape = np.array(self.chunk_shape, np.int64)
        at = np.array([p.coords for p in self.whole_plan], np.int64).reshape(n, ndim)
        return (np.zeros((n, ndim), np.int64), np.ones((n, ndim), np.int64),
                np.tile(shape, (n, 1)), at * shape)

    def place_stored(self, shard: Any, index: np.ndarray, out: np.ndarray) -> bool:
        """Every inner chunk of the stored ``shard`` (``index``: decoded and checked)
        decoded into its place in ``out`` (the shard's shape and dtype, any strides) by
        the inner chain's batch decoder, one call per share of the inner chunks (a share
        per thread, on the pool when this shard is the only work: ``run_all``); ``False``,
        having done nothing, when the chain has none."""
        decoder = self.inner.batch_decoder
        if decoder is None or out.dtype != self.spec.dtype:
            return False
        entries = index.reshape(-1, 2)
        absent = entries[:, 0] == EMPTY
        sizes = np.where(absent, -1, entries[:, 1].astype(np.int64))
        offsets = np.where(absent, 0, entries[:, 0].astype(np.int64))
        which = np.zeros(len(sizes), np.int64)
        starts, steps, counts, outs = self._whole_geometry
        shares = max(1, min(setting("threads"), len(sizes)))
        bounds = np.linspace(0, len(sizes), shares + 1).astype(int).tolist()

        def place_share(share: tuple[int, int]) -> None:
            lo, hi = share
            try:
                decoder.place([shard], which[lo:hi], offsets[lo:hi], sizes[lo:hi],
                              starts[lo:hi], steps[lo:hi], counts[lo:hi], outs[lo:hi], out,
                              self.elements.fill)
            except CodecError as e:
                where = "?" if e.chunk is None else self.whole_plan[lo + e.chunk].coords
                raise type(e)(f"inner chunk {where}: {e}") from None

        run_all(place_share, list(pairwise(bounds)))
        return True

    def place(self, p: ChunkProjection, chunk: Any, out: np.ndarray) -> None:
        """Decode the inner chunk ``chunk`` (``None``: the fill value) and put its share
        ``p`` into ``out``, naming the inner chunk in an error."""
        try:
            place(self.inner, self.elements, p, chunk, out)
        except CodecError as e:
            raise type(e)(f"inner chunk {p.coords}: {e}") from None


def _pipeline(codecs: Any, field_name: str) -> CodecPipeline:
    where = f"codec 'sharding_indexed' {field_name}"
    return CodecPipeline([coerce_codec(c, where=where) for c in codecs], where=where)


@dataclass(frozen=True, eq=False)
class ShardingCodec(ArrayBytesCodec):
    """Inner chunks of ``chunk_shape`` encoded with ``codecs``, plus an index."""

    chunk_shape: tuple[int, ...]
    #: Pipelines, or (as zarr-python's constructor takes them) lists of codecs.
    codecs: CodecPipeline = field(default_factory=lambda: _pipeline(DEFAULT_CODECS, "codecs"))
    index_codecs: CodecPipeline = field(
        default_factory=lambda: _pipeline(DEFAULT_INDEX_CODECS, "index_codecs")
    )
    index_location: str = "end"

    name: ClassVar[str] = "sharding_indexed"
    #: :meth:`decode_into` puts each inner chunk straight into its place.
    writes_any_layout: ClassVar[bool] = True

    def __post_init__(self) -> None:
        where = "codec 'sharding_indexed'"
        shape = self.chunk_shape
        if (
            not isinstance(shape, list | tuple)
            or not shape
            or not all(isinstance(s, int) and not isinstance(s, bool) and s > 0 for s in shape)
        ):
            raise MetadataError(f"{where}: chunk_shape must be a list of positive integers")
        object.__setattr__(self, "chunk_shape", tuple(shape))
        if self.index_location not in ("start", "end"):
            raise MetadataError(f"{where}: index_location must be 'start' or 'end'")
        for field_name in ("codecs", "index_codecs"):
            value = getattr(self, field_name)
            if not isinstance(value, CodecPipeline):
                object.__setattr__(self, field_name, _pipeline(value, field_name))

    @classmethod
    def from_config(cls, configuration: Mapping[str, Any]) -> Self:
        where = "codec 'sharding_indexed'"
        extra = set(configuration) - {"chunk_shape", "codecs", "index_codecs", "index_location"}
        if extra:
            raise MetadataError(f"{where}: unknown configuration fields {sorted(extra)}")
        if "codecs" not in configuration:
            raise MetadataError(f"{where}: 'codecs' is required")
        location = configuration.get("index_location", "end")
        return cls(
            chunk_shape=configuration.get("chunk_shape"),  # type: ignore[arg-type]
            codecs=CodecPipeline.from_json(configuration["codecs"], where=f"{where} codecs"),
            index_codecs=CodecPipeline.from_json(
                configuration.get("index_codecs", DEFAULT_INDEX_CODECS),
                where=f"{where} index_codecs",
            ),
            index_location=location,
        )

    def to_config(self) -> dict[str, Any]:
        return {
            "chunk_shape": list(self.chunk_shape),
            "codecs": self.codecs.to_json(),
            "index_codecs": self.index_codecs.to_json(),
            "index_location": self.index_location,
        }

    def _inner_spec(self, spec: ChunkSpec) -> ChunkSpec:
        return ChunkSpec(self.chunk_shape, spec.dtype, spec.fill_value)

    def _index_spec(self, spec: ChunkSpec) -> ChunkSpec:
        cps = tuple(s // c for s, c in zip(spec.shape, self.chunk_shape))
        return ChunkSpec((*cps, 2), np.dtype("uint64"), EMPTY)

    def evolve(self, spec: ChunkSpec) -> Self:
        return type(self)(
            self.chunk_shape,
            self.codecs.evolve(self._inner_spec(spec)),
            self.index_codecs.evolve(self._index_spec(spec)),
            self.index_location,
        )

    def validate(self, spec: ChunkSpec) -> None:
        if len(spec.shape) != len(self.chunk_shape) or any(
            s % c for s, c in zip(spec.shape, self.chunk_shape)
        ):
            raise MetadataError(
                f"codec 'sharding_indexed': the shard shape {list(spec.shape)} must be a "
                f"multiple of the inner chunk_shape {list(self.chunk_shape)} on every axis"
            )

    @cached_property
    def _layouts(self) -> dict[ChunkSpec, ShardLayout]:
        return {}

    def inner_chunks(self, spec: ChunkSpec) -> ShardLayout:
        return self.layout(spec)

    def layout(self, spec: ChunkSpec) -> ShardLayout:
        """The shard of ``spec`` as a store of inner chunks (prepared once per spec)."""
        found = self._layouts.get(spec)
        if found is None:
            self.validate(spec)
            index_spec = self._index_spec(spec)
            index = self.index_codecs.prepare(index_spec)
            # A fixed-size chain encodes exactly to its bound: checked on the index of one
            # inner chunk, never by encoding an index as large as the metadata may ask for.
            one = self.index_codecs.prepare(
                ChunkSpec((1,) * (len(index_spec.shape) - 1) + (2,), index_spec.dtype, EMPTY))
            sample = np.full(one.spec.shape, EMPTY, dtype="uint64")
            if _bound(one) != len(memoryview(one.encode(sample)).cast("B")):
                raise MetadataError(
                    "codec 'sharding_indexed': index_codecs must encode to a fixed size "
                    f"(such as bytes + crc32c), got {self.index_codecs}"
                )
            size = _bound(index)
            assert size is not None  # the chain's bound is exact: it has one
            found = ShardLayout(
                spec=spec,
                inner=self.codecs.prepare(self._inner_spec(spec)),
                index=index,
                chunks_per_shard=index_spec.shape[:-1],
                index_nbytes=size,
                location=self.index_location,
                grid=RegularChunkGrid(self.chunk_shape),
                elements=Elements.of(spec.dtype, spec.fill_value),
            )
            self._layouts[spec] = found
        return found

    # -- decoding ----------------------------------------------------------------------------
    def decode(self, data: Buffer, spec: ChunkSpec) -> np.ndarray:
        out = np.empty(spec.shape, dtype=spec.dtype)
        self.decode_into(data, spec, out)
        return out

    def decode_into(self, data: Buffer, spec: ChunkSpec, out: np.ndarray) -> None:
        """Decode the shard into ``out`` (its shape, any strides): each inner chunk goes
        straight to its place, with no shard-sized buffer in between, all in one kernel
        call where the inner chain has a batch decoder (:meth:`ShardLayout.place_stored`).
        (An array whose codecs are this codec alone is read by the engine inner chunk by
        inner chunk; this serves sharding nested in a shard or inside a longer chain.)"""
        layout = self.layout(spec)
        index = layout.index_of(data)
        if layout.place_stored(data, index, out):
            return
        stored = layout.stored(data, index)

        def place_one(p: ChunkProjection) -> None:
            layout.place(p, stored.get(p.coords), out)

        # Inner chunks decode on the pool when this shard is the only work; inside a
        # chunk task they run in turn (see runtime.executor).
        run_all(place_one, layout.whole_plan)

    # -- encoding ----------------------------------------------------------------------------
    def encode(self, chunk: np.ndarray, spec: ChunkSpec) -> Buffer:
        layout = self.layout(spec)
        plan = layout.whole_plan
        encoded: dict[tuple[int, ...], Any] = {}
        shares = max(1, min(setting("threads"), len(plan)))
        bounds = np.linspace(0, len(plan), shares + 1).astype(int).tolist()

        def encode_share(share: tuple[int, int]) -> None:
            """A share of the inner chunks, those not all fill encoded in one run."""
            regions = [(p, chunk[p.out_selection]) for p in plan[share[0]:share[1]]]
            stored = [(p, r) for p, r in regions if not layout.elements.is_fill(r)]
            made = layout.inner.encode_many([r for _, r in stored])
            encoded.update((p.coords, data) for (p, _), data in zip(stored, made))

        run_all(encode_share, list(pairwise(bounds)))  # concurrently when the only shard
        return layout.assemble(encoded)

    def max_encoded_size(self, spec: ChunkSpec) -> int | None:
        layout = self.layout(spec)
        inner = _bound(layout.inner)
        if inner is None:
            return None
        return inner * math.prod(layout.chunks_per_shard) + layout.index_nbytes


def _bound(chain: PreparedChain) -> int | None:
    """The most bytes ``chain`` encodes a chunk of its spec to (``None``: no bound)."""
    bound = chain.array_bytes.max_encoded_size(chain.bytes_spec)
    for codec, _ in chain.bytes_bytes:
        bound = None if bound is None else codec.max_encoded_size(bound)
    return bound
