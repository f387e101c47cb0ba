"""Index transforms and buffer layouts, on plain NumPy arrays (no storage): a transform
applied to an array is NumPy's result, a composed transform is the chained result, and a
layout's buffer maps to the result and back."""

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from zarrx.errors import (
    BoundsCheckError,
    SelectionError,
    SelectionTypeError,
    SelectionValueError,
)
from zarrx.selection.layout import Layout, Points
from zarrx.selection.numpy_index import numpy_transform
from zarrx.selection.transform import Const, IndexTransform, Strided
from zarrx.testing.selections import numpy_indices

SETTINGS = settings(max_examples=300, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def apply(t: IndexTransform, x: np.ndarray) -> np.ndarray:
    """The reference meaning of a transform: each array axis's index as an array over the
    result's dimensions, then one NumPy gather."""
    index = []
    for m in t.maps:
        if isinstance(m, Const):
            index.append(np.full((1,) * t.ndim, m.value))
        elif isinstance(m, Strided):
            shape = [1] * t.ndim
            shape[m.dim] = t.shape[m.dim]
            index.append((m.start + m.step * np.arange(t.shape[m.dim])).reshape(shape))
        else:
            shape = [t.shape[d] if d in m.dims else 1 for d in range(t.ndim)]
            index.append(m.index.reshape(shape))
    if not index:
        return np.broadcast_to(x, t.shape)
    return np.broadcast_to(x[tuple(index)], t.shape)


def gather_buffer(layout: Layout, x: np.ndarray) -> np.ndarray:
    """The buffer of a layout read from ``x`` group by group, as the engine reads it."""
    nbuf = len(layout.groups)
    index = [None] * x.ndim
    for b, g in enumerate(layout.groups):
        shape = [1] * nbuf
        shape[b] = g.count
        if isinstance(g, Points):
            for axis, coords in zip(g.axes, g.coords):
                index[axis] = coords.reshape(shape)
        else:
            index[g.axis] = (g.start + g.step * np.arange(g.count)).reshape(shape)
    return x[tuple(index)] if index else x.copy()


@st.composite
def arrays_and_indices(draw, max_ndim=4):
    shape = tuple(draw(st.integers(0, 5)) for _ in range(draw(st.integers(0, max_ndim))))
    x = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    return x, draw(numpy_indices(shape, wild=False))


def _numpy(fn):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn()
    except (IndexError, ValueError, TypeError):
        return None


@SETTINGS
@given(arrays_and_indices())
def test_transform_means_numpy_indexing(case):
    x, idx = case
    expected = _numpy(lambda: x[idx])
    if expected is None:
        return
    selected = numpy_transform(x.shape, idx)
    np.testing.assert_array_equal(apply(selected.transform, x), expected)
    assert selected.scalar == (not isinstance(expected, np.ndarray))


@SETTINGS
@given(arrays_and_indices())
def test_layout_buffer_gives_the_result_and_back(case):
    x, idx = case
    expected = _numpy(lambda: x[idx])
    if expected is None:
        return
    layout = Layout(numpy_transform(x.shape, idx).transform)
    buffer = gather_buffer(layout, x)
    assert buffer.shape == layout.buffer_shape
    np.testing.assert_array_equal(layout.result(buffer), expected)
    out = np.empty(np.shape(expected), dtype=x.dtype)
    if not out.size:
        return
    target = layout.read_target(out)
    assert target is not None  # NumPy's selections read straight into the result
    target[...] = buffer
    np.testing.assert_array_equal(out, expected)
    np.testing.assert_array_equal(layout.result(layout.buffer_of(np.asarray(expected))),
                                  expected)


@SETTINGS
@given(st.data())
def test_composition_is_the_chained_selection(data):
    x, first = data.draw(arrays_and_indices(max_ndim=3))
    view = _numpy(lambda: x[first])
    if not isinstance(view, np.ndarray):
        return
    second = data.draw(numpy_indices(view.shape, wild=False))
    expected = _numpy(lambda: view[second])
    if expected is None:
        return
    t1 = numpy_transform(x.shape, first).transform
    t2 = numpy_transform(view.shape, second).transform
    composed = t1.compose(t2)
    assert composed.shape == np.shape(expected)
    np.testing.assert_array_equal(apply(composed, x), expected)
    layout = Layout(composed)
    np.testing.assert_array_equal(layout.result(gather_buffer(layout, x)), expected)


def test_translate_shifts_every_map():
    t = numpy_transform((10, 10), (2, slice(1, 5, 2))).transform.translate((3, 4))
    x = np.arange(400).reshape(20, 20)
    np.testing.assert_array_equal(apply(t, x), x[5, 5:9:2])


def test_bounds():
    t = numpy_transform((10, 10), (slice(8, 1, -3), [4, 9, 0])).transform
    assert t.bounds() == [(2, 8), (0, 9)]
    assert numpy_transform((10, 10), (slice(0, 0),)).transform.bounds() is None


@pytest.mark.parametrize(
    ("selection", "error", "match"),
    [
        ((5, 0), BoundsCheckError, "index 5 is out of bounds for axis 0 with size 3"),
        ((0, -5), BoundsCheckError, "axis 1 with size 4"),
        (([0, 3],), BoundsCheckError, "index 3 is out of bounds for axis 0 with size 3"),
        ((0, 0, 0), SelectionError, "too many indices"),
        ((..., ...), SelectionError, "single ellipsis"),
        (slice(None, None, 0), SelectionValueError, "step cannot be zero"),
        (slice(1.5, None), SelectionTypeError, "slice indices must be integers"),
        ("a", SelectionError, "only integers, slices"),
        (1.5, SelectionError, "only integers, slices"),
        (np.array([1.0]), SelectionError, "integer \\(or boolean\\) type"),
        (([0, 1], [0, 1, 2]), SelectionError, "could not be broadcast together"),
        (np.ones((3, 3), bool), SelectionError, "boolean index did not match"),
    ],
)
def test_errors(selection, error, match):
    with pytest.raises(error, match=match):
        numpy_transform((3, 4), selection)
