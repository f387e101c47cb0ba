"""``StoreTests``: the store contract as a reusable pytest base class.

Subclass it in a test module (the name must start with ``Test``) and provide:

- a ``store`` fixture returning a new, empty, writeable store;
- optionally :meth:`StoreTests.open_read_only`, a read-only view of the same data
  (the default calls ``store.with_read_only(True)``).

Every store zarrx ships and every plugin store runs these tests, so they are the
executable form of :mod:`zarrx.abc.store`.
"""

from __future__ import annotations

import builtins
import threading
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from zarrx.abc.store import ByteRange, RangeReader, Snapshot, Store, Value
from zarrx.errors import InvalidKeyError, ReadOnlyError
from zarrx.stores.keys import LOCK_PREFIX, TEMP_PREFIX
from zarrx.testing.rounds import RANGES, VALUE, RoundTests, expected
from zarrx.testing.splices import SpliceTests

# -- key strategies -------------------------------------------------------------------

_SEGMENT = st.text(alphabet="abcxyz019_-.", min_size=1, max_size=8).filter(
    lambda s: s not in (".", "..")
)


def valid_keys() -> st.SearchStrategy[str]:
    """Keys every store must accept (portable names: lowercase, digits, ``_-.``)."""
    return st.lists(_SEGMENT, min_size=1, max_size=4).map("/".join)


@st.composite
def invalid_keys(draw: Any) -> str:
    """A valid key with one defect injected: every store must refuse it."""
    segments: list[str] = draw(st.lists(_SEGMENT, min_size=1, max_size=4))
    i = draw(st.integers(0, len(segments) - 1))
    defect = draw(
        st.sampled_from(
            ["leading", "trailing", "empty", ".", "..", "\\", "control", "drive", "temp"]
        )
    )
    if defect in (".", ".."):
        segments.insert(i, defect)
    elif defect == "empty":
        segments.insert(i, "")
    elif defect == "drive":
        segments[i] = draw(st.sampled_from("CDcz")) + ":" + segments[i]
    elif defect == "temp":
        segments[i] = TEMP_PREFIX + segments[i]
    elif defect in ("\\", "control"):
        char = "\\" if defect == "\\" else draw(st.sampled_from([*map(chr, range(32)), "\x7f"]))
        at = draw(st.integers(0, len(segments[i])))
        segments[i] = segments[i][:at] + char + segments[i][at:]
    key = "/".join(segments)
    if defect == "leading":
        key = "/" + key
    elif defect == "trailing":
        key += "/"
    return key


BAD_KEYS = [
    "",
    "/",
    "/a",
    "a/",
    "a//b",
    ".",
    "..",
    "../x",
    "a/../../x",
    "./a",
    "a/./b",
    "a\\b",
    "..\\x",
    "a\x00b",
    "a\nb",
    "C:",
    "C:/x",
    "c:x",
    "a/D:b",
    TEMP_PREFIX + "123",
    "a/" + TEMP_PREFIX + "x",
    LOCK_PREFIX + "zarr.json",
    "a/" + LOCK_PREFIX + "0",
]
BAD_PREFIXES = ["/", "a", "a//", "/a/", "../", "a/../", "./", "a\\b/", "C:/", "a\x00/"]

_VALUE, _RANGES = VALUE, RANGES

_hypothesis = settings(
    max_examples=40,
    deadline=None,
    # one store per test, emptied by each example; one test body shared by subclasses
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.differing_executors],
)


