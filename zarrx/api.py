"""The functions users start from: open, open_array, open_group, open_like, group,
create_group (and create_array, from :mod:`zarrx.hierarchy`), save and load.

They mirror zarr-python 3 (names, keywords, defaults and modes ``r``, ``r+``, ``a``,
``w``, ``w-``) so that switching is a change of import.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from zarrx.abc.store import Store
from zarrx.arrays import Array
from zarrx.config import array_settings
from zarrx.convenience import UNSUPPORTED, create, like_keywords, zarr_format_of
from zarrx.errors import (
    ArgumentError,
    NodeExistsError,
    NodeNotFoundError,
    NodeTypeError,
    PathNotFoundError,
)
from zarrx.groups import Group, node_for
from zarrx.hierarchy import create_array
from zarrx.metadata import consolidated
from zarrx.metadata.io import (
    find_node,
    list_members,
    normalize_path,
    read_node,
    read_node_consolidated,
    update_node,
)
from zarrx.metadata.json import dump_json
from zarrx.metadata.model import Unreadable
from zarrx.metadata.nodes import open_store, write_group

StoreLike = Any

__all__ = [
    "consolidate_metadata", "create_array", "create_group", "group", "load", "open",
    "open_array", "open_consolidated", "open_group", "open_like", "save", "save_array",
    "save_group", "tree",
]


def _existing(
    store: Store, path: str, mode: str, zarr_format: Any, use_consolidated: bool | None
) -> tuple[Any, Any]:
    """The node at ``path`` (with consolidated entries) for modes that open existing nodes;
    ``(None, None)`` where mode ``a`` finds nothing (and may create a node there)."""
    try:
        return read_node_consolidated(
            store, path, zarr_format=zarr_format, use_consolidated=use_consolidated
        )
    except NodeNotFoundError as e:
        if mode != "a" or use_consolidated:  # missing consolidated metadata is an error
            raise _not_found(store, path, mode, e) from None
        _check_creatable(store, path)
        return None, None


# -- a path with no node: zarr-python's behaviour, and where zarrx differs -------------------

def _held(store: Store, path: str) -> list[str] | None:
    """A few of the keys and prefixes stored under ``path`` (``[]``: nothing is; ``None``:
    the store cannot list, so nobody can tell)."""
    if not store.listable:
        return None
    keys, prefixes = store.list_dir(f"{path}/" if path else "")
    return (keys + prefixes)[:4]


def _location(store: Store, path: str) -> str:
    root = getattr(store, "root", None)
    if root is not None:  # a directory: its path, as the user knows it
        return repr(str(root / path) if path else str(root))
    return f"{path or '/'!r} in {store!r}"


def _not_found(store: Store, path: str, mode: str, error: NodeNotFoundError,
               hint: str = "mode 'a' or 'w' creates a group") -> NodeNotFoundError:
    """``error`` (no node at ``path``), or a :class:`PathNotFoundError` (also a
    ``FileNotFoundError``) saying the path does not exist when nothing is stored there."""
    if _held(store, path) != []:
        return error
    return PathNotFoundError(
        f"{_location(store, path)} does not exist (mode {mode!r} opens an existing array or "
        f"group; {hint})"
    )


def _check_creatable(store: Store, path: str) -> None:
    """Mode ``a`` creates a node only where nothing is stored: a directory that holds other
    things and no Zarr node (a typo, a data folder) is not made a group unasked."""
    held = _held(store, path)
    if held:
        raise NodeExistsError(
            f"{_location(store, path)} holds {', '.join(map(repr, held[:3]))}"
            f"{' …' if len(held) > 3 else ''} but no Zarr "
            "array or group, and mode 'a' creates one only where nothing is stored; to add "
            "a node there keeping what it holds, use zarrx.create_group / create_array (or "
            "mode='w-'); mode='w' replaces everything in it"
        )


def _mode(store: Any, mode: str | None) -> str:
    """zarr-python's default mode: ``"r"`` for a read-only Store object, else ``"a"``."""
    if mode is not None:
        return mode
    return "r" if isinstance(store, Store) and store.read_only else "a"


