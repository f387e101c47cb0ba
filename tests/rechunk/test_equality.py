"""zarrx.rechunk copies every element exactly, across formats, codecs, data types and
grids, and gives the target the metadata asked for (the source's where left unset)."""

from __future__ import annotations

from typing import Any

import numcodecs
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zarrx
from zarrx.metadata.v3_draft import FORMAT as DRAFT
from zarrx.storage import LocalStore, MemoryStore


def same(a: np.ndarray, b: np.ndarray) -> bool:
    if a.dtype.hasobject or a.dtype.kind == "T" or b.dtype.kind == "T":
        return bool(a.shape == b.shape and a.tolist() == b.tolist())
    return bool(a.shape == b.shape and a.dtype == b.dtype
                and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))


def rechunked(src: zarrx.Array, **kw: Any) -> zarrx.Array:
    kw.setdefault("max_mem", "4MiB")
    out = zarrx.rechunk(src, MemoryStore(), **kw)
    assert same(src[...], out[...])
    return out


@pytest.fixture
def cube() -> np.ndarray:
    x = np.random.default_rng(0).random((20, 12, 10))
    x[0, 0, 0] = np.nan
    x[5:10] = np.nan
    return x


@pytest.mark.parametrize("fmt", [2, 3, DRAFT])
@pytest.mark.parametrize("target_fmt", [None, 2, 3, DRAFT])
def test_any_format_to_any_format(fmt: Any, target_fmt: Any, cube: np.ndarray) -> None:
    src = zarrx.create_array(MemoryStore(), data=cube, chunks=(1, 12, 10), zarr_format=fmt,
                             attributes={"units": "m"}, fill_value=np.nan)
    out = rechunked(src, chunks=(20, 3, 2), zarr_format=target_fmt)
    assert out.zarr_format == (fmt if target_fmt is None else target_fmt)
    assert out.chunks == (20, 3, 2)
    assert out.attrs["units"] == "m"
    assert np.isnan(out.fill_value)


def test_v2_with_filters_keeps_them() -> None:
    data = np.arange(3000, dtype="i4").reshape(30, 100)
    src = zarrx.create_array(MemoryStore(), data=data, chunks=(3, 7), zarr_format=2,
                             filters=[numcodecs.Delta("i4")],
                             compressors=numcodecs.Zlib(level=3))
    out = rechunked(src, chunks=(30, 10))
    assert out.zarr_format == 2
    doc = out.metadata.to_json()
    assert [f["id"] for f in doc["filters"]] == ["delta"]
    assert doc["compressor"]["id"] == "zlib"
    v3 = rechunked(src, chunks=(10, 10), zarr_format=3)
    assert v3.zarr_format == 3
    names = [c["name"] for c in v3.metadata.to_json()["codecs"]]
    assert names[0] == "numcodecs.delta"


def test_codecs_kept_or_replaced(cube: np.ndarray) -> None:
    src = zarrx.create_array(MemoryStore(), data=cube, chunks=(5, 5, 5),
                             compressors=[{"name": "gzip", "configuration": {"level": 2}}])
    kept = rechunked(src, chunks=(20, 2, 2))
    assert [c.name for c in kept.compressors] == ["gzip"]
    also = rechunked(src, chunks=(20, 2, 2), compressors="keep")
    assert also.metadata.to_json()["codecs"] == kept.metadata.to_json()["codecs"]
    replaced = rechunked(src, chunks=(20, 2, 2),
                         compressors=[{"name": "zstd", "configuration": {"level": 3}}])
    assert [c.name for c in replaced.compressors] == ["zstd"]
    none = rechunked(src, compressors=[])
    assert none.compressors == ()
    assert none.chunks == (5, 5, 5)


