"""Fill values in JSON, once for every format: a rule per kind of value, a table per format.

A *rule* reads one kind of value from its JSON form (``parse(dtype, value, where)`` → a NumPy
scalar of the native dtype) and writes it back (``encode(dtype, scalar)`` → JSON). ``dtype``
is the *stored* dtype: its byte order matters only where a format keeps an element's bytes
(base64 in Zarr v2). A *table* maps a value kind — NumPy's kind letter, ``"struct"`` for a
record, ``"raw_bytes"`` for zarr-python's v3 ``raw_bytes`` — to its rule. A kind shares one
rule across formats; the tables differ only where the specs (or the peers' documents) do:

==========  ===============================  ==========================  ======================
kind        Zarr v3                          Zarr v2                     v3.0 draft (2020)
==========  ===============================  ==========================  ======================
``b``       ``true``/``false`` (0/1 read)    same                        same, or bits
``i u``     an integer in range              same                        same, or bits
``f``       a number, ``"NaN"``,             same without bits; a NaN's  ``"+Infinity"``
            ``"Infinity"``, ``"-Infinity"``  payload is lost             written, ``"0x"``
            or ``"0x…"`` bits (a NaN's                                   and ``"0b"`` bits
            payload kept)
``c``       ``[re, im]`` of the float rule   same (v2 floats)            same, a number, or
                                                                         bits
``V``       a list of byte values            base64 (stored order)       ``"0x…"`` bits
``raw_b…``  base64                           —                           —
``struct``  base64 of the packed element     base64 (stored order)       —
            (``structured``; ``struct``'s
            objects are the type's own)
``S``       base64, trailing NULs dropped    base64 (all n bytes, as     same as v2
                                             tensorstore writes them)
``U``       a string                         same                        same
``M m``     the int64 count (NaT: -2**63)    same                        same, or bits
``T``       a string                         a string (``vlen-utf8``)    —
``O``       base64 (variable-length bytes)   base64, ``null``/``0``      a string, ``null``/``0``
                                             empty                       empty (``None``)
==========  ===============================  ==========================  ======================

In v2 and the draft, ``null`` reads as zero (empty for strings). "Bits" are ``"0x"`` and
two hex digits a byte (or ``"0b"`` and eight binary digits a byte), most significant first.
Types with a rule of their own (the machine-learning types, ``struct`` objects) keep it in
their class and use the pieces here.

>>> nan = parse(V3, np.dtype("float32"), "0x7fc00001", where="float32")  # a NaN's payload
>>> encode(V3, nan.dtype, nan), encode(V2, np.dtype("<f4"), nan), encode(DRAFT, nan.dtype, nan)
('0x7fc00001', 'NaN', '0x7fc00001')
>>> encode(V3, np.dtype("c8"), complex(1, -np.inf)), encode(DRAFT, np.dtype(">f8"), np.inf)
([1.0, '-Infinity'], '+Infinity')
"""

from __future__ import annotations

import base64
import binascii
import functools
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, NamedTuple

import numpy as np

from zarrx.errors import FillValueError

Parse = Callable[[np.dtype, Any, str], Any]
Encode = Callable[[np.dtype, Any], Any]


class Rule(NamedTuple):
    """How one kind of value is read from JSON and written to it."""

    parse: Parse
    encode: Encode


Table = Mapping[str, Rule]


def native(dtype: np.dtype) -> np.dtype:
    """``dtype`` in the machine's byte order (fields too)."""
    if dtype.fields is None:
        return dtype if dtype.kind == "T" else dtype.newbyteorder("=")  # T: NumPy's strings
    return np.dtype([(name, native(dtype.fields[name][0])) for name in dtype.names or ()])


def kind_of(dtype: np.dtype) -> str:
    """The table key of a dtype: NumPy's kind letter, ``"struct"`` for a record."""
    return "struct" if dtype.fields is not None else dtype.kind


