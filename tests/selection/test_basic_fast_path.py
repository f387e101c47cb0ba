"""The fast path for integers and slices (``basic_transform``) against the general parse
(``numpy_transform``) and NumPy: where it answers, the same transform and mode; where it
does not, the general parse decides (and raises NumPy's error)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zarrx
from zarrx.selection.numpy_index import basic_transform, numpy_transform
from zarrx.selection.transform import Indexed
from zarrx.storage import MemoryStore

_BOUND = st.one_of(st.none(), st.integers(-9, 9), st.integers(-9, 9).map(np.int64),
                   st.sampled_from([True, 1.0, 2**70]))
_ITEM = st.one_of(
    st.integers(-9, 9),
    st.integers(-9, 9).map(np.int32),
    st.builds(slice, _BOUND, _BOUND, st.one_of(st.none(), st.integers(-3, 3), _BOUND)),
    st.sampled_from([True, np.bool_(False), None, Ellipsis, 1.5, [0, 1], np.array(2)]),
)


@st.composite
def basic_cases(draw):
    shape = tuple(draw(st.lists(st.integers(0, 7), min_size=0, max_size=4)))
    n = draw(st.integers(0, len(shape) + 1))
    items = tuple(draw(st.lists(_ITEM, min_size=n, max_size=n)))
    index = items[0] if len(items) == 1 and draw(st.booleans()) else items
    return shape, index


def _same(a, b):
    assert a.mode == b.mode
    assert a.transform.shape == b.transform.shape
    for m, n in zip(a.transform.maps, b.transform.maps, strict=True):
        assert not isinstance(m, Indexed)
        assert m == n


@settings(max_examples=600, deadline=None)
@given(basic_cases())
def test_the_fast_path_is_the_general_parse(case):
    shape, index = case
    fast = basic_transform(shape, index)
    try:
        general = numpy_transform(shape, index)
    except (IndexError, TypeError, ValueError):
        assert fast is None  # what NumPy refuses is left to the general parse
        return
    if fast is not None:
        _same(fast, general)


def test_the_fast_path_takes_integers_and_slices_of_every_axis():
    shape = (10, 20, 30)
    for index in [(1, 2, 3), (slice(None), -1, slice(2, 9, 3)), (np.int64(-10), 0, 29),
                  (slice(-100, 100), slice(None, None, -2), slice(5, 5))]:
        fast = basic_transform(shape, index)
        assert fast is not None
        _same(fast, numpy_transform(shape, index))
    assert basic_transform((5,), 4) is not None
    assert basic_transform((5,), 4).scalar
    for index in [(1, 2), (1, 2, 3, 4), (10, 0, 0), (Ellipsis, 1), (None, 1, 2, 3),
                  (slice(0, 1, 0), 1, 2), (slice(1.0), 0, 0), (True, 0, 0), ([1], 0, 0)]:
        assert basic_transform(shape, index) is None, index
    assert basic_transform((), ()) is None


@settings(max_examples=200, deadline=None)
@given(basic_cases())
def test_reads_through_the_fast_path_match_numpy(case):
    shape, index = case
    x = np.arange(int(np.prod(shape)), dtype="int16").reshape(shape)
    a = zarrx.create_array(MemoryStore(), shape=shape, dtype="int16",
                           chunks=tuple(max(1, n // 2) for n in shape) or None, fill_value=0)
    a[...] = x
    try:
        expected = x[index]
    except (IndexError, TypeError, ValueError) as e:
        builtin = next(c for c in (IndexError, TypeError, ValueError) if isinstance(e, c))
        with pytest.raises(builtin):
            a[index]
        return
    got = a[index]
    assert type(got) is type(expected)
    assert np.shape(got) == np.shape(expected)
    np.testing.assert_array_equal(got, expected)
