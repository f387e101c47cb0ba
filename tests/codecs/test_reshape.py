"""The ``reshape`` codec: NumPy's C-order reshape is the oracle; the spec's rules for
``shape`` entries (sizes, input axes, one ``-1``) are checked one by one."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zarrx
from zarrx.abc.codec import ChunkSpec
from zarrx.codecs.reshape import ReshapeCodec
from zarrx.errors import MetadataError
from zarrx.storage import MemoryStore


def spec(shape: tuple[int, ...]) -> ChunkSpec:
    return ChunkSpec(shape, np.dtype("i4"), np.int32(0))


@st.composite
def reshapes(draw: st.DrawFn) -> tuple[tuple[int, ...], list]:
    """A chunk shape and a valid ``shape`` configuration: input axes grouped in order, each
    group given as its axes, its size or (once) -1."""
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=5)))
    cuts = sorted(draw(st.sets(st.integers(1, len(shape) - 1), max_size=len(shape) - 1))) \
        if len(shape) > 1 else []
    groups = [list(range(a, b)) for a, b in zip([0, *cuts], [*cuts, len(shape)])]
    config: list = []
    auto = draw(st.sampled_from([None, *range(len(groups))]))
    for i, group in enumerate(groups):
        kind = draw(st.sampled_from(["axes", "size"]))
        if i == auto:
            config.append(-1)
        elif kind == "axes":
            config.append(group)
        else:
            config.append(math.prod(shape[a] for a in group))
    if draw(st.booleans()):  # a size-1 axis anywhere
        config.insert(draw(st.integers(0, len(config))), 1)
    return shape, config


@settings(max_examples=200, deadline=None)
@given(case=reshapes())
def test_reshape_is_numpys(case: tuple[tuple[int, ...], list]) -> None:
    shape, config = case
    codec = ReshapeCodec.from_config({"shape": config})
    encoded_shape = codec.resolve_spec(spec(shape)).shape
    assert math.prod(encoded_shape) == math.prod(shape)
    values = np.arange(math.prod(shape), dtype="i4").reshape(shape)
    encoded = codec.encode(values, spec(shape))
    np.testing.assert_array_equal(encoded, values.reshape(encoded_shape))
    strided = np.asfortranarray(values)  # a copy is made only when needed
    np.testing.assert_array_equal(codec.encode(strided, spec(shape)), encoded)
    np.testing.assert_array_equal(codec.decode(encoded, spec(shape)), values)
    assert codec.to_config() == {"shape": config}


def test_spec_example() -> None:
    codec = ReshapeCodec.from_config({"shape": [[0, 1], [2], 3]})
    assert codec.resolve_spec(spec((10, 5, 6, 3))).shape == (50, 6, 3)


@pytest.mark.parametrize(("config", "shape", "message"), [
    ([[1], [0]], (2, 3), "increase strictly"),
    ([[1, 0], 10, [3, 4]], (2, 5, 1, 3, 4), "increase strictly"),
    ([[3, 4], 10, [0, 1]], (2, 5, 1, 3, 4), "increase strictly"),
    ([-1, -1], (2, 3), "at most once"),
    ([0, 6], (2, 3), "positive or -1"),
    ([-2], (6,), "positive or -1"),
    (["a"], (6,), "each entry"),
    ("6", (6,), "must be a list"),
    ([4, 2], (2, 3), "8 elements"),
    ([4, -1], (2, 3), "no size for -1"),
    ([[0, 2]], (2, 3), "names an axis"),
    ([[1], 4], (2, 3, 2), "do not hold as many elements"),
])
def test_refused_configurations(config: object, shape: tuple[int, ...], message: str) -> None:
    with pytest.raises(MetadataError, match=message):
        ReshapeCodec.from_config({"shape": config}).validate(spec(shape))


def test_unknown_fields_and_missing_shape() -> None:
    with pytest.raises(MetadataError, match="required"):
        ReshapeCodec.from_config({})
    with pytest.raises(MetadataError, match="unknown configuration"):
        ReshapeCodec.from_config({"shape": [-1], "order": "C"})


def test_array_with_reshape_and_transpose_round_trips() -> None:
    """A reshape then a transpose (a chunk of (4, 6) stored as (6, 2, 2)), partial edge
    chunks, a non-zero fill; NumPy is the oracle for every selection."""
    store = MemoryStore()
    a = zarrx.create_array(
        store, shape=(10, 15), chunks=(4, 6), dtype="u2", fill_value=9,
        filters=[{"name": "reshape", "configuration": {"shape": [2, 2, [1]]}},
                 {"name": "transpose", "configuration": {"order": [2, 0, 1]}}])
    expected = np.full((10, 15), 9, "u2")
    expected[1:9, 3:] = np.arange(8 * 12, dtype="u2").reshape(8, 12)
    a[1:9, 3:] = expected[1:9, 3:]
    b = zarrx.open_array(store)
    np.testing.assert_array_equal(b[...], expected)
    np.testing.assert_array_equal(b[::-3, 2:11:4], expected[::-3, 2:11:4])
    assert b.metadata.to_json()["codecs"][0] == {
        "name": "reshape", "configuration": {"shape": [2, 2, [1]]}}