def parse(table: Table, dtype: np.dtype, value: Any, *, where: str, kind: str | None = None
          ) -> Any:
    """The fill value ``value`` (JSON) of a ``dtype`` array (as stored) in a format's
    ``table``, as a NumPy scalar of the native dtype; :class:`FillValueError` if invalid.
    ``kind`` overrides the dtype's table key."""
    return _rule(table, dtype, kind, where).parse(dtype, value, where)


def encode(table: Table, dtype: np.dtype, value: Any, *, kind: str | None = None) -> Any:
    """The JSON form of the fill value ``value`` of a ``dtype`` array in a format's ``table``."""
    return _rule(table, dtype, kind, str(dtype)).encode(dtype, value)


def _rule(table: Table, dtype: np.dtype, kind: str | None, where: str) -> Rule:
    rule = table.get(kind or kind_of(dtype))
    if rule is None:
        raise FillValueError(f"no fill-value encoding for dtype {dtype} ({where})")
    return rule


# -- bits ------------------------------------------------------------------------------------

_DIGITS = {"0x": (16, 2, "hex", re.compile(r"[0-9a-fA-F]+")),
           "0b": (2, 8, "binary", re.compile(r"[01]+"))}


def bits(value: Any, itemsize: int, where: str, prefixes: tuple[str, ...] = ("0x",)
         ) -> bytes | None:
    """A ``"0x…"``/``"0b…"`` string (of ``prefixes``) as the element's bytes, most
    significant first; ``None`` when ``value`` is no such string."""
    if not isinstance(value, str) or value[:2] not in prefixes:
        return None
    base, per_byte, name, pattern = _DIGITS[value[:2]]
    digits, width = value[2:], per_byte * itemsize
    if len(digits) != width or not pattern.fullmatch(digits):
        raise FillValueError(
            f"fill value {value!r} for {where} must be {value[:2]!r} and exactly {width} "
            f"{name} digits"
        )
    return int(digits, base).to_bytes(itemsize, "big")


def from_bits(raw: bytes, dtype: np.dtype) -> Any:
    """The native scalar whose bits, most significant first, are ``raw``."""
    nat = native(dtype)
    if nat.type is np.void:  # raw bits: no byte order
        return np.frombuffer(raw, dtype=nat)[0]
    return np.frombuffer(raw, dtype=nat.newbyteorder(">"))[0].astype(nat)


def to_bits(scalar: Any) -> str:
    """``"0x"`` and the bits of a scalar, most significant first."""
    array = np.asarray(scalar)
    if array.dtype.type is np.void:  # raw bits: no byte order
        return "0x" + array.tobytes().hex()
    return "0x" + array.astype(array.dtype.newbyteorder(">")).tobytes().hex()


def _or_bits(rule: Rule) -> Rule:
    """``rule``, reading ``"0x"``/``"0b"`` bit strings too (the draft, any kind)."""
    def parse_(dtype: np.dtype, value: Any, where: str) -> Any:
        raw = bits(value, dtype.itemsize, where, ("0x", "0b"))
        return rule.parse(dtype, value, where) if raw is None else from_bits(raw, dtype)

    return Rule(parse_, rule.encode)


def _null(rule: Rule) -> Rule:
    """``rule``, reading ``null`` as zero (v2, the draft)."""
    def parse_(dtype: np.dtype, value: Any, where: str) -> Any:
        if value is None:
            return np.zeros((), dtype=native(dtype))[()]
        return rule.parse(dtype, value, where)

    return Rule(parse_, rule.encode)


# -- numbers ---------------------------------------------------------------------------------

def _bool(dtype: np.dtype, value: Any, where: str) -> Any:
    if isinstance(value, bool) or (isinstance(value, int) and value in (0, 1)):
        return np.bool_(value)
    raise FillValueError(f"fill value {value!r} for {where}: expected true or false")


