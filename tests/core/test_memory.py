"""zarrx._core.memory: result arrays on cache-line and huge-page boundaries."""

import gc
import sys

import numpy as np
import pytest

from zarrx._core.memory import empty_aligned

try:  # NumPy 2; NumPy 1.26 has it in numpy.core
    from numpy._core.multiarray import get_handler_name
except ImportError:  # pragma: no cover
    from numpy.core.multiarray import get_handler_name

aligned = pytest.mark.skipif(sys.platform == "win32", reason="NumPy's allocator on Windows")


@aligned
@pytest.mark.parametrize(
    ("shape", "dtype", "boundary"),
    [
        ((256, 1024), "f8", 2 << 20),  # exactly 2 MiB
        ((3, 700, 1000), "f4", 2 << 20),
        ((10,), "f8", 64),
        ((7, 3), "V5", 64),
        ((), "i2", 64),
        ((0, 5), "u1", 64),
    ],
)
def test_empty_aligned_boundary(shape, dtype, boundary):
    a = empty_aligned(shape, dtype)
    assert a.shape == shape
    assert a.dtype == np.dtype(dtype)
    assert a.flags.c_contiguous
    assert a.flags.owndata
    assert a.flags.writeable
    assert a.ctypes.data % boundary == 0


def test_empty_aligned_is_an_ordinary_array():
    a = empty_aligned((300, 300), "<f4")
    a[...] = np.arange(a.size, dtype="<f4").reshape(a.shape)
    b = a.copy()
    np.testing.assert_array_equal(a, b)
    a.resize((10, 10), refcheck=False)  # NumPy's reallocation of memory it owns
    np.testing.assert_array_equal(a.reshape(-1), b.reshape(-1)[:100])
    assert empty_aligned(5, "u1").shape == (5,)


def test_empty_aligned_objects_start_as_none():
    a = empty_aligned((4, 3), object)
    assert all(v is None for v in a.reshape(-1))
    a[1, 1] = [1, 2]
    assert a[1, 1] == [1, 2]


def test_empty_aligned_leaves_numpy_allocator_alone():
    before = get_handler_name()
    a = empty_aligned((1000,), "f8")
    assert get_handler_name() == before
    if sys.platform != "win32":
        assert get_handler_name(a) == "zarrx_aligned"
    assert get_handler_name(np.empty(1000)) == before


def test_empty_aligned_memory_is_released():
    for _ in range(64):  # 64 x 64 MiB: runs out of memory if nothing is freed
        a = empty_aligned((8 << 20,), "f8")
        a[::4096] = 1.0
        del a
        gc.collect()


def test_empty_aligned_rejects_what_numpy_rejects():
    with pytest.raises(ValueError, match="negative"):
        empty_aligned((-1,), "f8")
    with pytest.raises(TypeError):
        empty_aligned((2,), "not a dtype")
