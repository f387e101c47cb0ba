"""Groups: named containers of arrays and groups, with attributes."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import Any

from zarrx.array import Array
from zarrx.engine.executor import io_pool
from zarrx.errors import InvalidKeyError, NodeNotFoundError, SkippedNodeWarning
from zarrx.metadata.consolidated import subtree
from zarrx.metadata.io import join_path, list_members, read_node
from zarrx.metadata.model import Unreadable
from zarrx.node import Node


def node_for(
    store: Any, path: str, metadata: Any, *, read_only: bool, consolidated: Any = None
) -> Array | Group:
    """The Array or Group object for parsed metadata."""
    if metadata.node_type == "array":
        return Array(store, path, metadata, read_only=read_only)
    return Group(store, path, metadata, read_only=read_only, consolidated=consolidated)


class Group(Node):
    """A Zarr group. ``g["a/b"]`` opens a descendant; ``g.members()`` lists children.

    A group opened with consolidated metadata answers lookups and listings from it, with
    no store access; creating or deleting members through it drops that snapshot.
    """

    def __init__(
        self, store: Any, path: str, metadata: Any, *, read_only: bool = False,
        consolidated: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(store, path, metadata, read_only=read_only)
        self._consolidated = consolidated

    @property
    def consolidated(self) -> dict[str, Any] | None:
        """Metadata of every descendant by relative path, when opened consolidated."""
        return self._consolidated

    def _child(self, name: str) -> str:
        return join_path(self._path, name)

    def _from_consolidated(self, rel: str) -> Array | Group:
        entries = self._consolidated or {}
        if rel not in entries:
            raise NodeNotFoundError(f"{self.name!r} has no member {rel!r} (consolidated)")
        meta = entries[rel]
        if isinstance(meta, Unreadable):
            meta.reraise()
        below = subtree(entries, rel) if meta.node_type == "group" else None  # arrays: none
        return node_for(self._store, self._child(rel), meta, read_only=self._read_only,
                        consolidated=below)

    # -- lookup -----------------------------------------------------------------------------
    def __getitem__(self, name: str) -> Array | Group:
        path = self._child(name)
        if self._consolidated is not None:
            rel = path[len(self._path) + 1:] if self._path else path
            return self._from_consolidated(rel)
        try:
            meta = read_node(self._store, path, zarr_format=self.zarr_format)
        except NodeNotFoundError:
            raise NodeNotFoundError(f"{self.name!r} has no member {name!r}") from None
        return node_for(self._store, path, meta, read_only=self._read_only)

    def get(self, name: str, default: Any = None) -> Any:
        try:
            return self[name]
        except (NodeNotFoundError, InvalidKeyError):
            return default

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None

    def members(self, max_depth: int | None = 0) -> tuple[tuple[str, Array | Group], ...]:
        """``(name, node)`` pairs of the children, sorted by name; ``max_depth=None`` recurses
        (names are then paths relative to this group).

        A member that cannot be opened (refused metadata, such as an unknown
        must-understand extension, or a key that is not a valid node name) is skipped with
        a :class:`~zarrx.errors.SkippedNodeWarning`; ``group[name]`` raises its error."""
        out: list[tuple[str, Array | Group]] = []
        for rel, meta in self.member_metadata(max_depth):
            consolidated = None
            if self._consolidated is not None and meta.node_type == "group":
                consolidated = subtree(self._consolidated, rel)
            out.append((rel, node_for(self._store, self._child(rel), meta,
                                      read_only=self._read_only, consolidated=consolidated)))
        return tuple(out)

    def member_metadata(self, max_depth: int | None = 0) -> list[tuple[str, Any]]:
        """``(relative path, parsed metadata)`` of the members :meth:`members` lists
        (one listing of the store, or none when opened consolidated)."""
        if self._consolidated is not None:
            found = [(rel, self._consolidated[rel]) for rel in sorted(
                self._consolidated, key=lambda r: r.split("/"))
                if max_depth is None or rel.count("/") <= max_depth]
        else:
            # the groups of one depth are listed concurrently, on the I/O threads
            found = list_members(self._store, self._path, self._metadata, max_depth,
                                 map_listings=io_pool().map)
        out, skipped = [], []
        for rel, meta in found:
            if any(rel.startswith(s + "/") for s in skipped):
                continue  # below a member that cannot be opened
            if isinstance(meta, Unreadable):
                skipped.append(rel)
                warnings.warn(
                    f"{self.name!r}: skipped member {rel!r}, which cannot be opened: "
                    f"{meta.error}", SkippedNodeWarning, stacklevel=3,
                )
                continue
            out.append((rel, meta))
        return out

    def keys(self) -> Iterator[str]:
        return (name for name, _ in self.members())

    def __iter__(self) -> Iterator[str]:
        return self.keys()

    def __len__(self) -> int:
        return len(self.members())

    def arrays(self) -> Iterator[tuple[str, Array]]:
        return ((n, m) for n, m in self.members() if isinstance(m, Array))

    def groups(self) -> Iterator[tuple[str, Group]]:
        return ((n, m) for n, m in self.members() if isinstance(m, Group))

    def array_keys(self) -> Iterator[str]:
        return (n for n, _ in self.arrays())

    def group_keys(self) -> Iterator[str]:
        return (n for n, _ in self.groups())

    # -- creation ---------------------------------------------------------------------------
    def create_array(self, name: str, **kwargs: Any) -> Array:
        """Create an array below this group; keywords as :func:`zarrx.create_array`."""
        from zarrx.api import create_array

        self._check_writable("create an array in")
        self._consolidated = None
        kwargs.setdefault("zarr_format", self.zarr_format)
        return create_array(self._store, name=self._child(name), **kwargs)

    def create_group(
        self, name: str, attributes: dict[str, Any] | None = None, overwrite: bool = False
    ) -> Group:
        from zarrx.api import create_group

        self._check_writable("create a group in")
        self._consolidated = None
        return create_group(
            self._store, path=self._child(name), attributes=attributes, overwrite=overwrite,
            zarr_format=self.zarr_format,
        )

    def require_group(self, name: str) -> Group:
        """The group at ``name``, created if absent."""
        node = self.get(name)
        if isinstance(node, Group):
            return node
        return self.create_group(name)

    def __delitem__(self, name: str) -> None:
        """Erase the member ``name`` and everything below it."""
        from zarrx.api import erase_node

        self._check_writable("delete from")
        self._consolidated = None
        node = self[name]  # in this group's format: NodeNotFoundError when absent
        erase_node(self._store, node.path, node.metadata)

    # -- display -----------------------------------------------------------------------------
    def tree(self) -> str:
        """A text tree of the hierarchy below this group, with shapes and dtypes."""
        lines = [self.name]
        self._tree_lines(self, "", lines)
        return "\n".join(lines)

    def _tree_lines(self, group: Group, indent: str, lines: list[str]) -> None:
        members = group.members()
        for i, (name, node) in enumerate(members):
            last = i == len(members) - 1
            branch = "└── " if last else "├── "
            if isinstance(node, Array):
                lines.append(f"{indent}{branch}{name} {node.shape} {node.dtype}")
            else:
                lines.append(f"{indent}{branch}{name}")
                self._tree_lines(node, indent + ("    " if last else "│   "), lines)

    def __repr__(self) -> str:
        return f"<zarrx.Group {self.name!r}>"