def open(
    store: StoreLike = None,
    *,
    mode: str | None = None,
    path: str | None = None,
    zarr_format: Any = None,
    storage_options: Mapping[str, Any] | None = None,
    use_consolidated: bool | None = None,
    **kwargs: Any,
) -> Array | Group:
    """Open the array or group at ``path``. With ``shape=`` in a writing mode, create an
    array when none exists (as zarr-python does); otherwise a missing node becomes a group
    in modes ``a``, ``w`` and ``w-`` — in mode ``a`` only where nothing is stored (a
    directory holding other things is refused, not made a group). In modes ``r`` and
    ``r+`` a path where nothing is stored is a :class:`~zarrx.errors.PathNotFoundError`.
    ``config=`` / ``write_empty_chunks=`` are an array's own settings. Consolidated
    metadata is used when present unless ``use_consolidated=False``. The default mode is
    ``"a"`` (``"r"`` for a read-only Store), as in zarr-python."""
    mode = _mode(store, mode)
    if "shape" in kwargs:
        return open_array(
            store,
            mode=mode,
            path=path,
            zarr_format=zarr_format,
            storage_options=storage_options,
            **kwargs,
        )
    p = normalize_path(path)
    settings = array_settings(kwargs.pop("config", None), where=f"array {'/' + p!r}",
                              write_empty_chunks=kwargs.pop("write_empty_chunks", None))
    s = open_store(store, mode, storage_options)
    node: Array | Group | None = None
    if mode in ("r", "r+", "a"):
        meta, entries = _existing(s, p, mode, zarr_format, use_consolidated)
        if meta is not None:
            node = node_for(s, p, meta, read_only=mode == "r", consolidated=entries)
    if isinstance(node, Array):
        return node.with_config(settings) if settings else node
    if settings:
        raise ArgumentError(
            f"config= and write_empty_chunks= are settings of an array; the node at "
            f"{'/' + p!r} is {'a group' if node is not None else 'to be a new group'}"
        )
    if node is not None:
        return node
    return open_group(s, mode=mode, path=p, zarr_format=zarr_format, **kwargs)


def open_array(
    store: StoreLike = None,
    *,
    mode: str = "a",
    path: str | None = None,
    zarr_format: Any = None,
    storage_options: Mapping[str, Any] | None = None,
    **kwargs: Any,
) -> Array:
    """Open an existing array, or create one (modes ``a`` with ``shape=``, ``w``, ``w-``;
    the keywords are those of :func:`zarrx.create`)."""
    s = open_store(store, mode, storage_options)
    p = normalize_path(path)
    if mode in ("r", "r+", "a"):
        try:
            meta = (
                read_node(s, p, zarr_format=zarr_format)
                if mode != "a" or "shape" not in kwargs
                else find_node(s, p, zarr_format=zarr_format)
            )
        except NodeNotFoundError as e:
            raise _not_found(s, p, mode, e, hint="mode 'a' or 'w' with shape= and dtype= "
                             "creates an array") from None
        if meta is None:
            _check_creatable(s, p)
        else:
            if meta.node_type != "array":
                raise NodeTypeError(f"the node at {p or '/'!r} is a group, not an array")
            return Array(s, p, meta, read_only=mode == "r", config=array_settings(
                kwargs.get("config"), where=f"array {'/' + p!r}",
                write_empty_chunks=kwargs.get("write_empty_chunks"),
            ))
    if "shape" not in kwargs:
        raise ArgumentError(f"creating an array at {p or '/'!r} (mode {mode!r}) needs shape=")
    return create(store=s, path=p, zarr_format=zarr_format or 3, overwrite=mode == "w", **kwargs)


def open_like(a: Any, path: str, **kwargs: Any) -> Array:
    """Open (or create) the array at ``path`` with the shape, dtype, chunks — and for a
    zarrx Array the format, codecs and fill value — of ``a``."""
    return open_array(path=path, **{**like_keywords(a, with_fill=True), **kwargs})


