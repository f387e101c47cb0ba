"""Exact value casts between integer and floating-point types, as the ``cast_value`` codec
defines them: explicit mappings first, exact values as they are, then a rounding mode and an
out-of-range rule; anything else is an error.

The facts followed (the spec leaves some open; these are what zarr-python 3.4's backend,
cast-value-rs 0.5, does, and zarrs for the types cast-value-rs does not take):

- Rounding is exact, from the source's exact value: integers wider than float64's 53 bits are
  rounded to the target's precision in integer arithmetic, never through float64 first.
- Float targets: a value is first rounded to the target's precision as if its exponent were
  unbounded; if the rounded magnitude exceeds the largest finite value it is out of range
  (``65519.0`` to float16 rounds to ``65504``: in range; ``65520`` rounds to ``65536``: out).
  ``clamp`` then gives ±inf (±the largest finite value for types without infinities),
  ``wrap`` is an error, and no rule is an error. Subnormals round like any other value.
  NaN stays NaN, ±inf stays ±inf (a type without them: an error; ±inf with ``clamp``: ±the
  largest finite value, as zarrs does); signed zeros keep their sign.
- Integer targets: floats are rounded to an integer (``nearest-even``, ``towards-zero``,
  ``towards-positive``, ``towards-negative``, ``nearest-away``), then checked against the
  range; ``clamp`` takes the nearest bound, ``wrap`` the value modulo ``2**bits`` (two's
  complement for signed types). NaN and ±inf are errors, whatever the rule.
- A mapping (``scalar_map``) replaces the elements equal to a key (``NaN`` matches NaNs,
  ``0.0`` matches ``-0.0``), before any other rule; the first entry of a key wins.

A cast whose every source value is exact in the target (a widening cast) is a plain NumPy
``astype`` plus the mapping: the common decode direction costs one pass.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from zarrx.data_types.ml import INTEGERS, ml_name, traits
from zarrx.errors import CodecError

ROUNDINGS = ("nearest-even", "towards-zero", "towards-positive", "towards-negative",
             "nearest-away")
OUT_OF_RANGE = (None, "clamp", "wrap")


@dataclass(frozen=True)
class Numeric:
    """What a cast needs to know of a data type."""

    dtype: np.dtype
    integer: bool
    bits: int  # integers: value bits; floats: significand bits (with the implicit one)
    low: int = 0  # integers' range
    high: int = 0
    largest: float = 0.0  # floats' largest finite value
    has_nan: bool = False
    has_inf: bool = False


@functools.cache
def numeric(dtype: np.dtype) -> Numeric | None:
    """The :class:`Numeric` of a data type, or ``None`` when casts do not apply to it."""
    name = ml_name(dtype)
    if name == "float8_e8m0fnu":
        return None  # powers of two only, no zero and no sign: not cast here
    if name is not None:
        t = traits(name)
        if name in INTEGERS:
            return Numeric(dtype, True, t.bits, int(t.low), int(t.high))
        import ml_dtypes

        return Numeric(dtype, False, ml_dtypes.finfo(dtype).nmant + 1, largest=t.high,
                       has_nan=t.nan, has_inf=t.inf)
    if dtype.kind in "iu" and dtype.itemsize in (1, 2, 4, 8):
        info = np.iinfo(dtype)
        return Numeric(dtype, True, info.bits, int(info.min), int(info.max))
    if dtype.kind == "f" and dtype.itemsize in (2, 4, 8):
        finfo = np.finfo(dtype)
        return Numeric(dtype, False, finfo.nmant + 1, largest=float(finfo.max),
                       has_nan=True, has_inf=True)
    return None


@functools.cache
def _float_table(dtype: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    """Every non-negative finite value of a float type of at most 16 bits, ascending, as
    float64, with whether each one's bit pattern is even (for ties to even)."""
    width = dtype.itemsize
    patterns = np.arange(1 << (8 * width), dtype=f"u{width}")
    with np.errstate(invalid="ignore"):  # the NaN patterns
        values = patterns.view(dtype).astype(np.float64)
    keep = np.isfinite(values) & (values >= 0) & ~np.signbit(values)
    values, patterns = values[keep], patterns[keep]
    order = np.argsort(values, kind="stable")
    values, patterns = values[order], patterns[order]
    unique = np.concatenate([[True], values[1:] != values[:-1]])
    return values[unique], (patterns[unique] & 1) == 0


