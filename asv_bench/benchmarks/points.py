"""Single-element reads: per-call overhead, which dominates interactive use."""

from __future__ import annotations

import zarrx

from .common import cached_stores, warm_up


class PointRead:
    """``a[i, j, k]``: one chunk (or one inner chunk of a shard) fetched and decoded."""

    params = ("raw", "lz4", "sharded")
    param_names = ("layout",)

    def setup_cache(self) -> dict[str, str]:
        return cached_stores()

    def setup(self, stores: dict[str, str], layout: str) -> None:
        self.array = zarrx.open_array(stores[layout], mode="r")
        warm_up(self.array)

    def time_single_element(self, stores: dict[str, str], layout: str) -> None:
        self.array[33, 70, 129]
