"""ZOMs and stores: snapshot a stored hierarchy, create one, flatten one.

- :func:`from_zarr` reads structure only: one recursive listing of the group
  (``members(max_depth=None)``), or nothing beyond the root when the group was opened
  with consolidated metadata.
- :func:`to_zarr` checks every node first (its name as the target format names nodes,
  and each array's metadata built as its format would store it), then creates the nodes,
  parents first, with :func:`zarrx.create_group` and :func:`zarrx.create_array`. Where a
  v2/v3 spec holds metadata those functions have no keyword for (e.g. non-default
  sharding index codecs, a ``null`` v2 fill value, v3 extension keys), the node's document
  is then written exactly as the spec says. A draft spec's documents are written as they
  are, and its implicit groups stay implicit (no document).
- :func:`consolidated` flattens a ZOM into consolidated metadata (seed 004).
"""

from __future__ import annotations

from typing import Any

from zarrx.errors import MetadataError
from zarrx.metadata import v3_draft
from zarrx.zom.frozen import json_equal, thaw
from zarrx.zom.mapping import keywords, metadata_of, node_spec
from zarrx.zom.model import ArraySpec, GroupSpec, display_path


def from_zarr(
    node: Any, path: str | None = None, *, use_consolidated: bool | None = None
) -> ArraySpec | GroupSpec:
    """The ZOM of a stored node: a :class:`zarrx.Array` / :class:`zarrx.Group`, or a store
    (path, URL, Store) opened read-only at ``path``."""
    import zarrx

    if not isinstance(node, zarrx.Array | zarrx.Group):
        node = zarrx.open(node, mode="r", path=path, use_consolidated=use_consolidated)
    if isinstance(node, zarrx.Array):
        return node_spec(node.metadata)
    entries = dict(node.member_metadata(max_depth=None))
    flat: dict[str, ArraySpec | GroupSpec] = {"": node_spec(node.metadata)}
    for rel in sorted(entries):
        flat[rel] = node_spec(entries[rel])
    return GroupSpec.from_flat(flat)


def _target_format(spec: ArraySpec | GroupSpec, zarr_format: Any) -> Any:
    if zarr_format is None:
        return spec.zarr_format
    if zarr_format == spec.zarr_format:
        return zarr_format
    if zarr_format == v3_draft.FORMAT and spec.zarr_format == 3:
        return zarr_format
    raise MetadataError(
        f"a v{spec.zarr_format} spec cannot be written as zarr_format {zarr_format!r}; "
        f"map it first (spec.to_v2() / spec.to_v3())"
    )


def _nodes(spec: ArraySpec | GroupSpec) -> list[tuple[str, ArraySpec | GroupSpec]]:
    if isinstance(spec, GroupSpec):
        return list(spec.to_flat().items())
    return [("", spec)]


def _plan(spec: ArraySpec | GroupSpec, fmt: Any) -> list[tuple[str, Any, Any, Any]]:
    """``(path, node, metadata, create_array keywords or None)`` for every node, each
    array's metadata built as ``fmt`` stores it: errors come here, before any write."""
    from zarrx.creation import array_metadata

    plan = []
    nodes = _nodes(spec)
    parents = {rel.rpartition("/")[0] for rel, _ in nodes if rel}
    for rel, node in nodes:
        where = display_path(rel)
        check_path(rel, fmt)
        meta = metadata_of(node, rel)
        kw = None
        if node.zarr_format == v3_draft.FORMAT:
            if isinstance(node, GroupSpec) and node.implicit and rel not in parents:
                raise MetadataError(
                    f"{where}: an implicit group exists only through its members; this one "
                    "has none (make it explicit)"
                )
        elif isinstance(node, ArraySpec):
            kw = keywords(meta, fmt, where=where)
            array_metadata(zarr_format=fmt, where=where, **kw)
        plan.append((rel, node, meta, kw))
    return plan


