"""The Zarr v3.0 draft against zarr-python 2.18.7 (``ZARR_V3_EXPERIMENTAL_API=1``), both ways.

zarr-python 2.18 runs in its own environment (see ``conftest.py``): ``peer_write.py``
writes hierarchies and saves what it reads back with ``np.save``; ``peer_read.py`` reads
what zarrx wrote and saves it. Every comparison is bit for bit (NaN payloads included).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numcodecs
import numpy as np
import pytest

import zarrx
from zarrx.metadata import v3_draft

from .conftest import run_peer


def native_bytes(a: Any) -> tuple[tuple[int, ...], np.dtype, bytes]:
    a = np.asarray(a)
    nat = a.dtype.newbyteorder("=") if a.dtype.byteorder in "<>" else a.dtype
    return a.shape, nat, np.ascontiguousarray(a.astype(nat)).tobytes()


def assert_same(got: Any, expected: Any, what: str) -> None:
    g, e = native_bytes(got), native_bytes(expected)
    assert g[:2] == e[:2], f"{what}: shape/dtype {g[:2]} != {e[:2]}"
    assert g[2] == e[2], f"{what}: values differ\n{np.asarray(got)}\n{np.asarray(expected)}"


# -- zarr-python 2.18 writes, zarrx reads -----------------------------------------------------

@pytest.fixture(scope="module")
def peer_written(zarr2_python: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("zarr2-written")
    manifest = run_peer(zarr2_python, "peer_write.py", out)
    manifest["expected"] = out / "expected"
    return manifest


CATEGORIES = ["dtypes/C", "dtypes/F", "fills", "filters", "layout", "sharded", "x", "explicit"]


@pytest.mark.parametrize("category", CATEGORIES)
def test_zarrx_reads_zarr2(peer_written: dict[str, Any], category: str) -> None:
    manifest = peer_written["store"]
    paths = [p for p in manifest["arrays"] if p.startswith(category + "/")]
    assert paths, f"the peer wrote nothing under {category}"
    for path in paths:
        info = manifest["arrays"][path]
        a = zarrx.open(manifest["root"], path=path)
        assert isinstance(a, zarrx.Array)
        assert a.zarr_format == "3-draft"
        assert a.shape == tuple(info["shape"])
        assert a.metadata.stored_dtype == np.dtype(info["dtype"]), path
        assert a.metadata.chunk_memory_layout == info["order"]
        assert a.chunks == tuple(info["chunks"]) or not a.shape
        expected = np.load(peer_written["expected"] / info["expected"])
        assert_same(a[...], expected, path)
        assert dict(a.attrs) == {k: v for k, v in info["attrs"].items() if k != "filters"}


def _no_fill_is_empty(expected: np.ndarray, empty: Any) -> np.ndarray:
    """zarr-python 2.18 returns the fill 0 of an object array for elements of chunks never
    written; numcodecs' vlen codecs store 0 as the empty element, and zarrx reads both as
    that empty element (the ``0`` means "no fill")."""
    return np.array([empty if type(v) is int and v == 0 else v for v in expected.ravel()],
                    dtype=object).reshape(expected.shape)


def test_zarrx_reads_zarr2_placeholder_data_types(peer_written: dict[str, Any]) -> None:
    """zarr-python 2.18 writes ``|S``, ``<U`` and ``|O`` as data type extensions with a
    placeholder URI ("TODO: … protocol URL") and no fallback; zarrx maps them to the NumPy
    types and the vlen codec zarr-python 2.18 put in ``attributes["filters"]``."""
    manifest = peer_written["store"]
    root = Path(manifest["root"])
    doc = json.loads((root / "meta/root/placeholder/text.array.json").read_text())
    assert doc["data_type"] == {"extension": "TODO: object array protocol URL",
                                "fallback": None, "type": "|O"}
    assert doc["fill_value"] == 0
    for path, dtype in (("placeholder/bytes", "|S5"), ("placeholder/unicode", "<U3")):
        expected = np.load(peer_written["expected"] / manifest["arrays"][path]["expected"])
        a = zarrx.open_array(str(root), path=path)
        assert a.dtype == np.dtype(dtype)
        assert_same(a[...], expected, path)
    for path, empty in (("placeholder/text", ""), ("placeholder/objects", b""),
                        ("placeholder/gzip_text", "")):
        expected = np.load(peer_written["expected"] / manifest["arrays"][path]["expected"],
                           allow_pickle=True)
        a = zarrx.open_array(str(root), path=path)
        got = a[...]
        assert got.tolist() == _no_fill_is_empty(expected, empty).tolist(), path
        assert [type(v) for v in got.tolist()] == [type(empty)] * got.size, path
    a = zarrx.open_array(str(root), path="placeholder/text")
    assert a.dtype == np.dtypes.StringDType()
    assert [c.name for c in a.codecs] == ["vlen-utf8", "blosc"]


def test_zarrx_reads_zarr2_v2_object_fill_zero(peer_written: dict[str, Any]) -> None:
    """Zarr v2 arrays of zarr-python 2.18 with a vlen filter and ``fill_value: 0``."""
    manifest = peer_written["store_v2"]
    for name, empty in (("text", ""), ("objects", b"")):
        info = manifest["arrays"][name]
        assert info["fill_value"] == 0
        expected = np.load(peer_written["expected"] / info["expected"], allow_pickle=True)
        a = zarrx.open_array(str(Path(manifest["root"]) / name))
        assert a[...].tolist() == _no_fill_is_empty(expected, empty).tolist(), name


def test_zarrx_reads_zarr2_selections(peer_written: dict[str, Any]) -> None:
    manifest = peer_written["store"]
    for path in ("dtypes/F/float64_be", "sharded/F", "filters/delta_be_F", "layout/dot"):
        info = manifest["arrays"][path]
        expected = np.load(peer_written["expected"] / info["expected"])
        a = zarrx.open_array(manifest["root"], path=path)
        for sel in ((slice(1, None, 2), slice(None, None, -1)), (-1, slice(2, 4)), (1, 2)):
            assert_same(a[sel], expected[sel], f"{path}{sel}")


def test_zarr2_custom_suffix(peer_written: dict[str, Any]) -> None:
    manifest = peer_written["store_suffix"]
    root = Path(manifest["root"])
    assert (root / "meta/root/a/b.array.meta").is_file()
    g = zarrx.open_group(str(root))
    assert g.metadata.entry_point.metadata_key_suffix == ".meta"
    assert [name for name, _ in g.members(max_depth=None)] == ["a", "a/b", "c"]
    for path, info in manifest["arrays"].items():
        expected = np.load(peer_written["expected"] / info["expected"])
        assert_same(g[path][...], expected, path)


def test_zarr2_hierarchy(peer_written: dict[str, Any]) -> None:
    manifest = peer_written["store"]
    root = zarrx.open_group(manifest["root"])
    for path, info in manifest["groups"].items():
        g = root[path] if path else root
        assert isinstance(g, zarrx.Group), path
        assert g.metadata.implicit is not info["explicit"], path
        assert dict(g.attrs) == info["attrs"], path
    assert sorted(root.group_keys()) == [
        "dtypes", "explicit", "fills", "filters", "layout", "placeholder", "sharded", "x",
    ]
    assert [n for n, _ in root["x"].members(max_depth=None)] == ["y", "y/z", "y/z/deep"]
    names = {name for name, _ in root.members(max_depth=None)}
    assert set(manifest["arrays"]) <= names
    assert {p for p in manifest["groups"] if p} <= names


def test_zarr2_metadata_details(peer_written: dict[str, Any]) -> None:
    root = zarrx.open_group(peer_written["store"]["root"])
    delta = root["filters/delta"]
    assert [c.name for c in delta.codecs] == [
        "zarrx.v2-stored-order", "numcodecs.delta", "bytes", "blosc",
    ]
    assert "filters" not in delta.attrs  # the codecs, not user attributes
    assert root["layout/dot"].metadata.chunk_key((1, 2)) == "c1.2"
    assert root["layout/scalar"].metadata.zero_d_key == "c0"  # zarr-python 2.18's 0-d key
    assert root["sharded/C"].shards == (4, 6)
    assert root["sharded/C"].chunks == (2, 3)
    assert np.isnan(root["fills/f8_nan"].fill_value)
    assert root["fills/f4be_neginf"].fill_value == -np.inf
    assert root["dtypes/C/datetime_ns"].dtype == np.dtype("M8[ns]")


def test_zarrx_updates_zarr2_data(
    zarr2_python: str, peer_written: dict[str, Any], tmp_path: Path
) -> None:
    """zarrx writes into arrays zarr-python 2.18 made (shards, c0 scalars, filters, F
    layout, implicit groups); zarr-python 2.18 reads the result."""
    root = str(tmp_path / "store")
    shutil.copytree(peer_written["store"]["root"], root)
    g = zarrx.open_group(root, mode="r+")
    updates = {
        "sharded/C": (np.s_[3:8, 1:9], np.arange(40, dtype="i2").reshape(5, 8) * -3),
        "layout/scalar": (np.s_[...], np.complex64(-7 + 0.5j)),
        "filters/delta_be_F": (np.s_[1:, ::2], np.arange(15, dtype=">i8").reshape(5, 3) ** 3),
        "x/y/z/deep": (np.s_[::3, 1], np.array([np.nan, -0.0])),
    }
    expected = {}
    for path, (sel, value) in updates.items():
        a = g[path]
        full = a[...]
        full[sel] = value
        a[sel] = value
        expected[path] = full
    g["x"].attrs["touched"] = True  # an implicit group made explicit
    out = tmp_path / "read"
    out.mkdir()
    report = run_peer(zarr2_python, "peer_read.py", root, out, *expected, "x")
    for path, full in expected.items():
        assert_same(np.load(out / report[path]["file"]), full, path)
    assert report["x"]["attrs"] == {"touched": True}
    assert report["x"]["groups"] == ["y"]


# -- zarrx writes, zarr-python 2.18 reads -----------------------------------------------------

DTYPES = [
    "|b1", "|i1", "|u1", "<i2", ">i2", "<i4", ">i4", "<i8", ">i8", "<u2", ">u2", "<u4",
    ">u4", "<u8", ">u8", "<f2", ">f2", "<f4", ">f4", "<f8", ">f8", "<c8", ">c8", "<c16",
    ">c16", "<M8[ns]", ">m8[us]",
]
COMPRESSORS: list[Any] = [
    None,
    {"name": "gzip", "configuration": {"level": 3}},
    {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle"}},
    {"name": "blosc", "configuration": {"cname": "zstd", "clevel": 1, "shuffle": "bitshuffle"}},
    {"name": "zstd", "configuration": {"level": 5, "checksum": False}},
    numcodecs.Zlib(level=4),
    numcodecs.BZ2(level=2),
    numcodecs.LZ4(acceleration=2),
    numcodecs.LZMA(preset=2),
]


def sample(dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    dt = np.dtype(dtype)
    n = int(np.prod(shape))
    if dt.kind == "b":
        values: Any = np.arange(n) % 4 == 1
    elif dt.kind in "mM":
        values = (np.arange(n, dtype="i8") * 987_654_321 - 5).view(dt.newbyteorder("="))
    elif dt.kind == "c":
        values = np.arange(n) / 3 + 1j * np.arange(n)[::-1]
    elif dt.kind == "f":
        values = np.arange(n) * 1.5 - 11
    else:
        nat = dt.newbyteorder("=")
        values = nat.type(np.iinfo(dt).max) - 3 * np.arange(n, dtype=nat)
    return np.asarray(values).astype(dt).reshape(shape)


def _fill(dtype: str) -> Any:
    kind = np.dtype(dtype).kind
    return {"b": True, "f": -np.inf, "c": complex(np.nan, 2)}.get(
        kind, np.array(9, "i8").view(np.dtype(dtype).newbyteorder("="))[()]
        if kind in "mM" else 9,
    )


@pytest.fixture(scope="module")
def zarrx_written(zarr2_python: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A hierarchy written by zarrx, and what zarr-python 2.18 reads from it."""
    base = tmp_path_factory.mktemp("zarrx-written")
    root = str(base / "store")
    arrays: dict[str, tuple[np.ndarray, dict[str, Any]]] = {}

    def make(path: str, data: np.ndarray, written: Any = Ellipsis, **kwargs: Any) -> None:
        a = zarrx.create_array(root, name=path, shape=data.shape, dtype=data.dtype,
                               zarr_format="3-draft", **kwargs)
        a[written] = data[written]
        arrays[path] = (a[...], kwargs)

    g = zarrx.create_group(root, zarr_format="3-draft", attributes={"made by": "zarrx"})
    for i, dtype in enumerate(DTYPES):
        for order in "CF":
            name = dtype.replace("<", "le_").replace(">", "be_").replace("|", "").replace(
                "[", "_").replace("]", "")
            make(f"dtypes/{order}/{name}", sample(dtype, (8, 7)), np.s_[:5, :4],
                 chunks=(3, 3), order=order, fill_value=_fill(dtype),
                 compressors=COMPRESSORS[(i + (order == "F")) % len(COMPRESSORS)])
    for label, fill in (("nan", np.nan), ("posinf", np.inf), ("neginf", -np.inf),
                        ("neg_zero", -0.0)):
        make(f"fills/{label}", sample("<f8", (9,)), np.s_[:2], chunks=(4,), fill_value=fill)
    make("fills/int_max", sample("<u8", (9,)), np.s_[:2], chunks=(4,),
         fill_value=np.iinfo("u8").max)
    make("filters/delta", sample("<i4", (30,)), chunks=(7,),
         filters=[numcodecs.Delta(dtype="<i4")], compressors=numcodecs.GZip(level=1))
    make("filters/scale_offset_F", (np.arange(24).reshape(4, 6) / 10).astype(">f8"),
         chunks=(3, 4), order="F",
         filters=[numcodecs.FixedScaleOffset(0, 10, dtype=">f8", astype="<i2")])
    make("layout/dot", sample("<i2", (5, 6)), chunks=(2, 4),
         chunk_key_encoding={"name": "v2", "configuration": {"separator": "."}})
    make("layout/one_chunk", sample("<f4", (3, 2, 4)), chunks=(3, 2, 4))
    make("layout/scalar", np.array(-2.5, ">f8"), fill_value=3.0)  # 0-d: its chunk at c0
    make("sharded/C", sample("<u4", (11, 9)), np.s_[2:9, :5], chunks=(2, 3), shards=(4, 6),
         fill_value=7)
    make("sharded/F", sample(">f4", (11, 9)), np.s_[:, 4:], chunks=(3, 2), shards=(6, 4),
         order="F", compressors={"name": "blosc", "configuration": {"cname": "lz4"}})
    make("deep/er/still/arr", sample("<f8", (4,)), chunks=(2,), attributes={"k": [1, "v"]})
    g.create_group("explicit", attributes={"spam": "ham", "eggs": 42})
    g["explicit"].create_array("child", shape=(3,), dtype="u1", chunks=(2,))[:] = [1, 2, 3]
    arrays["explicit/child"] = (np.array([1, 2, 3], "u1"), {})

    out = base / "read"
    out.mkdir()
    groups = ["", "explicit", "deep", "deep/er/still"]
    report = run_peer(zarr2_python, "peer_read.py", root, out, *arrays, *groups)
    return {"root": root, "arrays": arrays, "report": report, "out": out}


