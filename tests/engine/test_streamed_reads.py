"""Reads whose chunks are copied into the result with streaming stores (a result larger
than :data:`zarrx.runtime.place.STREAM_BYTES`; here every result, the threshold patched
to 0) against NumPy: rows long enough to stream, at every alignment in the result,
chunked, sharded and compressed, whole chunks and parts of them."""

import sys
from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zarrx
from zarrx.runtime import place
from zarrx.storage import MemoryStore
from zarrx.testing.selections import numpy_indices

try:  # NumPy 2; NumPy 1.26 has it in numpy.core
    from numpy._core.multiarray import get_handler_name
except ImportError:  # pragma: no cover
    from numpy.core.multiarray import get_handler_name

DTYPES = ["uint8", "<f4", ">f8", "<i2", "complex128"]


@st.composite
def stored(draw):
    shape = (draw(st.integers(1, 5)), draw(st.integers(1, 4)), draw(st.integers(1, 300)))
    chunks = tuple(draw(st.integers(1, n + 1)) for n in shape)
    dtype = np.dtype(draw(st.sampled_from(DTYPES)))
    kwargs = {}
    if draw(st.booleans()):
        kwargs["shards"] = tuple(c * draw(st.integers(1, 2)) for c in chunks)
    if draw(st.booleans()):
        kwargs["compressors"] = {"name": "blosc", "configuration": {"cname": "lz4"}}
    a = zarrx.create_array(MemoryStore(), shape=shape, dtype=dtype, chunks=chunks,
                           fill_value=0, **kwargs)
    x = (np.arange(int(np.prod(shape)), dtype=np.int64) % 251 + 1).reshape(shape)
    x = x.astype(a.dtype)
    a[...] = x
    if draw(st.booleans()):  # some chunks absent: the fill value around streamed ones
        a[: max(1, shape[0] // 2), :, : chunks[2]] = 0
        x[: max(1, shape[0] // 2), :, : chunks[2]] = 0
    return x, a


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.data())
def test_streamed_reads_match_numpy(data):
    x, a = data.draw(stored())
    index = data.draw(st.one_of(
        st.just(Ellipsis),
        st.tuples(*(st.builds(slice, st.integers(0, n), st.integers(0, n)) for n in x.shape)),
        numpy_indices(x.shape, wild=False),
    ))
    try:
        expected = x[index]
    except (IndexError, TypeError, ValueError):
        return
    with mock.patch.object(place, "STREAM_BYTES", 0):
        got = a[index]
    assert np.shape(got) == np.shape(expected)
    np.testing.assert_array_equal(got, expected)


def test_large_results_stream():
    """The threshold is where the whole result (not the chunk's view of it) is counted."""
    out = np.empty(place.STREAM_BYTES, np.uint8)
    assert place.streams(out)
    assert place.streams(out[:64])
    assert not place.streams(np.empty(place.STREAM_BYTES - 1, np.uint8))


@pytest.mark.skipif(sys.platform == "win32", reason="NumPy's allocator on Windows")
def test_streamed_results_start_on_huge_page_boundaries():
    a = zarrx.create_array(MemoryStore(), shape=(40, 300), dtype="<f4", chunks=(7, 64),
                           compressors={"name": "blosc", "configuration": {"cname": "lz4"}})
    x = np.arange(a.size, dtype="<f4").reshape(a.shape)
    a[...] = x
    with mock.patch.object(place, "STREAM_BYTES", 0):
        got = a[3:, 5:]
    np.testing.assert_array_equal(got, x[3:, 5:])
    assert got.flags.owndata
    assert got.ctypes.data % 64 == 0
    assert get_handler_name(got) == "zarrx_aligned"
    assert get_handler_name(a[3:, 5:]) != "zarrx_aligned"  # small: NumPy's own memory