def open_group(
    store: StoreLike = None,
    *,
    mode: str = "a",
    path: str | None = None,
    attributes: Mapping[str, Any] | None = None,
    zarr_format: Any = None,
    storage_options: Mapping[str, Any] | None = None,
    use_consolidated: bool | None = None,
    **kwargs: Any,
) -> Group:
    """Open an existing group, or create one (modes ``a``, ``w``, ``w-``)."""
    zarr_format = _legacy(kwargs, zarr_format)
    s = open_store(store, mode, storage_options)
    p = normalize_path(path)
    if mode in ("r", "r+", "a"):
        meta, entries = _existing(s, p, mode, zarr_format, use_consolidated)
        if meta is not None:
            if meta.node_type != "group":
                raise NodeTypeError(f"the node at {p or '/'!r} is an array, not a group")
            return Group(s, p, meta, read_only=mode == "r", consolidated=entries)
    return create_group(
        s, path=p, attributes=attributes, zarr_format=zarr_format or 3, overwrite=mode == "w"
    )


def _legacy(kwargs: dict[str, Any], zarr_format: Any) -> Any:
    """zarr-python's group keywords of no effect here: ``cache_attrs`` is ignored,
    ``zarr_version`` is ``zarr_format``; the others must be ``None``."""
    kwargs.pop("cache_attrs", None)
    zarr_format = zarr_format_of(zarr_format, kwargs.pop("zarr_version", None))
    for name in ("synchronizer", "chunk_store", "meta_array"):
        if kwargs.pop(name, None) is not None:
            raise ArgumentError(f"{name} is not supported by zarrx: {UNSUPPORTED[name]}")
    if kwargs:
        raise ArgumentError(f"unexpected keywords for a group: {sorted(kwargs)}")
    return zarr_format


def create_group(
    store: StoreLike,
    path: str | None = None,
    *,
    attributes: Mapping[str, Any] | None = None,
    zarr_format: Any = 3,
    overwrite: bool = False,
    storage_options: Mapping[str, Any] | None = None,
) -> Group:
    """Create a group (and missing parents) and return it."""
    s = open_store(store, "w" if overwrite else "a", storage_options)
    p = normalize_path(path)
    fmt = 3 if zarr_format is None else zarr_format
    meta = write_group(s, p, attributes=attributes, zarr_format=fmt, overwrite=overwrite)
    return Group(s, p, meta, read_only=False)


def group(
    store: StoreLike = None,
    *,
    overwrite: bool = False,
    path: str | None = None,
    zarr_format: Any = None,
    attributes: Mapping[str, Any] | None = None,
    storage_options: Mapping[str, Any] | None = None,
    **kwargs: Any,
) -> Group:
    """Open or create a group (zarr-python's ``group``: mode ``"w"`` with ``overwrite``,
    else ``"a"``; ``store=None`` is a new MemoryStore)."""
    return open_group(
        store, mode="w" if overwrite else "a", path=path, zarr_format=zarr_format,
        attributes=attributes, storage_options=storage_options, **kwargs,
    )


def open_consolidated(store: StoreLike = None, **kwargs: Any) -> Group:
    """Open a group through its consolidated metadata (an error if it has none)."""
    return open_group(store, use_consolidated=True, **kwargs)


def consolidate_metadata(
    store: StoreLike, path: str | None = None, *, storage_options: Mapping[str, Any] | None = None
) -> Group:
    """Gather the metadata of every node below the group at ``path`` into the group's own
    documents (``.zmetadata`` for v2, inline ``consolidated_metadata`` for v3), so opening
    the hierarchy later costs one read. Returns the group, opened consolidated."""
    s = open_store(store, "r+", storage_options)
    p = normalize_path(path)
    group = open_group(s, mode="r+", path=p, use_consolidated=False)
    entries = dict(list_members(s, p, group.metadata, max_depth=None))
    for rel, found in entries.items():
        if isinstance(found, Unreadable):  # consolidating would hide it from every reader
            raise type(found.error)(
                f"cannot consolidate the metadata of {p or '/'!r}: member {rel!r} cannot be "
                f"opened: {found.error}"
            )
    meta = group.metadata
    if meta.zarr_format == 2:
        key = f"{p}/{consolidated.V2_KEY}" if p else consolidated.V2_KEY
        s.set(key, dump_json(consolidated.to_v2(meta, entries)))  # a whole new snapshot
    elif meta.zarr_format == 3:
        inline = consolidated.to_v3(entries)
        # Into the group's document as it is now: attributes set meanwhile are kept.
        update_node(s, p, meta, lambda now: replace(
            now, extra={**now.extra, "consolidated_metadata": inline}))
    else:
        raise ArgumentError(f"zarr_format {meta.zarr_format!r} has no consolidated metadata")
    return open_group(s, mode="r", path=p)


