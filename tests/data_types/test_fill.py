"""Fill values in JSON (``zarrx.data_types.fill``): every format reads back what it writes,
bit for bit, and writes what zarr-python 3.1.6 writes (v3, and v2 as zarr-python 2.18 does)."""

from __future__ import annotations

import base64
import json
import math
import warnings
from typing import Any

import ml_dtypes
import numpy as np
import pytest
import zarr
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from zarr.core.buffer import default_buffer_prototype
from zarr.core.sync import sync
from zarr.storage import MemoryStore

from zarrx.data_types import fill
from zarrx.data_types.ml import NAMES, MLDataType
from zarrx.errors import FillValueError

NUMBERS = ["|b1", "|i1", "|u1", "<i2", ">i2", "<u4", "<i8", ">u8", "<f2", ">f2", "<f4", ">f4",
           "<f8", ">f8", "<c8", ">c16", "<M8[s]", ">m8[ms]"]
RECORD = [("a", "<i2"), ("b", ">f4"), ("c", "|u1"), ("m", ">f8", (2,)), ("s", "|S2")]
#: (table, stored dtype, table key or None) of every value kind each format has.
CASES = [
    *((name, dt, None) for name in ("v3", "v2", "draft") for dt in NUMBERS),
    ("v3", "|V3", None), ("v3", "|V5", "raw_bytes"), ("v3", "|S5", None), ("v3", "<U3", None),
    ("v3", "T", None), ("v3", "|O", None), ("v3", [("a", "<i2"), ("b", "<f4")], "struct"),
    ("v2", "|V3", None), ("v2", "|S5", None), ("v2", ">U3", None), ("v2", RECORD, None),
    ("v2", "|O", "T"), ("v2", "|O", None),
    ("draft", "|V3", None), ("draft", "|S5", None), ("draft", "<U3", None), ("draft", "|O", None),
]
TABLES = {"v3": fill.V3, "v2": fill.V2, "draft": fill.DRAFT}
TEXT = st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\0"))


def _id(case: tuple[str, Any, str | None]) -> str:
    name, dt, kind = case
    return f"{name}-{np.dtype(dt).str if not isinstance(dt, list) else 'record'}-{kind or ''}"


def values(dtype: np.dtype, kind: str, text: bool = False) -> st.SearchStrategy[Any]:
    """Any value of ``dtype`` (every bit pattern for numbers: NaN payloads, -0.0, ±inf, NaT);
    an object array's are strings (``text``) or bytes."""
    nat = fill.native(dtype)
    if kind in ("T", "O"):
        return TEXT if kind == "T" or text else st.binary()
    if nat.kind == "b":
        return st.booleans().map(np.bool_)
    if nat.kind == "S":
        return st.binary(max_size=nat.itemsize).map(lambda b: np.array(b, nat)[()])
    if nat.kind == "U":
        return TEXT.filter(lambda t: len(t) <= nat.itemsize // 4).map(
            lambda t: np.array(t, nat)[()])
    return st.binary(min_size=nat.itemsize, max_size=nat.itemsize).map(
        lambda b: np.frombuffer(b, dtype)[0].astype(nat))


def same(a: Any, b: Any) -> bool:
    """Bit for bit (equal for Python strings and bytes)."""
    if isinstance(a, str | bytes) or a is None:
        return type(a) is type(b) and a == b
    return bool(np.asarray(a).dtype == np.asarray(b).dtype
                and np.asarray(a).tobytes() == np.asarray(b).tobytes())


def nan_parts(dtype: np.dtype, value: Any) -> list[bool]:
    if dtype.kind == "c":
        return [math.isnan(value.real), math.isnan(value.imag)]
    return [math.isnan(value)] if dtype.kind == "f" else []


def loses_payload(name: str, dtype: np.dtype, value: Any) -> bool:
    """v2 has no bit strings: a NaN is written as "NaN", its payload and sign lost."""
    return name == "v2" and any(nan_parts(fill.native(dtype), value))


