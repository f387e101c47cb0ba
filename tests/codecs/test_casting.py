"""Exact value casts (``zarrx.codecs.casting``) against cast-value-rs, the implementation
zarr-python 3.4's ``cast_value`` codec calls, over drawn values, types and modes; and, for
the machine-learning types cast-value-rs does not take, against the exact rounding of
Python fractions."""

from __future__ import annotations

import bisect
import functools
import math
from fractions import Fraction
from typing import Any

import cast_value_rs
import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zarrx.codecs.casting import OUT_OF_RANGE, ROUNDINGS, CastError, cast, is_exact, numeric

CORE = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
        "float16", "float32", "float64"]
ML_FLOATS = ["bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz",
             "float8_e3m4", "float8_e4m3b11fnuz", "float6_e2m3fn", "float6_e3m2fn",
             "float4_e2m1fn"]
ML_INTS = ["int2", "int4", "uint2", "uint4"]


def dtype_of(name: str) -> np.dtype:
    return np.dtype(getattr(ml_dtypes, name)) if hasattr(ml_dtypes, name) else np.dtype(name)


def edges(dtype: np.dtype) -> list[Any]:
    """Values near every boundary a cast has: ranges, ties, subnormals, specials."""
    out: list[Any] = [0, 1, -1, 2, 3, 127, 128, 255, 256, -128, -129, 65504, 65519, 65520,
                      2**31, 2**32 - 1, 2**53 + 1, 2**63 - 1, -(2**63), 2**64 - 1]
    if dtype.kind == "f":
        out += [0.5, 1.5, 2.5, -0.5, -2.5, -0.0, 0.1, 1e-8, 6e-8, 1e-40, 3.4e38, 3.5e38,
                1e300, 448.0, 464.0, 480.0, 57344.0, 61440.0, float("nan"), float("inf"),
                float("-inf"), 255.5, -0.6, 2.0**63, 2.0**64]
    return out


@st.composite
def source_values(draw: st.DrawFn, dtype: np.dtype) -> np.ndarray:
    n = draw(st.integers(1, 12))
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        element = st.one_of(st.integers(int(info.min), int(info.max)),
                            st.sampled_from([v for v in edges(dtype) if isinstance(v, int)
                                             and info.min <= v <= info.max]))
        return np.array(draw(st.lists(element, min_size=n, max_size=n)), dtype=dtype)
    width = 8 * dtype.itemsize
    element = st.one_of(st.floats(width=width if width in (16, 32, 64) else 64),
                        st.sampled_from(edges(dtype)).map(float))
    with np.errstate(over="ignore"):
        return np.array(draw(st.lists(element, min_size=n, max_size=n)), dtype=dtype)


def outcome(fn: Any) -> Any:
    try:
        return fn()
    except (ValueError, OverflowError) as e:
        return type(e).__name__


def same(a: Any, b: Any) -> bool:
    if isinstance(a, str) or isinstance(b, str):
        return isinstance(a, str) and isinstance(b, str)
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.kind == "f":
        nan = np.isnan(a)
        return bool((nan == np.isnan(b)).all()) and a[~nan].tobytes() == b[~nan].tobytes()
    return a.tobytes() == b.tobytes()


@settings(max_examples=600, deadline=None)
@given(data=st.data(), source=st.sampled_from(CORE), target=st.sampled_from(CORE),
       rounding=st.sampled_from(ROUNDINGS), out_of_range=st.sampled_from(OUT_OF_RANGE))
def test_same_as_cast_value_rs(data: st.DataObject, source: str, target: str, rounding: str,
                               out_of_range: str | None) -> None:
    values = data.draw(source_values(np.dtype(source)))
    target_dtype = np.dtype(target)
    mapping: list[tuple[Any, Any]] = []
    if data.draw(st.booleans()):
        key = values[data.draw(st.integers(0, values.size - 1))]
        value = np.zeros((), target_dtype)[()] + target_dtype.type(1)
        mapping = [(key, value)]
    ours = outcome(lambda: cast(values, target_dtype, rounding, out_of_range, mapping))
    theirs = outcome(lambda: cast_value_rs.cast_array(
        values, target_dtype=target_dtype, rounding_mode=rounding,
        out_of_range_mode=out_of_range,
        scalar_map_entries={k.item(): v.item() for k, v in mapping} or None))
    assert same(ours, theirs), (values, ours, theirs)


def exact_fraction(value: Any) -> Fraction | None:
    f = float(value)
    return Fraction(f) if math.isfinite(f) else None


@functools.cache
def _grid(target: np.dtype) -> tuple[frozenset[Fraction], list[Fraction]]:
    """Every finite value of ``target`` (a set) and the rounding grid: those values and one
    step past the largest, with their negatives, ascending."""
    t = numeric(target)
    assert t is not None
    patterns = np.arange(1 << (8 * target.itemsize), dtype=f"u{target.itemsize}")
    with np.errstate(invalid="ignore"):
        every = patterns.view(target).astype(np.float64)
    finite = {Fraction(float(v)) for v in every if math.isfinite(float(v))}
    spacing = Fraction(2) ** (math.frexp(t.largest)[1] - t.bits)
    grid = {*finite, Fraction(t.largest) + spacing}
    return frozenset(finite), sorted({-g for g in grid} | grid)


