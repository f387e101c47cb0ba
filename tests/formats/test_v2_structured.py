"""Structured (record) dtypes in Zarr v2, both ways with zarr-python 3 (``zarr_format=2``).

A v2 structured ``dtype`` is a list of ``[name, type]`` or ``[name, type, shape]`` entries;
every field keeps its own byte order on disk (``[["x", "<f4"], ["y", ">i2"]]`` stores ``y``
big endian), and a ``fill_value`` is the base64 of one record's bytes in those byte orders.
zarrx hands records out in the machine's byte order (each field native), zarr-python in the
stored one; values are compared field by field through NumPy's casting, bytes included.

Each round trip writes part of the array with one library (chunks never written, partly
written and cut by the array's bounds), checks the ``.zarray`` against the v2 spec's encoding
(computed here by hand), reads it all with the other library, then the other library updates a
region across those chunks and the first reads it back.

zarr-python 3.1.6 limitations, pinned by :func:`test_zarr_python_subarray_fields` so that
they fail when lifted:
- subarray fields (``["v", "<u2", [2]]``): zarr-python cannot open such a ``.zarray`` ("No Zarr
  data type found"), and creating one turns the field into raw bytes. zarrx's handling is
  checked here against bytes built by hand, and against tensorstore in
  ``tests/interop/test_v2_tensorstore.py``.
- zarr-python records ``fill_value=None`` as ``null``; zarrx records the zero record's base64.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import numcodecs
import numpy as np
import pytest
import zarr

import zarrx

#: Record dtypes zarr-python 3 supports in v2, in ``.zarray`` JSON.
DTYPES: dict[str, list[list[Any]]] = {
    "mixed": [["x", "<f4"], ["y", ">i2"], ["s", "|S3"]],
    "little": [["a", "<i8"], ["b", "<f8"], ["c", "|b1"], ["d", "<u2"]],
    "big": [["y", ">i2"], ["z", ">f8"], ["w", ">u4"]],
    "complex-bytes": [["c", "<c8"], ["d", ">c16"], ["v", "|V3"], ["u", "|u1"], ["h", ">f2"]],
    "nested": [["a", [["b", "<i2"], ["c", ">f8"]]], ["d", "|u1"]],
    "deep": [["p", [["q", [["r", ">u4"], ["s", "|S2"]]], ["t", "<f2"]]], ["e", "|i1"]],
    "text-time": [["u", "<U2"], ["t", "<M8[s]"], ["m", ">m8[ms]"], ["n", "<i4"]],
    "one-field": [["only", ">i8"]],
}


def to_dtype(spec: Any) -> np.dtype:
    """A v2 JSON dtype as NumPy's (decoded by hand, nested lists included)."""
    if isinstance(spec, str):
        return np.dtype(spec)
    return np.dtype([
        (f[0], to_dtype(f[1]), tuple(f[2])) if len(f) > 2 else (f[0], to_dtype(f[1]))
        for f in spec
    ])


def native(dtype: np.dtype) -> np.dtype:
    return dtype.newbyteorder("=")


def b64(raw: bytes) -> str:
    return base64.standard_b64encode(raw).decode()


