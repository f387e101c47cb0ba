"""Where a draft hierarchy keeps each node: keys, node names, reading, writing, erasing."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from zarrx.abc.store import Store
from zarrx.errors import InvalidKeyError
from zarrx.metadata.json import dump_json, load_json
from zarrx.metadata.layout import Layout
from zarrx.metadata.model import Unreadable, parse_tolerant
from zarrx.metadata.v3_draft.array import ArrayMetadataDraft, GroupMetadataDraft
from zarrx.metadata.v3_draft.entry_point import (
    DATA_ROOT,
    DEFAULT_ENTRY_POINT,
    ENTRY_POINT_KEY,
    FORMAT,
    META_ROOT,
    EntryPoint,
    entry_point_from,
)

_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")

# -- node names ------------------------------------------------------------------------------

def validate_path(path: str) -> str:
    """Check every name of a node path against seed 000's rules (``""`` is the root)."""
    if not path:
        return path
    for name in path.split("/"):
        reason = (
            "it is empty" if not name
            else "it has characters other than a-z A-Z 0-9 - _ ." if not _NAME.match(name)
            else "it consists only of periods" if set(name) == {"."}
            else f"it is {len(name)} characters long (at most 255)" if len(name) > 255
            else None
        )
        if reason:
            raise InvalidKeyError(
                f"invalid node name {name!r} in path {'/' + path!r}: {reason} "
                "(Zarr v3.0 draft node names: 1-255 characters from a-z A-Z 0-9 - _ ., "
                "not only periods, case-sensitive)"
            )
    return path


# -- the key layout --------------------------------------------------------------------------