def test_attributes_dimension_names_fill_value(cube: np.ndarray) -> None:
    src = zarrx.create_array(MemoryStore(), shape=cube.shape, dtype="f8", chunks=(4, 4, 4),
                             fill_value=-7.0, dimension_names=["t", "y", "x"],
                             attributes={"a": [1, 2], "b": {"c": None}})
    src[:10] = cube[:10]  # the rest stays the fill value
    out = rechunked(src, chunks=(10, 12, 1))
    assert out.dimension_names == ("t", "y", "x")
    assert dict(out.attrs) == {"a": [1, 2], "b": {"c": None}}
    assert out.fill_value == -7.0
    v2 = rechunked(src, chunks=(10, 12, 1), zarr_format=2)
    assert v2.attrs["_ARRAY_DIMENSIONS"] == ["t", "y", "x"]


def test_fill_chunks_are_not_stored(tmp_path: Any) -> None:
    src = zarrx.create_array(LocalStore(tmp_path / "s"), shape=(40, 40), dtype="i4",
                             chunks=(40, 1), fill_value=3)
    src[:10] = 1
    out = zarrx.rechunk(src, LocalStore(tmp_path / "t"), chunks=(10, 40), max_mem="1MiB")
    assert same(src[...], out[...])
    assert out.nchunks_initialized == 1


@pytest.mark.parametrize("source_shards", [None, (8, 6, 10)])
@pytest.mark.parametrize("target_shards", [None, False, (20, 4, 4)])
def test_sharded_source_and_target(source_shards: Any, target_shards: Any,
                                   cube: np.ndarray) -> None:
    src = zarrx.create_array(MemoryStore(), data=cube, chunks=(4, 3, 5),
                             shards=source_shards)
    if source_shards is not None and target_shards is None:  # kept, but (10, 2, 2) ∤ them
        with pytest.raises(zarrx.errors.MetadataError, match="do not divide"):
            zarrx.rechunk(src, MemoryStore(), chunks=(10, 2, 2))
        return
    out = rechunked(src, chunks=(10, 2, 2), shards=target_shards)
    assert out.chunks == (10, 2, 2)
    assert out.shards == (None if target_shards in (None, False) else target_shards)


def test_shards_kept_when_chunks_divide_them(cube: np.ndarray) -> None:
    src = zarrx.create_array(MemoryStore(), data=cube, chunks=(4, 3, 5), shards=(8, 6, 10))
    out = rechunked(src, chunks=(2, 3, 5))
    assert out.shards == (8, 6, 10)
    with pytest.raises(zarrx.errors.MetadataError, match="do not divide"):
        zarrx.rechunk(src, MemoryStore(), chunks=(3, 3, 5))


def test_nested_shards() -> None:
    inner = {"name": "sharding_indexed", "configuration": {
        "chunk_shape": [2, 2], "codecs": [{"name": "bytes"}], "index_codecs": [
            {"name": "bytes"}, {"name": "crc32c"}]}}
    data = np.arange(16 * 12, dtype="u2").reshape(16, 12)
    src = zarrx.create_array(MemoryStore(), data=data, chunks=(8, 6), serializer=inner,
                             compressors=None)
    assert src.shards == (8, 6)
    out = rechunked(src, chunks=(16, 1), shards=False)
    assert out.chunks == (16, 1)
    back = rechunked(out, chunks=(4, 4), shards=(8, 12))
    assert back.shards == (8, 12)


@pytest.mark.parametrize("dtype", [str, bytes])
def test_variable_length(dtype: Any) -> None:
    words = np.array(["", "a", "ünïcode", "x" * 300] * 15, dtype=object).reshape(6, 10)
    if dtype is bytes:
        words = np.vectorize(lambda s: s.encode())(words).astype(object)
    src = zarrx.create_array(MemoryStore(), shape=(6, 10), dtype=dtype, chunks=(1, 10))
    src[...] = words
    out = rechunked(src, chunks=(6, 3))
    v2 = rechunked(src, chunks=(6, 3), zarr_format=2)
    assert out.chunks == v2.chunks == (6, 3)


