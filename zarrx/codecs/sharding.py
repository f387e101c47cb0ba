"""The ``sharding_indexed`` codec: many inner chunks stored in one object, with an index.

- Spec: https://zarr-specs.readthedocs.io/en/latest/v3/codecs/sharding-indexed/index.html
- v3 name: ``sharding_indexed``; no v2 id; the draft's sharding is a storage transformer.
- Layout: the encoded inner chunks, in any order, and an index of ``(offset, nbytes)``
  uint64 pairs per inner chunk (C order), encoded with ``index_codecs`` (default ``bytes``
  little endian + ``crc32c``), at the ``end`` (default) or ``start`` of the shard. An
  inner chunk equal to the fill value is not stored: both its index entries are 2**64-1.
- Reads of part of a shard fetch the index, then only the inner chunks they need, with
  byte ranges in one batched request.

>>> codec = ShardingCodec.from_config({"chunk_shape": [32, 32], "codecs": [{"name": "bytes"}]})
>>> codec.to_dict()["configuration"]["index_location"]
'end'
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar, Self

import numpy as np

from zarrx.abc.codec import ArrayBytesCodec, Buffer, ChunkSpec
from zarrx.abc.store import ByteRange
from zarrx.chunk_grids.regular import RegularChunkGrid
from zarrx.codecs.pipeline import CodecPipeline, PreparedChain
from zarrx.errors import CodecError, MetadataError
from zarrx.runtime.elements import Elements
from zarrx.runtime.executor import run_all
from zarrx.runtime.place import place
from zarrx.runtime.plan import ChunkProjection, plan_ranges

EMPTY = np.uint64(2**64 - 1)
EMPTY_INT = 2**64 - 1
DEFAULT_INDEX_CODECS = [
    {"name": "bytes", "configuration": {"endian": "little"}},
    {"name": "crc32c"},
]


def _entry(index: np.ndarray, coords: tuple[int, ...]) -> tuple[int, int] | None:
    """``(offset, nbytes)`` of the inner chunk at ``coords``, or ``None`` when it is not
    stored."""
    offset, nbytes = index[coords].tolist()
    return None if offset == EMPTY_INT else (offset, nbytes)


@dataclass(frozen=True)
class _Layout:
    """A sharding codec resolved for one shard spec."""

    spec: ChunkSpec
    inner: PreparedChain
    index: PreparedChain
    chunks_per_shard: tuple[int, ...]
    index_nbytes: int
    grid: RegularChunkGrid
    elements: Elements

    @cached_property
    def whole_plan(self) -> list[ChunkProjection]:
        """Every inner chunk's projection onto the whole shard, in C order of the grid."""
        shape = self.spec.shape
        return list(plan_ranges(self.grid, shape, [slice(0, n) for n in shape]))


