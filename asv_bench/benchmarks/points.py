"""Single-element reads: per-call overhead, which dominates interactive use."""

from __future__ import annotations

import numpy as np

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


class FancyRead:
    """NumPy's advanced indexing, ``a[...]`` with index arrays: 100 000 scattered points,
    a 1 000-entry index array on one axis (``a[:, idx, :]``) and arrays broadcast around
    a slice (``a[rows, 5:120:3, cols]``)."""

    params = ("raw", "lz4", "sharded")
    param_names = ("layout",)

    def setup_cache(self) -> dict[str, str]:
        return cached_stores()

    def setup(self, stores: dict[str, str], layout: str) -> None:
        self.array = zarrx.open_array(stores[layout], mode="r")
        warm_up(self.array)
        rng = np.random.default_rng(0)
        shape = self.array.shape
        self.points = tuple(rng.integers(0, n, 100_000) for n in shape)
        self.take = (slice(None), np.sort(rng.integers(0, shape[1], 1000)), slice(None))
        self.mixed = (rng.integers(0, shape[0], (20, 1)), slice(5, 120, 3),
                      rng.integers(0, shape[2], (1, 50)))

    def time_points(self, stores: dict[str, str], layout: str) -> None:
        self.array[self.points]

    def time_take(self, stores: dict[str, str], layout: str) -> None:
        self.array[self.take]

    def time_mixed(self, stores: dict[str, str], layout: str) -> None:
        self.array[self.mixed]