@pytest.mark.parametrize("category", ["dtypes/C", "dtypes/F", "fills", "filters", "layout",
                                      "sharded", "deep", "explicit"])
def test_zarr2_reads_zarrx(zarrx_written: dict[str, Any], category: str) -> None:
    report = zarrx_written["report"]
    paths = [p for p in zarrx_written["arrays"] if p.startswith(category + "/")]
    assert paths
    for path in paths:
        data, kwargs = zarrx_written["arrays"][path]
        node = report[path]
        assert node["type"] == "array", path
        got = np.load(zarrx_written["out"] / node["file"])
        assert_same(got, data, path)
        meta = zarrx.open_array(zarrx_written["root"], path=path).metadata
        assert node["dtype"] == meta.stored_dtype.str, path
        assert node["order"] == kwargs.get("order", "C"), path
        if "fill_value" in kwargs:
            fill = np.asarray(kwargs["fill_value"], dtype=meta.dtype)
            little = fill.dtype.newbyteorder("<") if fill.dtype.byteorder != "|" else fill.dtype
            expected_fill = {"dtype": little.str, "hex": fill.astype(little).tobytes().hex()}
            assert node["fill_value"] == expected_fill, path
        assert {k: v for k, v in node["attrs"].items() if k != "filters"} == dict(
            kwargs.get("attributes", {})), path
        if "filters" in kwargs:
            assert node["filters"] == [f.get_config() for f in kwargs["filters"]], path


