"""One lazy registry for everything pluggable, backed by entry points.

Nothing is scanned or imported at ``import zarrx``: the entry-point table of a group is read
on the first lookup in that group, and an implementation is imported on the first lookup
of one of its names. One implementation may carry several names (v3 name, v2 id, draft
URI). Two *different* implementations claiming one name is an error, never a race of
import order. Entry points are read and loaded under :data:`zarrx.imports.lock`, so threads
making their first lookups at once import each implementation once, in one thread. This
module imports nothing of codecs, stores or grids.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from contextlib import contextmanager
from importlib.metadata import EntryPoint, entry_points
from typing import Any, Generic, TypeVar

from zarrx import imports
from zarrx.errors import (
    MetadataError,
    RegistryConflictError,
    UnknownCodecError,
    UnknownDataTypeError,
    UnknownExtensionError,
)

T = TypeVar("T")

_generations = itertools.count(1)  # next() is atomic: no two changes get one number
_generation = 0


def generation() -> int:
    """A number that changes whenever a registration changes in this process: caches of
    parsed metadata (which resolved names through the registry) compare it to stay valid."""
    return _generation


def _changed() -> None:
    global _generation
    _generation = next(_generations)


class Registry(Generic[T]):
    """Names → implementations for one entry-point group."""

    def __init__(self, group: str, what: str, error: type[MetadataError]) -> None:
        self.group = group
        self.what = what
        self.error = error
        self._registered: dict[str, T] = {}
        self._loaded: dict[str, T] = {}
        self._entry_points: dict[str, list[EntryPoint]] | None = None

    def _table(self) -> dict[str, list[EntryPoint]]:
        table = self._entry_points
        if table is None:
            with imports.lock:
                table = self._entry_points
                if table is None:
                    table = {}
                    for ep in entry_points(group=self.group):
                        table.setdefault(ep.name, []).append(ep)
                    self._entry_points = table
        return table

    def _load(self, name: str) -> T | None:
        candidates = self._table().get(name)
        if not candidates:
            return None
        values = {ep.value for ep in candidates}
        if len(values) > 1:
            owners = ", ".join(
                f"{ep.value} (from {ep.dist.name if ep.dist else '?'})" for ep in candidates
            )
            raise RegistryConflictError(
                f"{self.what} {name!r} is claimed by more than one package: {owners}; "
                "uninstall one of them"
            )
        return candidates[0].load()

    def get(self, name: str) -> T:
        """The implementation registered under ``name``; ``self.error`` if there is none."""
        impl = self.find(name)
        if impl is None:
            raise self.error(
                f"unknown {self.what} {name!r}: no installed package provides it "
                f"(entry-point group {self.group!r}); known: {', '.join(self.names()) or 'none'}"
            )
        return impl

    def find(self, name: str) -> T | None:
        """Like :meth:`get` but ``None`` when the name is unknown."""
        impl = self._registered.get(name)
        if impl is None:
            impl = self._loaded.get(name)
        if impl is not None:
            return impl
        with imports.lock:  # one thread imports it; the others then find it loaded
            if name in self._loaded:
                return self._loaded[name]
            impl = self._load(name)
            if impl is not None:
                self._loaded[name] = impl
        return impl

    def register(self, impl: T, *names: str) -> T:
        """Register ``impl`` in this process under ``names`` (default: its ``name``/aliases)."""
        if not names:
            names = (getattr(impl, "name"), *getattr(impl, "aliases", ()))  # noqa: B009
        for name in names:
            existing = self._registered.get(name)
            if existing is not None and existing is not impl:
                raise RegistryConflictError(
                    f"{self.what} {name!r} is already registered to {existing!r}"
                )
        for name in names:
            self._registered[name] = impl
        _changed()
        return impl

    def unregister(self, *names: str) -> None:
        for name in names:
            self._registered.pop(name, None)
            self._loaded.pop(name, None)
        _changed()

    @contextmanager
    def override(self, name: str, impl: T) -> Iterator[T]:
        """Temporarily bind ``name`` to ``impl`` (for tests); restores the previous binding."""
        previous = self._registered.get(name)
        self._registered[name] = impl
        _changed()
        try:
            yield impl
        finally:
            if previous is None:
                self._registered.pop(name, None)
            else:
                self._registered[name] = previous
            _changed()

    def names(self) -> list[str]:
        """Every known name, registered or installed, without importing anything."""
        return sorted(set(self._registered) | set(self._table()))

    def entry_points(self) -> dict[str, list[EntryPoint]]:
        """The installed entry points of this group, by name (for ``zarrx plugins``)."""
        return dict(self._table())


codecs: Registry[Any] = Registry("zarrx.codecs", "codec", UnknownCodecError)
data_types: Registry[Any] = Registry("zarrx.data_types", "data type", UnknownDataTypeError)
chunk_grids: Registry[Any] = Registry("zarrx.chunk_grids", "chunk grid", MetadataError)
chunk_key_encodings: Registry[Any] = Registry(
    "zarrx.chunk_key_encodings", "chunk key encoding", MetadataError
)
stores: Registry[Any] = Registry("zarrx.stores", "store scheme", MetadataError)
extensions: Registry[Any] = Registry("zarrx.extensions", "extension", UnknownExtensionError)


def register_codec(cls: Any, *names: str) -> Any:
    """Register a codec class in this process (usable as a decorator)."""
    return codecs.register(cls, *names)


def register_data_type(impl: Any, *names: str) -> Any:
    return data_types.register(impl, *names)


def register_chunk_grid(impl: Any, *names: str) -> Any:
    return chunk_grids.register(impl, *names)


def register_chunk_key_encoding(impl: Any, *names: str) -> Any:
    return chunk_key_encodings.register(impl, *names)


def register_store(impl: Any, *names: str) -> Any:
    return stores.register(impl, *names)


def register_extension(impl: Any, *names: str) -> Any:
    return extensions.register(impl, *names)