@functools.cache
def is_exact(source: np.dtype, target: np.dtype) -> bool:
    """Whether every value of ``source`` (NaN and ±inf included) is a value of ``target``."""
    s, t = numeric(source), numeric(target)
    if s is None or t is None:
        return False
    if s.integer and t.integer:
        return t.low <= s.low and s.high <= t.high
    if s.integer:
        return max(-s.low, s.high) <= min(2 ** t.bits, t.largest)
    if t.integer or (s.has_nan and not t.has_nan) or (s.has_inf and not t.has_inf):
        return False
    if source.itemsize <= 2:
        values = np.arange(1 << (8 * source.itemsize), dtype=f"u{source.itemsize}").view(source)
        with np.errstate(invalid="ignore", over="ignore"):
            values = values[np.isfinite(values.astype(np.float64))]
            back = values.astype(target).astype(np.float64)
        return bool(np.array_equal(back, values.astype(np.float64)))
    return (source, target) == (np.dtype("f4"), np.dtype("f8")) or source == target


def _describe(value: Any) -> str:
    return repr(value.item() if isinstance(value, np.generic) else value)


class CastError(CodecError):
    """A value the cast cannot make (out of range without a rule, NaN into integers …)."""


def matches(values: np.ndarray, key: Any) -> np.ndarray:
    """Where ``values`` equal a mapping key (NaN matches NaN)."""
    if isinstance(key, float | np.floating) and math.isnan(key):
        return np.isnan(values) if values.dtype.kind == "f" or ml_name(values.dtype) \
            else np.zeros(values.shape, bool)
    with np.errstate(invalid="ignore", over="ignore"):
        return np.asarray(values == key)


def cast(values: np.ndarray, target: np.dtype, rounding: str, out_of_range: str | None,
         mapping: Sequence[tuple[Any, Any]] = ()) -> np.ndarray:
    """``values`` cast to ``target`` (see the module docs); a new array of their shape.
    ``mapping`` holds ``(source scalar, target scalar)`` pairs; CastError names the
    first value that cannot be cast."""
    values = np.asarray(values)
    if not values.dtype.isnative:  # stored big-endian: every rule below reads native values
        values = values.astype(values.dtype.newbyteorder("="))
    s, t = numeric(values.dtype), numeric(target)
    if s is None or t is None:
        raise CodecError(f"cast_value: zarrx casts between integer and float types other "
                         f"than float8_e8m0fnu, not {values.dtype} to {target}")
    flat = values.reshape(-1)
    done = np.zeros(flat.shape, bool)
    replacements = []
    for key, value in mapping:
        hit = matches(flat, key) & ~done
        if hit.any():
            done |= hit
            replacements.append((hit, value))
    if is_exact(values.dtype, target):
        out = flat.astype(target)
    else:
        out = np.empty(flat.shape, target)
        todo = ~done
        if not done.any():
            out[...] = _cast(flat, s, t, rounding, out_of_range)
        elif todo.any():
            out[todo] = _cast(flat[todo], s, t, rounding, out_of_range)
    for hit, value in replacements:
        out[hit] = value
    return out.reshape(values.shape)


def _cast(flat: np.ndarray, s: Numeric, t: Numeric, rounding: str,
          out_of_range: str | None) -> np.ndarray:
    if t.integer:
        if s.integer:
            return _int_to_int(flat, s, t, out_of_range)
        return _float_to_int(flat.astype(np.float64), s, t, rounding, out_of_range)
    if s.integer:
        return _to_float(_int_to_float64(flat, t.bits, rounding), s, t, rounding, out_of_range)
    return _to_float(flat.astype(np.float64), s, t, rounding, out_of_range)


def _range_error(value: Any, s: Numeric, t: Numeric, extra: str = "") -> CastError:
    return CastError(
        f"cast_value: {_describe(value)} ({s.dtype}) is outside the range of {t.dtype} and "
        f"the codec has no out_of_range rule{extra}"
    )


# -- integer targets ------------------------------------------------------------------------

def _wide(flat: np.ndarray) -> np.ndarray:
    """Integers as int64 (uint64 as they are: its values need all 64 bits)."""
    if flat.dtype == np.uint64:
        return flat
    return flat.astype(np.int64)


def _int_to_int(flat: np.ndarray, s: Numeric, t: Numeric, out_of_range: str | None
                ) -> np.ndarray:
    v = _wide(flat)
    unsigned = v.dtype == np.uint64
    below = v < np.int64(t.low) if not unsigned and t.low > s.low else np.zeros(v.shape, bool)
    if unsigned:
        above = v > np.uint64(t.high) if t.high < s.high else np.zeros(v.shape, bool)
    else:
        above = v > np.int64(min(t.high, 2**63 - 1)) if t.high < s.high else (
            np.zeros(v.shape, bool))
    bad = below | above
    if bad.any():
        if out_of_range is None:
            raise _range_error(flat[bad][0], s, t)
        if out_of_range == "clamp":
            v = v.copy()
            if below.any():
                v[below] = t.low
            if above.any():
                v[above] = t.high
        else:
            return _wrap_bits(v.astype(np.uint64), t)
    return v.astype(t.dtype)