def values(dtype: np.dtype, shape: tuple[int, ...], seed: int) -> np.ndarray:
    """Random records: any bits for numbers (NaN payloads, subnormals, NaT), random bytes
    (NULs too) for ``S``/``V``, random letters for ``U``, recursively through fields."""
    rng = np.random.default_rng(seed)
    if dtype.fields is not None:
        out = np.zeros(shape, dtype)
        for i, name in enumerate(dtype.names):
            sub = dtype.fields[name][0]
            out[name] = values(sub.base, shape + sub.shape, seed * 31 + i + 1)
        return out
    if dtype.kind == "U":
        letters = rng.integers(ord("a"), ord("z") + 1, (*shape, dtype.itemsize // 4))
        return letters.astype("<u4").view(dtype.newbyteorder("<")).reshape(shape).astype(dtype)
    raw = rng.integers(0, 256, (*shape, dtype.itemsize), dtype="u1")
    if dtype.kind in "SV":
        raw[rng.random(raw.shape) < 0.3] = 0
    if dtype.kind == "b":
        raw &= 1
    return np.ascontiguousarray(raw).view(dtype).reshape(shape)


def assert_records(actual: Any, expected: np.ndarray, what: str) -> None:
    """Equal shape and values (as NumPy casts records field by field), compared as bytes of
    the expected dtype, so NaN payloads and -0.0 count."""
    actual = np.asarray(actual)
    assert actual.shape == expected.shape, (what, actual.shape, expected.shape)
    assert actual.dtype.names == expected.dtype.names, (what, actual.dtype, expected.dtype)
    got = np.ascontiguousarray(actual.astype(expected.dtype)).reshape(-1)
    want = np.ascontiguousarray(expected).reshape(-1)
    unit = f"V{want.itemsize}"
    bad = np.flatnonzero(got.view(unit) != want.view(unit))
    assert not bad.size, (
        f"{what}: {bad.size} records differ, first at flat indices {bad[:8].tolist()}: "
        f"got {got[bad[:2]]!r}, expected {want[bad[:2]]!r}"
    )


# -- the two libraries --------------------------------------------------------------------

SHAPE, CHUNKS = (7, 5), (3, 2)
REGION = (slice(1, 4), slice(1, 3))  # chunk row 2 and column 2 are never written
UPDATE = (slice(3, 7), slice(2, 5))  # across stored, partly stored and missing chunks


def create(lib: str, path: Path, stored: np.dtype, fill: np.ndarray | None, order: str = "C",
           compressor: Any = None, shape: tuple[int, ...] = SHAPE,
           chunks: tuple[int, ...] = CHUNKS) -> Any:
    """``fill``: a 0-d array of the stored dtype, or None."""
    kwargs = {"shape": shape, "chunks": chunks, "dtype": stored, "zarr_format": 2,
              "fill_value": None if fill is None else fill[()], "order": order,
              "compressors": compressor}
    if lib == "zarr":
        return zarr.create_array(str(path), **kwargs)
    return zarrx.create_array(str(path), **kwargs)


def open_rw(lib: str, path: Path) -> Any:
    if lib == "zarr":
        return zarr.open_array(str(path), mode="r+", zarr_format=2)
    return zarrx.open_array(str(path), mode="r+")


def read(lib: str, path: Path, stored: np.dtype, fill: np.ndarray, handle: Any = None
         ) -> np.ndarray:
    """Everything, checking the dtype and fill value each library reports; ``handle``: an
    array object to read through instead of opening ``path``."""
    if lib == "zarr":
        array = handle or zarr.open_array(str(path), mode="r", zarr_format=2)
        assert array.dtype == stored, (array.dtype, stored)  # zarr-python: as stored
    else:
        array = zarrx.open_array(str(path), mode="r")
        assert array.zarr_format == 2
        assert array.dtype == native(stored), (array.dtype, native(stored))
    assert array.shape == SHAPE
    assert array.chunks == CHUNKS
    reported = array.fill_value
    if reported is not None:  # zarr-python reports None for a null fill value
        assert_records(np.asarray(reported), fill.astype(native(stored)), f"{lib}'s fill value")
    return np.asarray(array[...])


def check_zarray(path: Path, spec: list[list[Any]], fill: np.ndarray | None, writer: str,
                 order: str) -> None:
    doc = json.loads((path / ".zarray").read_text())
    assert doc["zarr_format"] == 2
    assert doc["dtype"] == spec, (doc["dtype"], spec)
    assert doc["shape"] == list(SHAPE)
    assert doc["chunks"] == list(CHUNKS)
    assert doc["order"] == order
    stored = to_dtype(spec)
    if fill is None:
        # zarr-python writes null; zarrx the base64 of a zero record.
        assert doc["fill_value"] == (None if writer == "zarr" else b64(bytes(stored.itemsize)))
    else:
        assert doc["fill_value"] == b64(fill.astype(stored).tobytes())


def zarr_null_record(stored: np.dtype) -> np.ndarray:
    """What zarr-python 3.1.6 puts in never-written cells for a ``null`` fill value: the
    integer 0 cast to the record, so ``S``/``U`` fields hold ``"0"`` rather than NULs."""
    return np.array(0).astype(native(stored))


def settle_null(actual: Any, expected: np.ndarray, written: np.ndarray, stored: np.dtype
                ) -> np.ndarray:
    """With a ``null`` fill value the v2 spec leaves never-written cells undefined: accept
    there either the zero record (zarrx) or zarr-python's :func:`zarr_null_record`; cells
    written by anyone must match exactly."""
    got = np.asarray(actual).astype(native(stored))
    unit = f"V{got.itemsize}"
    zero_cast = zarr_null_record(stored).tobytes()
    loose = ~written & (got.view(unit) == np.frombuffer(zero_cast, unit)[0])
    out = expected.copy()
    out[loose] = got[loose]
    return out


def roundtrip(path: Path, kind: str, writer: str, reader: str, *, fill: bool, order: str = "C",
              compressor: Any = None) -> None:
    spec = DTYPES[kind]
    stored = to_dtype(spec)
    fill_value = values(native(stored), (), 99).astype(stored) if fill else None
    fill_native = np.zeros((), native(stored)) if fill_value is None else (
        fill_value.astype(native(stored)))
    data = values(native(stored), SHAPE, 1)
    expected = np.full(SHAPE, fill_native, native(stored))
    written = np.zeros(SHAPE, bool)

    def check(lib: str, what: str, handle: Any = None) -> None:
        actual = read(lib, path, stored, fill_native, handle)
        want = settle_null(actual, expected, written, stored) if fill_value is None else expected
        assert_records(actual, want, what)

    array = create(writer, path, stored, fill_value, order, compressor)
    array[REGION] = data[REGION].astype(stored)  # given as stored: converted on the way in
    expected[REGION] = data[REGION]
    written[REGION] = True
    check_zarray(path, spec, fill_value, writer, order)
    check(reader, f"{reader} reads {writer}")

    update = values(native(stored), SHAPE, 2)
    open_rw(reader, path)[UPDATE] = update[UPDATE]  # given natively
    expected[UPDATE] = update[UPDATE]
    written[UPDATE] = True
    check_zarray(path, spec, fill_value, writer, order)
    # The writer reads through the array it created (zarr-python cannot reopen nested dtypes).
    check(writer, "the writer", array)
    check(reader, "the reader")
    # Selections of records and a single record, through zarrx.
    array = zarrx.open_array(str(path))
    final = np.asarray(array[...])
    if fill_value is not None:
        final = expected
    else:
        final = settle_null(final, expected, written, stored)
    assert_records(array[2:6, ::-2], final[2:6, ::-2], "zarrx selection")
    assert_records(np.asarray(array[4, 1]), final[4, 1], "zarrx record")


DIRECTIONS = [("zarr", "zarrx"), ("zarrx", "zarr")]
#: zarr-python 3.1.6 writes nested records but cannot open them (pinned in
#: test_zarr_python_nested_fields): with those, zarrx is the only reader.
NESTED = ("nested", "deep")
#: zarr-python 3.1.6 cannot write or read records with a ``V`` field and a null fill value
#: (pinned in test_zarr_python_null_fill_void_field).
VOID_FIELDS = ("complex-bytes",)


def cases(kinds: Any, fills: Any = (True,)) -> list[Any]:
    return [
        pytest.param(kind, fill, writer, reader,
                     id=f"{kind}-{'base64' if fill else 'null'}-{writer}->{reader}")
        for kind in kinds
        for fill in fills
        for writer, reader in DIRECTIONS
        if not (kind in NESTED and reader == "zarr")
        and not (kind in VOID_FIELDS and not fill and writer == "zarr")
    ]


# -- tests --------------------------------------------------------------------------------

@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize(("kind", "fill", "writer", "reader"), cases(DTYPES, (True, False)))
def test_roundtrip(tmp_path: Path, kind: str, fill: bool, order: str, writer: str,
                   reader: str) -> None:
    roundtrip(tmp_path / "a", kind, writer, reader, fill=fill, order=order)


@pytest.mark.parametrize(
    "compressor",
    [numcodecs.Blosc(cname="lz4", shuffle=numcodecs.Blosc.SHUFFLE),
     numcodecs.Blosc(cname="zstd", shuffle=numcodecs.Blosc.BITSHUFFLE),
     numcodecs.Zstd(level=3), numcodecs.Zlib(level=1), numcodecs.GZip(level=1)],
    ids=lambda c: f"{c.codec_id}-{getattr(c, 'shuffle', '')}",
)
@pytest.mark.parametrize(("kind", "fill", "writer", "reader"),
                         cases(["little", "mixed", "nested"]))
def test_compressed(tmp_path: Path, kind: str, fill: bool, compressor: Any, writer: str,
                    reader: str) -> None:
    roundtrip(tmp_path / "a", kind, writer, reader, fill=True, compressor=compressor)


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("kind", list(DTYPES))
def test_same_bytes_on_disk(tmp_path: Path, kind: str, order: str) -> None:
    """Uncompressed, both libraries store the same records as the same bytes (each field in
    its byte order, edge chunks padded with the fill record) under an equal ``.zarray``."""
    stored = to_dtype(DTYPES[kind])
    fill = values(native(stored), (), 7).astype(stored)
    data = values(native(stored), SHAPE, 3)
    for lib in ("zarr", "zarrx"):
        create(lib, tmp_path / lib, stored, fill, order)[REGION] = data[REGION]
    docs = [json.loads((tmp_path / lib / ".zarray").read_text()) for lib in ("zarr", "zarrx")]
    assert docs[0] == docs[1]
    keys = [sorted(p.name for p in (tmp_path / lib).iterdir() if not p.name.startswith("."))
            for lib in ("zarr", "zarrx")]
    assert keys[0] == keys[1]
    for key in keys[0]:
        raw = [(tmp_path / lib / key).read_bytes() for lib in ("zarr", "zarrx")]
        assert raw[0] == raw[1], f"chunk {key} differs"


def write_by_hand(path: Path, spec: Any, fill: Any, records: np.ndarray, order: str = "C"
                  ) -> None:
    """A v2 array of one chunk holding ``records`` (of the stored dtype), from the spec."""
    path.mkdir()
    doc = {"zarr_format": 2, "shape": list(records.shape), "chunks": list(records.shape),
           "dtype": spec, "compressor": None, "fill_value": fill, "order": order,
           "filters": None}
    (path / ".zarray").write_text(json.dumps(doc))
    raw = records.tobytes(order=order)
    (path / ".".join("0" * records.ndim)).write_bytes(raw)


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("kind", [*DTYPES, "subarray"])
def test_bytes_written_by_hand(tmp_path: Path, kind: str, order: str) -> None:
    """zarrx reads records whose bytes and base64 fill value are built here from the spec,
    independently of any library, and writes back exactly those bytes."""
    spec = SUBARRAY if kind == "subarray" else DTYPES[kind]
    stored = to_dtype(spec)
    records = values(native(stored), (4, 3), 5).astype(stored)
    fill = values(native(stored), (), 6).astype(stored)
    write_by_hand(tmp_path / "h", spec, b64(fill.tobytes()), records, order)
    array = zarrx.open_array(str(tmp_path / "h"))
    assert array.dtype == native(stored)
    assert_records(array[...], records.astype(native(stored)), "zarrx reads hand-made bytes")
    assert_records(np.asarray(array.fill_value), fill.astype(native(stored)), "fill value")
    out = zarrx.create_array(str(tmp_path / "w"), shape=(4, 3), chunks=(4, 3), dtype=stored,
                             fill_value=fill[()], order=order, compressors=None, zarr_format=2)
    out[...] = records
    assert (tmp_path / "w" / "0.0").read_bytes() == records.tobytes(order=order)
    doc = json.loads((tmp_path / "w" / ".zarray").read_text())
    assert doc["dtype"] == spec
    assert doc["fill_value"] == b64(fill.tobytes())


def test_null_fill_by_hand(tmp_path: Path) -> None:
    """A ``null`` fill value reads as the zero record in chunks never written."""
    spec = DTYPES["mixed"]
    stored = to_dtype(spec)
    path = tmp_path / "n"
    path.mkdir()
    (path / ".zarray").write_text(json.dumps({
        "zarr_format": 2, "shape": [4], "chunks": [2], "dtype": spec, "compressor": None,
        "fill_value": None, "order": "C", "filters": None,
    }))
    records = values(native(stored), (2,), 8).astype(stored)
    (path / "1").write_bytes(records.tobytes())
    expected = np.zeros(4, native(stored))
    expected[2:] = records
    assert_records(zarrx.open_array(str(path))[...], expected, "null fill")


# -- subarray fields ----------------------------------------------------------------------

SUBARRAY = [["x", "<f4"], ["v", ">u2", [2]], ["m", "<f8", [2, 3]], ["s", "|S2", [2]]]


@pytest.mark.parametrize("order", ["C", "F"])
def test_subarray_fields_zarrx(tmp_path: Path, order: str) -> None:
    """Subarray fields with zarrx alone (zarr-python cannot; tensorstore can, see interop):
    partial writes, missing chunks read as the fill record, and a field selection."""
    stored = to_dtype(SUBARRAY)
    fill = values(native(stored), (), 9).astype(stored)
    data = values(native(stored), SHAPE, 10)
    array = create("zarrx", tmp_path / "s", stored, fill, order)
    array[REGION] = data[REGION]
    expected = np.full(SHAPE, fill.astype(native(stored)), native(stored))
    expected[REGION] = data[REGION]
    check_zarray(tmp_path / "s", SUBARRAY, fill, "zarrx", order)
    again = zarrx.open_array(str(tmp_path / "s"))
    assert again.dtype == native(stored)
    assert_records(again[...], expected, "subarray fields")
    assert_records(np.asarray(again.fill_value), fill.astype(native(stored)), "fill value")


def test_zarr_python_nested_fields(tmp_path: Path) -> None:
    """Pins zarr-python 3.1.6's gap: it creates arrays of nested records but cannot open a
    ``.zarray`` with them (its own included). When this fails, drop ``NESTED``."""
    stored = to_dtype(DTYPES["nested"])
    create("zarr", tmp_path / "n", stored, None)
    with pytest.raises(ValueError, match="No Zarr data type"):
        zarr.open_array(str(tmp_path / "n"), mode="r")


def test_zarr_python_null_fill_void_field(tmp_path: Path) -> None:
    """Pins zarr-python 3.1.6's gap: records with a ``V`` field and a null fill value cannot
    be written or read (its default record, the integer 0 cast to the dtype, fails). zarrx
    reads and writes them (the zarrx->zarr cases above). When this fails, drop
    ``VOID_FIELDS``."""
    stored = to_dtype(DTYPES["complex-bytes"])
    array = create("zarr", tmp_path / "v", stored, None)
    with pytest.raises(TypeError, match="bytes-like"):
        array[:1] = np.zeros((1, 1), stored)
    with pytest.raises(TypeError, match="bytes-like"):
        array[...]


def test_zarr_python_null_fill_strings(tmp_path: Path) -> None:
    """Pins what zarr-python 3.1.6 reads in never-written cells of records with a ``null``
    fill value (see :func:`settle_null`); zarrx reads the zero record there."""
    stored = to_dtype(DTYPES["mixed"])
    create("zarr", tmp_path / "z", stored, None)
    got = zarr.open_array(str(tmp_path / "z"), mode="r")[0, 0]
    assert np.asarray(got).astype(native(stored)).tobytes() == zarr_null_record(stored).tobytes()
    assert np.asarray(zarrx.open_array(str(tmp_path / "z"))[0, 0]).tobytes() == bytes(
        stored.itemsize)


def test_zarr_python_subarray_fields(tmp_path: Path) -> None:
    """Pins zarr-python 3.1.6's gap: it cannot open a ``.zarray`` with subarray fields. When
    this fails, zarr-python gained them: add ``SUBARRAY`` to ``DTYPES``."""
    stored = to_dtype(SUBARRAY)
    write_by_hand(tmp_path / "h", SUBARRAY, None, np.zeros((2, 2), stored))
    with pytest.raises(ValueError, match="No Zarr data type"):
        zarr.open_array(str(tmp_path / "h"), mode="r")
