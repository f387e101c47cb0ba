"""Groups: named containers of arrays and groups, with attributes."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np

from zarrx import convenience
from zarrx.arrays import Array
from zarrx.errors import InvalidKeyError, NodeNotFoundError, NodeTypeError, SkippedNodeWarning
from zarrx.hierarchy import create_array
from zarrx.info import Info, group_summary
from zarrx.metadata.consolidated import subtree
from zarrx.metadata.io import join_path, list_members, read_node
from zarrx.metadata.model import Unreadable
from zarrx.metadata.nodes import erase_node, write_group
from zarrx.node import Node
from zarrx.runtime.executor import io_pool


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
        found = self.member_metadata(max_depth)
        if self._consolidated is not None:  # paths from a document: validated here
            return tuple(
                (rel, node_for(self._store, self._child(rel), meta, read_only=self._read_only,
                               consolidated=subtree(self._consolidated, rel)
                               if meta.node_type == "group" else None))
                for rel, meta in found
            )
        # Listed paths: the store read each member's documents under its path, so the
        # path is a valid key already.
        head = self._path + "/" if self._path else ""
        store, read_only = self._store, self._read_only
        return tuple((rel, node_for(store, head + rel, meta, read_only=read_only))
                     for rel, meta in found)

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
        out: list[tuple[str, Any]] = []
        skipped: list[str] = []
        for rel, meta in found:
            if skipped and any(rel.startswith(s + "/") for s in skipped):
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
    def _new_member(self, what: str) -> None:
        self._check_writable(f"create {what} in")
        self._consolidated = None

    def create_array(self, name: str, **kwargs: Any) -> Array:
        """Create an array below this group; keywords as :func:`zarrx.create_array`."""
        self._new_member("an array")
        kwargs.setdefault("zarr_format", self.zarr_format)
        return create_array(self._store, name=self._child(name), **kwargs)

    def create_group(
        self, name: str, attributes: dict[str, Any] | None = None, overwrite: bool = False
    ) -> Group:
        self._new_member("a group")
        path = self._child(name)
        meta = write_group(
            self._store, path, attributes=attributes, zarr_format=self.zarr_format,
            overwrite=overwrite,
        )
        return Group(self._store, path, meta, read_only=False)

    def require_group(self, name: str, overwrite: bool = False) -> Group:
        """The group at ``name``, created if absent (replaced with ``overwrite``)."""
        if overwrite:
            return self.create_group(name, overwrite=True)
        node = self.get(name)
        if node is None:
            return self.create_group(name)
        if not isinstance(node, Group):
            raise NodeTypeError(f"{node.name!r} is an array, not a group")
        return node

    def require_groups(self, *names: str) -> tuple[Group, ...]:
        return tuple(self.require_group(name) for name in names)

    def require_array(
        self, name: str, *, shape: Any, dtype: Any = None, exact: bool = False, **kwargs: Any
    ) -> Array:
        """The array at ``name``, created (keywords as :meth:`create_array`) if absent. An
        existing one must have ``shape``, and a dtype equal to ``dtype`` (``exact``) or
        safely castable to it."""
        node = self.get(name)
        if node is None:
            return self.create_array(name, shape=shape, dtype=dtype, **kwargs)
        if not isinstance(node, Array):
            raise NodeTypeError(f"{node.name!r} is a group, not an array")
        wanted = (shape,) if isinstance(shape, int) else tuple(shape)
        if node.shape != wanted:
            raise NodeTypeError(f"{node.name!r} has shape {node.shape}, not {wanted}")
        want = np.dtype(dtype)
        if (node.dtype != want) if exact else not np.can_cast(node.dtype, want):
            raise NodeTypeError(
                f"{node.name!r} has dtype {node.dtype}, "
                + (f"not {want}" if exact else f"which does not cast safely to {want}")
            )
        return node

    def _made(self, maker: Any, first: Any, name: str, kwargs: dict[str, Any]) -> Array:
        """``maker(first, store=…, path=name, **kwargs)`` below this group, in its format."""
        self._new_member("an array")
        fmt = convenience.zarr_format_of(
            kwargs.pop("zarr_format", None), kwargs.pop("zarr_version", None)
        )
        kwargs["zarr_format"] = self.zarr_format if fmt is None else fmt
        return maker(first, store=self._store, path=self._child(name), **kwargs)

    def empty(self, *, name: str, shape: Any, **kwargs: Any) -> Array:
        return self._made(convenience.empty, shape, name, kwargs)

    def zeros(self, *, name: str, shape: Any, **kwargs: Any) -> Array:
        return self._made(convenience.zeros, shape, name, kwargs)

    def ones(self, *, name: str, shape: Any, **kwargs: Any) -> Array:
        return self._made(convenience.ones, shape, name, kwargs)

    def full(self, *, name: str, shape: Any, fill_value: Any, **kwargs: Any) -> Array:
        return self._made(convenience.full, shape, name, {"fill_value": fill_value, **kwargs})

    def empty_like(self, *, name: str, data: Any, **kwargs: Any) -> Array:
        return self._made(convenience.empty_like, data, name, kwargs)

    def zeros_like(self, *, name: str, data: Any, **kwargs: Any) -> Array:
        return self._made(convenience.zeros_like, data, name, kwargs)

    def ones_like(self, *, name: str, data: Any, **kwargs: Any) -> Array:
        return self._made(convenience.ones_like, data, name, kwargs)

    def full_like(self, *, name: str, data: Any, **kwargs: Any) -> Array:
        return self._made(convenience.full_like, data, name, kwargs)

    def __delitem__(self, name: str) -> None:
        """Erase the member ``name`` and everything below it."""
        self._check_writable("delete from")
        self._consolidated = None
        node = self[name]  # in this group's format: NodeNotFoundError when absent
        erase_node(self._store, node.path, node.metadata)

    # -- display -----------------------------------------------------------------------------
    @property
    def info(self) -> Info:
        """A summary that needs no store access."""
        return Info(group_summary(self, stored=False))

    def info_complete(self) -> Info:
        """Members, initialised chunks, stored bytes and ratio over the whole hierarchy."""
        return Info(group_summary(self))

    def tree(
        self, expand: bool | None = None, level: int | None = None, *, max_nodes: int = 500,
        plain: bool = False,
    ) -> Tree:
        """The hierarchy below this group as zarr-python draws it: one line per node,
        arrays with their shape and dtype, ``level`` levels deep (all by default).
        ``expand`` and ``plain`` concern zarr-python's HTML and ANSI styling, which this
        plain text never has."""
        members = self.members(max_depth=level)
        truncated = len(members) > max_nodes
        children: dict[str, list[tuple[str, Array | Group]]] = {}
        for key, node in members[:max_nodes]:
            children.setdefault(key.rpartition("/")[0], []).append((key, node))
        lines = [self.name]
        stack = [("", list(reversed(children.get("", []))))]
        while stack:
            prefix, todo = stack[-1]
            if not todo:
                stack.pop()
                continue
            key, node = todo.pop()
            last = not todo
            label = key.rpartition("/")[2]
            if isinstance(node, Array):
                label = f"{label} {node.shape} {node.dtype}"
            lines.append(f"{prefix}{'└── ' if last else '├── '}{label}")
            if key in children:
                stack.append(
                    (prefix + ("    " if last else "│   "), list(reversed(children[key])))
                )
        note = (
            f"Truncated at max_nodes={max_nodes}, some nodes and their children may be missing\n"
            if truncated else ""
        )
        return Tree(note + "\n".join(lines) + "\n")

    def __repr__(self) -> str:
        return f"<zarrx.Group {self.name!r}>"

    def _repr_html_(self) -> str:
        from zarrx.display import group_html  # a notebook's display (zarrx/display.py)

        return group_html(self)


class Tree(str):
    """The text of :meth:`Group.tree`; shown as itself (not quoted) at the prompt."""

    def __repr__(self) -> str:
        return str(self)