def check_path(path: str, fmt: Any) -> str:
    """A node path as ``fmt`` names nodes (the draft: seed 000's node names), or
    :class:`~zarrx.errors.InvalidKeyError` naming it."""
    from zarrx.metadata.io import normalize_path

    normalize_path(path)
    if fmt == v3_draft.FORMAT:
        v3_draft.validate_path(path)
    return path


def check_writable(spec: ArraySpec | GroupSpec, zarr_format: Any = None) -> None:
    """Raise :class:`MetadataError` (naming the node) if :func:`to_zarr` could not create
    ``spec`` as ``zarr_format``; writes nothing."""
    _plan(spec, _target_format(spec, zarr_format))


def to_zarr(
    spec: ArraySpec | GroupSpec, store: Any, path: str | None = None, *,
    overwrite: bool = False, zarr_format: Any = None,
) -> Any:
    """Create the hierarchy ``spec`` describes; returns the created root node."""
    import zarrx
    from zarrx.metadata.io import normalize_path, write_node
    from zarrx.metadata.nodes import create_node
    from zarrx.stores.url import make_store

    fmt = _target_format(spec, zarr_format)
    root = check_path(normalize_path(path), fmt)
    plan = _plan(spec, fmt)  # every node checked (names, metadata, format) before any write
    s = make_store(store, mode="w" if overwrite else "a")
    for rel, node, meta, kw in plan:
        full = "/".join(p for p in (root, rel) if p)
        first = rel == ""
        if node.zarr_format == v3_draft.FORMAT:  # the documents, exactly as the spec has them
            if not (isinstance(node, GroupSpec) and node.implicit):  # implicit: no document
                create_node(s, full, meta, overwrite=overwrite and first)
            continue
        made: Any
        if kw is None:
            made = zarrx.create_group(
                s, full, attributes=thaw(node.attributes), zarr_format=fmt,
                overwrite=overwrite and first,
            )
        else:
            made = zarrx.create_array(s, full, zarr_format=fmt, overwrite=overwrite and first,
                                      **kw)
        if fmt in (2, 3) and not json_equal(node_spec(made.metadata).to_json(),
                                            node._node_json()):
            write_node(s, full, meta)  # what the keywords could not say, as the spec says it
    return zarrx.open(s, mode="r+", path=root)


def _stored_document(node: ArraySpec | GroupSpec, path: str) -> dict[str, Any]:
    """The document zarrx stores for a node: what consolidated metadata holds. A node
    zarrx cannot parse (e.g. an unknown data type) keeps its ZOM form."""
    try:
        return metadata_of(node, path).to_json()
    except MetadataError:
        if isinstance(node, ArraySpec):
            return node.to_json()
        return {"zarr_format": 3, "node_type": "group", "attributes": thaw(node.attributes),
                **thaw(node.properties)}


def consolidated(spec: GroupSpec) -> dict[str, Any]:
    """Consolidated metadata as the flattening of a ZOM (seed 004's suggestion): every
    node below the root, by path, with the document its format stores for it."""
    if spec.zarr_format == v3_draft.FORMAT:
        raise MetadataError("the Zarr v3.0 draft has no consolidated metadata")
    flat = spec.to_flat()
    paths = sorted(p for p in flat if p)
    if spec.zarr_format == 3:
        metadata = {}
        for path in paths:
            doc = _stored_document(flat[path], path)
            if isinstance(flat[path], GroupSpec):
                doc["consolidated_metadata"] = {
                    "kind": "inline", "must_understand": False, "metadata": {}
                }
            metadata[path] = doc
        return {"kind": "inline", "must_understand": False, "metadata": metadata}
    documents: dict[str, Any] = {".zgroup": {"zarr_format": 2}, ".zattrs": thaw(spec.attributes)}
    for path in paths:
        node = flat[path]
        if isinstance(node, GroupSpec):
            documents[f"{path}/.zgroup"] = {"zarr_format": 2}
        else:
            doc = _stored_document(node, path)
            doc.pop("attributes", None)
            documents[f"{path}/.zarray"] = doc
        documents[f"{path}/.zattrs"] = thaw(node.attributes)
    return {"zarr_consolidated_format": 1, "metadata": documents}
