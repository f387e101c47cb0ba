"""Golden fixtures: stores the peers wrote once, decoded by zarrx on every run, offline.

``tests/fixtures/<peer>/<format>/`` holds stores written by zarr-python 2.18.7,
zarr-python 3.1.6 and tensorstore, a ``manifest.json`` of metadata facts and, per array, an
``.npy`` file the generator saved from the NumPy array it handed to the peer (see
``tests/fixtures/README.md``). Nothing here imports a peer, and no expected value comes
from zarrx.

- every array reads bit for bit as its ``.npy`` (NaN payloads and signed zeros included),
  with the shape, chunks, shards, data type, fill value and attributes the manifest states;
- every hierarchy has exactly the groups and arrays the manifest lists, with their
  attributes; a consolidated store opens from its consolidated metadata alone;
- every array written back by zarrx in the same format (the fixture's metadata documents,
  zarrx's chunks) reads back equal, and zarrx writes no chunk key the peer did not.
"""

from __future__ import annotations

import functools
import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import zarrx
from zarrx.storage import LocalStore

FIXTURES = Path(__file__).parent / "fixtures"
MANIFESTS = sorted(FIXTURES.glob("*/*/manifest.json"))
#: Files that are metadata documents in v2 and v3 stores (the draft's live under ``meta/``).
METADATA_NAMES = {"zarr.json", ".zarray", ".zgroup", ".zattrs", ".zmetadata"}


@functools.cache
def _load(manifest: Path) -> dict[str, Any]:
    return json.loads(manifest.read_text())


def _cases() -> tuple[list[Any], list[Any]]:
    arrays, stores = [], []
    for manifest in MANIFESTS:
        fixture = manifest.parent
        label = fixture.relative_to(FIXTURES).as_posix()
        for store_name, store in _load(manifest)["stores"].items():
            if "" in store["groups"]:  # tensorstore's stores are one array at the root
                stores.append(pytest.param(fixture, store_name, id=f"{label}/{store_name}"))
            for path in store["arrays"]:
                arrays.append(pytest.param(fixture, store_name, path,
                                           id=f"{label}/{store_name}/{path}".rstrip("/")))
    return arrays, stores


ARRAYS, STORES = _cases()


def _facts(fixture: Path, store: str, path: str | None = None) -> tuple[dict, dict]:
    manifest = _load(fixture / "manifest.json")
    entry = manifest["stores"][store]
    return manifest, (entry if path is None else entry["arrays"][path])


def _expected(fixture: Path, facts: dict[str, Any]) -> np.ndarray:
    return np.load(fixture / facts["expected"], allow_pickle=False)


def _stored_dtype(facts: dict[str, Any]) -> np.dtype | None:
    """The stored type in NumPy's notation (byte order included); None for vlen kinds."""
    spec = facts["dtype"]
    if spec in ("vlen-utf8", "vlen-bytes"):
        return None
    if isinstance(spec, list):
        return np.dtype([tuple(field) for field in spec])
    return np.dtype(spec)


def assert_same(actual: Any, expected: np.ndarray, kind: str) -> None:
    """Bit for bit: the same shape and, for fixed-size types, the same bytes in native
    order (so NaN payloads, signed zeros and NaT count); vlen values compare as Python
    objects, with the type zarrx promises (StringDType text, object bytes)."""
    actual = np.asarray(actual)
    assert actual.shape == expected.shape
    if kind == "vlen-utf8":
        assert actual.dtype.kind == "T", actual.dtype
        assert actual.tolist() == expected.tolist()
        return
    if kind == "vlen-bytes":
        assert actual.dtype == object
        assert all(isinstance(v, bytes) for v in actual.ravel())
        assert actual.tolist() == expected.tolist()
        return
    native = expected.dtype.newbyteorder("=")
    assert actual.dtype == native, (actual.dtype, native)
    got = np.ascontiguousarray(actual).tobytes()
    want = np.ascontiguousarray(expected.astype(native)).tobytes()
    if got != want:
        mismatch = actual != expected.astype(native)
        raise AssertionError(f"{int(np.sum(mismatch))} elements differ at "
                             f"{np.argwhere(mismatch)[:5].tolist()}:\n{actual}\n{expected}")


