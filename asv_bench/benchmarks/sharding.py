"""Sharded arrays: a full read, and one inner chunk (index read + one byte range)."""

from __future__ import annotations

import zarrx

from .common import INNER, cached_stores, warm_up


class Sharding:
    """64³ shards of 16³ blosc-lz4 inner chunks."""

    def setup_cache(self) -> dict[str, str]:
        return cached_stores()

    def setup(self, stores: dict[str, str]) -> None:
        self.array = zarrx.open_array(stores["sharded"], mode="r")
        warm_up(self.array)
        self.inner = tuple(slice(c, 2 * c) for c in INNER)  # one inner chunk, not the first

    def time_full_read(self, stores: dict[str, str]) -> None:
        self.array[...]

    def time_single_inner_chunk(self, stores: dict[str, str]) -> None:
        self.array[self.inner]

    def peakmem_full_read(self, stores: dict[str, str]) -> None:
        self.array[...]
