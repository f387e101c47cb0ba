"""Auto chunks and shards are zarr-python 3's: its own functions are the oracle, over many
shapes, element sizes and data types, and so are the arrays both libraries create."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest
import zarr
from hypothesis import given, settings
from hypothesis import strategies as st
from zarr.core.chunk_grids import _auto_partition, _guess_chunks

import zarrx
from zarrx.chunking import SHARDED_MAX_BYTES, auto_partition, guess_chunks
from zarrx.errors import MetadataError

shapes = st.lists(st.integers(0, 100_000), min_size=0, max_size=5).map(tuple)
itemsizes = st.sampled_from([1, 2, 3, 4, 8, 12, 16, 20, 32, 100, 4096])


@contextmanager
def quiet() -> Iterator[None]:
    """zarr-python warns that automatic shards are experimental, and about some types."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


@contextmanager
def target_shard_size(value: int | None) -> Iterator[None]:
    with zarrx.config.set(target_shard_size_bytes=value), zarr.config.set(
        {"array.target_shard_size_bytes": value}
    ):
        yield


@settings(max_examples=400, deadline=None)
@given(shape=shapes, itemsize=itemsizes)
def test_guessed_chunks_are_zarr_pythons(shape: tuple[int, ...], itemsize: int) -> None:
    assert guess_chunks(shape, itemsize) == _guess_chunks(shape, itemsize)
    assert guess_chunks(shape, itemsize, max_bytes=SHARDED_MAX_BYTES) == _guess_chunks(
        shape, itemsize, max_bytes=SHARDED_MAX_BYTES
    )


