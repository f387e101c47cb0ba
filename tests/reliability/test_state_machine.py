"""A rule-based state machine drives hierarchies (Zarr v3 and v2, in a memory or local
store) through creating groups and arrays (random small shapes, chunks, data types,
codecs, sharding), writes of every selection kind (basic, oindex, vindex, blocks, masks),
resize, append, erasing members, attribute updates and reopening, against a model: a
dict of paths holding NumPy arrays and attribute dicts. After every step each array reads
back equal to its model and the hierarchy lists exactly the model's nodes."""

from __future__ import annotations

import itertools
import math
import tempfile

import numpy as np
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

import zarrx
from zarrx.errors import ZarrxError
from zarrx.storage import LocalStore, MemoryStore

NAMES = ["a", "b", "c", "d1"]
DTYPES = ["bool", "i1", "u2", "i4", "i8", "f4", "f8", "str"]
FILLS = {
    "bool": [False, True], "i1": [0, -3], "u2": [0, 7], "i4": [0, -1], "i8": [0, 2**40],
    "f4": [0.0, float("nan"), 1.5], "f8": [0.0, float("nan"), -2.25], "str": ["", "z"],
}
V3_COMPRESSORS = [
    None,
    [{"name": "zstd", "configuration": {"level": 1, "checksum": False}}],
    [{"name": "gzip", "configuration": {"level": 1}}],
    [{"name": "blosc", "configuration": {"cname": "lz4", "clevel": 3}}],
    [{"name": "crc32c"}],
    [{"name": "zstd", "configuration": {"level": 1, "checksum": False}}, {"name": "crc32c"}],
]
V2_COMPRESSORS = V3_COMPRESSORS[:5]
ATTR_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=5)
    | st.floats(allow_nan=False, allow_infinity=False, width=32),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner,
                                                                 max_size=3),
    max_leaves=6,
)


def _numpy_dtype(name: str) -> np.dtype:
    return np.dtypes.StringDType() if name == "str" else np.dtype(name)