def _assert_fill(array: zarrx.Array, facts: dict[str, Any]) -> None:
    kind, fill = facts["dtype"], facts["fill_value"]
    if kind in ("vlen-utf8", "vlen-bytes"):
        empty = "" if kind == "vlen-utf8" else b""
        if fill is None:  # v2 null: zarrx holds the empty element (tests/interop/draft)
            assert array.fill_value == empty
        else:
            assert array.fill_value == (fill if kind == "vlen-utf8" else bytes.fromhex(fill))
    elif facts["fill_value_hex"] is None:
        # fill_value null (v2) or a default the peer chose: zarrx, as zarr-python 3, holds
        # the type's zero
        value = np.asarray(array.fill_value, dtype=array.dtype)
        assert value.tobytes() == bytes(array.dtype.itemsize)
    else:
        value = np.asarray(array.fill_value, dtype=array.dtype)
        assert value.tobytes().hex() == facts["fill_value_hex"], (array.fill_value, fill)


@pytest.mark.parametrize(("fixture", "store", "path"), ARRAYS)
def test_array_reads_as_the_peer_wrote_it(fixture: Path, store: str, path: str) -> None:
    manifest, facts = _facts(fixture, store, path)
    array = zarrx.open_array(str(fixture / store), path=path or None, mode="r")
    assert array.metadata.zarr_format == manifest["zarr_format"]
    assert array.shape == tuple(facts["shape"])
    assert array.chunks == tuple(facts["chunks"])
    assert array.shards == (None if facts["shards"] is None else tuple(facts["shards"]))
    stored = _stored_dtype(facts)
    if stored is not None:
        assert array.dtype == stored.newbyteorder("="), (array.dtype, stored)
    _assert_fill(array, facts)
    assert array.attrs.asdict() == facts["attributes"]
    assert_same(array[...], _expected(fixture, facts), facts["dtype"])


@pytest.mark.parametrize(("fixture", "store", "path"), ARRAYS)
def test_array_partial_reads(fixture: Path, store: str, path: str) -> None:
    """A selection crossing chunk edges (every other element from index 1 on each axis)
    reads as the same selection of the expected array: the partial-chunk path."""
    _, facts = _facts(fixture, store, path)
    expected = _expected(fixture, facts)
    if expected.ndim == 0:
        selection: Any = ()
    else:
        selection = tuple(slice(1, None, 2) for _ in expected.shape)
    array = zarrx.open_array(str(fixture / store), path=path or None, mode="r")
    assert_same(array[selection], expected[selection], facts["dtype"])


@pytest.mark.parametrize(("fixture", "store"), STORES)
def test_hierarchy_members_and_attributes(fixture: Path, store: str) -> None:
    manifest, facts = _facts(fixture, store)
    root = zarrx.open_group(str(fixture / store), mode="r")
    assert root.metadata.zarr_format == manifest["zarr_format"]
    members = dict(root.members(max_depth=None))
    groups = {p: n for p, n in members.items() if isinstance(n, zarrx.Group)}
    arrays = {p: n for p, n in members.items() if isinstance(n, zarrx.Array)}
    assert sorted(arrays) == sorted(facts["arrays"])
    assert sorted(groups) == sorted(p for p in facts["groups"] if p)
    assert root.attrs.asdict() == facts["groups"][""]["attributes"]
    for path, group in groups.items():
        assert group.attrs.asdict() == facts["groups"][path]["attributes"], path
        # the draft's implicit groups (no document, only something below them)
        implicit = getattr(group.metadata, "implicit", False)
        assert implicit is facts["groups"][path]["implicit"], path
    for path, array in arrays.items():
        assert array.attrs.asdict() == facts["arrays"][path]["attributes"], path
        assert array.shape == tuple(facts["arrays"][path]["shape"]), path