def integer(value: Any, low: int, high: int, where: str) -> int:
    """An integer fill value in ``[low, high]`` (an integral float too)."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise FillValueError(f"fill value {value!r} for {where}: expected an integer")
    if not low <= value <= high:
        raise FillValueError(f"fill value {value} is out of range for {where} ([{low}, {high}])")
    return int(value)


def _int(dtype: np.dtype, value: Any, where: str) -> Any:
    nat = native(dtype)
    info = np.iinfo(nat)
    return nat.type(integer(value, int(info.min), int(info.max), where))


def _time(dtype: np.dtype, value: Any, where: str) -> Any:
    """``datetime64``/``timedelta64``: the int64 count (``-2**63`` is NaT)."""
    return np.array(integer(value, -(2**63), 2**63 - 1, where), dtype="i8").view(native(dtype))[()]


def _time_to_json(dtype: np.dtype, value: Any) -> int:
    return int(np.asarray(value, dtype=native(dtype)).view("i8"))


def scalar(dtype: np.dtype, value: Any) -> Any:
    """``value`` as a NumPy scalar of the native ``dtype``."""
    return np.asarray(value, dtype=native(dtype))[()]


BOOL = Rule(_bool, lambda dtype, value: bool(scalar(dtype, value)))
INT = Rule(_int, lambda dtype, value: int(scalar(dtype, value)))
TIME = Rule(_time, _time_to_json)


@functools.cache
def _largest(dtype: np.dtype) -> float:
    return float(np.finfo(dtype).max)


def cast_float(dtype: np.dtype, number: float, value: Any, where: str) -> Any:
    """``number`` as a scalar of the float ``dtype``: past the largest value it is out of
    range, unless it rounds down to it."""
    if abs(number) <= _largest(dtype) or not math.isfinite(number):
        return dtype.type(number)  # cannot overflow: no need for NumPy's error state
    with np.errstate(over="ignore"):
        out = np.array(number, dtype=dtype)[()]
    if not math.isfinite(out):
        raise FillValueError(f"fill value {value!r} is out of range for {where}")
    return out


@dataclass(frozen=True)
class FloatRule:
    """The JSON of a float: a number, NaN and the infinities by name, and (where the
    format has them) bit strings. Range and rounding are the data type's business: the
    machine-learning types use :meth:`number` with their own."""

    #: The infinity as written (it is read too, as is ``"Infinity"``).
    infinity: str = "Infinity"
    #: Bit strings read; a NaN other than the type's own is written as ``"0x…"`` bits when
    #: there are any (its payload survives), else as ``"NaN"``.
    prefixes: tuple[str, ...] = ("0x",)

    @functools.cached_property
    def names(self) -> dict[str, float]:
        return {"NaN": math.nan, "Infinity": math.inf, self.infinity: math.inf,
                "-Infinity": -math.inf}

    def number(self, value: Any, itemsize: int, where: str) -> float | bytes:
        """A float (from a number or a name), or a bit string's big-endian bytes."""
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
        if isinstance(value, str):
            if value in self.names:
                return self.names[value]
            raw = bits(value, itemsize, where, self.prefixes)
            if raw is not None:
                return raw
        if isinstance(value, bool):
            raise FillValueError(f"fill value {value!r} is not a number for {where}")
        spelled = ", ".join(repr(n) for n in self.names)
        raise FillValueError(
            f"fill value {value!r} for {where}: expected a number, {spelled}"
            + "".join(f" or a {p!r} string" for p in self.prefixes)
        )

    def parse(self, dtype: np.dtype, value: Any, where: str) -> Any:
        nat = native(dtype)
        number = self.number(value, nat.itemsize, where)
        if isinstance(number, bytes):
            return from_bits(number, nat)
        return cast_float(nat, number, value, where)

    def encode(self, dtype: Any, value: Any) -> Any:
        """``value`` (a float scalar of any float type, ml_dtypes' too) as JSON."""
        number = np.asarray(value)[()]
        if math.isnan(number):
            canonical = np.array(np.nan, dtype=number.dtype).tobytes()
            if self.prefixes and np.asarray(number).tobytes() != canonical:
                return to_bits(number)
            return "NaN"
        if math.isinf(number):
            return self.infinity if number > 0 else "-Infinity"
        return float(number)

    def rule(self) -> Rule:
        return Rule(self.parse, lambda dtype, value: self.encode(dtype, scalar(dtype, value)))