@dataclass(frozen=True, eq=False)
class ShardingCodec(ArrayBytesCodec):
    """Inner chunks of ``chunk_shape`` encoded with ``codecs``, plus an index."""

    chunk_shape: tuple[int, ...]
    codecs: CodecPipeline
    index_codecs: CodecPipeline
    index_location: str = "end"

    name: ClassVar[str] = "sharding_indexed"
    partial_decode: ClassVar[bool] = True

    @classmethod
    def from_config(cls, configuration: Mapping[str, Any]) -> Self:
        where = "codec 'sharding_indexed'"
        extra = set(configuration) - {"chunk_shape", "codecs", "index_codecs", "index_location"}
        if extra:
            raise MetadataError(f"{where}: unknown configuration fields {sorted(extra)}")
        shape = configuration.get("chunk_shape")
        if (
            not isinstance(shape, list | tuple)
            or not shape
            or not all(isinstance(s, int) and not isinstance(s, bool) and s > 0 for s in shape)
        ):
            raise MetadataError(f"{where}: chunk_shape must be a list of positive integers")
        if "codecs" not in configuration:
            raise MetadataError(f"{where}: 'codecs' is required")
        location = configuration.get("index_location", "end")
        if location not in ("start", "end"):
            raise MetadataError(f"{where}: index_location must be 'start' or 'end'")
        return cls(
            chunk_shape=tuple(shape),
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
    def _layouts(self) -> dict[ChunkSpec, _Layout]:
        return {}

    def layout(self, spec: ChunkSpec) -> _Layout:
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
            found = _Layout(
                spec=spec,
                inner=self.codecs.prepare(self._inner_spec(spec)),
                index=index,
                chunks_per_shard=index_spec.shape[:-1],
                index_nbytes=size,
                grid=RegularChunkGrid(self.chunk_shape),
                elements=Elements.of(spec.dtype, spec.fill_value),
            )
            self._layouts[spec] = found
        return found

    # -- index -------------------------------------------------------------------------------
    def _decode_index(self, raw: Any, layout: _Layout, shard_nbytes: int | None) -> np.ndarray:
        if raw is None or len(raw) != layout.index_nbytes:
            got = 0 if raw is None else len(raw)
            raise CodecError(
                f"shard index is truncated: expected {layout.index_nbytes} bytes, got {got}"
            )
        index = np.asarray(layout.index.decode(raw), dtype="uint64")
        offsets, sizes = index[..., 0], index[..., 1]
        empty = (offsets == EMPTY) & (sizes == EMPTY)
        if shard_nbytes is not None:
            limit = np.uint64(shard_nbytes)
            bad = ~empty & ((offsets > limit) | (sizes > limit - np.minimum(offsets, limit)))
            if bad.any():
                where = tuple(int(i) for i in np.argwhere(bad)[0])
                raise CodecError(
                    f"shard index entry {where} (offset {int(offsets[where])}, "
                    f"{int(sizes[where])} bytes) points outside the shard of {shard_nbytes} bytes"
                )
        return index

    def _data_start(self, layout: _Layout) -> int:
        return layout.index_nbytes if self.index_location == "start" else 0

    # -- decoding ----------------------------------------------------------------------------
    def decode(self, data: Buffer, spec: ChunkSpec) -> np.ndarray:
        out = np.empty(spec.shape, dtype=spec.dtype)
        self.decode_into(data, spec, out)
        return out

    def decode_into(self, data: Buffer, spec: ChunkSpec, out: np.ndarray) -> None:
        """Decode the shard into ``out`` (its shape, any strides): each inner chunk goes
        straight to its place, with no shard-sized buffer in between."""
        layout = self.layout(spec)
        view = memoryview(data).cast("B")
        n = len(view)
        if n < layout.index_nbytes:
            raise CodecError(
                f"shard of {n} bytes is shorter than its index ({layout.index_nbytes} bytes)"
            )
        raw = view[:layout.index_nbytes] if self.index_location == "start" else view[
            n - layout.index_nbytes:]
        index = self._decode_index(raw, layout, n)

        def place_one(item: tuple[ChunkProjection, list[int]]) -> None:
            p, (offset, nbytes) = item
            chunk = None if offset == EMPTY_INT else view[offset:offset + nbytes]
            self._place(layout, p, chunk, out)

        # The plan of a whole shard is the grid's C order, as are the index entries. Inner
        # chunks decode on the pool when this shard is the only work (a single big shard);
        # inside a chunk task they run in turn (see runtime.executor).
        run_all(place_one, zip(layout.whole_plan, index.reshape(-1, 2).tolist()))

    def index_range(self, spec: ChunkSpec) -> ByteRange:
        """Where the index of a shard of ``spec`` is: read first by a partial decode."""
        nbytes = self.layout(spec).index_nbytes
        return ByteRange(0, nbytes) if self.index_location == "start" else ByteRange(-nbytes)

    def inner_ranges(
        self, index: bytes, selection: tuple[slice, ...], spec: ChunkSpec
    ) -> list[ByteRange]:
        """The ranges :meth:`decode_partial` reads after the ``index`` it was given, so a
        reader of many shards can fetch them all in one batch first."""
        layout = self.layout(spec)
        table = self._decode_index(index, layout, None)
        entries = (_entry(table, p.coords) for p in plan_ranges(layout.grid, spec.shape, selection))
        return [ByteRange(*entry) for entry in entries if entry is not None]

    def decode_partial(
        self,
        fetch: Callable[[Sequence[ByteRange]], Sequence[bytes | None]],
        selection: tuple[slice, ...],
        spec: ChunkSpec,
        out: np.ndarray,
    ) -> bool:
        layout = self.layout(spec)
        raw = fetch([self.index_range(spec)])[0]
        if raw is None:
            return False
        index = self._decode_index(raw, layout, None)
        projections = list(plan_ranges(layout.grid, spec.shape, selection))
        entries = [_entry(index, p.coords) for p in projections]
        ranges = [ByteRange(*entry) for entry in entries if entry is not None]
        values = iter(fetch(ranges) if ranges else ())
        for p, entry in zip(projections, entries):
            chunk = None if entry is None else next(values, None)
            if entry is not None and (chunk is None or len(chunk) != entry[1]):
                raise CodecError(
                    f"inner chunk {p.coords} is truncated: the index says {entry[1]} bytes"
                )
            self._place(layout, p, chunk, out)
        return True

    @staticmethod
    def _place(layout: _Layout, p: ChunkProjection, chunk: Any, out: np.ndarray) -> None:
        try:
            place(layout.inner, layout.elements, p, chunk, out)
        except CodecError as e:
            raise type(e)(f"inner chunk {p.coords}: {e}") from None

    # -- encoding ----------------------------------------------------------------------------
    def encode(self, chunk: np.ndarray, spec: ChunkSpec) -> Buffer:
        layout = self.layout(spec)
        index = np.full((*layout.chunks_per_shard, 2), EMPTY, dtype="uint64")
        inner_shape = self.chunk_shape
        cells = list(np.ndindex(*layout.chunks_per_shard))
        encoded: list[Any] = [None] * len(cells)

        def encode_one(i: int) -> None:
            region = chunk[tuple(slice(j * c, (j + 1) * c) for j, c in zip(cells[i], inner_shape))]
            if not layout.elements.is_fill(region):
                encoded[i] = memoryview(layout.inner.encode(region)).cast("B")

        run_all(encode_one, range(len(cells)))  # concurrently when this is the only shard
        parts: list[Any] = []
        offset = self._data_start(layout)
        for coords, data in zip(cells, encoded):
            if data is not None:
                index[coords] = (offset, len(data))
                offset += len(data)
                parts.append(data)
        index_bytes = layout.index.encode(index)
        if self.index_location == "start":
            return b"".join([index_bytes, *parts])
        return b"".join([*parts, index_bytes])

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
