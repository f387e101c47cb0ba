"""Many writers on many machines sharing one file system: nothing is lost.

Every writer is a separate process with its own ``TMPDIR`` and ``HOME`` (as a process on
another machine has), started at once: coordination can only go through the store. See
``writer.py`` for what each writer does.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import zarrx
from tests.reliability.writer import WRITERS, Writers, inner_chunks, lost_inner_chunks, make_sharded

FORMATS = [3, 2, "3-draft"]


def zarr_python_nodes(root: str) -> dict[str, tuple[int, ...] | None]:
    """The hierarchy as zarr-python lists it (a warning about a stray object fails)."""
    import zarr

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        node = zarr.open(root, mode="r")
        if isinstance(node, zarr.Array):
            return {"": node.shape}
        return {"": None} | {
            name: getattr(member, "shape", None) for name, member in node.members(max_depth=None)
        }


def test_partial_shard_writers_lose_no_inner_chunk(tmp_path: Path) -> None:
    url = str(tmp_path / "s.zarr")
    a = make_sharded(url)
    writers = Writers(tmp_path, [["inner", url, str(w), str(WRITERS)] for w in range(WRITERS)])
    writers.go()
    writers.finish()
    assert lost_inner_chunks(a) == []
    assert zarr_python_nodes(url) == {"": (12, 12, 12)}
    import zarr

    np.testing.assert_array_equal(zarr.open_array(url, mode="r")[...], a[...])


@pytest.mark.parametrize("zarr_format", FORMATS)
def test_concurrent_appends_each_land_in_their_own_rows(tmp_path: Path, zarr_format) -> None:
    url = str(tmp_path / "g.zarr")
    group = zarrx.create_group(url, zarr_format=zarr_format)
    group.create_array("x", shape=(0, 2), dtype="i8", chunks=(3, 2), fill_value=-1)
    count = 10
    writers = Writers(tmp_path, [["append", url, str(w), str(count), "--path", "x"]
                                 for w in range(WRITERS)])
    writers.go()
    writers.finish()
    x = zarrx.open_group(url)["x"]
    assert x.shape == (WRITERS * count, 2)
    rows = x[...]
    assert (rows[:, 0] == rows[:, 1]).all()
    assert sorted(rows[:, 0]) == sorted(w * 1000 + i for w in range(WRITERS) for i in range(count))
    if zarr_format != "3-draft":  # zarr-python 3 reads v3 and v2 (not the 2020 draft)
        assert zarr_python_nodes(url) == {"": None, "x": (WRITERS * count, 2)}


@pytest.mark.parametrize("zarr_format", FORMATS)
def test_concurrent_attribute_writers_all_survive(tmp_path: Path, zarr_format) -> None:
    url = str(tmp_path / "a.zarr")
    zarrx.create_array(url, shape=(4,), dtype="u1", chunks=(2,), zarr_format=zarr_format,
                       attributes={"kept": True})
    count = 10
    writers = Writers(tmp_path, [["attrs", url, str(w), str(count)] for w in range(WRITERS)])
    writers.go()
    writers.finish()
    expected = {"kept": True} | {f"w{w}-{i}": i for w in range(WRITERS) for i in range(count)}
    assert zarrx.open_array(url).attrs.asdict() == expected
    if zarr_format != "3-draft":
        import zarr

        assert zarr.open_array(url, mode="r").attrs.asdict() == expected


def test_a_writer_killed_while_holding_a_shard_blocks_no_one(tmp_path: Path) -> None:
    url = str(tmp_path / "k.zarr")
    a = make_sharded(url)
    held = 5  # the victim's sixth write never completes
    victim = Writers(tmp_path / "victim", [["hold", url, "0", str(WRITERS), str(held)]])
    victim.go()
    victim.expect(victim.procs[0], "holding")  # inside a shard's update: it holds that shard
    others = Writers(tmp_path, [["inner", url, str(w), str(WRITERS)] for w in range(1, WRITERS)])
    others.go()
    victim.kill(victim.procs[0])
    others.finish()  # they all finish (a hang here would be a lock never given back)
    regions = inner_chunks(a.shape, a.chunks)
    unwritten = {i for n, i in enumerate(range(0, len(regions), WRITERS)) if n >= held}
    assert lost_inner_chunks(a, skip=unwritten) == []  # the victim's finished writes too
    assert zarr_python_nodes(url) == {"": (12, 12, 12)}