def _wrap_bits(u: np.ndarray, t: Numeric) -> np.ndarray:
    """Two's complement bit patterns (uint64) reduced modulo ``2**t.bits`` into ``t``."""
    if t.bits < 64:
        u = u & np.uint64((1 << t.bits) - 1)
    if t.low < 0:
        if t.bits == 64:
            return u.view(np.int64).astype(t.dtype)
        signed = u.astype(np.int64)
        signed[u >= np.uint64(1 << (t.bits - 1))] -= np.int64(1 << t.bits)
        return signed.astype(t.dtype)
    return u.astype(t.dtype)


def round_integral(x: np.ndarray, rounding: str) -> np.ndarray:
    """Floats rounded to integers by the mode (float64 in, float64 out)."""
    if rounding == "nearest-even":
        return np.rint(x)
    if rounding == "towards-zero":
        return np.trunc(x)
    if rounding == "towards-positive":
        return np.ceil(x)
    if rounding == "towards-negative":
        return np.floor(x)
    whole = np.trunc(x)
    return np.where(np.abs(x - whole) >= 0.5, whole + np.copysign(1.0, x), whole)


def _float_to_int(x: np.ndarray, s: Numeric, t: Numeric, rounding: str,
                  out_of_range: str | None) -> np.ndarray:
    special = ~np.isfinite(x)
    if special.any():
        raise CastError(
            f"cast_value: {_describe(x[special][0])} ({s.dtype}) has no value in the integer "
            f"type {t.dtype}; map it with scalar_map"
        )
    r = round_integral(x, rounding)
    low, top = float(t.low), float(t.high + 1)  # powers of two (or 0): exact in float64
    below, above = r < low, r >= top
    bad = below | above
    if not bad.any():
        return _float_integers(r, t)
    if out_of_range is None:
        raise _range_error(x[bad][0], s, t)
    if out_of_range == "wrap":
        # Below 2**63 in magnitude through int64's two's complement; beyond, the floats are
        # multiples of 2**11 and their remainder modulo 2**64 is exact in float64.
        small = np.abs(r) < 2.0**63
        big = np.fmod(np.where(small, 0.0, r), 2.0**64)
        big[big < 0] += 2.0**64
        patterns = np.where(small, r, 0.0).astype(np.int64).view(np.uint64)
        patterns[~small] = big[~small].astype(np.uint64)
        return _wrap_bits(patterns, t)
    r[bad] = low  # placed, then set to the bounds exactly
    out = _float_integers(r, t)
    out[below] = t.low
    out[above] = t.high
    return out


def _float_integers(r: np.ndarray, t: Numeric) -> np.ndarray:
    """Integer-valued floats, in ``t``'s range, as ``t`` (exactly, 64-bit values too)."""
    if t.dtype == np.uint64:
        return r.astype(np.uint64)
    return r.astype(np.int64).astype(t.dtype)


# -- float targets --------------------------------------------------------------------------

def _int_to_float64(flat: np.ndarray, bits: int, rounding: str) -> np.ndarray:
    """Integers as float64 values already rounded to ``bits`` significant bits by the mode:
    exact for every integer (above 2**53 the rounding is done on the integers)."""
    x = flat.astype(np.float64)
    if flat.dtype.itemsize < 8:
        return x
    v = _wide(flat)
    negative = (v < 0) if v.dtype == np.int64 else np.zeros(v.shape, bool)
    magnitude = np.where(negative, (~v.view(np.uint64)) + np.uint64(1), v.view(np.uint64))
    big = magnitude >= np.uint64(1 << 53)
    if not big.any():
        return x
    m = magnitude[big]
    length = np.frexp(m.astype(np.float64))[1].astype(np.uint64)
    length -= (m >> (length - np.uint64(1))) == 0  # float64 rounded some up a bit
    shift = length - np.uint64(min(bits, 53))
    unit = np.uint64(1) << shift
    remainder = m & (unit - np.uint64(1))
    truncated = (m - remainder).astype(np.float64)  # at most 53 significant bits: exact
    neg = negative[big]
    half = unit >> np.uint64(1)
    odd = ((m >> shift) & np.uint64(1)) == 1
    if rounding == "nearest-even":
        up = (remainder > half) | ((remainder == half) & odd)
    elif rounding == "towards-zero":
        up = np.zeros(m.shape, bool)
    elif rounding == "towards-positive":
        up = ~neg & (remainder != 0)
    elif rounding == "towards-negative":
        up = neg & (remainder != 0)
    else:
        up = remainder >= half
    rounded = truncated + np.where(up, unit.astype(np.float64), 0.0)
    x[big] = np.where(neg, -rounded, rounded)
    return x


