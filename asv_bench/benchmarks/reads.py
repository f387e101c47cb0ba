"""Full reads of a chunked float32 3-D array: decode + assembly throughput and peak memory."""

from __future__ import annotations

import zarrx

from .common import cached_stores, warm_up


class FullRead:
    """``a[...]`` per codec; peak memory should stay close to the output's 8 MiB."""

    params = ("raw", "lz4", "zstd")
    param_names = ("codec",)

    def setup_cache(self) -> dict[str, str]:
        return cached_stores()

    def setup(self, stores: dict[str, str], codec: str) -> None:
        self.array = zarrx.open_array(stores[codec], mode="r")
        warm_up(self.array)

    def time_full_read(self, stores: dict[str, str], codec: str) -> None:
        self.array[...]

    def peakmem_full_read(self, stores: dict[str, str], codec: str) -> None:
        self.array[...]


class SingleThreadRead:
    """The same full read on one thread: separates kernel speed from thread scaling."""

    params = ("raw", "lz4")
    param_names = ("codec",)

    def setup_cache(self) -> dict[str, str]:
        return cached_stores()

    def setup(self, stores: dict[str, str], codec: str) -> None:
        self.array = zarrx.open_array(stores[codec], mode="r")
        warm_up(self.array)

    def time_full_read_1_thread(self, stores: dict[str, str], codec: str) -> None:
        with zarrx.config.set(threads=1):
            self.array[...]