class _CountingStore(LocalStore):
    """Records every listing, so a test can tell metadata came from one document."""

    def __init__(self, root: str) -> None:
        super().__init__(root, read_only=True)
        self.listed: list[str] = []

    def list_dir(self, prefix: str) -> Any:
        self.listed.append(prefix)
        return super().list_dir(prefix)

    def list_prefix(self, prefix: str) -> Any:
        self.listed.append(prefix)
        return super().list_prefix(prefix)


CONSOLIDATED = [p for p in STORES if _facts(p.values[0], p.values[1])[1]["consolidated"]]


@pytest.mark.parametrize(("fixture", "store"), CONSOLIDATED)
def test_consolidated_metadata(fixture: Path, store: str) -> None:
    """The consolidated document lists every node; walking the hierarchy lists nothing."""
    _, facts = _facts(fixture, store)
    counting = _CountingStore(str(fixture / store))
    root = zarrx.open_group(counting, mode="r")
    assert root.consolidated is not None
    assert sorted(root.consolidated) == sorted([*facts["arrays"], *(p for p in facts["groups"]
                                                                       if p)])
    members = dict(root.members(max_depth=None))
    assert sorted(members) == sorted(root.consolidated)
    for path, node in members.items():
        want = facts["arrays"].get(path) or facts["groups"][path]
        assert node.attrs.asdict() == want["attributes"], path
    assert counting.listed == []


def _split_keys(root: Path) -> tuple[frozenset[str], frozenset[str]]:
    """A store's keys: (metadata documents, chunks or shards)."""
    metadata, chunks = set(), set()
    for p in root.rglob("*"):
        if p.is_file():
            rel = p.relative_to(root).as_posix()
            is_doc = p.name in METADATA_NAMES or rel.startswith("meta/")
            (metadata if is_doc else chunks).add(rel)
    return frozenset(metadata), frozenset(chunks)


#: The fixtures never change during a run: list each store once.
_fixture_keys = functools.cache(_split_keys)


def _metadata_only_copy(src: Path, dst: Path) -> None:
    """Copy a store's metadata documents (no chunks): zarrx then writes the chunks."""
    for rel in _fixture_keys(src)[0]:
        (dst / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src / rel, dst / rel)


def _as_written(expected: np.ndarray, kind: str) -> np.ndarray:
    if kind == "vlen-utf8":
        return expected.astype(np.dtypes.StringDType())
    if kind == "vlen-bytes":
        return np.array(expected.tolist() if expected.ndim else [expected.item()],
                        dtype=object).reshape(expected.shape)
    return expected


@pytest.mark.parametrize(("fixture", "store", "path"), ARRAYS)
def test_zarrx_writes_the_same_format_back(
    fixture: Path, store: str, path: str, tmp_path: Path
) -> None:
    """zarrx writes every fixture array in its own format and codecs (the peer's metadata
    documents, copied), then reads it back equal. Every chunk key zarrx writes is one the
    peer wrote too (zarrx skips chunks equal to the fill value, so it may write fewer)."""
    manifest, facts = _facts(fixture, store, path)
    expected = _expected(fixture, facts)
    copy = tmp_path / store
    _metadata_only_copy(fixture / store, copy)
    array = zarrx.open_array(str(copy), path=path or None, mode="r+")
    assert array.metadata.zarr_format == manifest["zarr_format"]
    array[...] = _as_written(expected, facts["dtype"])
    again = zarrx.open_array(str(copy), path=path or None, mode="r")
    assert_same(again[...], expected, facts["dtype"])
    written = _split_keys(copy)[1]
    peer = _fixture_keys(fixture / store)[1]
    assert written <= peer, sorted(written - peer)
    if expected.size:
        assert written, "zarrx wrote no chunk"