@dataclass(frozen=True)
class ComplexRule:
    """``[re, im]``, each part by a float rule (the draft reads a lone number as ``re``)."""

    part: FloatRule
    lone_number: bool = False

    def parse(self, dtype: np.dtype, value: Any, where: str) -> Any:
        nat = native(dtype)
        part = np.dtype(f"f{nat.itemsize // 2}")
        if isinstance(value, list | tuple) and len(value) == 2:
            re_, im = (self.part.parse(part, v, where) for v in value)
        elif self.lone_number and not isinstance(value, list | tuple):
            re_, im = self.part.parse(part, value, where), part.type(0)
        else:
            raise FillValueError(f"fill value {value!r} for {where}: expected [real, imag]")
        out = np.zeros((), dtype=nat)
        out.real, out.imag = re_, im
        return out[()]

    def encode(self, dtype: np.dtype, value: Any) -> list[Any]:
        number = scalar(dtype, value)
        return [self.part.encode(dtype, number.real), self.part.encode(dtype, number.imag)]

    def rule(self) -> Rule:
        return Rule(self.parse, self.encode)


V3_FLOAT = FloatRule()
V2_FLOAT = FloatRule(prefixes=())
DRAFT_FLOAT = FloatRule(infinity="+Infinity", prefixes=("0x", "0b"))


# -- bytes and strings -----------------------------------------------------------------------

def _byte_list(dtype: np.dtype, value: Any, where: str) -> Any:
    if (isinstance(value, list | tuple) and len(value) == dtype.itemsize and all(
            isinstance(b, int) and not isinstance(b, bool) and 0 <= b < 256 for b in value)):
        return np.frombuffer(bytes(value), dtype=native(dtype))[0]
    raise FillValueError(
        f"fill value {value!r} for {where}: expected a list of {dtype.itemsize} byte values"
    )


def _draft_raw(dtype: np.dtype, value: Any, where: str) -> Any:
    try:
        return _byte_list(dtype, value, where)
    except FillValueError:
        raise FillValueError(
            f"fill value {value!r} for raw {dtype.itemsize * 8}-bit data ({where}): expected "
            f"a '0x' string of {2 * dtype.itemsize} hex digits"
        ) from None


BYTE_LIST = Rule(_byte_list, lambda dtype, value: list(np.asarray(value, dtype=dtype).tobytes()))


def _decode64(value: str, where: str) -> bytes:
    try:
        return base64.b64decode(value.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError):
        raise FillValueError(f"fill value {value!r} for {where}: not base64") from None


def _encode64(data: bytes) -> str:
    return base64.standard_b64encode(data).decode("ascii")


@dataclass(frozen=True)
class Base64Rule:
    """An element's bytes (in ``dtype``'s byte order) as base64."""

    #: Whether the decoded bytes must be the element's size (else: cut, or zero-padded).
    exact: bool = False
    #: Whether trailing NUL bytes are left out when written (v3 ``null_terminated_bytes``).
    strip: bool = False
    #: Whether a list of byte values (or ``0``, for zeros) is read too (Zarr v2).
    lists: bool = False

    def parse(self, dtype: np.dtype, value: Any, where: str) -> Any:
        if isinstance(value, str):
            raw = _decode64(value, where)
        elif self.lists and (isinstance(value, list | tuple) or value == 0):
            raw = bytes(value or ())
        else:
            raise FillValueError(f"fill value {value!r} for {where}: expected base64")
        nat = native(dtype)
        if nat.kind == "S":
            return np.array(raw, dtype=nat)[()]
        if self.exact and len(raw) != dtype.itemsize:
            raise FillValueError(
                f"fill value {value!r} for {where}: {len(raw)} bytes, the element has "
                f"{dtype.itemsize}"
            )
        raw = raw.ljust(dtype.itemsize, b"\0")[: dtype.itemsize]
        return np.frombuffer(raw, dtype=dtype).astype(nat)[0]

    def encode(self, dtype: np.dtype, value: Any) -> str:
        data = np.asarray(np.asarray(value, dtype=native(dtype)), dtype=dtype).tobytes()
        return _encode64(data.rstrip(b"\0") if self.strip else data)

    def rule(self) -> Rule:
        return Rule(self.parse, self.encode)


