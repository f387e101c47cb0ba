"""Where each format keeps a node's documents and chunks, and reading/writing them.

This is the only module that turns node paths into metadata keys. A *layout* per format
says which keys hold a node's documents, how to parse them and where its chunks live;
reading a node fetches the candidate documents of every format in one ``get_many``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import partial
from typing import Any

from zarrx.abc.store import Store
from zarrx.errors import MetadataError, NodeNotFoundError, NodeTypeError
from zarrx.metadata import v2, v3, v3_draft
from zarrx.metadata.json import dump_json, load_json
from zarrx.metadata.layout import Layout, node_prefix
from zarrx.metadata.model import parse_tolerant
from zarrx.stores.keys import validate_key


def normalize_path(path: str | None) -> str:
    """A node path without leading or trailing ``/``; ``""`` is the root."""
    if path is None:
        return ""
    path = str(path).strip("/")
    if path:
        validate_key(path)
    return path


def join_path(parent: str, name: str) -> str:
    return normalize_path(f"{parent}/{name}" if parent else name)


def _key(path: str, name: str) -> str:
    return f"{path}/{name}" if path else name


class _PrefixLayout(Layout):
    """A format whose nodes keep documents, chunks and members below their prefix."""

    def data_prefix(self, path: str) -> str:
        return node_prefix(path)

    def members(
        self, store: Store, path: str, max_depth: int | None,
        map_listings: Callable[..., Iterable[Any]],
    ) -> list[tuple[str, Any]]:
        """One ``list_dir`` a group, and one ``get_many`` of the documents a level."""
        out: list[tuple[str, Any]] = []
        level, depth = [(path, "")], 0
        while level:
            if len(level) == 1:  # one group: listed here, no hand-off to wait for
                listings: Iterable[list[str]] = [_child_paths(store, level[0][0])]
            else:
                listings = map_listings(partial(_child_paths, store), [p for p, _ in level])
            candidates = [(child, rel + child.rsplit("/", 1)[-1])
                          for (_, rel), children in zip(level, listings) for child in children]
            found = read_nodes(store, [c for c, _ in candidates], zarr_format=self.zarr_format,
                               tolerant=True)
            level = []
            for (child, child_rel), child_meta in zip(candidates, found):
                if child_meta is None:
                    continue
                out.append((child_rel, child_meta))
                if child_meta.node_type == "group" and (max_depth is None or depth < max_depth):
                    level.append((child, child_rel + "/"))
            depth += 1
        if depth > 1:  # (one level is in order already: its listing is sorted)
            out.sort(key=lambda entry: entry[0].split("/"))
        return out


class V3Layout(_PrefixLayout):
    zarr_format = 3

    def document_keys(self, path: str) -> list[str]:
        return [_key(path, v3.METADATA_KEY)]

    def parse(self, path: str, docs: Mapping[str, bytes | None]) -> Any | None:
        key = _key(path, v3.METADATA_KEY)
        raw = docs.get(key)
        if raw is None:
            return None
        return v3.node_from_document(load_json(raw, where=key), where=key, owned=True)

    def documents(self, path: str, meta: Any) -> dict[str, bytes]:
        return {_key(path, v3.METADATA_KEY): dump_json(meta.to_json())}

    def new_group(self, attributes: dict[str, Any]) -> Any:
        return v3.GroupMetadataV3(attributes=attributes)


class V2Layout(_PrefixLayout):
    zarr_format = 2

    def document_keys(self, path: str) -> list[str]:
        return [_key(path, k) for k in (v2.ARRAY_KEY, v2.GROUP_KEY, v2.ATTRS_KEY)]

    def parse(self, path: str, docs: Mapping[str, bytes | None]) -> Any | None:
        array_key, group_key, attrs_key = self.document_keys(path)
        raw_attrs = docs.get(attrs_key)
        attrs = None if raw_attrs is None else load_json(raw_attrs, where=attrs_key, allow_nan=True)
        if docs.get(array_key) is not None:
            doc = load_json(docs[array_key], where=array_key, allow_nan=True)  # type: ignore[arg-type]
            return v2.ArrayMetadataV2.from_json(doc, attrs, where=array_key)
        if docs.get(group_key) is not None:
            doc = load_json(docs[group_key], where=group_key)  # type: ignore[arg-type]
            return v2.GroupMetadataV2.from_json(doc, attrs, where=group_key)
        return None

    def documents(self, path: str, meta: Any) -> dict[str, bytes]:
        key = v2.ARRAY_KEY if meta.node_type == "array" else v2.GROUP_KEY
        return {_key(path, key): dump_json(meta.to_json()), **self.attribute_documents(path, meta)}

    def attribute_documents(self, path: str, meta: Any) -> dict[str, bytes]:
        return {_key(path, v2.ATTRS_KEY): dump_json(meta.attributes)}

    def new_group(self, attributes: dict[str, Any]) -> Any:
        return v2.GroupMetadataV2(attributes=attributes)


LAYOUTS: dict[Any, Layout] = {
    3: V3Layout(), 2: V2Layout(), v3_draft.FORMAT: v3_draft.DraftLayout(),
}


def check_format(zarr_format: Any) -> Any:
    if zarr_format not in LAYOUTS:
        raise MetadataError(
            f"unsupported zarr_format {zarr_format!r}; this zarrx reads and writes {tuple(LAYOUTS)}"
        )
    return zarr_format


def layout_of(meta: Any) -> Layout:
    """The layout that reads and writes ``meta``'s documents (the draft's depends on its
    entry point)."""
    return LAYOUTS[meta.zarr_format].for_node(meta)


def read_nodes(
    store: Store, paths: Sequence[str], *, zarr_format: Any = None, also_fetch: Any = None,
    tolerant: bool = False,
) -> list[Any]:
    """The parsed metadata of each node (``None`` where none).

    ``tolerant``: a node whose documents are refused becomes an :class:`Unreadable`
    holding the error, instead of raising it (a listing must not fail for one node).

    ``also_fetch``: more keys (v2's ``.zmetadata``) to read in the same batch as the v2
    documents, filled in place. On low-latency stores every candidate document of every
    format is read in one batch. On high-latency stores (object stores) the default
    format's documents are asked for first, so opening a v3 node costs one GET, and v2's
    only where no v3 node was found.

    A refused document is a :class:`MetadataError` naming its key and the store.
    """
    try:
        return _read_nodes_of(store, paths, zarr_format, also_fetch, tolerant)
    except MetadataError as e:
        raise _in_store(e, store) from None


def _in_store(error: MetadataError, store: Store) -> MetadataError:
    """``error`` (its message names the document's key, as parsers do) naming the store
    too: ``zarr.json: invalid JSON (...) (store: LocalStore('/data/x.zarr'))``."""
    if repr(store) in str(error):
        return error
    return type(error)(f"{error} (store: {store!r})")


def _read_nodes_of(
    store: Store, paths: Sequence[str], zarr_format: Any, also_fetch: Any, tolerant: bool
) -> list[Any]:
    if zarr_format is None and store.batched_reads:
        found = _read_nodes(store, paths, (3, v3_draft.FORMAT), None, required=False,
                            tolerant=tolerant)
        missing = [p for p, m in zip(paths, found) if m is None]
        if missing:
            rest = dict(zip(missing, _read_nodes(store, missing, (2,), also_fetch,
                                                 tolerant=tolerant)))
            found = [rest[p] if m is None else m for p, m in zip(paths, found)]
        return found
    formats = tuple(LAYOUTS) if zarr_format is None else (check_format(zarr_format),)
    return _read_nodes(store, paths, formats, also_fetch, required=zarr_format is not None,
                       tolerant=tolerant)


def _read_nodes(
    store: Store, paths: Sequence[str], formats: tuple[Any, ...], also_fetch: Any,
    *, required: bool = True, tolerant: bool = False,
) -> list[Any]:
    """One batched read of the documents of ``formats`` for every path."""
    layouts = [LAYOUTS[f] for f in formats]
    # The draft is known by its root entry point, read in the same batch; its nodes next.
    probe_draft = any(layout.zarr_format == v3_draft.FORMAT for layout in layouts)
    layouts = [layout for layout in layouts if layout.zarr_format != v3_draft.FORMAT]
    keys = [k for path in paths for layout in layouts for k in layout.document_keys(path)]
    if probe_draft and v3_draft.ENTRY_POINT_KEY not in keys:
        keys.append(v3_draft.ENTRY_POINT_KEY)
    extra = [] if also_fetch is None else list(also_fetch)
    docs = dict(zip(keys + extra, store.get_many([(k, None) for k in keys + extra])))
    if also_fetch is not None:  # more keys read in the same batch, filled in place
        also_fetch.update({k: docs[k] for k in extra})
    if probe_draft:
        entry = v3_draft.entry_point_from(
            docs.get(v3_draft.ENTRY_POINT_KEY), required=required and len(formats) == 1
        )
        if entry is not None:
            return v3_draft.DraftLayout(entry).read_nodes(store, paths, tolerant=tolerant)
    found = []
    for path in paths:
        meta = None
        for layout in layouts:
            meta = parse_tolerant(tolerant, layout.parse, path, docs)
            if meta is not None:
                break
        found.append(meta)
    return found


def read_node(store: Store, path: str, *, zarr_format: Any = None) -> Any:
    """The parsed metadata of the node at ``path``; :class:`NodeNotFoundError` if none."""
    meta = read_nodes(store, [path], zarr_format=zarr_format)[0]
    if meta is None:
        raise NodeNotFoundError(
            f"no array or group at path {path or '/'!r} in {store!r}"
            + ("" if zarr_format is None else f" (zarr_format={zarr_format})")
        )
    return meta


def read_node_consolidated(
    store: Store, path: str, *, zarr_format: Any = None, use_consolidated: bool | None = None
) -> tuple[Any, Any]:
    """The node at ``path`` and, for a group, its consolidated entries (or ``None``) — in
    one batched read. ``use_consolidated``: ``None`` uses them when present, ``False``
    ignores them (when stale), ``True`` requires them."""
    from zarrx.metadata import consolidated

    v2_key = f"{path}/{consolidated.V2_KEY}" if path else consolidated.V2_KEY
    wants_v2 = use_consolidated is not False and zarr_format in (None, 2)
    extra: dict[str, bytes | None] = {v2_key: None} if wants_v2 else {}
    meta = read_nodes(store, [path], zarr_format=zarr_format, also_fetch=extra)[0]
    if meta is None:
        raise NodeNotFoundError(f"no array or group at path {path or '/'!r} in {store!r}")
    entries = None
    if meta.node_type == "group" and use_consolidated is not False:
        if meta.zarr_format == 3:
            entries = consolidated.parse_v3(meta, where=f"{path or '/'!r}")
        elif meta.zarr_format == 2 and extra.get(v2_key) is not None:
            doc = load_json(extra[v2_key], where=v2_key, allow_nan=True)  # type: ignore[arg-type]
            entries = consolidated.parse_v2(doc, where=v2_key)
    if use_consolidated and entries is None:
        raise NodeNotFoundError(f"no consolidated metadata for {path or '/'!r} in {store!r}")
    return meta, entries


def find_node(store: Store, path: str, *, zarr_format: Any = None) -> Any | None:
    """Like :func:`read_node` but ``None`` when nothing is there."""
    return read_nodes(store, [path], zarr_format=zarr_format)[0]


def find_nodes(store: Store, paths: Sequence[str]) -> list[Any]:
    """:func:`find_node` of several paths in one batched read (any format)."""
    return read_nodes(store, paths) if paths else []


def write_node(store: Store, path: str, meta: Any) -> None:
    """Write the documents of a new node (creation replaces what was there)."""
    for key, value in layout_of(meta).documents(path, meta).items():
        store.set(key, value)


def ensure_node(store: Store, path: str, meta: Any) -> None:
    """Write the documents of ``meta`` where none are yet, each as one atomic update: a
    node another writer made meanwhile (a parent group two writers both found missing)
    keeps its documents, attributes included."""
    for key, value in layout_of(meta).documents(path, meta).items():
        ensure_document(store, key, value)


def ensure_document(store: Store, key: str, value: bytes) -> None:
    """Write ``value`` at ``key`` unless another value is there, as one atomic update."""
    store.atomic_update(key, partial(_unless_present, value))


def _unless_present(new: bytes, old: bytes | None) -> bytes:
    """The update that writes ``new`` where nothing is, and keeps what is there."""
    return new if old is None else old


def update_node(
    store: Store, path: str, meta: Any, change: Callable[[Any], Any], *, attributes: bool = False
) -> Any:
    """Change the node at ``path`` as it is now in the store, not as ``meta`` last saw it:
    read the document holding its definition (or, with ``attributes``, its attributes —
    the same ``zarr.json`` in v3, ``.zattrs`` in v2), apply ``change`` to the node it
    describes and write the result, as one atomic update of the store. So concurrent
    writers changing one node (appends, attribute keys) each keep the others' changes.
    ``change`` may run more than once (a retry) and must not have other effects.
    Returns the node as written."""
    layout = layout_of(meta)
    documents = layout.attribute_documents if attributes else layout.documents
    key = next(iter(documents(path, meta)))
    where = f"node {path or '/'!r} in {store!r}"
    written: list[Any] = []

    def update(raw: bytes | None) -> bytes:
        current = layout.parse(path, {**layout.documents(path, meta), key: raw})
        if current is None and layout.is_implicit(meta):
            current = meta  # an implicit group (the draft): no document yet
        if current is None:
            raise NodeNotFoundError(f"{where}: its document {key!r} was removed meanwhile")
        if current.node_type != meta.node_type:
            article = "an" if current.node_type == "array" else "a"
            raise NodeTypeError(f"{where}: it became {article} {current.node_type} meanwhile")
        new = change(current)
        written[:] = [new]
        return documents(path, new)[key]

    store.atomic_update(key, update)
    return written[0]


def data_prefix(path: str, meta: Any) -> str:
    return layout_of(meta).data_prefix(path)


def document_keys(path: str, meta: Any) -> list[str]:
    """The keys that may hold the documents of the node ``meta`` at ``path``."""
    return layout_of(meta).document_keys(path)


def _child_paths(store: Store, path: str) -> list[str]:
    """Paths of the prefixes directly below the node at ``path`` (v2, v3)."""
    _, prefixes = store.list_dir(node_prefix(path))
    return sorted(p.rstrip("/") for p in prefixes)


def list_members(
    store: Store, path: str, meta: Any, max_depth: int | None = 0,
    map_listings: Callable[..., Iterable[Any]] = map,
) -> list[tuple[str, Any]]:
    """``(path relative to the group, metadata)`` of the members of the group at ``path``
    down to ``max_depth`` (0: its children; ``None``: all), parents before children and
    siblings by name. A member that cannot be opened (or, in the draft, a key that is not
    a valid node name) is an :class:`Unreadable` entry: the listing goes on with its
    siblings.

    Store calls: the draft lists its whole metadata tree with one ``list_prefix`` and
    reads every document in one ``get_many``; v2 and v3 list each group with one
    ``list_dir`` and read each level's documents in one ``get_many``; ``map_listings``
    runs the ``list_dir`` calls of a level (a thread pool's ``map`` runs them at once: a
    round trip per level on a high-latency store, however many groups it has)."""
    return layout_of(meta).members(store, path, max_depth, map_listings)


def creates_parent_groups(zarr_format: Any) -> bool:
    """Whether creating a node writes groups at its ancestors (not with implicit groups)."""
    return not LAYOUTS[zarr_format].implicit_groups


def prepare_store(store: Store, path: str, meta: Any) -> tuple[Any, dict[str, bytes]]:
    """Ready ``store`` for a new node ``meta`` at ``path``, writing nothing: the metadata to
    write (the draft adopts the store's entry point) and the documents to write before it
    (a new draft hierarchy's entry point). The store has checked that it can hold every
    key of both (:meth:`Store.check_keys`)."""
    meta, pending = layout_of(meta).prepare_store(store, path, meta)
    store.check_keys([*pending, *layout_of(meta).documents(path, meta)])
    return meta, pending


def erase_unreadable(store: Store, path: str) -> None:
    """Remove a node whose metadata does not parse (to replace it, as ``overwrite=True``
    and mode ``w`` do in zarr-python): every key a node at ``path`` may have in any format.
    The draft's keys are found through its entry point, when that parses."""
    store.erase_prefix(node_prefix(path))  # v3 and v2: documents and chunks
    if not path:
        return  # the root: the whole store, the draft's entry point and keys included
    try:
        entry = v3_draft.entry_point_from(store.get(v3_draft.ENTRY_POINT_KEY), required=False)
    except MetadataError:
        entry = None
    if entry is not None:
        draft = v3_draft.DraftLayout(entry)
        store.erase(draft.array_key(path))
        store.erase(draft.group_key(path))
        store.erase_prefix(draft.meta_prefix(path))
        store.erase_prefix(draft.data_prefix(path))


def erase_tree(store: Store, path: str, meta: Any = None) -> None:
    """Remove the node at ``path`` and everything below it, in the node's own format
    (``meta``: the node, if known). Only keys of that node are touched: a path where no
    node exists is a :class:`NodeNotFoundError`, never a guess at another format's keys."""
    if meta is None:
        meta = find_node(store, path)
    if meta is None:
        raise NodeNotFoundError(f"no array or group to erase at {path or '/'!r} in {store!r}")
    layout_of(meta).erase(store, path, meta)
