"""Selections that do not line up with chunks: strided and unaligned regions."""

from __future__ import annotations

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