def test_zarr2_reads_zarrx_compressors(zarrx_written: dict[str, Any]) -> None:
    report = zarrx_written["report"]
    ids = {report[p]["compressor"]["id"] for p in report
           if report[p]["type"] == "array" and report[p]["compressor"]}
    assert ids == {"gzip", "blosc", "zstd", "zlib", "bz2", "lz4", "lzma"}


def test_zarr2_reads_zarrx_groups(zarrx_written: dict[str, Any]) -> None:
    report = zarrx_written["report"]
    assert report[""]["type"] == "group"
    assert report[""]["attrs"] == {"made by": "zarrx"}
    assert report[""]["groups"] == ["deep", "dtypes", "explicit", "fills", "filters", "layout",
                                    "sharded"]
    assert report["explicit"] == {"type": "group", "arrays": ["child"], "groups": [],
                                  "attrs": {"spam": "ham", "eggs": 42}}
    assert report["deep"]["groups"] == ["er"]  # implicit groups, no documents
    assert report["deep/er/still"]["arrays"] == ["arr"]
    root = Path(zarrx_written["root"])
    assert not (root / "meta/root/deep.group.json").exists()
    assert json.loads((root / "zarr.json").read_text()) == {
        "zarr_format": v3_draft.CORE_URI, "metadata_encoding": v3_draft.CORE_URI,
        "metadata_key_suffix": ".json", "extensions": [],
    }


