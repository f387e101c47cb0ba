from __future__ import annotations

import pytest

from zarrx.stores.memory import MemoryStore, forget_named
from zarrx.testing.stores import StoreTests


class TestMemoryStore(StoreTests):
    @pytest.fixture
    def store(self) -> MemoryStore:
        return MemoryStore()


def test_named_store_is_shared() -> None:
    try:
        first = MemoryStore.from_url("memory://test-shared", read_only=False)
        first.set("a/b", b"data")
        again = MemoryStore.from_url("memory://test-shared/", read_only=True)
        assert again.get("a/b") == b"data"
        assert again.read_only
        assert again == first.with_read_only(True)
        assert again != first
        assert MemoryStore.from_url("memory://test-shared", read_only=False) == first
        assert "memory://test-shared" in repr(again)
    finally:
        forget_named("test-shared")
    fresh = MemoryStore.from_url("memory://test-shared", read_only=False)
    try:
        assert fresh.list() == []
        assert fresh != first
    finally:
        forget_named("test-shared")


def test_named_stores_are_distinct() -> None:
    try:
        one = MemoryStore.from_url("memory://test-one", read_only=False)
        two = MemoryStore.from_url("memory://test-two", read_only=False)
        one.set("k", b"1")
        assert two.get("k") is None
        assert one != two
    finally:
        forget_named("test-one")
        forget_named("test-two")


def test_anonymous_url_makes_a_new_store() -> None:
    first = MemoryStore.from_url("memory://", read_only=False)
    first.set("k", b"v")
    second = MemoryStore.from_url("memory://", read_only=False)
    assert second.get("k") is None
    assert first != second


def test_equality_is_identity_of_the_data() -> None:
    store = MemoryStore()
    assert store == store
    assert store != MemoryStore()
    assert store == store.with_read_only(False)
    assert store != store.with_read_only(True)
    assert hash(store) == hash(store.with_read_only(False))
    assert len({store, store.with_read_only(False), MemoryStore()}) == 2


def test_read_only_store_from_constructor() -> None:
    store = MemoryStore(read_only=True)
    assert store.read_only
    assert store.list() == []
    assert "read_only=True" in repr(store)


def test_from_url_refuses_storage_options_and_other_schemes() -> None:
    with pytest.raises(TypeError, match="storage_options"):
        MemoryStore.from_url("memory://x", read_only=False, storage_options={"a": 1})
    with pytest.raises(ValueError, match="memory://"):
        MemoryStore.from_url("file:///tmp/x", read_only=False)