def _string(dtype: np.dtype, value: Any, where: str) -> Any:
    if not isinstance(value, str):
        raise FillValueError(f"fill value {value!r} for {where}: expected a string")
    return np.array(value, dtype=native(dtype))[()] if dtype.kind == "U" else value


def _vlen_bytes(dtype: np.dtype, value: Any, where: str) -> bytes:
    if not isinstance(value, str):
        raise FillValueError(f"fill value {value!r} for {where}: expected base64")
    return _decode64(value, where)


def no_fill(value: Any) -> bool:
    """An object array's "no fill" (v2, the draft): ``null``, or ``0``, which zarr-python 2
    writes for object arrays by default (numcodecs' vlen codecs store 0 and None as the
    empty element, and so does zarrx)."""
    return value is None or (type(value) is int and value == 0)


def _object(rule: Rule, empty: Any) -> Rule:
    """An object array's ``rule``, reading ``null``/``0`` as ``empty``."""
    return Rule(lambda d, v, w: empty if no_fill(v) else rule.parse(d, v, w), rule.encode)


TEXT = Rule(_string, lambda dtype, value: str(np.asarray(value)[()]) if dtype.kind == "U"
            else str(value))
VLEN_BYTES = Rule(_vlen_bytes, lambda dtype, value: _encode64(bytes(value)))
BASE64 = Base64Rule().rule()

# -- the tables ------------------------------------------------------------------------------

V3: Table = MappingProxyType({
    "b": BOOL, "i": INT, "u": INT, "f": V3_FLOAT.rule(), "c": ComplexRule(V3_FLOAT).rule(),
    "V": BYTE_LIST, "raw_bytes": BASE64, "struct": Base64Rule(exact=True).rule(),
    "S": Base64Rule(strip=True).rule(), "U": TEXT, "M": TIME, "m": TIME, "T": TEXT,
    "O": VLEN_BYTES,
})
_V2_BASE64 = Base64Rule(lists=True).rule()
V2: Table = MappingProxyType({
    **{k: _null(r) for k, r in {
        "b": BOOL, "i": INT, "u": INT, "f": V2_FLOAT.rule(), "c": ComplexRule(V2_FLOAT).rule(),
        "V": _V2_BASE64, "struct": _V2_BASE64, "S": _V2_BASE64, "U": TEXT,
        "M": TIME, "m": TIME,
    }.items()},
    "T": _object(TEXT, ""), "O": _object(VLEN_BYTES, b""),
})
DRAFT: Table = MappingProxyType({
    **{k: _null(_or_bits(r)) for k, r in {
        "b": BOOL, "i": INT, "u": INT, "c": ComplexRule(DRAFT_FLOAT, lone_number=True).rule(),
        "V": Rule(_draft_raw, lambda dtype, value: to_bits(np.asarray(value, dtype=dtype))),
        "M": TIME, "m": TIME,
    }.items()},
    "f": _null(DRAFT_FLOAT.rule()),
    # zarr-python 2.18's placeholder types, encoded as in Zarr v2
    "S": _null(_V2_BASE64), "U": _null(TEXT), "O": _object(TEXT, None),
})
