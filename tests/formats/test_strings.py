"""Variable-length strings and bytes (v3 string/vlen-utf8, v2 |O with VLenUTF8/VLenBytes)."""

import numpy as np
import pytest
import zarr
from hypothesis import given, settings
from hypothesis import strategies as st

import zarrx
from zarrx.errors import CodecError
from zarrx.storage import MemoryStore

TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12)


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_text_both_ways(tmp_path, zarr_format):
    values = np.array(["", "a", "héllo wörld", "日本語", "x" * 300, "z"], dtype="T").reshape(2, 3)
    a = zarrx.create_array(str(tmp_path / "x"), shape=(2, 3), dtype=str, chunks=(1, 2),
                           zarr_format=zarr_format)
    a[...] = values
    z = zarr.open_array(str(tmp_path / "x"))
    np.testing.assert_array_equal(z[...], values)
    w = zarr.create_array(str(tmp_path / "w"), shape=(2, 3), dtype=str, chunks=(1, 2),
                          zarr_format=zarr_format)
    w[:1] = values[:1]
    got = zarrx.open_array(str(tmp_path / "w"))[...]
    assert got.dtype.kind == "T"
    np.testing.assert_array_equal(got, np.where(np.arange(2)[:, None] < 1, values, ""))


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_bytes_both_ways(tmp_path, zarr_format):
    values = np.array([b"", b"\x00\xff", b"abc"], dtype=object)
    a = zarrx.create_array(str(tmp_path / "b"), shape=(3,), dtype=bytes, chunks=(2,),
                           zarr_format=zarr_format)
    a[...] = values
    assert list(zarr.open_array(str(tmp_path / "b"))[...]) == list(values)
    assert list(zarrx.open_array(str(tmp_path / "b"))[...]) == list(values)


@settings(max_examples=50, deadline=None)
@given(st.lists(TEXT, min_size=1, max_size=20), st.integers(1, 5), st.data())
def test_text_selections_match_numpy(items, chunk, data):
    values = np.array(items, dtype="T")
    a = zarrx.create_array(MemoryStore(), shape=values.shape, dtype=str, chunks=(chunk,),
                           fill_value="?")
    a[...] = values
    start = data.draw(st.integers(0, len(items)))
    step = data.draw(st.integers(1, 3))
    np.testing.assert_array_equal(a[start::step], values[start::step])
    a[start::step] = "new"
    values[start::step] = "new"
    np.testing.assert_array_equal(a[...], values)


def test_fill_value_and_empty_chunks():
    store = MemoryStore()
    a = zarrx.create_array(store, shape=(4,), dtype=str, chunks=(2,), fill_value="-")
    assert a[...].tolist() == ["-"] * 4
    a[:2] = "-"
    assert [k for k in store.list() if k.startswith("c/")] == []


def test_corrupt_text_chunk():
    store = MemoryStore()
    a = zarrx.create_array(store, shape=(4,), dtype=str, chunks=(4,), compressors=None)
    a[...] = ["a", "b", "c", "d"]
    raw = store.get("c/0")
    store.set("c/0", raw[:-3])
    with pytest.raises(CodecError, match="c/0"):
        a[...]
    store.set("c/0", (9).to_bytes(4, "little") + raw[4:])
    with pytest.raises(CodecError, match="4 items"):
        a[...]