def _values(seed: int, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """An ndarray (0-d too, never a scalar) of ``shape`` with a little of everything."""
    rng = np.random.default_rng(seed)
    raw = np.asarray(rng.integers(-9, 10, size=shape)).reshape(-1)
    if dtype.kind == "T":
        out = np.array([f"v{v}" if v % 3 else "" for v in raw], dtype=dtype)
    elif dtype.kind == "b":
        out = raw > 0
    elif dtype.kind == "u":
        out = np.abs(raw).astype(dtype)
    else:
        out = raw.astype(dtype)
        if dtype.kind == "f" and out.size:
            out[rng.integers(0, out.size)] = np.nan  # NaN is data too
    return out.reshape(shape)


def _assert_equal(got: np.ndarray, expected: np.ndarray, where: str) -> None:
    assert got.shape == expected.shape, (where, got.shape, expected.shape)
    assert got.dtype == expected.dtype, (where, got.dtype, expected.dtype)
    np.testing.assert_array_equal(got, expected, err_msg=where)


class _Node:
    def __init__(self, kind: str, attrs: dict | None = None, data: np.ndarray | None = None,
                 fill=None, chunks: tuple[int, ...] = ()) -> None:
        self.kind = kind
        self.attrs = dict(attrs or {})
        self.data = data
        self.fill = fill
        self.chunks = chunks


class HierarchyMachine(RuleBasedStateMachine):
    tmp_root = None  # set by the test: where local stores go
    counter = itertools.count()

    # -- set-up ------------------------------------------------------------------------------
    @initialize(fmt=st.sampled_from([3, 2]), local=st.booleans(), data=st.data(),
                seed=st.integers(0, 2**16))
    def start(self, fmt, local, data, seed):
        self.fmt = fmt
        self.root_dir = None
        if local:
            self.root_dir = str(self.tmp_root / f"store-{next(self.counter)}")
            self.store = LocalStore(self.root_dir)
        else:
            self.store = MemoryStore()
        zarrx.create_group(self.store, zarr_format=fmt, attributes={"root": True})
        self.model: dict[str, _Node] = {"": _Node("group", {"root": True})}
        self.handles: dict[str, object] = {}
        # every run starts with an array (rules may then be switched off at random)
        self._create_array(data, "", "a", seed)

    # -- helpers -------------------------------------------------------------------------------
    def _paths(self, kind: str) -> list[str]:
        return sorted(p for p, n in self.model.items() if n.kind == kind)

    def _array(self, path: str):
        handle = self.handles.get(path)
        if handle is None:
            handle = zarrx.open_array(self.store, path=path or None, mode="r+")
            self.handles[path] = handle
        return handle

    def _group(self, path: str):
        return zarrx.open_group(self.store, path=path or None, mode="r+")

    @staticmethod
    def _join(parent: str, name: str) -> str:
        return f"{parent}/{name}" if parent else name

    def _pick_array(self, data):
        path = data.draw(st.sampled_from(self._paths("array")), label="array")
        return path, self.model[path], self._array(path)

    def has_arrays(self):
        return any(n.kind == "array" for n in self.model.values())

    # -- creation ------------------------------------------------------------------------------
    @rule(data=st.data(), name=st.sampled_from(NAMES))
    def create_group(self, data, name):
        parent = data.draw(st.sampled_from(self._paths("group")), label="parent")
        path = self._join(parent, name)
        attrs = data.draw(st.dictionaries(st.sampled_from("xyz"), ATTR_VALUES, max_size=2))
        if path in self.model:
            with pytest.raises(ZarrxError):
                self._group(parent).create_group(name, attributes=attrs)
            return
        self._group(parent).create_group(name, attributes=attrs)
        self.model[path] = _Node("group", attrs)

    @rule(data=st.data(), name=st.sampled_from(NAMES), seed=st.integers(0, 2**16))
    def create_array(self, data, name, seed):
        parent = data.draw(st.sampled_from(self._paths("group")), label="parent")
        self._create_array(data, parent, name, seed)

    def _create_array(self, data, parent, name, seed):
        path = self._join(parent, name)
        ndim = data.draw(st.sampled_from([1, 1, 2, 2, 3, 0]), label="ndim")
        shape = tuple(data.draw(st.lists(st.integers(0, 9), min_size=ndim, max_size=ndim)))
        chunks = tuple(data.draw(st.integers(1, 5)) for _ in shape)
        dtype_name = data.draw(st.sampled_from(DTYPES), label="dtype")
        fill = data.draw(st.sampled_from(FILLS[dtype_name]), label="fill")
        kwargs = {"shape": shape, "dtype": _numpy_dtype(dtype_name) if dtype_name == "str"
                  else dtype_name, "fill_value": fill,
                  "order": data.draw(st.sampled_from(["C", "F"]), label="order")}
        if self.fmt == 3:
            kwargs["compressors"] = data.draw(st.sampled_from(V3_COMPRESSORS), label="codecs")
            if dtype_name != "str" and data.draw(st.booleans(), label="big endian"):
                kwargs["serializer"] = {"name": "bytes", "configuration": {"endian": "big"}}
            if ndim and data.draw(st.booleans(), label="sharded"):
                factors = [data.draw(st.integers(1, 3)) for _ in shape]
                kwargs["shards"] = tuple(c * f for c, f in zip(chunks, factors))
        else:
            kwargs["compressors"] = data.draw(st.sampled_from(V2_COMPRESSORS), label="codecs")
        kwargs["chunks"] = chunks
        if path in self.model:
            with pytest.raises(ZarrxError):
                self._group(parent).create_array(name, **kwargs)
            return
        array = self._group(parent).create_array(name, **kwargs)
        assert array.shape == shape
        assert array.chunks == chunks  # the inner chunks when sharded
        dtype = _numpy_dtype(dtype_name)
        model = np.full(shape, fill, dtype=dtype)
        if math.prod(shape) and data.draw(st.booleans(), label="initial data"):
            model = _values(seed, shape, dtype)
            array[...] = model
        self.model[path] = _Node("array", {}, model, fill, chunks)
        self.handles[path] = array

    # -- writes -------------------------------------------------------------------------------
    def _value_for(self, node, shape, seed, data):
        if data.draw(st.booleans(), label="scalar value"):
            return _values(seed, (), node.data.dtype)[()]
        return _values(seed, shape, node.data.dtype)

    @precondition(has_arrays)
    @rule(data=st.data(), seed=st.integers(0, 2**16))
    def write_basic(self, data, seed):
        _, node, array = self._pick_array(data)
        selection = []
        for size in node.data.shape:
            if size and data.draw(st.booleans()):
                selection.append(data.draw(st.integers(-size, size - 1)))
            else:
                bound = st.none() | st.integers(-size - 2, size + 2)
                step = data.draw(st.sampled_from([None, 1, 2, 3, -1, -2]))
                selection.append(slice(data.draw(bound), data.draw(bound), step))
        selection = tuple(selection)
        value = self._value_for(node, np.shape(node.data[selection]), seed, data)
        array[selection] = value
        node.data[selection] = value

    @precondition(has_arrays)
    @rule(data=st.data(), seed=st.integers(0, 2**16))
    def write_oindex(self, data, seed):
        _, node, array = self._pick_array(data)
        if node.data.ndim == 0:
            return
        selection = []
        for size in node.data.shape:
            if size and data.draw(st.booleans()):
                indices = data.draw(st.lists(st.integers(0, size - 1), min_size=1,
                                             max_size=size, unique=True))
                negative = data.draw(st.booleans())
                selection.append(np.array([i - size if negative else i for i in indices]))
            else:
                selection.append(slice(data.draw(st.integers(0, size)), None))
        value = self._value_for(node, node.data[np.ix_(*[
            np.arange(s)[sel] if isinstance(sel, slice) else sel
            for s, sel in zip(node.data.shape, selection)])].shape, seed, data)
        array.oindex[tuple(selection)] = value
        node.data[np.ix_(*[np.arange(s)[sel] if isinstance(sel, slice) else sel
                           for s, sel in zip(node.data.shape, selection)])] = value

    @precondition(has_arrays)
    @rule(data=st.data(), seed=st.integers(0, 2**16))
    def write_vindex(self, data, seed):
        _, node, array = self._pick_array(data)
        shape = node.data.shape
        if not shape or not math.prod(shape):
            return
        points = data.draw(st.lists(st.tuples(*[st.integers(0, s - 1) for s in shape]),
                                    min_size=1, max_size=6, unique=True))
        selection = tuple(np.array(axis) for axis in zip(*points))
        value = self._value_for(node, (len(points),), seed, data)
        array.vindex[selection] = value
        node.data[selection] = value

    @precondition(has_arrays)
    @rule(data=st.data(), seed=st.integers(0, 2**16))
    def write_blocks(self, data, seed):
        _, node, array = self._pick_array(data)
        shape = node.data.shape
        if not shape or not math.prod(shape):
            return
        block_selection, region = [], []
        for size, chunk in zip(shape, node.chunks):
            n_blocks = -(-size // chunk)
            if data.draw(st.booleans()):
                b = data.draw(st.integers(0, n_blocks - 1))
                block_selection.append(b)
                region.append(slice(b * chunk, min((b + 1) * chunk, size)))
            else:
                lo = data.draw(st.integers(0, n_blocks - 1))
                hi = data.draw(st.integers(lo + 1, n_blocks))
                block_selection.append(slice(lo, hi))
                region.append(slice(lo * chunk, min(hi * chunk, size)))
        region_shape = tuple(s.stop - s.start for s in region)
        # an int block index keeps its axis (blocks are always sub-arrays)
        value = self._value_for(node, region_shape, seed, data)
        array.blocks[tuple(block_selection)] = value
        node.data[tuple(region)] = value

    @precondition(has_arrays)
    @rule(data=st.data(), seed=st.integers(0, 2**16))
    def write_mask(self, data, seed):
        _, node, array = self._pick_array(data)
        if node.data.ndim == 0:
            return
        mask = np.random.default_rng(seed).random(node.data.shape) < 0.4
        value = self._value_for(node, (int(mask.sum()),), seed + 1, data)
        array[mask] = value
        node.data[mask] = value

    # -- shape changes -------------------------------------------------------------------------
    @precondition(has_arrays)
    @rule(data=st.data())
    def resize(self, data):
        _, node, array = self._pick_array(data)
        new = tuple(data.draw(st.integers(0, 12)) for _ in node.data.shape)
        array.resize(new)
        grown = np.full(new, node.fill, dtype=node.data.dtype)
        overlap = tuple(slice(0, min(a, b)) for a, b in zip(new, node.data.shape))
        grown[overlap] = node.data[overlap]
        node.data = grown

    @precondition(has_arrays)
    @rule(data=st.data(), seed=st.integers(0, 2**16))
    def append(self, data, seed):
        _, node, array = self._pick_array(data)
        if node.data.ndim == 0:
            return
        axis = data.draw(st.integers(0, node.data.ndim - 1))
        shape = list(node.data.shape)
        shape[axis] = data.draw(st.integers(1, 4))
        extra = _values(seed, tuple(shape), node.data.dtype)
        if data.draw(st.booleans()):  # numpy's negative axes
            axis -= node.data.ndim
        assert array.append(extra, axis=axis) == np.concatenate([node.data, extra], axis).shape
        node.data = np.concatenate([node.data, extra], axis=axis)

    # -- erase ---------------------------------------------------------------------------------
    @precondition(lambda self: len(self.model) > 1)
    @rule(data=st.data())
    def erase(self, data):
        path = data.draw(st.sampled_from(sorted(p for p in self.model if p)), label="erase")
        parent, _, name = path.rpartition("/")
        del self._group(parent)[name]
        for p in [p for p in self.model if p == path or p.startswith(path + "/")]:
            del self.model[p]
            self.handles.pop(p, None)
        with pytest.raises(ZarrxError):
            zarrx.open(self.store, path=path, mode="r")

    @rule(data=st.data(), name=st.sampled_from(NAMES))
    def erase_missing(self, data, name):
        parent = data.draw(st.sampled_from(self._paths("group")), label="parent")
        if self._join(parent, name) not in self.model:
            with pytest.raises(ZarrxError):
                del self._group(parent)[name]

    # -- attributes ----------------------------------------------------------------------------
    @rule(data=st.data(), key=st.sampled_from(["k", "m", "n"]), value=ATTR_VALUES)
    def update_attributes(self, data, key, value):
        path = data.draw(st.sampled_from(sorted(self.model)), label="node")
        node = self.model[path]
        handle = self._array(path) if node.kind == "array" else self._group(path)
        how = data.draw(st.sampled_from(["set", "update", "delete"]))
        if how == "set":
            handle.attrs[key] = value
            node.attrs[key] = value
        elif how == "update":
            handle.attrs.update({key: value, "u": 1})
            node.attrs.update({key: value, "u": 1})
        elif key in node.attrs:
            del handle.attrs[key]
            del node.attrs[key]
        else:
            with pytest.raises(KeyError):
                del handle.attrs[key]

    # -- reopening -----------------------------------------------------------------------------
    @rule(store_too=st.booleans())
    def reopen(self, store_too):
        """Forget every handle (and maybe, for a local store, the store object too)."""
        self.handles.clear()
        if store_too and self.root_dir is not None:
            self.store = LocalStore(self.root_dir)

    # -- checks --------------------------------------------------------------------------------
    @invariant()
    def hierarchy_matches(self):
        if not hasattr(self, "model"):
            return
        root = zarrx.open_group(self.store, mode="r")
        assert root.zarr_format == self.fmt
        listed = {name: ("array" if isinstance(node, zarrx.Array) else "group")
                  for name, node in root.members(max_depth=None)}
        expected = {p: n.kind for p, n in self.model.items() if p}
        assert listed == expected
        assert dict(root.attrs) == self.model[""].attrs

    @invariant()
    def arrays_match(self):
        if not hasattr(self, "model"):
            return
        for path, node in self.model.items():
            if node.kind == "group":
                if path:
                    assert dict(zarrx.open_group(self.store, path=path).attrs) == node.attrs
                continue
            fresh = zarrx.open_array(self.store, path=path, mode="r")
            assert fresh.zarr_format == self.fmt
            _assert_equal(fresh[...], node.data, path)
            assert dict(fresh.attrs) == node.attrs, path
            handle = self.handles.get(path)
            if handle is not None:  # the writing handle sees the same
                assert handle.shape == node.data.shape
                _assert_equal(handle[...], node.data, f"{path} (handle)")


def test_hierarchy_state_machine(tmp_path, monkeypatch):
    # local stores, and the lock files of their partial writes (kept in the temporary
    # directory), go under tmp_path; no example database is written either
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    HierarchyMachine.tmp_root = tmp_path
    run_state_machine_as_test(
        HierarchyMachine,
        settings=settings(max_examples=80, stateful_step_count=40, deadline=None, database=None,
                          suppress_health_check=[HealthCheck.too_slow,
                                                 HealthCheck.filter_too_much]),
    )
