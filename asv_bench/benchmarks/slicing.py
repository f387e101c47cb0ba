"""Selections that do not line up with chunks: strided and unaligned regions."""

from __future__ import annotations

import numpy as np

import zarrx

from .common import REGION, cached_stores, warm_up


class Slicing:
    """The copy kernel's strided and partial-chunk paths on a blosc-lz4 array."""

    def setup_cache(self) -> dict[str, str]:
        return cached_stores()

    def setup(self, stores: dict[str, str]) -> None:
        self.array = zarrx.open_array(stores["lz4"], mode="r")
        warm_up(self.array)

    def time_strided(self, stores: dict[str, str]) -> None:
        self.array[::2, ::2, ::2]

    def time_unaligned_region(self, stores: dict[str, str]) -> None:
        self.array[REGION]

    def time_reversed_axis(self, stores: dict[str, str]) -> None:
        self.array[:, :, ::-1]


class LazyChain:
    """A 3-step crop chain declared with ``a.lazy`` and read once, beside the equivalent
    eager selection (the two should cost the same: the chain is one transform)."""

    params = ("raw", "lz4", "sharded")
    param_names = ("layout",)

    def setup_cache(self) -> dict[str, str]:
        return cached_stores()

    def setup(self, stores: dict[str, str], layout: str) -> None:
        self.array = zarrx.open_array(stores[layout], mode="r")
        warm_up(self.array)

    def time_declare(self, stores: dict[str, str], layout: str) -> None:
        self.array.lazy[4:60, ::2].lazy[::-1, 5:60].lazy[2:40, :, ::3]

    def time_lazy_chain(self, stores: dict[str, str], layout: str) -> None:
        np.asarray(self.array.lazy[4:60, ::2].lazy[::-1, 5:60].lazy[2:40, :, ::3])

    def time_eager_equivalent(self, stores: dict[str, str], layout: str) -> None:
        self.array[57:19:-1, 10:120:2, ::3]