class CountingStore(Store):
    """Any store, with a log of the calls made to it: ``calls`` holds ``(method, argument)``
    pairs, where a ``get_many`` batch is one call (one round trip) with its list of keys.

    >>> from zarrx.storage import MemoryStore
    >>> store = CountingStore(MemoryStore())
    >>> store.set("a/b", b"1"); store.get_many([("a/b", None)]); store.list_dir("a/")
    [b'1']
    (['a/b'], [])
    >>> store.counts()
    {'set': 1, 'get_many': 1, 'list_dir': 1}
    """

    def __init__(self, inner: Store) -> None:
        super().__init__(read_only=inner.read_only)
        self.inner = inner
        self.batched_reads = inner.batched_reads
        self.read_latency_bytes = inner.read_latency_bytes
        self.atomic_updates = inner.atomic_updates  # its updates are the inner store's
        self.calls: list[tuple[str, Any]] = []

    def counts(self) -> dict[str, int]:
        """Calls by method, in the order first seen."""
        out: dict[str, int] = {}
        for method, _ in self.calls:
            out[method] = out.get(method, 0) + 1
        return out

    def keys_read(self) -> int:
        """Keys read by ``get``, ``get_many`` and ``read_rounds`` together (one per
        requested key or reader)."""
        return sum(len(arg) if method in ("get_many", "read_rounds") else 1
                   for method, arg in self.calls if method in ("get", "get_many", "read_rounds"))

    def get(self, key: str, byte_range: ByteRange | None = None) -> bytes | None:
        self.calls.append(("get", key))
        return self.inner.get(key, byte_range)

    def get_many(self, requests: Sequence[tuple[str, ByteRange | None]]) -> list[bytes | None]:
        requests = list(requests)
        self.calls.append(("get_many", [key for key, _ in requests]))
        return self.inner.get_many(requests)

    def read_rounds(self, reads: Sequence[tuple[str, RangeReader]]) -> None:
        reads = list(reads)
        self.calls.append(("read_rounds", [key for key, _ in reads]))
        self.inner.read_rounds(reads)

    def set(self, key: str, value: bytes | bytearray | memoryview) -> None:
        self.calls.append(("set", key))
        self.inner.set(key, value)

    def atomic_set_parts(self, key: str, parts: Sequence[Value] | None) -> None:
        self.calls.append(("atomic_set_parts", key))
        self.inner.atomic_set_parts(key, parts)

    def set_many(self, items: Iterable[tuple[str, bytes | bytearray | memoryview]]) -> None:
        items = list(items)
        self.calls.append(("set_many", [key for key, _ in items]))
        self.inner.set_many(items)

    def erase(self, key: str) -> None:
        self.calls.append(("erase", key))
        self.inner.erase(key)

    def erase_prefix(self, prefix: str) -> None:
        self.calls.append(("erase_prefix", prefix))
        self.inner.erase_prefix(prefix)

    def list(self) -> list[str]:
        self.calls.append(("list", None))
        return self.inner.list()

    def list_prefix(self, prefix: str) -> builtins.list[str]:
        self.calls.append(("list_prefix", prefix))
        return self.inner.list_prefix(prefix)

    def list_dir(self, prefix: str) -> tuple[builtins.list[str], builtins.list[str]]:
        self.calls.append(("list_dir", prefix))
        return self.inner.list_dir(prefix)

    def lock(self, key: str) -> Any:
        return self.inner.lock(key)

    def get_with_version(self, key: str) -> Snapshot:
        self.calls.append(("get", key))
        return self.inner.get_with_version(key)

    def get_many_with_version(self, keys: Sequence[str]) -> builtins.list[Snapshot]:
        self.calls.append(("get_many", list(keys)))
        return self.inner.get_many_with_version(keys)

    def set_if(self, key: str, value: Any, version: Any) -> bool:
        self.calls.append(("set_if", key))
        return self.inner.set_if(key, value, version)

    def __repr__(self) -> str:
        return f"CountingStore({self.inner!r})"


_expected = expected


def _fill(store: Store, keys: list[str]) -> None:
    for key in keys:
        store.set(key, key.encode())