@pytest.mark.parametrize("dtype", ["bool", "i1", ">u4", "f2", "c16", "M8[s]", "m8[ms]",
                                   "S5", "<U3", [("a", "<i4"), ("b", "f8")]])
def test_data_types(dtype: Any) -> None:
    n = 37
    rng = np.random.default_rng(1)
    raw = rng.integers(0, 255, size=n * np.dtype(dtype).itemsize, dtype="u1")
    data = raw.view(np.dtype(dtype)) if np.dtype(dtype).kind not in "fcMmU" else (
        rng.random(n).astype(dtype) if np.dtype(dtype).kind in "fc"
        else np.arange(n).astype(dtype))
    src = zarrx.create_array(MemoryStore(), data=data, chunks=(5,))
    rechunked(src, chunks=(8,))


def test_zero_dimensional_and_empty() -> None:
    zero = zarrx.create_array(MemoryStore(), data=np.array(2.5))
    assert rechunked(zero, zarr_format=2)[()] == 2.5
    empty = zarrx.create_array(MemoryStore(), shape=(0, 7), dtype="i2", chunks=(3, 3))
    assert rechunked(empty, chunks=(5, 5)).shape == (0, 7)


def test_dtype_cast_same_kind() -> None:
    data = np.arange(100, dtype="i2").reshape(10, 10)
    src = zarrx.create_array(MemoryStore(), data=data, chunks=(1, 10), fill_value=5)
    out = zarrx.rechunk(src, MemoryStore(), chunks=(10, 1), dtype="i8", max_mem="1MiB")
    assert out.dtype == np.dtype("i8")
    assert out.fill_value == 5
    assert same(out[...], data.astype("i8"))
    as_float = zarrx.rechunk(src, MemoryStore(), dtype="f4", max_mem="1MiB")
    assert same(as_float[...], data.astype("f4"))


def test_rectilinear_source() -> None:
    data = np.arange(30 * 4).reshape(30, 4)
    src = zarrx.create_array(MemoryStore(), data=data, chunks=[[5, 10, 15], [4]])
    rechunked(src, chunks=(7, 1))


def test_source_given_as_a_path(tmp_path: Any) -> None:
    g = zarrx.create_group(str(tmp_path / "in.zarr"))
    g.create_array("x/y", data=np.arange(50).reshape(5, 10), chunks=(5, 1))
    out = zarrx.rechunk(str(tmp_path / "in.zarr"), str(tmp_path / "out.zarr"),
                        source_path="x/y", target_path="deep/z", chunks=(1, 10))
    assert out.path == "deep/z"
    again = zarrx.open_array(str(tmp_path / "out.zarr"), path="deep/z", mode="r")
    assert same(again[...], np.arange(50).reshape(5, 10))
    assert again.chunks == (1, 10)


@st.composite
def cases(draw: Any) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], Any]:
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(0, 13)) for _ in range(ndim))
    chunks = tuple(draw(st.integers(1, 14)) for _ in range(ndim))
    new = tuple(draw(st.integers(1, 14)) for _ in range(ndim))
    shards = draw(st.sampled_from([None, 2, 3]))
    shard_shape = None if shards is None else tuple(c * shards for c in new)
    return shape, chunks, new, shard_shape


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases(), st.sampled_from(["1KiB", "64KiB", "4MiB"]))
def test_property_equals_numpy(case: Any, max_mem: str) -> None:
    shape, chunks, new, shards = case
    data = np.arange(int(np.prod(shape)), dtype="i4").reshape(shape) * 3 - 7
    src = zarrx.create_array(MemoryStore(), data=data, chunks=chunks, fill_value=-7)
    target = MemoryStore()
    if max_mem != "4MiB":  # one target object and a source chunk may not fit: refused
        try:
            out = zarrx.rechunk(src, target, chunks=new, shards=shards, max_mem=max_mem,
                                threads=2)
        except zarrx.errors.RechunkError:
            with pytest.raises(zarrx.errors.NodeNotFoundError):  # nothing was written
                zarrx.open_array(target, mode="r")
            return
    else:
        out = zarrx.rechunk(src, target, chunks=new, shards=shards, max_mem=max_mem,
                            threads=2)
    assert out.chunks == new
    assert same(out[...], data)


