from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from zarrx import registry
from zarrx.errors import MetadataError
from zarrx.stores.local import LocalStore
from zarrx.stores.memory import MemoryStore, forget_named
from zarrx.stores.url import make_store, store_from_url


class RecordingStore(MemoryStore):
    """A backend that records how it was opened."""

    opened: list[tuple[str, bool, dict[str, Any] | None]] = []  # noqa: RUF012

    @classmethod
    def from_url(
        cls, url: str, *, read_only: bool = False, storage_options: dict[str, Any] | None = None
    ) -> RecordingStore:
        cls.opened.append((url, read_only, storage_options))
        return cls(read_only=read_only)


def test_file_url(tmp_path: Path) -> None:
    store = store_from_url(f"file://{tmp_path}", read_only=False)
    assert store == LocalStore(tmp_path)
    store.set("k", b"v")
    assert (tmp_path / "k").read_bytes() == b"v"
    assert store_from_url(f"FILE://{tmp_path}", read_only=True) == LocalStore(tmp_path, True)


def test_memory_url_reaches_the_same_data() -> None:
    try:
        writer = store_from_url("memory://test-url", read_only=False)
        writer.set("a", b"1")
        reader = store_from_url("memory://test-url", read_only=True)
        assert isinstance(reader, MemoryStore)
        assert reader.read_only
        assert reader.get("a") == b"1"
    finally:
        forget_named("test-url")


def test_scheme_resolves_through_the_registry() -> None:
    RecordingStore.opened.clear()
    with registry.stores.override("recording", RecordingStore):
        store = store_from_url("recording://bucket/x", read_only=True, storage_options={"a": 1})
    assert isinstance(store, RecordingStore)
    assert store.read_only
    assert RecordingStore.opened == [("recording://bucket/x", True, {"a": 1})]


def test_unknown_scheme() -> None:
    with pytest.raises(MetadataError, match="nosuchscheme"):
        store_from_url("nosuchscheme://x", read_only=True)


def test_backend_without_from_url() -> None:
    with (
        registry.stores.override("plain", object),
        pytest.raises(TypeError, match="from_url"),
    ):
        store_from_url("plain://x", read_only=True)


@pytest.mark.parametrize("url", ["no-scheme", "://x", "/abs/path"])
def test_not_a_url(url: str) -> None:
    with pytest.raises(ValueError, match="not a URL"):
        store_from_url(url, read_only=True)


def test_make_store_returns_a_store_as_is() -> None:
    store = MemoryStore()
    assert make_store(store, mode="r") is store
    assert make_store(store, mode="w") is store
    with pytest.raises(TypeError, match="storage_options"):
        make_store(store, mode="r", storage_options={"a": 1})


@pytest.mark.parametrize(
    ("mode", "read_only"), [("r", True), ("r+", False), ("a", False), ("w", False), ("w-", False)]
)
def test_make_store_from_path(tmp_path: Path, mode: str, read_only: bool) -> None:
    for path in (tmp_path, str(tmp_path)):
        store = make_store(path, mode=mode)
        assert store == LocalStore(tmp_path, read_only=read_only)


def test_make_store_from_url(tmp_path: Path) -> None:
    assert make_store(f"file://{tmp_path}", mode="r") == LocalStore(tmp_path, read_only=True)
    assert make_store(f"file://{tmp_path}", mode="a") == LocalStore(tmp_path)
    RecordingStore.opened.clear()
    with registry.stores.override("recording", RecordingStore):
        make_store("recording://x", mode="r+", storage_options={"k": "v"})
    assert RecordingStore.opened == [("recording://x", False, {"k": "v"})]


def test_make_store_refuses_bad_input(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="invalid mode"):
        make_store(tmp_path, mode="rw")
    with pytest.raises(TypeError, match="storage_options"):
        make_store(tmp_path, mode="r", storage_options={"a": 1})
    with pytest.raises(TypeError, match="int"):
        make_store(3, mode="r")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="bytes"):
        make_store(b"/tmp", mode="r")  # type: ignore[arg-type]

    class BytesPath:
        def __fspath__(self) -> bytes:
            return bytes(tmp_path)

    with pytest.raises(TypeError, match="str path"):
        make_store(BytesPath(), mode="r")  # type: ignore[arg-type]
    assert list(tmp_path.iterdir()) == []


def test_public_module() -> None:
    from zarrx import storage

    assert storage.LocalStore is LocalStore
    assert storage.MemoryStore is MemoryStore
    assert storage.store_from_url is store_from_url
    assert {"ByteRange", "LocalStore", "MemoryStore", "Store", "store_from_url"} <= set(
        storage.__all__
    )