class DraftLayout(Layout):
    """Where a draft hierarchy keeps each node's document and chunks (one entry point)."""

    zarr_format = FORMAT
    #: Creating a node writes no documents for its ancestors.
    implicit_groups = True

    def __init__(self, entry_point: EntryPoint = DEFAULT_ENTRY_POINT) -> None:
        self.entry_point = entry_point

    @property
    def suffix(self) -> str:
        return self.entry_point.metadata_key_suffix

    # -- keys ----------------------------------------------------------------------------------
    def _meta(self, path: str) -> str:
        return f"{META_ROOT}/{validate_path(path)}" if path else META_ROOT

    def array_key(self, path: str) -> str:
        return f"{self._meta(path)}.array{self.suffix}"

    def group_key(self, path: str) -> str:
        return f"{self._meta(path)}.group{self.suffix}"

    def meta_prefix(self, path: str) -> str:
        return f"{self._meta(path)}/"

    def data_prefix(self, path: str) -> str:
        return f"{DATA_ROOT}/{validate_path(path)}/" if path else f"{DATA_ROOT}/"

    def document_keys(self, path: str) -> list[str]:
        return [self.array_key(path), self.group_key(path)]

    # -- reading -------------------------------------------------------------------------------
    def parse(self, path: str, docs: Mapping[str, bytes | None]) -> Any | None:
        """The node whose document is in ``docs``: an array first, then an explicit group
        (the seed's order of existence checks); ``None`` when neither is there."""
        array_key, group_key = self.document_keys(path)
        if docs.get(array_key) is not None:
            doc = load_json(docs[array_key], where=array_key)  # type: ignore[arg-type]
            return ArrayMetadataDraft.from_json(doc, self.entry_point, where=array_key)
        if docs.get(group_key) is not None:
            doc = load_json(docs[group_key], where=group_key)  # type: ignore[arg-type]
            return GroupMetadataDraft.from_json(doc, self.entry_point, where=group_key)
        return None

    def read_nodes(
        self, store: Store, paths: Sequence[str], *, tolerant: bool = False
    ) -> list[Any]:
        """Existence as the seed orders it: the array document, the group document, then
        ``list_dir`` of the path's metadata prefix (non-empty: an implicit group).
        ``tolerant``: a refused node is an :class:`Unreadable`, not an error."""
        keys = [k for path in paths for k in self.document_keys(path)]
        docs = dict(zip(keys, store.get_many([(k, None) for k in keys])))
        found: list[Any] = []
        for path in paths:
            meta = parse_tolerant(tolerant, self.parse, path, docs)
            if meta is None:
                child_keys, prefixes = store.list_dir(self.meta_prefix(path))
                if child_keys or prefixes:
                    meta = GroupMetadataDraft(entry_point=self.entry_point, implicit=True)
            found.append(meta)
        return self._zero_d(store, paths, found)

    def _zero_d(self, store: Store, paths: Sequence[str], found: list[Any]) -> list[Any]:
        """The chunk of a 0-d array is at ``c0`` (zarr-python 2.18, and what zarrx writes)
        or at ``c`` (seed 000's text): use ``c`` when only it exists (one batched read for
        every 0-d array in ``found``)."""
        zero_d = [i for i, m in enumerate(found)
                  if getattr(m, "node_type", None) == "array" and not m.shape]
        if not zero_d:
            return found
        keys = [f"{self.data_prefix(paths[i])}{k}" for i in zero_d for k in ("c", "c0")]
        values = store.get_many([(k, None) for k in keys])
        out = list(found)
        for n, i in enumerate(zero_d):
            have_seed, have_peer = values[2 * n], values[2 * n + 1]
            if have_seed is not None and have_peer is None:
                out[i] = replace(found[i], zero_d_key="c")
        return out

    def members(
        self, store: Store, path: str, max_depth: int | None = 0,
        map_listings: Callable[..., Iterable[Any]] = map,
    ) -> list[tuple[str, Any]]:
        """The members of the group at ``path`` down to ``max_depth`` (``None``: all), as
        seed 002 discovers a hierarchy: one ``list_prefix`` of its metadata prefix (one
        ``list_dir`` for the children alone), then one ``get_many`` of the documents found.
        Every directory of a key is a group (implicit when it has no document); a name
        that is not a valid node name is an :class:`Unreadable` entry, and so is a node
        whose document is refused: its siblings are listed all the same. (One listing:
        ``map_listings`` has nothing to run at once.)"""
        prefix = self.meta_prefix(path)
        if max_depth == 0:
            keys, prefixes = store.list_dir(prefix)
            keys = keys + prefixes
        else:
            keys = store.list_prefix(prefix)
        endings = (("array", f".array{self.suffix}"), ("group", f".group{self.suffix}"))
        documents: dict[str, dict[str, str]] = {}
        groups: set[str] = set()
        for key in keys:
            *dirs, base = key[len(prefix):].split("/")
            groups.update("/".join(dirs[: i + 1]) for i in range(len(dirs)))
            for kind, ending in endings:
                if base.endswith(ending) and len(base) > len(ending):
                    documents.setdefault("/".join([*dirs, base[: -len(ending)]]), {})[kind] = key
        rels = sorted(groups.union(documents), key=lambda r: r.split("/"))
        if max_depth is not None:
            rels = [r for r in rels if r.count("/") <= max_depth]
        bad: list[str] = []
        nodes: list[tuple[str, str]] = []  # (rel, full path) of nodes with valid names
        out: dict[str, Any] = {}
        for rel in rels:
            if any(rel.startswith(b + "/") for b in bad):
                continue  # below a name already reported
            full = f"{path}/{rel}" if path else rel
            try:
                validate_path(full)
            except InvalidKeyError as e:
                bad.append(rel)
                out[rel] = Unreadable(e)
                continue
            nodes.append((rel, full))
        # the array wins where both documents exist (the seed's order of existence checks)
        valid = {rel for rel, _ in nodes}
        wanted = {rel: kinds.get("array") or kinds["group"]
                  for rel, kinds in documents.items() if rel in valid}
        values = dict(zip(wanted, store.get_many([(k, None) for k in wanted.values()])))
        for rel, full in nodes:
            raw = values.get(rel)
            if raw is not None:
                out[rel] = parse_tolerant(True, self.parse, full, {wanted[rel]: raw})
            elif rel in groups:  # no document (or it vanished since the listing)
                out[rel] = GroupMetadataDraft(entry_point=self.entry_point, implicit=True)
        rels = [rel for rel in rels if rel in out]
        full_paths = [f"{path}/{rel}" if path else rel for rel in rels]
        return list(zip(rels, self._zero_d(store, full_paths, [out[r] for r in rels])))

    # -- writing -------------------------------------------------------------------------------
    def for_node(self, meta: Any) -> DraftLayout:
        """The layout of ``meta``'s hierarchy: its entry point decides the keys."""
        return self if meta.entry_point == self.entry_point else DraftLayout(meta.entry_point)

    def is_implicit(self, meta: Any) -> bool:
        return meta.node_type == "group" and bool(meta.implicit)

    def documents(self, path: str, meta: Any) -> dict[str, bytes]:
        layout = DraftLayout(meta.entry_point)
        key = layout.array_key(path) if meta.node_type == "array" else layout.group_key(path)
        return {key: dump_json(meta.to_json())}

    attribute_documents = documents

    def new_group(self, attributes: dict[str, Any]) -> GroupMetadataDraft:
        return GroupMetadataDraft(attributes=attributes, entry_point=self.entry_point)

    def prepare_store(self, store: Store, path: str, meta: Any) -> tuple[Any, dict[str, bytes]]:
        """Before a node is created: adopt the store's entry point (its suffix decides the
        keys), or, when the store has none, the entry point document to write first. (A
        store whose ``zarr.json`` is a v3 document holds another format's hierarchy: the
        caller refuses that, unless it replaces the whole store.)"""
        validate_path(path)
        entry = entry_point_from(store.get(ENTRY_POINT_KEY), required=False)
        if entry is None:
            return meta, {ENTRY_POINT_KEY: dump_json(meta.entry_point.to_json())}
        return meta.with_entry_point(entry), {}

    def erase(self, store: Store, path: str, meta: Any) -> None:
        """Erase a node as the seed says: an array's document and chunks; a group's
        document (if explicit) and everything below its metadata and data prefixes."""
        layout = DraftLayout(meta.entry_point)
        if meta.node_type == "array":
            store.erase(layout.array_key(path))
            store.erase_prefix(layout.data_prefix(path))
            return
        if not self.is_implicit(meta):
            store.erase(layout.group_key(path))
        store.erase_prefix(layout.meta_prefix(path))
        store.erase_prefix(layout.data_prefix(path))