def _to_float(x: np.ndarray, s: Numeric, t: Numeric, rounding: str,
              out_of_range: str | None) -> np.ndarray:
    """float64 values (exact) cast to the float type ``t``."""
    out = np.empty(x.shape, t.dtype)
    nan, infinite = np.isnan(x), np.isinf(x)
    if nan.any():
        if not t.has_nan:
            raise CastError(f"cast_value: NaN ({s.dtype}) has no value in {t.dtype}; map it "
                            "with scalar_map")
        out[nan] = np.nan
    if infinite.any():
        if t.has_inf:
            out[infinite] = x[infinite]
        elif out_of_range == "clamp":
            out[infinite] = np.copysign(t.largest, x[infinite])
        else:
            raise CastError(f"cast_value: {_describe(x[infinite][0])} ({s.dtype}) has no "
                            f"value in {t.dtype}; map it with scalar_map")
    finite = ~(nan | infinite)
    magnitude = np.abs(x)
    beyond = finite & (magnitude > t.largest)
    if beyond.any():
        # rounded with an unbounded exponent: to the largest value, or past it (out of range)
        spacing = 2.0 ** (math.frexp(t.largest)[1] - t.bits)
        over = magnitude - t.largest
        negative = x < 0
        if rounding == "towards-zero":
            down = over < spacing
        elif rounding == "towards-positive":
            down = negative & (over < spacing)
        elif rounding == "towards-negative":
            down = ~negative & (over < spacing)
        else:  # the largest value's significand is odd: a tie goes past it in both modes
            down = over < spacing / 2
        kept = beyond & down
        out[kept] = np.copysign(t.largest, x[kept])
        past = beyond & ~down
        if past.any():
            if out_of_range is None:
                raise _range_error(x[past][0], s, t, " (use out_of_range 'clamp')")
            if out_of_range == "wrap":
                raise CastError(
                    f"cast_value: {_describe(x[past][0])} ({s.dtype}) is outside the range "
                    f"of {t.dtype}, and out_of_range 'wrap' applies to integer types only"
                )
            out[past] = np.copysign(np.inf if t.has_inf else t.largest, x[past])
    inside = finite & ~beyond
    if inside.any():
        out[inside] = _round_finite(x[inside], t, rounding)
    return out


def _round_finite(x: np.ndarray, t: Numeric, rounding: str) -> np.ndarray:
    """Finite values no larger than ``t.largest`` rounded to ``t`` by the mode."""
    if t.dtype == np.float64:
        return x
    if t.dtype == np.float32:
        return _round_float32(x, rounding)
    values, even = _float_table(t.dtype)
    a = np.abs(x)
    negative = np.signbit(x)
    i = np.searchsorted(values, a, side="right") - 1
    lo = values[i]
    j = np.minimum(i + 1, values.size - 1)
    hi = values[j]
    exact = lo == a
    if rounding == "towards-zero":
        pick_hi = np.zeros(a.shape, bool)
    elif rounding == "towards-positive":
        pick_hi = ~negative & ~exact
    elif rounding == "towards-negative":
        pick_hi = negative & ~exact
    else:
        below, above = a - lo, hi - a
        tie = (below == above) & ~exact
        pick_hi = (above < below) | (tie & (~even[i] if rounding == "nearest-even" else True))
    m = np.where(pick_hi, hi, lo)
    return np.where(negative, -m, m).astype(t.dtype)


def _round_float32(x: np.ndarray, rounding: str) -> np.ndarray:
    y = x.astype(np.float32)  # to nearest, ties to even
    if rounding == "nearest-even":
        return y
    yd = y.astype(np.float64)
    if rounding == "towards-zero":
        move = np.abs(yd) > np.abs(x)
        y[move] = np.nextafter(y[move], np.float32(0))
    elif rounding == "towards-positive":
        move = yd < x
        y[move] = np.nextafter(y[move], np.float32(np.inf))
    elif rounding == "towards-negative":
        move = yd > x
        y[move] = np.nextafter(y[move], np.float32(-np.inf))
    else:
        other = np.where(yd < x, np.nextafter(y, np.float32(np.inf)),
                         np.nextafter(y, np.float32(-np.inf)))
        od = other.astype(np.float64)
        tie = (yd != x) & (np.abs(x - yd) == np.abs(od - x)) & (np.abs(od) > np.abs(yd))
        y[tie] = other[tie]
    return y
