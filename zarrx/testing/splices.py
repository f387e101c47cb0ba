"""The contract of :meth:`zarrx.abc.store.Store.atomic_splice`, part of
:class:`~zarrx.testing.stores.StoreTests` (every store runs it: those that splice natively
and those that keep the default, through :meth:`~zarrx.abc.store.Store.atomic_update`)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from zarrx.abc.store import ByteRange, Part, Store, Stored
from zarrx.errors import InvalidKeyError, ReadOnlyError
from zarrx.stores.keys import LOCK_PREFIX


class SpliceTests:
    """Atomic splices: a new value made of bytes and kept ranges of the current one."""

    def open_read_only(self, store: Store) -> Store:
        raise NotImplementedError  # StoreTests provides it

    def test_atomic_splice_keeps_ranges_creates_and_erases(self, store: Store) -> None:
        seen: list[tuple[int, bytes] | None] = []

        def splice(current: Stored | None) -> Sequence[Part]:
            seen.append(None if current is None else (
                current.size, bytes(current.read(ByteRange(2, 3)))))
            return [ByteRange(0, 3), b"xy", ByteRange(7, 3)]

        store.set("a/k", b"0123456789")
        assert store.atomic_splice("a/k", splice) == [ByteRange(0, 3), b"xy", ByteRange(7, 3)]
        assert store.get("a/k") == b"012xy789"
        assert seen == [(10, b"234")]
        assert store.atomic_splice("a/new", lambda current: [b"n", memoryview(b"ew")]) == [
            b"n", memoryview(b"ew")]
        assert store.get("a/new") == b"new"
        # adjacent kept ranges, a kept range of all of it, an empty value
        store.atomic_splice("a/new", lambda c: [ByteRange(0, 1), ByteRange(1, 2), b"!"])
        assert store.get("a/new") == b"new!"
        store.atomic_splice("a/new", lambda c: [ByteRange(0, c.size)] if c else [])
        assert store.get("a/new") == b"new!"
        store.atomic_splice("a/new", lambda c: [])
        assert store.get("a/new") == b""
        store.erase("a/new")
        if store.conditional_erase:
            assert store.atomic_splice("a/k", lambda current: None) is None  # erased
            assert store.atomic_splice("a/absent", lambda current: None) is None
            assert store.list() == []  # no lock or temporary file left as a key
        store.set("a/k", b"0123456789")
        for bad in (ByteRange(8, 3), ByteRange(-2, 2), ByteRange(0)):  # not inside, explicit
            with pytest.raises(ValueError, match="explicit range"):
                store.atomic_splice("a/k", lambda current, r=bad: [b"x", r])  # type: ignore[misc]
        with pytest.raises(ValueError, match="refused"):
            store.atomic_splice("a/k", self._refuse_splice)
        with pytest.raises(ValueError, match="absent"):  # no value to keep a range of
            store.atomic_splice("a/absent", lambda current: [ByteRange(0, 0)])
        assert store.get("a/k") == b"0123456789"  # a splice that raises writes nothing
        assert store.list() == ["a/k"]

    @staticmethod
    def _refuse_splice(current: Stored | None) -> Sequence[Part]:
        raise ValueError("refused")

    def test_atomic_splice_refuses_bad_keys_and_read_only(self, store: Store) -> None:
        for key in ("../x", "/a", "a//b", LOCK_PREFIX + "k"):
            with pytest.raises(InvalidKeyError):
                store.atomic_splice(key, lambda current: [b"v"])
        store.set("k", b"v")
        view = self.open_read_only(store)
        with pytest.raises(ReadOnlyError):
            view.atomic_splice("k", lambda current: [b"w"])
        assert store.get("k") == b"v"

    def test_concurrent_splices_and_updates_lose_nothing(self, store: Store) -> None:
        """Threads appending to one value, half through splices (the value kept as a
        range) and half through updates: where the store says its updates are atomic,
        every append lands, whichever way each writer takes."""
        threads, rounds = 4, 12

        def splice(current: Stored | None) -> Sequence[Part]:
            time.sleep(0)  # hands the GIL over between the read and the write
            return [b"s"] if current is None else [ByteRange(0, current.size), b"s"]

        def update(old: bytes | None) -> bytes:
            time.sleep(0)
            return (old or b"") + b"u"

        def work(i: int) -> None:
            for _ in range(rounds):
                if i % 2:
                    store.atomic_splice("log", splice)
                else:
                    store.atomic_update("log", update)

        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(work, range(threads)))
        value = store.get("log") or b""
        if store.supports_atomic_update:
            assert sorted(value) == sorted(b"s" * 24 + b"u" * 24)
        else:
            assert 1 <= len(value) <= threads * rounds
        assert store.list() == ["log"]

    def test_conditional_splice_meets_another_writer(self, store: Store) -> None:
        """A write between a splice's read and its write: a conditional store splices
        again from the new value, reading its ranges from that value."""
        if store.atomic_updates != "conditional":
            return  # a lock store's lock excludes every other update (tested above)
        store.set("k", b"first")
        sizes: list[int] = []

        def splice(current: Any) -> Sequence[Part]:
            sizes.append(current.size)
            if len(sizes) == 1:
                store.set("k", b"other!")  # another writer, between our read and write
            return [ByteRange(0, current.size), b"+mine"]

        store.atomic_splice("k", splice)
        assert sizes == [5, 6]
        assert store.get("k") == b"other!+mine"