@pytest.mark.parametrize("case", CASES, ids=_id)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_parse_of_encode_is_the_value(case: tuple[str, Any, str | None], data: Any) -> None:
    """parse(encode(v)) == v bit for bit, through real JSON (no bare NaN), in every format."""
    name, dt, kind = case
    table, dtype = TABLES[name], np.dtype(dt)
    value = data.draw(values(dtype, kind or fill.kind_of(dtype), text=name == "draft"))
    text = json.dumps(fill.encode(table, dtype, value, kind=kind), allow_nan=False)
    back = fill.parse(table, dtype, json.loads(text), where=str(dtype), kind=kind)
    if loses_payload(name, dtype, value):
        assert nan_parts(fill.native(dtype), back) == nan_parts(fill.native(dtype), value)
        value = np.asarray(value)  # what the parts that are not NaN read back as
        for part, is_nan in zip(("real", "imag"), nan_parts(fill.native(dtype), value)):
            if not is_nan and dtype.kind == "c":
                assert getattr(back, part) == getattr(value[()], part)
        return
    assert same(back, value), (text, back, value)


@pytest.mark.parametrize("name", sorted(NAMES))
def test_ml_types_read_back_every_value(name: str) -> None:
    """The machine-learning types keep their own range rules on the shared grammar: every
    value of the type survives v3 (NaN payloads too) and v2 (but NaN payloads); integers
    come back as the same number (sign-extended through the byte, as tensorstore has it)."""
    t = MLDataType.from_json(name)
    if t.kind != "f":
        info = ml_dtypes.iinfo(t.dtype)
        for number in range(int(info.min), int(info.max) + 1):
            value = t.fill_from_json(number)
            assert int(t.fill_from_json(t.fill_to_json(value))) == number
            assert same(t.fill_from_v2(t.fill_to_v2(value)), value)
        return
    bits = np.arange(2 ** min(t.bits, 16), dtype=f"u{t.dtype.itemsize}")
    for value in bits.view(t.dtype):
        v3 = json.loads(json.dumps(t.fill_to_json(value), allow_nan=False))
        assert same(t.fill_from_json(v3), value), (v3, value)
        back = t.fill_from_v2(json.loads(json.dumps(t.fill_to_v2(value), allow_nan=False)))
        if math.isnan(float(value)):
            assert math.isnan(float(back))
        else:
            assert same(back, value), (value, back)


# -- what zarr-python 3.1.6 writes ---------------------------------------------------------------

#: (stored dtype, table key) zarr-python creates in both formats (its v3 ``raw_bytes`` for
#: void, ``structured`` for records: packed, little endian).
PEER_CASES = [*((dt, None) for dt in NUMBERS), ("|V3", "raw_bytes"), ("|S5", None), ("<U3", None),
              ([("a", "<i2"), ("b", "<f4")], "struct")]


def zarr_python_fill(dtype: np.dtype, value: Any, zarr_format: int) -> Any:
    """The ``fill_value`` zarr-python 3.1.6 writes for an array of ``dtype``."""
    store = MemoryStore()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # its unstable-specification warnings
        zarr.create_array(store, shape=(1,), chunks=(1,), dtype=dtype, fill_value=value,
                          zarr_format=zarr_format)  # type: ignore[arg-type]
    key = "zarr.json" if zarr_format == 3 else ".zarray"
    raw = sync(store.get(key, prototype=default_buffer_prototype()))
    assert raw is not None
    return json.loads(raw.to_bytes())["fill_value"]


