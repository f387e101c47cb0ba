"""zarrx._core.assemble against NumPy assignment on random strided views (hypothesis).

Arrays are compared as raw bytes, so NaN payloads, void and structured dtypes count too,
and the whole base array is compared so writes outside the view are caught.
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.gil_probe import ticks_during
from zarrx._core.assemble import _use_avx2, all_equal, copy_strided, fill

DTYPES = [
    "u1",
    "<i2",
    ">u2",
    "<f4",
    ">f4",
    "f8",
    "c8",
    ">c16",
    "V3",
    "V5",
    "V7",
    "V9",
    "V16",
    "M8[s]",
    "U3",
    np.dtype([("a", "u1"), ("b", "<i4")]),  # packed: itemsize 5, unaligned fields
]


def raw(a):
    """The bytes of ``a`` in C order, as a 1-d uint8 array."""
    return np.array(a, order="C", copy=True).reshape(-1).view(np.uint8)


def assert_same_bytes(actual, expected):
    assert actual.shape == expected.shape
    np.testing.assert_array_equal(raw(actual), raw(expected))


def random_array(rng, shape, dtype):
    dtype = np.dtype(dtype)
    n = math.prod(shape) * dtype.itemsize
    return rng.integers(0, 256, n, dtype=np.uint8).view(dtype).reshape(shape)


@pytest.fixture(params=["avx2", "baseline"])
def swap_loops(request):
    """Run a test with the AVX2 and with the baseline contiguous byte-swap loops."""
    used = _use_avx2(request.param == "avx2")
    try:
        if request.param == "avx2" and not used:
            pytest.skip("the CPU or the build has no AVX2 byte-swap loops")
        yield request.param
    finally:
        _use_avx2(True)


def swapped(a, swap):
    """Reverse every ``swap``-byte unit of every element (the reference for ``swap``)."""
    units = raw(a).reshape(-1, a.dtype.itemsize // swap, swap)[:, :, ::-1]
    return np.ascontiguousarray(units).reshape(-1).view(a.dtype).reshape(a.shape)


shapes = st.lists(st.integers(0, 12), max_size=4).filter(lambda s: math.prod(s) <= 3000)


@st.composite
def layouts(draw, shape):
    """A recipe (base_shape, slices, axes) whose view of a base array has ``shape``."""
    ndim = len(shape)
    contiguous = draw(st.booleans())
    if contiguous:
        perm = draw(st.sampled_from([list(range(ndim)), list(range(ndim))[::-1]]))
    else:
        perm = draw(st.permutations(range(ndim)))
    base_shape, slices = [], []
    for m in (shape[p] for p in perm):
        step, off, pad = 1, 0, 0
        if not contiguous:
            step = draw(st.sampled_from([1, 1, 2, 3, -1, -2]))
            off = draw(st.integers(0, 2))
            pad = draw(st.integers(0, 1))
        length = abs(step) * m + off + pad
        if step > 0 or m == 0:
            sl = slice(off, off + step * m, step)
        else:
            start = length - 1 - off
            stop = start + step * m
            sl = slice(start, stop if stop >= 0 else None, step)
        base_shape.append(length)
        slices.append(sl)
    return tuple(base_shape), tuple(slices), tuple(int(i) for i in np.argsort(perm))


def apply(base, layout):
    view = base[(*layout[1], Ellipsis)].transpose(layout[2])
    assert view.shape == tuple(
        len(range(*s.indices(n)))
        for s, n in zip((layout[1][i] for i in layout[2]), (base.shape[i] for i in layout[2]))
    )
    return view


@st.composite
def sources(draw, shape, dtype, rng):
    """A source view of ``shape``: strided, broadcast (zero strides) or read-only."""
    kind = draw(st.sampled_from(["strided", "broadcast", "readonly"]))
    small = shape
    if kind == "broadcast":
        mask = draw(st.lists(st.booleans(), min_size=len(shape), max_size=len(shape)))
        small = tuple(1 if b else n for b, n in zip(mask, shape))
    layout = draw(layouts(small))
    base = random_array(rng, layout[0], dtype)
    if kind == "readonly":
        base = np.frombuffer(base.tobytes(), dtype=base.dtype).reshape(base.shape)
    src = apply(base, layout)
    if kind == "broadcast":
        src = np.broadcast_to(src, shape)
    assert src.flags.writeable == (kind == "strided")
    return src


@st.composite
def copy_cases(draw, swapping=False):
    shape = tuple(draw(shapes))
    dtype = np.dtype(draw(st.sampled_from(DTYPES)))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    src = draw(sources(shape, dtype, rng))
    layout = draw(layouts(shape))
    dst_base = random_array(rng, layout[0], dtype)
    swap = 0
    if swapping:
        options = [s for s in (2, 4, 8, 16) if dtype.itemsize % s == 0]
        swap = draw(st.sampled_from(options or [0]))
    return src, dst_base, layout, swap


@settings(max_examples=600, deadline=None)
@given(copy_cases())
def test_copy_strided_matches_numpy(case):
    src, dst_base, layout, _ = case
    expected = dst_base.copy()
    apply(expected, layout)[...] = src
    copy_strided(src, apply(dst_base, layout))
    assert_same_bytes(dst_base, expected)


@settings(max_examples=400, deadline=None)
@given(copy_cases(swapping=True))
def test_copy_strided_swap_matches_reference(case):
    src, dst_base, layout, swap = case
    expected = dst_base.copy()
    apply(expected, layout)[...] = swapped(src, swap) if swap else src
    copy_strided(src, apply(dst_base, layout), swap)
    assert_same_bytes(dst_base, expected)


@settings(max_examples=300, deadline=None)
@given(copy_cases())
def test_copy_strided_stream_matches_numpy(case):
    """Streaming stores change how bytes are written, never which."""
    src, dst_base, layout, _ = case
    expected = dst_base.copy()
    apply(expected, layout)[...] = src
    copy_strided(src, apply(dst_base, layout), 0, True)
    assert_same_bytes(dst_base, expected)


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(["u1", "<f4", ">f8", "V3", "c16"]),
    st.integers(0, 127),  # where the destination starts, past a 64-byte boundary
    st.integers(1, 6),  # rows
    st.integers(1, 5000),  # bytes per row (rounded down to whole elements)
    st.integers(0, 200),  # gap between the destination's rows, in bytes
    st.sampled_from([1, 1, 2, 3]),  # the source's step: strided rows are gathered first
    st.integers(0, 2**32 - 1),
)
def test_copy_strided_stream_rows_at_any_alignment(dtype, offset, rows, nbytes, gap, step,
                                                   seed):
    """Rows long enough to stream, starting anywhere in a cache line, from a contiguous or
    strided source (gathered in pieces): the partial lines at either end and the whole
    lines between hold the source, and nothing around the destination changes."""
    dtype = np.dtype(dtype)
    per_row = max(1, nbytes // dtype.itemsize)
    row_bytes = per_row * dtype.itemsize
    stride = row_bytes + gap - gap % dtype.itemsize
    rng = np.random.default_rng(seed)
    memory = np.zeros(offset + stride * rows + 256, dtype=np.uint8)
    start = offset + (-memory.ctypes.data) % 64  # offset bytes past a line boundary
    memory[:] = rng.integers(0, 256, memory.size, dtype=np.uint8)
    expected = memory.copy()
    dst = np.lib.stride_tricks.as_strided(
        memory[start:].view(np.uint8)[: stride * (rows - 1) + row_bytes],
        shape=(rows, row_bytes), strides=(stride, 1),
    )
    src = random_array(rng, (rows, per_row * step), dtype)[:, ::step]
    dst_view = dst.view(dtype) if dtype.itemsize > 1 else dst
    np.lib.stride_tricks.as_strided(
        expected[start:], shape=(rows, row_bytes), strides=(stride, 1))[...] = (
        np.ascontiguousarray(src).view(np.uint8).reshape(rows, row_bytes))
    copy_strided(src, dst_view, 0, True)
    np.testing.assert_array_equal(memory, expected)


@pytest.mark.parametrize("dtype", [">u2", ">f4", ">f8", ">c8", ">c16"])
@pytest.mark.parametrize("n", [1, 31, 32, 33, 100, 511, 512, 513, 2000])
def test_copy_strided_stream_swapped_rows(dtype, n):
    """Byte-swapped rows streamed through the gathering buffer, at every length around
    its size."""
    dtype = np.dtype(dtype)
    swap = dtype.itemsize // 2 if dtype.kind == "c" else dtype.itemsize
    rng = np.random.default_rng(n)
    src = random_array(rng, (3, n), dtype)
    memory = random_array(rng, (3 * n + 9,), dtype.newbyteorder())
    expected = memory.copy()
    expected[5 : 5 + 3 * n] = swapped(src, swap).reshape(-1).view(expected.dtype)
    copy_strided(src, memory[5 : 5 + 3 * n].reshape(3, n), swap, True)
    assert_same_bytes(memory, expected)


BIG_CASES = {  # name: (base shape, view of the source, destination shape)
    "T2": ((300, 257), lambda a: a.T),
    "T2-square": ((64, 64), lambda a: a.T),
    "T2-thin": ((3, 1000), lambda a: a.T),
    "T2-tall": ((1000, 3), lambda a: a.T),
    "T3-201": ((20, 30, 70), lambda a: a.transpose(2, 0, 1)),
    "T3-120": ((20, 30, 70), lambda a: a.transpose(1, 2, 0)),
    "T3-021": ((20, 30, 70), lambda a: a.transpose(0, 2, 1)),
    "neg-T": ((130, 90), lambda a: a[::-1, ::2].T),
    "F-order": ((70, 80), lambda a: np.asfortranarray(a)),
    "broadcast-row": ((1, 500), lambda a: np.broadcast_to(a, (300, 500))),
    "broadcast-col": ((500, 1), lambda a: np.broadcast_to(a, (500, 300)).T),
}


@pytest.mark.parametrize("dtype", ["u1", "<i2", "<f4", ">f8", "c8", ">c16", "V3", "V24"])
@pytest.mark.parametrize("name", sorted(BIG_CASES))
@pytest.mark.parametrize("dst_kind", ["C", "F", "strided"])
def test_copy_strided_layout_conversions(dtype, name, dst_kind, swap_loops):
    dtype = np.dtype(dtype)
    rng = np.random.default_rng(sorted(BIG_CASES).index(name))
    base_shape, make = BIG_CASES[name]
    src = make(random_array(rng, base_shape, dtype))
    if dst_kind == "C":
        dst_base = random_array(rng, src.shape, dtype)
        view = lambda a: a  # noqa: E731
    elif dst_kind == "F":
        dst_base = random_array(rng, src.shape[::-1], dtype)
        view = lambda a: a.T  # noqa: E731
    else:
        dst_base = random_array(rng, tuple(2 * n + 1 for n in src.shape), dtype)
        view = lambda a: a[tuple(slice(1, None, 2) for _ in src.shape)]  # noqa: E731
    for swap in sorted({0, dtype.itemsize if dtype.itemsize in (2, 4, 8, 16) else 0}):
        expected = dst_base.copy()
        view(expected)[...] = swapped(src, swap) if swap else src
        copy_strided(src, view(dst_base), swap)
        assert_same_bytes(dst_base, expected)


@pytest.mark.parametrize(
    ("dtype", "swap"),
    [
        (">i2", 2),
        (">u4", 4),
        (">f4", 4),
        (">f8", 8),
        (">c8", 4),
        (">c16", 8),
        (">U3", 4),
        (">M8[ms]", 8),
        (np.dtype([("x", ">f4"), ("y", ">i4")]), 4),
    ],
)
def test_copy_strided_swap_is_newbyteorder(dtype, swap, swap_loops):
    dtype = np.dtype(dtype)
    rng = np.random.default_rng(0)
    if dtype.kind == "U":
        values = np.array(["abc", "ü", "日本", ""], dtype="<U3")
    elif dtype.names:
        values = np.zeros(37, dtype=dtype.newbyteorder("<"))
        values["x"] = rng.normal(size=37)
        values["y"] = rng.integers(-(2**31), 2**31, 37)
    else:
        values = (rng.normal(size=37) * 1000).astype(dtype.newbyteorder("<"))
        if dtype.kind == "c":
            values.imag = rng.normal(size=37)
    big = np.frombuffer(values.astype(dtype).tobytes(), dtype=dtype)  # read-only source
    assert not big.flags.writeable
    native = np.empty(values.shape, dtype=dtype.newbyteorder("<"))
    copy_strided(big, native, swap)
    np.testing.assert_array_equal(native, values)
    np.testing.assert_array_equal(native, big.astype(native.dtype))
    back = np.empty(values.shape, dtype=dtype)
    copy_strided(native[::-1], back[::-1], swap)  # and back again, walking backwards
    assert back.tobytes() == big.tobytes()


@pytest.mark.parametrize("dtype", ["<u2", "<u4", "<u8", "<c8", "<c16", "V16", "V32"])
def test_copy_strided_contiguous_swap_all_lengths(dtype, swap_loops):
    dtype = np.dtype(dtype)
    rng = np.random.default_rng(5)
    data = rng.integers(0, 256, 300 * dtype.itemsize + 8, dtype=np.uint8)
    for swap in (s for s in (2, 4, 8, 16) if dtype.itemsize % s == 0):
        for n in [*range(70), 255, 256, 257]:  # every vector tail
            for offset in (0, 1, 3):  # unaligned starts
                src = data[offset : offset + n * dtype.itemsize].view(dtype)
                dst = np.zeros(n, dtype)
                copy_strided(src, dst, swap)
                assert_same_bytes(dst, swapped(src, swap))


def test_copy_strided_zero_dim_and_empty():
    src = np.array(3.5, dtype=">f8")
    dst = np.zeros((), dtype="<f8")
    copy_strided(src, dst, 8)
    assert dst == 3.5
    copy_strided(np.array(7, "u1"), dst.reshape(1).view("u1")[:1].reshape(()))
    assert raw(dst)[0] == 7
    empty = np.zeros((3, 0, 2), "f4")
    copy_strided(np.ones((3, 0, 2), "f4"), empty)  # a no-op, nothing to check but no error
    assert empty.shape == (3, 0, 2)


@pytest.mark.parametrize(
    ("make_src", "make_dst"),
    [
        (lambda a: a[::-1], lambda a: a),
        (lambda a: a[:-3], lambda a: a[3:]),
        (lambda a: a[3:], lambda a: a[:-3]),
        (lambda a: a.reshape(10, 10).T, lambda a: a.reshape(10, 10)),
        (lambda a: a, lambda a: a),
        (lambda a: a[:50], lambda a: a[::2]),
    ],
)
def test_copy_strided_overlap_reads_src_first(make_src, make_dst):
    # the result is as if src were copied out before dst is written (NumPy itself does not
    # guarantee this for 1-d views with different strides, e.g. a[::2] = a[:50])
    a = np.arange(100, dtype=np.int64)
    expected = a.copy()
    make_dst(expected)[...] = make_src(expected).copy()
    copy_strided(make_src(a), make_dst(a))
    np.testing.assert_array_equal(a, expected)


def test_copy_strided_in_place_swap():
    a = np.arange(1000, dtype="<f8")
    big = a.astype(">f8")
    b = big.view("<f8").copy()
    copy_strided(b, b, 8)
    np.testing.assert_array_equal(b, a)
    c = big.view("<f8")[::3].copy()
    copy_strided(c[::-1], c[::-1], 8)
    np.testing.assert_array_equal(c, a[::3])


@pytest.mark.parametrize(
    ("src", "dst", "swap", "exc", "match"),
    [
        (np.zeros((2, 3)), np.zeros((3, 2)), 0, ValueError, "shape mismatch"),
        (np.zeros(3), np.zeros((1, 3)), 0, ValueError, "shape mismatch"),
        (np.zeros(3, "f8"), np.zeros(3, "f4"), 0, ValueError, "itemsize mismatch"),
        (np.zeros(3), np.broadcast_to(np.zeros(1), 3), 0, ValueError, "read-only"),
        (np.zeros(3, "O"), np.zeros(3, "O"), 0, TypeError, "Python objects"),
        (np.zeros(3, "V8"), np.zeros(3, [("a", "O")]), 0, TypeError, "Python objects"),
        (np.zeros(3, "f8"), np.zeros(3, "f8"), 3, ValueError, "swap"),
        (np.zeros(3, "f8"), np.zeros(3, "f8"), 1, ValueError, "swap"),
        (np.zeros(3, "i2"), np.zeros(3, "i2"), 4, ValueError, "swap"),
        (np.zeros(3, "V6"), np.zeros(3, "V6"), 4, ValueError, "swap"),
        (
            np.arange(12.0).reshape(3, 4),
            np.lib.stride_tricks.as_strided(np.zeros(3), shape=(3, 4), strides=(8, 0)),
            0,
            ValueError,
            "stride 0",
        ),
        ([1.0, 2.0], np.zeros(2), 0, TypeError, "ndarray"),
        (np.zeros(2), b"xx", 0, TypeError, "ndarray"),
    ],
)
def test_copy_strided_errors(src, dst, swap, exc, match):
    with pytest.raises(exc, match=match):
        copy_strided(src, dst, swap)


# ---------------------------------------------------------------------------- fill


@st.composite
def fill_cases(draw):
    shape = tuple(draw(shapes))
    dtype = np.dtype(draw(st.sampled_from(DTYPES)))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    layout = draw(layouts(shape))
    pattern = draw(st.sampled_from(["random", "uniform", "zero"]))
    if pattern == "random":
        value = draw(st.binary(min_size=dtype.itemsize, max_size=dtype.itemsize))
    else:
        byte = 0 if pattern == "zero" else draw(st.integers(0, 255))
        value = bytes([byte]) * dtype.itemsize
    return random_array(rng, layout[0], dtype), layout, value


@settings(max_examples=500, deadline=None)
@given(fill_cases())
def test_fill_matches_numpy(case):
    base, layout, value = case
    expected = base.copy()
    apply(expected, layout)[...] = np.frombuffer(value, dtype=base.dtype).reshape(())
    fill(apply(base, layout), value)
    assert_same_bytes(base, expected)


@pytest.mark.parametrize("dtype", ["u1", "<f4", "f8", "c16", "V3", "V7", "V40"])
def test_fill_rows_and_large(dtype):
    dtype = np.dtype(dtype)
    rng = np.random.default_rng(1)
    base = random_array(rng, (300, 700), dtype)
    value = bytes(range(1, dtype.itemsize + 1))
    expected = base.copy()
    view = (slice(5, 290), slice(3, 600))  # contiguous rows that cannot merge
    expected[view] = np.frombuffer(value, dtype=dtype).reshape(())
    fill(base[view], value)
    assert_same_bytes(base, expected)
    assert all_equal(base[view], value)
    assert not all_equal(base[4:290, 3:600], value)


def test_fill_broadcast_writeable_view_and_zero_dim():
    base = np.zeros(3, "<i4")
    dst = np.lib.stride_tricks.as_strided(base, shape=(3, 4), strides=(4, 0))
    fill(dst, np.int32(-2).tobytes())
    np.testing.assert_array_equal(base, [-2, -2, -2])
    scalar = np.zeros((), "V5")
    fill(scalar, bytearray(b"abcde"))
    assert scalar.tobytes() == b"abcde"
    fill(np.zeros((0, 4)), bytes(8))  # size 0: a no-op


@pytest.mark.parametrize(
    ("dst", "value", "exc", "match"),
    [
        (np.zeros(3, "f8"), b"\x00" * 4, ValueError, "itemsize"),
        (np.zeros(3, "f8"), "8bytes!!", TypeError, "bytes-like"),
        (np.broadcast_to(np.zeros(1), 4), bytes(8), ValueError, "read-only"),
        (np.zeros(3, "O"), bytes(8), TypeError, "Python objects"),
    ],
)
def test_fill_errors(dst, value, exc, match):
    with pytest.raises(exc, match=match):
        fill(dst, value)


# ---------------------------------------------------------------------------- all_equal


@st.composite
def equal_cases(draw):
    shape = tuple(draw(shapes))
    dtype = np.dtype(draw(st.sampled_from(DTYPES)))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    value = draw(
        st.one_of(
            st.binary(min_size=dtype.itemsize, max_size=dtype.itemsize),
            st.integers(0, 255).map(lambda b: bytes([b]) * dtype.itemsize),
        )
    )
    broadcast = draw(st.booleans())
    small = shape
    if broadcast:
        mask = draw(st.lists(st.booleans(), min_size=len(shape), max_size=len(shape)))
        small = tuple(1 if b else n for b, n in zip(mask, shape))
    layout = draw(layouts(small))
    base = random_array(rng, layout[0], dtype)
    view = apply(base, layout)
    mode = draw(st.sampled_from(["equal", "one-off", "random"]))
    if mode != "random":
        view[...] = np.frombuffer(value, dtype=dtype).reshape(())
    if mode == "one-off" and view.size:
        index = (*(int(rng.integers(n)) for n in small), Ellipsis)
        element = view[index].reshape(1).view(np.uint8)
        element[int(rng.integers(dtype.itemsize))] ^= int(rng.integers(1, 256))
    return np.broadcast_to(view, shape), value


@settings(max_examples=600, deadline=None)
@given(equal_cases())
def test_all_equal_matches_reference(case):
    arr, value = case
    pattern = np.frombuffer(value, dtype=np.uint8)
    expected = bool((raw(arr).reshape(-1, arr.dtype.itemsize) == pattern).all())
    assert all_equal(arr, value) is expected


def test_all_equal_is_bitwise_and_exits_early():
    assert all_equal(np.zeros(10), np.float64(0.0).tobytes())
    assert not all_equal(np.full(10, -0.0), np.float64(0.0).tobytes())
    nan = np.frombuffer(b"\x01\x00\x00\x00\x00\x00\xf8\x7f", "f8")
    assert all_equal(np.full(5, nan[0]), nan.tobytes())
    assert not all_equal(np.full(5, np.nan), nan.tobytes())
    big = np.zeros(5_000_000, "u1")
    for position in (0, 2_500_000, len(big) - 1):
        big[position] = 1
        assert not all_equal(big, b"\x00")
        assert not all_equal(big.reshape(1000, 5000).T, b"\x00")
        big[position] = 0
    assert all_equal(big, b"\x00")
    assert all_equal(np.zeros((0, 3), "V3"), b"abc")  # size 0: vacuously true
    assert all_equal(np.array(b"abc", "V3"), b"abc")  # 0-d
    assert not all_equal(np.array(b"abd", "V3"), memoryview(b"abc"))


@pytest.mark.parametrize(
    ("arr", "value", "exc", "match"),
    [
        (np.zeros(3, "f8"), b"\x00" * 9, ValueError, "itemsize"),
        (np.zeros(3, "f8"), 0.0, TypeError, "bytes-like"),
        (np.zeros(3, "O"), bytes(8), TypeError, "Python objects"),
        ([0.0], bytes(8), TypeError, "ndarray"),
    ],
)
def test_all_equal_errors(arr, value, exc, match):
    with pytest.raises(exc, match=match):
        all_equal(arr, value)


# ---------------------------------------------------------------------------- GIL


def test_kernels_release_the_gil():
    """While a kernel runs on a large array, another Python thread gets to run."""
    src = np.ones(50_000_000, dtype=np.float32)  # 200 MB
    dst = np.empty_like(src)
    two = np.float32(2).tobytes()
    progress = []
    for _ in range(3):
        progress.append(ticks_during(lambda: copy_strided(src, dst), switch_interval=1.0))
        progress.append(ticks_during(lambda: fill(dst, two), switch_interval=1.0))
        progress.append(ticks_during(lambda: all_equal(dst, two), switch_interval=1.0))
    assert all_equal(dst, two)
    # a kernel holding the GIL lets the counter tick at most once or twice (at the call's
    # edges); one that releases it lets it tick hundreds of times per call
    assert max(progress[0::3]) >= 3, progress  # copy_strided
    assert max(progress[1::3]) >= 3, progress  # fill
    assert max(progress[2::3]) >= 3, progress  # all_equal
    np.testing.assert_array_equal(dst[::1_000_000], 2)
