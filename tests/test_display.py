"""Notebook display (``_repr_html_``): the grid picture draws every chunk and shard
boundary of the last three axes (shards apart from chunks), the facts are right and
escaped, what is stored comes from a listing (no chunk is read), and a group is a tree."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import zarrx
from zarrx.display import MAX_LINES, MAX_NODES, grid_svg
from zarrx.stores.local import LocalStore
from zarrx.stores.memory import MemoryStore

SVG = "{http://www.w3.org/2000/svg}"


def _parse(markup: str) -> ET.Element:
    """The markup as XML: well formed, or this fails."""
    return ET.fromstring(markup)


def _facts(markup: str) -> dict[str, str]:
    table = _parse(markup).find(".//table")
    assert table is not None
    return {row[0].text or "": row[1].text or "" for row in table}


@st.composite
def grids(draw: st.DrawFn) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...] | None]:
    ndim = draw(st.integers(1, 4))
    chunks = tuple(draw(st.integers(1, 12)) for _ in range(ndim))
    sharded = draw(st.booleans())
    shards = tuple(c * draw(st.integers(1, 4)) for c in chunks) if sharded else None
    shape = tuple(draw(st.integers(0, 90)) for _ in range(ndim))
    return shape, chunks, shards


@settings(max_examples=150, deadline=None)
@given(grid=grids())
def test_the_picture_draws_each_boundary(grid: Any) -> None:
    shape, chunks, shards = grid
    svg = grid_svg(shape, chunks, shards)
    root = _parse(svg)
    drawn = min(3, len(shape))
    lines = {"chunk": 0, "shard": 0}
    for line in root.iter(f"{SVG}line"):
        lines[line.get("class") or ""] += 1
    faces = 3 if drawn == 3 else 1
    expected = {"chunk": 0, "shard": 0}
    dense = False
    for n, c, s in zip(shape[-drawn:], chunks[-drawn:], (shards or chunks)[-drawn:]):
        shard_edges = set(range(s, n, s)) if shards else set()
        chunk_edges = set(range(c, n, c)) - shard_edges
        if len(chunk_edges) > MAX_LINES or len(shard_edges) > MAX_LINES:
            dense = True
            continue  # that axis is shaded, not ruled
        per_line = 2 if drawn == 3 else 1  # a boundary crosses two faces of a box
        expected["chunk"] += per_line * len(chunk_edges)
        expected["shard"] += per_line * len(shard_edges)
    assert lines == expected
    polygons = [p.get("class") for p in root.iter(f"{SVG}polygon")]
    assert len(polygons) == faces
    assert ("dense" in polygons) == dense
    labels = [t.text for t in root.iter(f"{SVG}text")]
    for n in shape[-drawn:]:
        assert str(n) in labels
    if len(shape) > 3:
        assert any(str(shape[:-3]) in (t or "") for t in labels)


def test_shards_are_drawn_apart_from_chunks() -> None:
    root = _parse(grid_svg((40, 40), (5, 5), (20, 20)))
    styles = {line.get("class"): line.get("style") for line in root.iter(f"{SVG}line")}
    assert styles["chunk"] != styles["shard"]
    assert "stroke-width:2.5" in (styles["shard"] or "")


class CountingStore(LocalStore):
    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.reads: list[str] = []
        self.listings = 0

    def get(self, key: str, byte_range: Any = None) -> bytes | None:
        self.reads.append(key)
        return super().get(key, byte_range)

    def get_many(self, requests: Any) -> list[bytes | None]:
        self.reads += [key for key, _ in requests]
        return super().get_many(requests)

    def list_prefix(self, prefix: str) -> list[str]:
        self.listings += 1
        return super().list_prefix(prefix)


def test_an_array_shows_its_facts_from_a_listing(tmp_path: Path) -> None:
    a = zarrx.create_array(LocalStore(tmp_path / "a.zarr"), shape=(100, 60), chunks=(10, 10),
                           shards=(20, 30), dtype="f4", attributes={"<units>": "m"},
                           dimension_names=("y", "x"))
    a[:50] = np.arange(50 * 60, dtype="f4").reshape(50, 60)
    markup = a._repr_html_()
    facts = _facts(markup)
    assert facts["Shape"] == "(100, 60)"
    assert facts["Data type"] == "float32"
    assert facts["Chunk shape"] == "(10, 10)"
    assert facts["Shard shape"] == "(20, 30)"
    assert facts["Shards stored"] == "6 of 10"
    assert facts["Codecs"].startswith("sharding_indexed(chunk_shape=[10, 10], codecs=[bytes(")
    assert "zstd(" in facts["Codecs"]
    assert facts["Dimensions"] == "('y', 'x')"
    assert facts["Attributes"] == "<units>"  # escaped in the markup, parsed back
    shard_bytes = sum((tmp_path / "a.zarr" / "c" / i / j).stat().st_size
                      for i in "012" for j in "01")
    decoded = 6 * 20 * 30 * 4
    assert facts["Stored size"] == (
        f"{zarrx.info.human(shard_bytes)} (ratio {decoded / shard_bytes:.1f})")
    assert "&lt;units&gt;" in markup


def test_no_chunk_is_read_and_remote_stores_are_not_listed(tmp_path: Path) -> None:
    store = CountingStore(tmp_path / "local")
    a = zarrx.create_array(store, shape=(30, 30), chunks=(10, 10), dtype="i2")
    a[...] = 1
    store.reads.clear()
    facts = _facts(a._repr_html_())
    assert facts["Chunks stored"] == "9 of 9"
    assert "Stored size" in facts
    assert all(not key.startswith("c/") for key in store.reads)  # sizes by stat: no read

    class Remote(CountingStore):
        batched_reads = True  # what object stores say

    remote = Remote(tmp_path / "remote")
    b = zarrx.create_array(remote, shape=(30, 30), chunks=(10, 10), dtype="i2")
    b[...] = 1
    remote.reads.clear()
    remote.listings = 0
    facts = _facts(b._repr_html_())
    assert facts["Stored"].startswith("not listed")
    assert remote.listings == 0
    assert not remote.reads


def test_a_scalar_a_string_array_and_v2() -> None:
    s = zarrx.create_array(MemoryStore(), shape=(), dtype="i4")
    assert _parse(s._repr_html_()).find(f".//{SVG}svg") is None
    v2 = zarrx.create_array(MemoryStore(), shape=(8,), chunks=(3,), dtype="u1", zarr_format=2)
    facts = _facts(v2._repr_html_())
    assert facts["Type"] == "zarrx.Array (Zarr 2)"
    assert "Compressor" in facts
    assert "Codecs" not in facts
    text = zarrx.create_array(MemoryStore(), shape=(4,), chunks=(2,), dtype=str)
    text[...] = np.array(["a", "bb", "c", "d"])
    facts = _facts(text._repr_html_())
    assert facts["Chunks stored"] == "2 of 2"
    assert "ratio" not in facts["Stored size"]


def test_a_group_is_a_tree() -> None:
    g = zarrx.create_group(MemoryStore(), attributes={"title": "t"})
    g.create_group("a").create_array("x", shape=(4, 4), chunks=(2, 2), dtype="f8")
    g.create_group("a/b").create_array("y", shape=(8,), chunks=(2,), shards=(4,), dtype="u1")
    g.create_group("c")
    root = _parse(g._repr_html_())
    facts = _facts(g._repr_html_())
    assert facts["Members"] == "5 (all levels)"
    assert facts["Attributes"] == "title"
    tree = root.find(".//div[@class='zarrx-tree']")
    assert tree is not None

    def names(ul: ET.Element) -> list[Any]:
        out: list[Any] = []
        for li in ul.findall("li"):
            details = li.find("details")
            line = details.find("summary/span") if details is not None else li.find("span")
            assert line is not None
            name = line.find("b").text  # type: ignore[union-attr]
            if details is not None:
                out.append((name, names(details.find("ul"))))  # type: ignore[arg-type]
            else:
                out.append(name)
        return out

    top = tree.find("ul")
    assert top is not None
    assert names(top) == [("a", [("b", ["y"]), "x"]), "c"]
    y = [s for s in tree.iter("span") if s.get("class") == "array" and s.find("b").text == "y"]
    assert "shards (4,)" in "".join(y[0].itertext())


def test_a_large_group_is_cut(monkeypatch: Any) -> None:
    import zarrx.display

    monkeypatch.setattr(zarrx.display, "MAX_NODES", 3)
    g = zarrx.create_group(MemoryStore())
    for i in range(5):
        g.create_group(f"g{i}")
    markup = g._repr_html_()
    assert markup.count("<li>") == 3
    assert "2 more not shown" in markup
    assert zarrx.display.MAX_NODES == 3 < MAX_NODES


def test_the_stored_count_comes_from_the_keys_not_the_grid() -> None:
    """400 million chunks in the grid, 6 stored: the display counts the 6 listed keys (a
    walk of the grid would take minutes)."""
    a = zarrx.create_array(MemoryStore(), shape=(20000, 20000), chunks=(1, 1), dtype="u1")
    a[:2, :3] = 1
    facts = _facts(a._repr_html_())
    assert facts["Chunks stored"] == "6 of 400000000"
    assert "Stored size" in facts
