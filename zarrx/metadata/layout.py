"""The contract of a format's key layout: which keys hold a node's documents, how they parse,
where its chunks live, and how a node is made, listed and erased.

:mod:`zarrx.metadata.io` reads and writes every format through these hooks only (one
:class:`Layout` per format in its ``LAYOUTS``). The hooks with a default here are the
behaviour of a format whose nodes keep everything — documents, chunks, members — below
their own prefix ``path/`` and whose groups all have documents (Zarr v3 and v2); the
v3.0 draft overrides them (its entry point, implicit groups, ``meta/`` and ``data/`` trees).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from typing import Any, ClassVar

from zarrx.abc.store import Store


def node_prefix(path: str) -> str:
    """The prefix under which everything of the node at ``path`` lives (v2 and v3)."""
    return f"{path}/" if path else ""


class Layout(ABC):
    """Where one format keeps each node's documents and chunks."""

    #: The format's ``zarr_format`` in zarrx's API (the key of ``io.LAYOUTS``).
    zarr_format: ClassVar[Any]
    #: Whether a path with members but no document is a group (the draft): creating a node
    #: then writes no documents for its ancestors.
    implicit_groups: ClassVar[bool] = False

    # -- keys and documents ------------------------------------------------------------------
    @abstractmethod
    def document_keys(self, path: str) -> list[str]:
        """The keys that may hold the documents of a node at ``path``."""

    @abstractmethod
    def parse(self, path: str, docs: Mapping[str, bytes | None]) -> Any | None:
        """The node whose documents are in ``docs`` (keys of :meth:`document_keys`), or
        ``None`` when there is none."""

    @abstractmethod
    def documents(self, path: str, meta: Any) -> dict[str, bytes]:
        """The documents of ``meta`` at ``path``, the one holding its definition first."""

    def attribute_documents(self, path: str, meta: Any) -> dict[str, bytes]:
        """The documents that change with ``meta``'s attributes, the one holding them first
        (default: all of :meth:`documents`, for formats with one document a node)."""
        return self.documents(path, meta)

    @abstractmethod
    def data_prefix(self, path: str) -> str:
        """The prefix of the chunk keys of the array at ``path``."""

    @abstractmethod
    def new_group(self, attributes: dict[str, Any]) -> Any:
        """The metadata of a new group with ``attributes``."""

    # -- nodes -----------------------------------------------------------------------------------
    def for_node(self, meta: Any) -> Layout:
        """The layout that reads and writes the documents of ``meta`` (default: this one;
        the draft's depends on the node's entry point)."""
        return self

    def is_implicit(self, meta: Any) -> bool:
        """Whether ``meta`` is a group without a document (default: never)."""
        return False

    def prepare_store(self, store: Store, path: str, meta: Any) -> tuple[Any, dict[str, bytes]]:
        """Before ``meta`` is created at ``path``: the metadata to write and the documents
        to write before it, once (default: ``meta`` as it is, nothing more)."""
        return meta, {}

    def erase(self, store: Store, path: str, meta: Any) -> None:
        """Erase the node ``meta`` at ``path`` and everything below it (default: all keys
        below its prefix, where its documents, chunks and members live)."""
        store.erase_prefix(node_prefix(path))

    @abstractmethod
    def members(
        self, store: Store, path: str, max_depth: int | None,
        map_listings: Callable[..., Iterable[Any]],
    ) -> list[tuple[str, Any]]:
        """``(path relative to the group, metadata)`` of the members of the group at
        ``path`` down to ``max_depth`` (0: its children; ``None``: all), parents before
        children and siblings by name; one that cannot be opened is an ``Unreadable``.
        ``map_listings`` runs the directory listings of a level (a thread pool's ``map``
        runs them at once)."""