class StoreTests(SpliceTests, RoundTests):
    """The contract of :class:`zarrx.abc.store.Store`, for subclasses to run."""

    @pytest.fixture
    def store(self) -> Store:
        raise NotImplementedError("subclasses provide a `store` fixture (new, empty, writeable)")

    def open_read_only(self, store: Store) -> Store:
        """A read-only view of the data of ``store``."""
        return store.with_read_only(True)  # type: ignore[attr-defined]

    # -- capabilities ---------------------------------------------------------------
    def test_capabilities(self, store: Store) -> None:
        assert store.readable
        assert store.writeable
        assert store.listable
        assert not store.read_only
        assert store.list() == []

    # -- get / set ------------------------------------------------------------------
    def test_set_get_round_trip(self, store: Store) -> None:
        store.set("a", b"hello")
        store.set("b/c/d", b"world")
        assert store.get("a") == b"hello"
        assert store.get("b/c/d") == b"world"
        assert isinstance(store.get("a"), bytes)
        assert store.exists("a")
        assert store.exists("b/c/d")

    def test_get_absent_is_none(self, store: Store) -> None:
        assert store.get("absent") is None
        assert store.get("absent/deeper") is None
        assert store.get("absent", ByteRange(0, 1)) is None
        assert not store.exists("absent")
        store.set("a/b", b"x")
        assert store.get("a") is None  # a prefix is not a key
        assert store.get("a/b/c") is None  # nor is anything below a key
        assert not store.exists("a")

    @pytest.mark.parametrize(
        "key", ["zarr.json", ".zattrs", "a/.zarray", "c/0/0", "0.0.1", "A-b_c.d", "é/ü", "a..b"]
    )
    def test_key_forms(self, store: Store, key: str) -> None:
        store.set(key, b"v")
        assert store.get(key) == b"v"
        assert store.list() == [key]

    def test_keys_are_case_sensitive(self, store: Store) -> None:
        store.set("foo", b"a")
        store.set("FOO", b"b")
        assert store.get("foo") == b"a"
        assert store.get("FOO") == b"b"
        assert store.list() == ["FOO", "foo"]

    def test_value_types(self, store: Store) -> None:
        array = np.arange(12, dtype="<u2").reshape(3, 4)
        store.set("bytes", b"\x00\x01")
        store.set("bytearray", bytearray(b"\x02\x03"))
        store.set("memoryview", memoryview(b"\x04\x05"))
        store.set("array", array)  # type: ignore[arg-type]  # any buffer is accepted
        store.set("strided", array[:, ::2])  # type: ignore[arg-type]
        assert store.get("bytes") == b"\x00\x01"
        assert store.get("bytearray") == b"\x02\x03"
        assert store.get("memoryview") == b"\x04\x05"
        assert store.get("array") == array.tobytes()
        assert store.get("strided") == np.ascontiguousarray(array[:, ::2]).tobytes()

    def test_value_is_copied(self, store: Store) -> None:
        buffer = bytearray(b"abc")
        store.set("k", buffer)
        buffer[0] = ord("z")
        assert store.get("k") == b"abc"

    @pytest.mark.parametrize("value", ["text", 3, None, 1.5])
    def test_non_buffer_values_refused(self, store: Store, value: Any) -> None:
        with pytest.raises(TypeError):
            store.set("k", value)
        assert store.get("k") is None
        assert store.list() == []

    def test_overwrite(self, store: Store) -> None:
        store.set("k", b"first, longer value")
        store.set("k", b"second")
        assert store.get("k") == b"second"
        assert store.list() == ["k"]

    def test_empty_value(self, store: Store) -> None:
        store.set("empty", b"")
        assert store.get("empty") == b""
        assert store.exists("empty")
        assert store.get("empty", ByteRange(0, 10)) == b""
        assert store.get("empty", ByteRange(-10)) == b""
        assert store.list() == ["empty"]

    def test_large_value(self, store: Store) -> None:
        value = np.random.default_rng(0).integers(0, 256, 5 * 2**20, dtype=np.uint8).tobytes()
        store.set("big/value", value)
        assert store.get("big/value") == value
        assert store.get("big/value", ByteRange(3 * 2**20, 1000)) == value[3 * 2**20 :][:1000]
        assert store.get("big/value", ByteRange(-4096)) == value[-4096:]

    @given(key=valid_keys(), value=st.binary(max_size=64))
    @_hypothesis
    def test_round_trip_property(self, store: Store, key: str, value: bytes) -> None:
        store.set(key, value)
        assert store.get(key) == value
        assert key in store.list()
        store.erase(key)
        assert store.get(key) is None
        assert store.list() == []

    # -- byte ranges ----------------------------------------------------------------
    @pytest.mark.parametrize(("start", "length"), _RANGES)
    def test_byte_range(self, store: Store, start: int, length: int | None) -> None:
        store.set("v", _VALUE)
        got = store.get("v", ByteRange(start, length))
        assert got == _expected(_VALUE, start, length)
        assert isinstance(got, bytes)

    def test_byte_range_examples(self, store: Store) -> None:
        store.set("v", b"0123456789")
        assert store.get("v", ByteRange(2, 3)) == b"234"
        assert store.get("v", ByteRange(7)) == b"789"
        assert store.get("v", ByteRange(-3)) == b"789"
        assert store.get("v", ByteRange(8, 100)) == b"89"
        assert store.get("v", ByteRange(100)) == b""

    def test_negative_length_refused(self, store: Store) -> None:
        store.set("v", b"0123456789")
        with pytest.raises(InvalidKeyError):
            store.get("v", ByteRange(2, -1))

    # -- get_many -------------------------------------------------------------------
    def test_get_many(self, store: Store) -> None:
        store.set("a", b"0123456789")
        store.set("b/c", b"bc")
        requests = [
            ("b/c", None),
            ("absent", None),
            ("a", ByteRange(2, 3)),
            ("a", ByteRange(-2)),
            ("a", None),
            ("absent", ByteRange(0, 1)),
        ]
        assert store.get_many(requests) == [b"bc", None, b"234", b"89", b"0123456789", None]
        assert store.get_many([]) == []

    def test_get_many_large_batch(self, store: Store) -> None:
        keys = [f"c/{i // 10}/{i % 10}" for i in range(64)]
        _fill(store, keys)
        requests: list[tuple[str, ByteRange | None]] = [(k, None) for k in reversed(keys)]
        requests += [(f"missing/{i}", None) for i in range(8)]
        requests += [(k, ByteRange(-1)) for k in keys]
        expected = (
            [k.encode() for k in reversed(keys)] + [None] * 8 + [k[-1:].encode() for k in keys]
        )
        assert store.get_many(requests) == expected

    # -- erase ----------------------------------------------------------------------
    def test_erase(self, store: Store) -> None:
        _fill(store, ["a", "b/c", "b/d"])
        store.erase("b/c")
        assert store.get("b/c") is None
        assert store.list() == ["a", "b/d"]
        store.erase("a")
        assert store.list() == ["b/d"]

    def test_erase_absent_is_noop(self, store: Store) -> None:
        store.set("a/b", b"x")
        store.erase("absent")
        store.erase("absent/deeper")
        store.erase("a/b/c")
        store.erase("a")  # a prefix, not a key
        assert store.list() == ["a/b"]
        assert store.get("a/b") == b"x"

    def test_erase_last_key_removes_prefix(self, store: Store) -> None:
        _fill(store, ["a/b/c", "a/x"])
        store.erase("a/b/c")
        assert store.list_dir("a/") == (["a/x"], [])
        store.erase("a/x")
        assert store.list_dir("") == ([], [])
        store.set("a/b/c", b"again")
        assert store.get("a/b/c") == b"again"

    def test_erase_prefix(self, store: Store) -> None:
        _fill(store, ["a/b", "a/c/d", "a/c/e/f", "ab", "b/a", "a.b"])
        store.erase_prefix("a/c/")
        assert store.list() == ["a.b", "a/b", "ab", "b/a"]
        store.erase_prefix("a/")
        assert store.list() == ["a.b", "ab", "b/a"]
        store.erase_prefix("absent/")
        store.erase_prefix("ab/")  # "ab" is a key, not a prefix: nothing below it
        assert store.list() == ["a.b", "ab", "b/a"]

    def test_erase_prefix_root(self, store: Store) -> None:
        _fill(store, ["a/b", "c", "d/e/f"])
        store.erase_prefix("")
        assert store.list() == []
        assert store.list_dir("") == ([], [])
        store.erase_prefix("")  # again, on an empty store
        store.set("x", b"still works")
        assert store.list() == ["x"]

    # -- listing --------------------------------------------------------------------
    def test_list(self, store: Store) -> None:
        keys = ["z", "a/b", "a/c/d", "e/f/g", "a.b", "A"]
        _fill(store, keys)
        assert store.list() == sorted(keys)

    def test_list_prefix_seed_example(self, store: Store) -> None:
        _fill(store, ["a/b", "a/c/d", "e/f/g"])
        assert store.list_prefix("a/") == ["a/b", "a/c/d"]
        assert store.list_prefix("a/c/") == ["a/c/d"]
        assert store.list_prefix("e/f/") == ["e/f/g"]
        assert store.list_prefix("x/") == []
        assert store.list_prefix("") == store.list()

    def test_list_prefix_is_not_a_string_prefix(self, store: Store) -> None:
        _fill(store, ["ab/c", "a/b", "abc"])
        assert store.list_prefix("a/") == ["a/b"]
        assert store.list_prefix("ab/") == ["ab/c"]

    def test_list_dir_seed_example(self, store: Store) -> None:
        _fill(store, ["a/b", "a/c", "a/d/e", "a/f/g"])
        assert store.list_dir("a/") == (["a/b", "a/c"], ["a/d/", "a/f/"])
        assert store.list_dir("b/") == ([], [])
        assert store.list_dir("") == ([], ["a/"])
        assert store.list_dir("a/d/") == (["a/d/e"], [])

    def test_list_dir_root_and_sorting(self, store: Store) -> None:
        _fill(store, ["zarr.json", "b/zarr.json", "a/c/0", "c", "a/zarr.json"])
        assert store.list_dir("") == (["c", "zarr.json"], ["a/", "b/"])
        assert store.list_dir("a/") == (["a/zarr.json"], ["a/c/"])
        assert store.list_dir("zarr.json/") == ([], [])

    def test_empty_store_listing(self, store: Store) -> None:
        assert store.list() == []
        assert store.list_prefix("") == []
        assert store.list_prefix("a/") == []
        assert store.list_dir("") == ([], [])
        assert store.list_dir("a/") == ([], [])

    # -- invalid keys ---------------------------------------------------------------
    @pytest.mark.parametrize("key", BAD_KEYS)
    def test_invalid_key_refused(self, store: Store, key: str) -> None:
        store.set("keep/me", b"safe")
        self._assert_key_refused(store, key)
        assert store.list() == ["keep/me"]
        assert store.get("keep/me") == b"safe"

    @pytest.mark.parametrize("key", [None, 1, b"a", ("a",)])
    def test_non_str_key_refused(self, store: Store, key: Any) -> None:
        self._assert_key_refused(store, key)
        assert store.list() == []

    @given(key=invalid_keys())
    @_hypothesis
    def test_invalid_key_refused_property(self, store: Store, key: str) -> None:
        self._assert_key_refused(store, key)
        assert store.list() == []

    @pytest.mark.parametrize("prefix", BAD_PREFIXES)
    def test_invalid_prefix_refused(self, store: Store, prefix: str) -> None:
        store.set("a/b", b"safe")
        for operation in (store.erase_prefix, store.list_prefix, store.list_dir):
            with pytest.raises(InvalidKeyError):
                operation(prefix)
        assert store.list() == ["a/b"]

    @staticmethod
    def _assert_key_refused(store: Store, key: Any) -> None:
        operations = [
            lambda: store.get(key),
            lambda: store.get(key, ByteRange(0, 1)),
            lambda: store.get_many([("fine", None), (key, None)]),
            lambda: store.exists(key),
            lambda: store.set(key, b"x"),
            lambda: store.erase(key),
        ]
        for operation in operations:
            with pytest.raises(InvalidKeyError):
                operation()

    # -- read-only ------------------------------------------------------------------
    def test_read_only(self, store: Store) -> None:
        _fill(store, ["a/b", "c"])
        view = self.open_read_only(store)
        assert view.read_only
        for operation in (
            lambda: view.set("a/b", b"new"),
            lambda: view.set("new", b"new"),
            lambda: view.erase("a/b"),
            lambda: view.erase("absent"),
            lambda: view.erase_prefix("a/"),
            lambda: view.erase_prefix(""),
        ):
            with pytest.raises(ReadOnlyError):
                operation()
        assert view.list() == ["a/b", "c"]
        assert view.get("a/b") == b"a/b"
        assert view.get_many([("c", None), ("a/b", ByteRange(-1))]) == [b"c", b"b"]
        assert view.list_dir("") == (["c"], ["a/"])
        store.set("later", b"seen")  # the view reads the same data
        assert view.get("later") == b"seen"

    def test_read_only_error_is_permission_error(self, store: Store) -> None:
        view = self.open_read_only(store)
        with pytest.raises(PermissionError):
            view.set("k", b"v")
        assert store.list() == []

    # -- concurrency ----------------------------------------------------------------
    def test_concurrent_writes(self, store: Store) -> None:
        keys = [f"c/{i % 4}/{i // 4}" for i in range(200)]
        doomed = [f"c/{i}/doomed" for i in range(4)]
        _fill(store, doomed)
        barrier = threading.Barrier(8)

        def write(chunk: list[str]) -> None:
            barrier.wait()
            for key in chunk:
                store.set(key, key.encode() * 10)
                store.erase(doomed[int(key.split("/")[1])])  # erase beside concurrent writes

        with ThreadPoolExecutor(8) as pool:
            list(pool.map(write, [keys[i::8] for i in range(8)]))
        assert store.list() == sorted(keys)
        assert store.get_many([(k, None) for k in keys]) == [k.encode() * 10 for k in keys]

    def test_concurrent_overwrites_of_one_key(self, store: Store) -> None:
        values = [bytes([i]) * 100_000 for i in range(16)]
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda v: store.set("same", v), values))
        assert store.get("same") in values
        assert store.list() == ["same"]

    # -- atomic updates -------------------------------------------------------------
    def test_atomic_update_creates_changes_keeps_and_erases(self, store: Store) -> None:
        seen: list[bytes | None] = []

        def append(suffix: bytes) -> Any:
            def update(old: bytes | None) -> bytes:
                seen.append(old)
                return (old or b"") + suffix
            return update

        assert store.atomic_update("a/k", append(b"1")) == b"1"
        assert store.atomic_update("a/k", append(b"2")) == b"12"
        assert seen == [None, b"1"]
        assert store.atomic_update("a/k", lambda old: old) == b"12"  # unchanged
        assert store.get("a/k") == b"12"
        assert store.atomic_update("a/absent", lambda old: old) is None  # stays absent
        if store.conditional_erase:
            assert store.atomic_update("a/k", lambda old: None) is None  # erased
        else:  # refused, before anything is written
            with pytest.raises(TypeError, match="conditional"):
                store.atomic_update("a/k", lambda old: None)
            assert store.get("a/k") == b"12"
            store.erase("a/k")
        assert store.list() == []
        with pytest.raises(ValueError, match="refused"):
            store.atomic_update("a/k", self._refuse)
        assert store.list() == []  # an update that raises writes nothing

    @staticmethod
    def _refuse(old: bytes | None) -> bytes:
        raise ValueError("refused")

    def test_atomic_update_refuses_bad_keys_and_read_only(self, store: Store) -> None:
        for key in ("../x", "/a", "a//b", LOCK_PREFIX + "k"):
            with pytest.raises(InvalidKeyError):
                store.atomic_update(key, lambda old: b"v")
        store.set("k", b"v")
        view = self.open_read_only(store)
        with pytest.raises(ReadOnlyError):
            view.atomic_update("k", lambda old: b"w")
        assert store.get("k") == b"v"

    def test_concurrent_atomic_updates_lose_nothing(self, store: Store) -> None:
        """Threads incrementing one counter: where the store says its updates are atomic,
        every increment counts. The update lets the other threads run between its read
        and its write, so a store without exclusion loses some."""
        threads, rounds = 4, 25

        def increment(old: bytes | None) -> bytes:
            count = int(old or b"0")
            time.sleep(0)  # no wait: hands the GIL over, so another thread may read `old` too
            return str(count + 1).encode()

        def work(_: int) -> None:
            for _ in range(rounds):
                store.atomic_update("counter", increment)

        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(work, range(threads)))
        count = int(store.get("counter") or b"0")
        if store.supports_atomic_update:
            assert count == threads * rounds
        else:
            assert store.atomic_updates is None
            assert 1 <= count <= threads * rounds
        assert store.list() == ["counter"]  # no lock or temporary file is ever a key

    def test_conditional_write_meets_another_writer(self, store: Store) -> None:
        """A write between an update's read and its write: a conditional store notices
        and updates again from the new value (a lock store's lock already excluded any
        other update)."""
        if store.atomic_updates != "conditional":
            with pytest.raises(TypeError, match="conditionally"):
                store.set_if("k", b"v", None)
            return
        assert store.set_if("k", b"first", None)  # absent: created
        assert not store.set_if("k", b"again", None)  # no longer absent
        snapshot = store.get_with_version("k")
        assert snapshot.value == b"first"
        calls: list[bytes | None] = []

        def update(old: bytes | None) -> bytes:
            calls.append(old)
            if len(calls) == 1:
                store.set("k", b"other")  # another writer, between our read and write
            return (old or b"") + b"+mine"

        assert store.atomic_update("k", update) == b"other+mine"
        assert calls == [b"first", b"other"]
        assert store.get("k") == b"other+mine"
        if not store.conditional_erase:
            with pytest.raises(TypeError, match="conditional"):
                store.set_if("k", None, store.get_with_version("k").version)
            assert store.get("k") == b"other+mine"
            return
        assert not store.set_if("k", None, snapshot.version)  # stale version: kept
        assert store.set_if("k", None, store.get_with_version("k").version)  # erased
        assert store.get("k") is None
