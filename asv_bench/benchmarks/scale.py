"""At scale: planning a read of ~1 M chunks (no I/O), the peak memory of a full read, partial
writes into an existing shard, 100 000 scattered points on a 128 MiB array.

``bench/scale.py`` runs the same workloads beside zarr-python, zarrs and tensorstore.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

import zarrx
from zarrx.chunk_grids.regular import RegularChunkGrid
from zarrx.runtime.plan import plan

from .common import CODECS, make_data, warm_up

MILLION = (1000, 1000)  # in (1, 1) chunks: 1 M chunks
BIG = (256, 256, 512)  # float32: 128 MiB
STRIDED = (slice(None, None, 2), slice(None, None, 2))


class Plan:
    """A full and a ``[::2, ::2]`` selection of a 1000² array in (1, 1) chunks (1 M chunks,
    none stored: the planning alone). ``chunk_projections`` is the public listing (one
    named tuple per chunk); ``engine_plan`` iterates the projections the engine reads."""

    timeout = 300

    def setup_cache(self) -> str:
        path = os.path.abspath("million.zarr")
        zarrx.create_array(path, shape=MILLION, chunks=(1, 1), dtype="float32",
                           fill_value=0.0, overwrite=True)
        return path

    def setup(self, path: str) -> None:
        self.array = zarrx.open_array(path, mode="r")
        self.grid = RegularChunkGrid(self.array.chunks)

    def _engine_plan(self, selection: Any) -> int:
        layout = self.array._layout(self.array.lazy[selection].transform)
        return sum(1 for _ in plan(self.grid, self.array.shape, layout))

    def time_chunk_projections_full(self, path: str) -> None:
        self.array.lazy[...].chunk_projections("read")

    def time_chunk_projections_strided(self, path: str) -> None:
        self.array.lazy[STRIDED].chunk_projections("read")

    def time_engine_plan_full(self, path: str) -> None:
        self._engine_plan(Ellipsis)

    def time_engine_plan_strided(self, path: str) -> None:
        self._engine_plan(STRIDED)

    def peakmem_engine_plan_full(self, path: str) -> None:
        self._engine_plan(Ellipsis)


def _write_big(root: str) -> dict[str, str]:
    data = make_data(BIG)
    paths = {}
    for name, layout in [("chunked", {"chunks": (64, 64, 64)}),
                         ("sharded", {"chunks": (32, 32, 32), "shards": (128, 128, 128)})]:
        path = os.path.join(root, f"{name}.zarr")
        zarrx.create_array(path, shape=BIG, dtype="float32", fill_value=0.0,
                           compressors=CODECS["lz4"], overwrite=True, **layout)[...] = data
        paths[name] = path
    return paths


def _status_kib(field: str) -> int:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(field + ":"))


class FullReadMemory:
    """A full read of 128 MiB in 64³ blosc-lz4 chunks: the process's peak (``peakmem_``,
    imports included) and the read's own peak RSS over the output's size (``track_``,
    Linux: the RSS high-water mark is reset before the read; the target is <= 1.1)."""

    timeout = 300

    def setup_cache(self) -> dict[str, str]:
        return _write_big(os.path.abspath("stores"))

    def setup(self, stores: dict[str, str]) -> None:
        self.array = zarrx.open_array(stores["chunked"], mode="r")
        warm_up(self.array)

    def peakmem_full_read(self, stores: dict[str, str]) -> None:
        self.array[...]

    def track_full_read_peak_over_output(self, stores: dict[str, str]) -> float:
        try:
            with open("/proc/self/clear_refs", "w") as f:
                f.write("5")
        except OSError:
            return float("nan")  # no resettable high-water mark here
        before = _status_kib("VmRSS")
        out = self.array[...]
        return (_status_kib("VmHWM") - before) * 1024 / out.nbytes

    track_full_read_peak_over_output.unit = "x output"  # type: ignore[attr-defined]


class ScatteredPoints:
    """100 000 random points (``vindex``) of the 128 MiB array, chunked and sharded."""

    params = ("chunked", "sharded")
    param_names = ("layout",)
    timeout = 300

    def setup_cache(self) -> dict[str, str]:
        return _write_big(os.path.abspath("stores"))

    def setup(self, stores: dict[str, str], layout: str) -> None:
        self.array = zarrx.open_array(stores[layout], mode="r")
        warm_up(self.array)
        rng = np.random.default_rng(0)
        self.points = tuple(rng.integers(0, n, 100_000) for n in BIG)

    def time_points(self, stores: dict[str, str], layout: str) -> None:
        self.array.vindex[self.points]


class PartialShardWrite:
    """Writes into an existing 128³ shard of 32³ blosc-lz4 inner chunks: one inner chunk
    (aligned), and a 40³ block covering parts of 8 inner chunks."""

    timeout = 300

    def setup_cache(self) -> str:
        path = os.path.abspath("shard.zarr")
        zarrx.create_array(path, shape=(128, 128, 128), chunks=(32, 32, 32),
                           shards=(128, 128, 128), dtype="float32", fill_value=0.0,
                           compressors=CODECS["lz4"],
                           overwrite=True)[...] = make_data((128, 128, 128))
        return path

    def setup(self, path: str) -> None:
        self.array = zarrx.open_array(path, mode="r+")
        warm_up(self.array)
        self.inner = make_data((32, 32, 32)) + np.float32(1000)
        self.block = make_data((40, 40, 40)) + np.float32(1000)

    def time_write_inner_chunk(self, path: str) -> None:
        self.array[32:64, 64:96, 96:128] = self.inner

    def time_write_unaligned_block(self, path: str) -> None:
        self.array[50:90, 50:90, 50:90] = self.block