def test_sparse_source_and_another_fill_value() -> None:
    src = zarrx.create_array(MemoryStore(), shape=(30, 30), dtype="i4", chunks=(1, 30),
                             fill_value=0)
    src[3] = 7  # one stored chunk; the rest reads as 0
    same_fill = rechunked(src, chunks=(30, 3))
    assert same_fill.nchunks_initialized == 10
    other = rechunked(src, chunks=(30, 3), fill_value=5)
    assert other.fill_value == 5
    assert (other[...][4:] == 0).all()  # the source's fill, written as data


def test_variable_length_through_an_intermediate_stage() -> None:
    from zarrx.rechunking.jobs import geometry
    from zarrx.rechunking.plan import make_plan

    words = np.array([f"w{i}" * (i % 5) for i in range(16 * 16 * 16)], dtype=object)
    src = zarrx.create_array(MemoryStore(), shape=(16, 16, 16), dtype=str, chunks=(1, 16, 16))
    src[...] = words.reshape(16, 16, 16)
    model = zarrx.create_array(MemoryStore(), shape=(16, 16, 16), dtype=str, chunks=(16, 1, 1))
    plan = make_plan(geometry(src, model.metadata), 200 << 10, 2, 2)
    assert plan.mode == "intermediate"
    out = rechunked(src, chunks=(16, 1, 1), max_mem=200 << 10)
    assert out.chunks == (16, 1, 1)


def test_draft_sharded_source_and_target(cube: np.ndarray) -> None:
    src = zarrx.create_array(MemoryStore(), data=cube, chunks=(2, 3, 5), shards=(4, 6, 10),
                             zarr_format=DRAFT)
    assert src.shards == (4, 6, 10)
    v3 = rechunked(src, chunks=(20, 2, 2), shards=(20, 4, 10), zarr_format=3)
    assert v3.shards == (20, 4, 10)
    back = rechunked(v3, chunks=(5, 2, 5), shards=(10, 4, 10), zarr_format=DRAFT)
    assert back.zarr_format == DRAFT
    assert back.shards == (10, 4, 10)


@pytest.mark.parametrize(("shape", "source", "target", "shards", "max_mem"), [
    ((50, 45, 40), (1, 45, 40), (50, 1, 1), None, 256 << 10),
    ((37, 29, 31), (1, 29, 31), (37, 3, 2), None, 96 << 10),
    ((37, 29, 31), (2, 29, 7), (37, 2, 1), (37, 4, 5), 64 << 10),
    ((64, 60), (1, 60), (64, 1), None, 12 << 10),
    ((17, 60, 9), (5, 60, 9), (17, 3, 1), None, 64 << 10),
])
def test_awkward_shapes_through_the_intermediate_stage(
    shape: tuple[int, ...], source: tuple[int, ...], target: tuple[int, ...], shards: Any,
    max_mem: int,
) -> None:
    from zarrx.rechunking.jobs import geometry
    from zarrx.rechunking.plan import make_plan

    data = np.random.default_rng(2).integers(-1000, 1000, size=shape, dtype="i4")
    data[data % 3 == 0] = 0  # some fill values, some whole chunks of them
    src = zarrx.create_array(MemoryStore(), data=data, chunks=source, fill_value=0)
    model = zarrx.create_array(MemoryStore(), shape=shape, dtype="i4", chunks=target,
                               shards=shards)
    plan = make_plan(geometry(src, model.metadata), max_mem, 2, 2)
    assert plan.mode == "intermediate", plan
    out = rechunked(src, chunks=target, shards=shards, max_mem=max_mem)
    assert out.chunks == target