# -- save and load (NumPy's save / savez / load, zarr-python's names) --------------------------

def save_array(
    store: StoreLike,
    arr: Any,
    *,
    zarr_format: Any = None,
    path: str | None = None,
    storage_options: Mapping[str, Any] | None = None,
    **kwargs: Any,
) -> None:
    """Write one NumPy array as a Zarr array (mode ``"a"``: an existing node is an error
    unless ``mode="w"`` or ``overwrite=True``); keywords as :func:`zarrx.create`."""
    data = np.asanyarray(arr)
    chunks = getattr(arr, "chunks", None)
    if isinstance(chunks, tuple):  # an array-like's own chunks, unless chunks= is given
        kwargs.setdefault("chunks", chunks)
    z = create(
        shape=data.shape, dtype=data.dtype,
        store=open_store(store, kwargs.get("mode") or "a", storage_options), path=path,
        zarr_format=zarr_format, **kwargs,
    )
    z[...] = data


def save_group(
    store: StoreLike,
    *args: Any,
    zarr_format: Any = None,
    path: str | None = None,
    storage_options: Mapping[str, Any] | None = None,
    **kwargs: Any,
) -> None:
    """Write several NumPy arrays into a new group (replacing the node at ``path``):
    positional ones as ``arr_0``, ``arr_1`` …, keyword ones by their names."""
    if not args and not kwargs:
        raise ArgumentError("save_group needs at least one array")
    arrays = {f"arr_{i}": a for i, a in enumerate(args)} | kwargs
    s = open_store(store, "w", storage_options)
    g = create_group(s, path, zarr_format=zarr_format, overwrite=True)
    for name, arr in arrays.items():
        save_array(s, arr, zarr_format=g.zarr_format, path=f"{g.path}/{name}")


def save(
    store: StoreLike, *args: Any, zarr_format: Any = None, path: str | None = None,
    **kwargs: Any,
) -> None:
    """:func:`save_array` for one positional array, else :func:`save_group`."""
    if len(args) == 1 and not kwargs:
        save_array(store, args[0], zarr_format=zarr_format, path=path)
    else:
        save_group(store, *args, zarr_format=zarr_format, path=path, **kwargs)


class LazyLoader(Mapping[str, Any]):
    """What :func:`load` returns for a group: its arrays by name, each read (whole) on
    first access and then kept."""

    def __init__(self, group: Group) -> None:
        self._group = group
        self._names = sorted(group.array_keys())
        self._cache: dict[str, Any] = {}

    def __getitem__(self, name: str) -> Any:
        if name not in self._cache:
            if name not in self._names:
                raise NodeNotFoundError(f"{self._group.name!r} has no array {name!r}")
            array = self._group[name]
            if not isinstance(array, Array):  # replaced by a group since the listing
                raise NodeTypeError(f"{array.name!r} is no longer an array")
            self._cache[name] = array[...]
        return self._cache[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def __repr__(self) -> str:
        return f"<LazyLoader: {', '.join(self._names)}>"


def load(
    store: StoreLike, path: str | None = None, zarr_format: Any = None,
    zarr_version: Any = None,
) -> Any:
    """An array's data as a NumPy array, or a group's arrays as a lazy mapping."""
    node = open(store, mode="r", path=path, zarr_format=zarr_format_of(zarr_format, zarr_version))
    if isinstance(node, Array):
        return node[...]
    return LazyLoader(node)


def tree(grp: Group, expand: bool | None = None, level: int | None = None) -> Any:
    """``grp.tree(expand, level)`` (zarr-python's function form)."""
    return grp.tree(expand=expand, level=level)