@settings(max_examples=300, deadline=None)
@given(
    shape=st.lists(st.integers(1, 50_000), min_size=1, max_size=4).map(tuple),
    itemsize=itemsizes,
    chunk_div=st.lists(st.integers(1, 64), min_size=4, max_size=4),
    explicit_chunks=st.booleans(),
    target=st.sampled_from([None, 1, 1 << 16, 1 << 20, 1 << 27]),
)
def test_auto_shards_are_zarr_pythons(
    shape: tuple[int, ...], itemsize: int, chunk_div: list[int], explicit_chunks: bool,
    target: int | None,
) -> None:
    chunks: Any = (
        tuple(max(1, s // d) for s, d in zip(shape, chunk_div)) if explicit_chunks else "auto"
    )
    with quiet(), target_shard_size(target):
        expected = _auto_partition(array_shape=shape, chunk_shape=chunks, shard_shape="auto",
                                   item_size=itemsize)
        assert auto_partition(shape, chunks=chunks, shards="auto", itemsize=itemsize) == expected
    for shards in (None, expected[0]):
        with quiet():
            assert auto_partition(shape, chunks=chunks, shards=shards, itemsize=itemsize) == (
                _auto_partition(array_shape=shape, chunk_shape=chunks, shard_shape=shards,
                                item_size=itemsize)
            )


#: Data types of every kind, with what zarr-python takes for their element size.
DTYPES = ["bool", "int8", "uint16", "int32", "float16", "float32", "float64", "complex128",
          "<U7", "S5", "datetime64[ns]", "timedelta64[s]", str,
          [("a", "<i4"), ("b", "<f8")]]


@settings(max_examples=150, deadline=None)
@given(
    shape=st.lists(st.integers(0, 3000), min_size=0, max_size=4).map(tuple),
    dtype=st.sampled_from(DTYPES),
    zarr_format=st.sampled_from([2, 3]),
    sharded=st.booleans(),
)
def test_created_arrays_have_zarr_pythons_shapes(
    shape: tuple[int, ...], dtype: Any, zarr_format: int, sharded: bool
) -> None:
    if isinstance(dtype, list) and zarr_format == 3:
        zarr_format = 2  # (zarr-python 3.1 writes structured types to v2 only)
    sharded = sharded and zarr_format == 3 and len(shape) > 0
    keywords: dict[str, Any] = {"shape": shape, "dtype": dtype, "zarr_format": zarr_format}
    if sharded:
        keywords["shards"] = "auto"
    with quiet():
        theirs = zarr.create_array(zarr.storage.MemoryStore(), **keywords)
    ours = zarrx.create_array(zarrx.storage.MemoryStore(), **keywords)
    assert (ours.chunks, ours.shards) == (theirs.chunks, theirs.shards)


@pytest.mark.parametrize("shape", [(10000, 10000), (512, 512, 512), (7,), (3, 100_000), ()])
@pytest.mark.parametrize("dtype", ["float32", "uint8", "<U3"])
def test_the_default_chunks_of_every_maker_are_zarr_pythons(shape: tuple[int, ...],
                                                             dtype: str) -> None:
    """``create`` / ``zeros`` (zarr-python's older functions) and ``create_array`` alike."""
    with quiet():
        expected = zarr.zeros(shape, dtype=dtype).chunks
        assert zarr.create_array(zarr.storage.MemoryStore(), shape=shape,
                                 dtype=dtype).chunks == expected
    assert zarrx.zeros(shape, dtype=dtype).chunks == expected
    assert zarrx.create(shape, dtype=dtype).chunks == expected
    assert zarrx.create_array(zarrx.storage.MemoryStore(), shape=shape,
                              dtype=dtype).chunks == expected


def test_the_issues_examples() -> None:
    a = zarrx.create_array("memory://auto-shards", shape=(10000, 10000), chunks=(100, 100),
                           shards="auto", dtype="f4", overwrite=True)
    assert (a.chunks, a.shards) == ((100, 100), (200, 200))
    b = zarrx.create_array(zarrx.storage.MemoryStore(), shape=(10000, 10000),
                           chunks="auto", shards="auto", dtype="f4")
    assert (b.chunks, b.shards) == ((313, 625), (626, 1250))
    assert zarrx.create_array(zarrx.storage.MemoryStore(), shape=(10000, 10000),
                              dtype="f4").chunks == (625, 625)
    assert zarrx.create_array(zarrx.storage.MemoryStore(), shape=(512,) * 3,
                              dtype="f4").chunks == (64, 64, 128)


def test_auto_shards_in_the_mapping_form_and_a_target_size() -> None:
    a = zarrx.create_array(zarrx.storage.MemoryStore(), shape=(4000, 4000), dtype="u1",
                           chunks=(100, 100),
                           shards={"shape": "auto", "index_location": "start"})
    assert a.shards == (200, 200)
    assert a.metadata.codecs.codecs[0].index_location == "start"
    with zarrx.config.set(target_shard_size_bytes=100 * 100 * 9):
        b = zarrx.create_array(zarrx.storage.MemoryStore(), shape=(4000, 4000), dtype="u1",
                               chunks=(100, 100), shards="auto")
    assert b.shards == (300, 300)


def test_explicit_shards_still_checked() -> None:
    with pytest.raises(MetadataError, match=r"shards \(150, 150\) must be a multiple"):
        zarrx.create_array(zarrx.storage.MemoryStore(), shape=(300, 300), dtype="u1",
                           chunks=(100, 100), shards=(150, 150))
    with pytest.raises(MetadataError, match="shards must be positive integers"):
        zarrx.create_array(zarrx.storage.MemoryStore(), shape=(300, 300), dtype="u1",
                           chunks=(100, 100), shards=(0, 100))
    with pytest.raises(ValueError, match="target_shard_size_bytes"):
        zarrx.config.set(target_shard_size_bytes=0)


def test_guessed_chunks_hold_the_whole_array() -> None:
    """Every guessed chunk covers at least one element on every axis, and the product of
    the grid covers the shape (a property, beside the oracle)."""
    for shape in [(0,), (1, 0, 5), (2**40,), (3, 5, 7, 11)]:
        chunks = guess_chunks(shape, 8)
        assert all(c >= 1 for c in chunks)
        assert all(c * -(-max(s, 1) // c) >= s for s, c in zip(shape, chunks))
    assert np.prod(guess_chunks((2**20, 2**20), 8)) * 8 < 64 * 2**20
