"""The plan (slabs within the memory budget, direct or two-stage), the text parsers the
command line uses, and progress reporting."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import zarrx
from zarrx.errors import ArgumentError, RechunkError
from zarrx.rechunking import RechunkProgress, parse_chunks, parse_codecs, parse_mem
from zarrx.rechunking.plan import (
    Geometry,
    Plan,
    amplification,
    axis_amplification,
    count,
    make_plan,
    slabs,
)
from zarrx.storage import MemoryStore


def geo(shape: tuple[int, ...], source: tuple[int, ...], target: tuple[int, ...],
        itemsize: int = 4) -> Geometry:
    edges = tuple((*range(0, n, s), n) for n, s in zip(shape, source))
    return Geometry(shape, itemsize, edges, target, target)


@pytest.mark.parametrize(("text", "n"), [
    ("512MiB", 512 << 20), ("1GB", 10**9), ("1.5 GiB", 3 << 29), ("64kib", 64 << 10),
    ("4096", 4096), (4096, 4096), ("2 M", 2 * 10**6), ("1TiB", 1 << 40),
])
def test_parse_mem(text: Any, n: int) -> None:
    assert parse_mem(text) == n


@pytest.mark.parametrize("bad", ["", "MiB", "12 parsecs", "-1", "0", 0, -3, True, None, 1.5])
def test_parse_mem_refuses(bad: Any) -> None:
    with pytest.raises(ArgumentError):
        parse_mem(bad)


def test_parse_chunks_and_codecs() -> None:
    assert parse_chunks("64,64,64") == (64, 64, 64)
    assert parse_chunks("(8, -1)") == (8, -1)
    assert parse_chunks("8x8") == (8, 8)
    with pytest.raises(ArgumentError):
        parse_chunks("8,a")
    with pytest.raises(ArgumentError):
        parse_chunks("8,0")
    assert parse_codecs("zstd:3") == [{"name": "zstd", "configuration": {"level": 3}}]
    assert parse_codecs("blosc:lz4:5") == [
        {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5}}]
    assert parse_codecs("gzip:level=6,crc32c") == [
        {"name": "gzip", "configuration": {"level": 6}}, {"name": "crc32c"}]
    assert parse_codecs('[{"name": "zstd"}]') == [{"name": "zstd"}]
    assert parse_codecs("none") == []
    assert parse_codecs("keep") == "keep"
    with pytest.raises(ArgumentError):
        parse_codecs("crc32c:7")
    src = zarrx.create_array(MemoryStore(), data=np.arange(10), chunks=(2,))
    out = zarrx.rechunk(src, MemoryStore(), chunks=parse_chunks("5"),
                        compressors=parse_codecs("gzip:4"), max_mem=parse_mem("1MiB"))
    assert [c.name for c in out.compressors] == ["gzip"]


def test_amplification() -> None:
    edges = (0, 10, 20, 30)
    assert axis_amplification(edges, 30, 10) == 1.0
    assert axis_amplification(edges, 30, 5) == 2.0  # each chunk decoded by two slabs
    assert axis_amplification(edges, 30, 30) == 1.0
    g = geo((64, 64, 64), (1, 64, 64), (64, 1, 1))
    assert amplification(g, (64, 1, 1)) == 64 * 64


def test_worst_case_gets_an_intermediate_stage() -> None:
    g = geo((256, 256, 256), (1, 256, 256), (256, 1, 1))
    plan = make_plan(g, 16 << 20, threads=2, engine_threads=2)
    assert plan.mode == "intermediate"
    assert plan.peak_bytes <= 16 << 20
    assert plan.read_slab is not None
    assert plan.intermediate is not None
    for r, c, w, s, t in zip(plan.read_slab, plan.intermediate, plan.slab, (1, 256, 256),
                             (256, 1, 1)):
        assert r % s == 0  # stage 1 reads whole source chunks...
        assert r % c == 0  # ...and writes whole scratch chunks
        assert w % c == 0  # stage 2 reads whole scratch chunks...
        assert w % t == 0  # ...and writes whole target objects
    assert math.prod(plan.intermediate) * 4 >= 16 << 10  # not a storm of tiny chunks
    assert Plan.from_json(plan.to_json()) == plan


def test_aligned_grids_go_direct() -> None:
    g = geo((100, 100), (10, 10), (20, 50))
    plan = make_plan(g, 64 << 20, threads=2, engine_threads=2)
    assert plan.mode == "direct"
    assert plan.amplification == 1.0
    assert all(s % t == 0 or s == n for s, t, n in zip(plan.slab, (20, 50), (100, 100)))


@pytest.mark.parametrize("max_mem", [1 << 20, 4 << 20, 16 << 20])
def test_peak_within_max_mem(max_mem: int) -> None:
    for source, target in [((1, 64, 64), (64, 1, 1)), ((8, 8, 8), (64, 4, 4)),
                           ((64, 1, 64), (1, 64, 1)), ((5, 7, 9), (9, 7, 5))]:
        plan = make_plan(geo((64, 64, 64), source, target), max_mem, 2, 2)
        assert plan.peak_bytes <= max_mem


def test_too_small_for_one_object() -> None:
    g = geo((64, 64, 64), (1, 64, 64), (64, 64, 64))
    with pytest.raises(RechunkError, match=r"one target object \(64, 64, 64\)"):
        make_plan(g, 1 << 20, 2, 2)


def test_fewer_tasks_when_memory_is_tight() -> None:
    g = geo((64, 64, 64), (1, 64, 64), (64, 8, 8))
    assert make_plan(g, 64 << 20, 4, 4).tasks == 4
    assert make_plan(g, 200 << 10, 4, 4).tasks < 4


def test_slabs_tile_the_array() -> None:
    seen = np.zeros((7, 5), int)
    for _, region in slabs((7, 5), (3, 2)):
        seen[region] += 1
    assert (seen == 1).all()
    assert count((7, 5), (3, 2)) == 9
    assert list(slabs((0, 5), (3, 2))) == []
    assert list(slabs((), ())) == [(0, ())]


def test_progress_bar_and_callable(capsys: pytest.CaptureFixture[str]) -> None:
    src = zarrx.create_array(MemoryStore(), data=np.arange(4096).reshape(64, 64),
                             chunks=(1, 64))
    updates: list[RechunkProgress] = []
    zarrx.rechunk(src, MemoryStore(), chunks=(64, 1), max_mem="64KiB", progress=updates.append)
    assert updates[0].done == 0
    assert updates[-1].finished
    assert updates[-1].done == updates[-1].total > 1
    assert updates[-1].nbytes >= src.nbytes
    assert [u.done for u in updates] == sorted(u.done for u in updates)
    assert capsys.readouterr().err == ""  # quiet by default
    zarrx.rechunk(src, MemoryStore(), chunks=(64, 1), max_mem="64KiB", progress=True)
    err = capsys.readouterr().err
    assert "rechunk" in err
    assert "slabs" in err
    assert "MB/s" in err
    assert "ETA" in err


def test_fewer_tasks_rather_than_amplified_reads() -> None:
    g = geo((17, 60, 9), (5, 60, 9), (17, 3, 1))
    plan = make_plan(g, 64 << 10, threads=2, engine_threads=2)
    assert plan.tasks == 1  # two tasks could only read each source chunk many times
    assert plan.mode == "intermediate"
    assert plan.amplification == 1.0
    assert plan.peak_bytes <= 64 << 10