def reference_float(x: float, target: np.dtype, rounding: str, out_of_range: str | None) -> Any:
    """Round ``x`` to ``target`` with unbounded exponent, through fractions and the list of
    every finite value of ``target``; then the range rules of the module docs."""
    t = numeric(target)
    assert t is not None
    if math.isnan(x):
        return np.array(np.nan, target)[()] if t.has_nan else "error"
    if math.isinf(x):
        if t.has_inf:
            return np.array(x, target)[()]
        return np.array(math.copysign(t.largest, x), target)[()] if out_of_range == "clamp" \
            else "error"
    finite, grid = _grid(target)
    top = Fraction(t.largest)
    q = Fraction(x)
    k = bisect.bisect_right(grid, q)
    lo = grid[k - 1] if k > 0 else None
    hi = lo if lo == q else (grid[k] if k < len(grid) else None)
    if lo is None or hi is None:
        result = None  # far beyond: out of range whatever the mode
    elif lo == hi:
        result = lo
    elif rounding == "towards-zero":
        result = lo if q > 0 else hi
    elif rounding == "towards-positive":
        result = hi
    elif rounding == "towards-negative":
        result = lo
    elif q - lo != hi - q:
        result = lo if q - lo < hi - q else hi
    elif rounding == "nearest-away":
        result = hi if q > 0 else lo
    else:
        even = [g for g in (lo, hi) if abs(g) in finite and
                np.array(float(abs(g)), target).view(f"u{target.itemsize}") % 2 == 0]
        result = even[0] if even else None
        if abs(lo) > top or abs(hi) > top:  # the step past the largest value is even
            result = lo if abs(lo) > top else hi
    if result is None or abs(result) > top:
        if out_of_range == "clamp":
            return np.array(math.copysign(math.inf if t.has_inf else t.largest, x), target)[()]
        return "error"
    return np.array(float(result) if result != 0 else math.copysign(0.0, x), target)[()]


@settings(max_examples=300, deadline=None)
@given(data=st.data(), target=st.sampled_from(ML_FLOATS), rounding=st.sampled_from(ROUNDINGS),
       out_of_range=st.sampled_from([None, "clamp"]))
def test_small_floats_round_exactly(data: st.DataObject, target: str, rounding: str,
                                    out_of_range: str | None) -> None:
    t = dtype_of(target)
    x = float(data.draw(st.one_of(st.floats(-600, 600),
                                  st.sampled_from(edges(np.dtype("f8"))))))
    ours = outcome(lambda: cast(np.array([x]), t, rounding, out_of_range)[0])
    expected = reference_float(float(x), t, rounding, out_of_range)
    if isinstance(expected, str):
        assert isinstance(ours, str), (x, ours)
    else:
        assert not isinstance(ours, str), (x, ours, expected)
        assert same(np.array([ours], t), np.array([expected], t)), (x, ours, expected)


@pytest.mark.parametrize("target", ML_INTS)
@pytest.mark.parametrize("out_of_range", OUT_OF_RANGE)
def test_small_integers(target: str, out_of_range: str | None) -> None:
    t = dtype_of(target)
    info = numeric(t)
    assert info is not None
    values = np.arange(-20, 21, dtype="i2")
    for v in values:
        ours = outcome(lambda v=v: cast(np.array([v]), t, "nearest-even", out_of_range)[0])
        modulus = 1 << info.bits
        if info.low <= v <= info.high:
            expected: Any = int(v)
        elif out_of_range == "clamp":
            expected = min(max(int(v), info.low), info.high)
        elif out_of_range == "wrap":
            expected = (int(v) - info.low) % modulus + info.low
        else:
            expected = "error"
        assert (ours if isinstance(ours, str) else int(ours)) == (
            "CastError" if expected == "error" else expected), (v, ours)


def test_mapping_first_entry_wins_and_nan_keys() -> None:
    values = np.array([np.nan, 1.0, 0.0, -0.0, 2.0])
    out = cast(values, np.dtype("u1"), "nearest-even", None,
               [(np.nan, np.uint8(7)), (1.0, np.uint8(9)), (1.0, np.uint8(3)), (0.0, np.uint8(5))])
    assert out.tolist() == [7, 9, 5, 5, 2]


def test_errors_name_the_value() -> None:
    with pytest.raises(CastError, match=r"300 \(int32\) is outside the range of uint8"):
        cast(np.array([1, 300], "i4"), np.dtype("u1"), "nearest-even", None)
    with pytest.raises(CastError, match=r"nan \(float64\) has no value in the integer type"):
        cast(np.array([np.nan]), np.dtype("i2"), "nearest-even", "clamp")
    with pytest.raises(CastError, match="'wrap' applies to integer types only"):
        cast(np.array([1e6]), np.dtype("f2"), "nearest-even", "wrap")


@pytest.mark.parametrize(("source", "target", "exact"), [
    ("u1", "f2", True), ("i2", "f4", True), ("i4", "f4", False), ("i4", "f8", True),
    ("f2", "f4", True), ("f4", "f8", True), ("f8", "f4", False), ("u8", "i8", False),
    ("bfloat16", "f4", True), ("float8_e4m3fn", "f2", True), ("f2", "bfloat16", False),
    ("float8_e4m3fn", "float8_e5m2", False), ("int4", "i1", True), ("i1", "int4", False),
])
def test_widening_casts_are_exact(source: str, target: str, exact: bool) -> None:
    assert is_exact(dtype_of(source), dtype_of(target)) is exact