@pytest.mark.parametrize("zarr_format", [3, 2])
@pytest.mark.parametrize("case", PEER_CASES, ids=lambda c: str(c[0])[:12] + (c[1] or ""))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_encoding_is_zarr_pythons(case: tuple[Any, str | None], zarr_format: int, data: Any
                                  ) -> None:
    """zarrx writes what zarr-python writes, and reads what it writes as the value, bit for
    bit — but for a NaN other than the type's own: zarr-python writes every NaN as "NaN"
    (payload and sign lost), zarrx keeps its bits in v3 ("0x…")."""
    dt, kind = case
    table = fill.V3 if zarr_format == 3 else fill.V2
    dtype = np.dtype(dt)
    stored = dtype if zarr_format == 2 or kind != "struct" else dtype.newbyteorder("<")
    value = data.draw(values(dtype, fill.kind_of(dtype)))
    peer = zarr_python_fill(dtype, value, zarr_format)
    ours = fill.encode(table, stored, value, kind=kind if zarr_format == 3 else None)
    back = fill.parse(table, stored, peer, where=str(dtype), kind=kind if zarr_format == 3
                      else None)
    nans = nan_parts(fill.native(dtype), value)
    canonical = not any(nans) or same(back, value)
    if zarr_format == 2 and dtype.kind == "S":
        # zarr-python drops the trailing NULs (NumPy's bytes scalar does); zarrx writes all
        # n bytes, as tensorstore does (tests/interop/test_v2_tensorstore.py); both read alike
        assert ours == base64.standard_b64encode(np.asarray(value, dtype).tobytes()).decode()
        assert same(back, value)
    elif canonical:
        assert json.loads(json.dumps(ours)) == peer, (ours, peer)
        assert same(back, value), (peer, back, value)
    else:  # a NaN with a payload or sign
        assert nan_parts(fill.native(dtype), back) == nans
        assert "NaN" in json.dumps(peer)
        assert zarr_format == 2 or "0x" in json.dumps(ours)


@pytest.mark.parametrize(("name", "dtype", "value"), [
    ("v3", "<f4", "0x7fc0"), ("v3", "|b1", 2), ("v3", "<i2", 70000), ("v3", "|V2", [1, 2, 3]),
    ("v3", "<f2", 1e10), ("v2", "<f4", "0x7fc00000"), ("v2", "|S3", "not base64!"),
    ("draft", "<i4", 1.5), ("draft", "<f4", "0b101"), ("draft", "<c8", [1.0]),
    ("v3", "<M8[s]", 2**63),
])
def test_invalid_fill_values_are_refused(name: str, dtype: str, value: Any) -> None:
    with pytest.raises(FillValueError, match="fill value"):
        fill.parse(TABLES[name], np.dtype(dtype), value, where=dtype)


def test_formats_differ_only_where_the_specs_do() -> None:
    """One rule a kind: the tables share their rules but for the forms the formats differ in."""
    nan = np.frombuffer(bytes.fromhex("7fc00001")[::-1], "<f4")[0]
    f4 = np.dtype("<f4")
    assert [fill.encode(t, f4, nan) for t in (fill.V3, fill.V2, fill.DRAFT)] == [
        "0x7fc00001", "NaN", "0x7fc00001"]
    assert [fill.encode(t, f4, -np.inf) for t in (fill.V3, fill.V2, fill.DRAFT)] == [
        "-Infinity"] * 3
    assert [fill.encode(t, f4, np.inf) for t in (fill.V3, fill.V2, fill.DRAFT)] == [
        "Infinity", "Infinity", "+Infinity"]
    assert fill.parse(fill.DRAFT, f4, "Infinity", where="f4") == np.inf  # zarr-python 2.18's
    v3 = np.dtype("|V2")
    raw = np.frombuffer(b"\x01\x02", v3)[0]
    assert [fill.encode(t, v3, raw) for t in (fill.V3, fill.V2, fill.DRAFT)] == [
        [1, 2], "AQI=", "0x0102"]
    for t in (fill.V2, fill.DRAFT):
        assert same(fill.parse(t, f4, None, where="f4"), np.float32(0))
    assert fill.parse(fill.V2, np.dtype("|O"), 0, where="O", kind="T") == ""
    assert fill.parse(fill.DRAFT, np.dtype("|O"), None, where="O") is None
    for kind in ("b", "i", "u", "M", "m", "U"):  # v2 and the draft add null (and bits)
        assert fill.V3[kind].encode is fill.V2[kind].encode
