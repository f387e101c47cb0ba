"""normalize_basic reproduces NumPy's basic indexing exactly (shape, values, scalars)."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from zarrx.errors import BoundsCheckError, SelectionError
from zarrx.selection.normalize import normalize_basic


def _gather(arr: np.ndarray, selection) -> object:
    """Apply a normalised selection to ``arr`` the way the engine does (via ranges)."""
    sel = normalize_basic(selection, arr.shape)
    ranges = tuple(slice(s, s + (c - 1) * st_ + 1, st_) if c else slice(0, 0)
                   for s, st_, c in zip(sel.starts, sel.steps, sel.counts))
    buffer = np.array(arr[ranges])
    assert buffer.shape == sel.counts
    return sel.result(buffer)


@st.composite
def shapes_and_selections(draw):
    shape = tuple(draw(st.lists(st.integers(0, 7), min_size=0, max_size=4)))
    items = []
    for n in shape:
        kind = draw(st.sampled_from(["int", "slice", "full"] if n else ["slice", "full"]))
        if kind == "int":
            items.append(draw(st.integers(-n, n - 1)))
        elif kind == "slice":
            items.append(slice(
                draw(st.none() | st.integers(-9, 9)),
                draw(st.none() | st.integers(-9, 9)),
                draw(st.none() | st.integers(-4, 4).filter(bool)),
            ))
        else:
            items.append(slice(None))
    # drop a trailing run, optionally use an Ellipsis, insert None
    cut = draw(st.integers(0, len(items)))
    tail_style = draw(st.sampled_from(["none", "ellipsis_end", "ellipsis_start"]))
    if tail_style == "ellipsis_end":
        items = [*items[:cut], Ellipsis]
    elif tail_style == "ellipsis_start":
        items = [Ellipsis, *items[cut:]]
    else:
        items = items[:cut]
    if draw(st.booleans()):
        items.insert(draw(st.integers(0, len(items))), None)
    single = len(items) == 1 and draw(st.booleans())
    return shape, items[0] if single else tuple(items)


@given(shapes_and_selections())
def test_matches_numpy(case):
    shape, selection = case
    arr = np.arange(int(np.prod(shape)), dtype="int64").reshape(shape)
    expected = arr[selection]
    got = _gather(arr, selection)
    assert type(got) is type(expected)
    assert np.shape(got) == np.shape(expected)
    np.testing.assert_array_equal(got, expected)


@given(shapes_and_selections())
def test_to_buffer_inverts_result(case):
    shape, selection = case
    arr = np.zeros(shape, dtype="int64")
    expected = arr.copy()
    value = np.arange(int(np.prod(np.shape(expected[selection]))), dtype="int64") + 1
    value = value.reshape(np.shape(expected[selection]))
    expected[selection] = value
    sel = normalize_basic(selection, shape)
    ranges = tuple(slice(s, s + (c - 1) * st_ + 1, st_) if c else slice(0, 0)
                   for s, st_, c in zip(sel.starts, sel.steps, sel.counts))
    arr[ranges] = sel.to_buffer(value)
    np.testing.assert_array_equal(arr, expected)


def test_scalar_results_follow_numpy():
    arr = np.arange(12).reshape(3, 4)
    assert np.isscalar(_gather(arr, (1, 2)))
    assert isinstance(_gather(arr, (1, 2, ...)), np.ndarray)
    zero_d = np.array(5)
    assert np.isscalar(_gather(zero_d, ()))
    assert _gather(zero_d, ...).shape == ()
    assert isinstance(_gather(zero_d, ...), np.ndarray)


@pytest.mark.parametrize(
    ("selection", "error", "match"),
    [
        ((5, 0), BoundsCheckError, "index 5 is out of bounds for axis 0 with size 3"),
        ((0, -5), BoundsCheckError, "axis 1 with size 4"),
        ((0, 0, 0), SelectionError, "too many indices"),
        ((..., ...), SelectionError, "single ellipsis"),
        (slice(None, None, 0), SelectionError, "invalid slice"),
        ("a", SelectionError, "unsupported index"),
        (1.5, SelectionError, "unsupported index"),
    ],
)
def test_errors(selection, error, match):
    with pytest.raises(error, match=match):
        normalize_basic(selection, (3, 4))


def test_broadcast_error():
    sel = normalize_basic((slice(0, 2),), (3, 4))
    with pytest.raises(SelectionError, match="could not broadcast"):
        sel.to_buffer(np.zeros((3, 3)))
