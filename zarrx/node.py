"""What arrays and groups share: a store, a path, parsed metadata and attributes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from zarrx.abc.store import Store
from zarrx.attributes import Attributes
from zarrx.errors import ReadOnlyError
from zarrx.metadata.io import update_node


class Node:
    """A node of a hierarchy; its metadata object is immutable and replaced on change."""

    def __init__(self, store: Store, path: str, metadata: Any, *, read_only: bool) -> None:
        self._store = store
        self._path = path
        self._metadata = metadata
        self._read_only = read_only or store.read_only

    @property
    def store(self) -> Store:
        return self._store

    @property
    def path(self) -> str:
        """Path from the store root, ``""`` for the root node."""
        return self._path

    @property
    def name(self) -> str:
        """The path with a leading ``/``, as zarr-python names nodes."""
        return "/" + self._path

    @property
    def basename(self) -> str:
        return self._path.rsplit("/", 1)[-1]

    @property
    def metadata(self) -> Any:
        return self._metadata

    @property
    def zarr_format(self) -> Any:
        return self._metadata.zarr_format

    @property
    def read_only(self) -> bool:
        return self._read_only

    @property
    def attrs(self) -> Attributes:
        return Attributes(self)

    def _check_writable(self, what: str) -> None:
        if self._read_only:
            raise ReadOnlyError(f"cannot {what} {self.name!r}: it was opened read-only")

    def _update_metadata(self, change: Callable[[Any], Any], *, attributes: bool = False) -> Any:
        """Apply ``change`` to this node's metadata as it is now in the store, as one atomic
        update (:func:`~zarrx.metadata.io.update_node`), and adopt the result: changes
        other writers made meanwhile are kept, never overwritten."""
        self._adopt(update_node(self._store, self._path, self._metadata, change,
                                attributes=attributes))
        return self._metadata

    def _adopt(self, metadata: Any) -> None:
        self._metadata = metadata

    def _change_attributes(self, change: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
        """Replace the attributes by ``change(current attributes)``, atomically."""
        self._check_writable("change attributes of")
        self._update_metadata(
            lambda meta: meta.with_attributes(change(dict(meta.attributes))), attributes=True
        )

    def __eq__(self, other: object) -> bool:
        return (
            type(self) is type(other)
            and self._store == other._store  # type: ignore[attr-defined]
            and self._path == other._path  # type: ignore[attr-defined]
        )

    def __hash__(self) -> int:
        return hash((type(self), id(self._store), self._path))