def test_zarr2_reads_zarrx_with_custom_suffix(zarr2_python: str, tmp_path: Path) -> None:
    """zarrx adopts the entry point it finds (here a ``.xml``-free ``.jsn`` suffix)."""
    root = tmp_path / "store"
    root.mkdir()
    entry = {"zarr_format": v3_draft.CORE_URI, "metadata_encoding": v3_draft.CORE_URI,
             "metadata_key_suffix": ".jsn", "extensions": []}
    (root / "zarr.json").write_text(json.dumps(entry))
    data = sample(">i4", (5, 5))
    zarrx.create_array(str(root), name="g/a", shape=data.shape, dtype=data.dtype, chunks=(2, 2),
                       zarr_format="3-draft")[...] = data
    assert (root / "meta/root/g/a.array.jsn").is_file()
    out = tmp_path / "read"
    out.mkdir()
    report = run_peer(zarr2_python, "peer_read.py", root, out, "g/a", "g")
    assert_same(np.load(out / report["g/a"]["file"]), data, "g/a")
    assert report["g"]["arrays"] == ["a"]


def test_zarrx_updates_zarr2_placeholder_arrays_in_a_fresh_process(
    zarr2_python: str, peer_written: dict[str, Any], tmp_path: Path
) -> None:
    """A fresh interpreter (numcodecs not yet imported, so the chunk threads load it on
    first use, at once) writes into zarr-python 2.18's ``|O``/``|S`` arrays; zarr-python
    2.18 reads what zarrx wrote."""
    import subprocess
    import sys

    root = tmp_path / "store"
    shutil.copytree(peer_written["store"]["root"], root)
    script = (
        "import sys, numpy as np, zarrx\n"
        "g = zarrx.open_group(sys.argv[1], mode='r+')\n"
        "g['placeholder/text'][2:] = np.array(['new', '\\u00e9', 'z'], dtype=object)\n"
        "g['placeholder/objects'][1:] = np.array([b'a', b'', b'\\x00'], dtype=object)\n"
        "g['placeholder/bytes'][::2] = np.array([b'Q', b'RR', b'SSSSS'])\n"
    )
    result = subprocess.run([sys.executable, "-c", script, str(root)], capture_output=True,
                            text=True, check=False)
    assert result.returncode == 0, result.stderr
    out = tmp_path / "read"
    out.mkdir()
    paths = ["placeholder/text", "placeholder/objects", "placeholder/bytes"]
    report = run_peer(zarr2_python, "peer_read.py", root, out, *paths)
    got = {p: np.load(out / report[p]["file"], allow_pickle=True).tolist() for p in paths}
    assert got["placeholder/text"] == ["x", "y\u00ff", "new", "\u00e9", "z"]
    assert got["placeholder/objects"] == [b"x", b"a", b"", b"\x00"]
    assert got["placeholder/bytes"] == [b"Q", b"bb", b"RR", b"dddd", b"SSSSS"]
