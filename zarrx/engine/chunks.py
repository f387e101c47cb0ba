"""An array as the engine sees it: a store, where its chunks live, and its metadata."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from zarrx.abc.codec import ChunkSpec
from zarrx.abc.store import Store
from zarrx.metadata.model import ArrayMetadata
from zarrx.runtime.elements import Elements


@dataclass(frozen=True)
class ChunkStore:
    """Reads and writes the chunks of one array, format-independently."""

    store: Store
    data_prefix: str  # e.g. "path/to/array/" (v3), "data/root/path/" (draft)
    meta: ArrayMetadata
    node: str  # for messages
    elements: Elements = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "elements", Elements.of(self.meta.dtype, self.meta.fill_value))

    def key(self, coords: tuple[int, ...]) -> str:
        return self.data_prefix + self.meta.chunk_key(coords)

    def spec(self, coords: tuple[int, ...]) -> ChunkSpec:
        grid: Any = self.meta.chunk_grid
        return ChunkSpec(grid.chunk_shape_at(coords), self.meta.dtype, self.meta.fill_value)

    def partial_codec(self, coords: tuple[int, ...]) -> Any:
        """The array→bytes codec when it can decode part of a chunk from byte ranges
        (sharding) and nothing else in the chain needs the whole value; else ``None``."""
        chain = self.meta.codecs.prepare(self.spec(coords))
        if chain.array_array or chain.bytes_bytes or not chain.array_bytes.partial_decode:
            return None
        return chain.array_bytes

    def fetch(self, key: str) -> Any:
        """A function reading byte ranges of ``key`` in one batched request."""

        def fetch_ranges(ranges: Any) -> list[bytes | None]:
            return self.store.get_many([(key, r) for r in ranges])

        return fetch_ranges
