"""Structural comparison of ZOMs: :func:`diff` lists differences, ``like`` says "none".

Seed 004: two hierarchies have the same *structure* when their trees of arrays and groups
and the metadata of those nodes agree; the data in the arrays and the storage backend do
not matter. Comparing structure here also means reading absent properties as the
defaults the Zarr specs give them:

- v3 arrays: ``storage_transformers`` absent, ``null`` or ``[]``; ``dimension_names``
  absent or ``null``; a named configuration given as a bare name, without
  ``configuration`` or with ``null`` (``{}``); the chunk key encodings' default
  separators;
- v2 arrays: ``filters`` ``null``, ``[]`` or ``{}``; ``dimension_separator`` absent (``.``);
- v3 groups: ``consolidated_metadata`` (a flattening of the members, not structure);
- draft nodes: ``extensions`` absent or ``[]``; whether a group is implicit is compared
  (as the field ``implicit``).

Numbers compare as JSON numbers (``1`` equals ``1.0``, ``true`` is not ``1``).

>>> from zarrx.zom.model import ArraySpec
>>> a = ArraySpec.new(shape=(10, 10), dtype="uint8", chunks=(5, 5))
>>> [str(d) for d in diff(a, a.replace(shape=[10, 20]))]
['/: shape (10, 10) != (10, 20)']
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from zarrx.zom.frozen import json_equal, thaw
from zarrx.zom.model import DRAFT, GroupSpec, display_path


class _Missing:
    def __repr__(self) -> str:
        return "(absent)"


#: Stands for the side of a :class:`Difference` where a node or property is absent.
MISSING: Any = _Missing()


def show(value: Any) -> str:
    """A JSON value as a person reads it: arrays as tuples, strings quoted."""
    if value is MISSING:
        return "(absent)"
    if isinstance(value, list | tuple):
        inner = ", ".join(show(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, Mapping):
        return json.dumps(thaw(value), separators=(", ", ": "), ensure_ascii=False)
    return json.dumps(value, ensure_ascii=False)


@dataclass(frozen=True)
class Difference:
    """One difference: at node ``path`` (``/a/b``), ``field`` is ``a`` in the first
    hierarchy and ``b`` in the second (:data:`MISSING` where absent).

    ``field`` is a property name (``shape``), ``attributes.<key>``, ``zarr_format``,
    ``node_type``, or ``node`` when the node exists on one side only."""

    path: str
    field: str
    a: Any
    b: Any

    def __str__(self) -> str:
        return f"{self.path}: {self.field} {show(self.a)} != {show(self.b)}"


def _named(value: Any, default_config: Mapping[str, Any] | None = None) -> Any:
    """A named configuration in its full form: ``{"name": …, "configuration": {…}}``."""
    if isinstance(value, str):
        value = {"name": value}
    if not isinstance(value, Mapping) or "name" not in value:
        return value
    out = dict(value)
    config = dict(out.get("configuration") or {})
    for key, default in (default_config or {}).items():
        config.setdefault(key, default)
    for key in ("codecs", "index_codecs"):
        if isinstance(config.get(key), list | tuple):
            config[key] = [_named(c) for c in config[key]]
    out["configuration"] = config
    return out


_SEPARATORS = {"default": "/", "v2": "."}


def normalise(node: Any) -> dict[str, Any]:
    """The properties of a node with the specs' defaults filled in (plain JSON)."""
    props = thaw(node.properties)
    if node.zarr_format == DRAFT:  # the documents as stored; a group may be implicit
        if props.get("extensions") is None:
            props["extensions"] = []
        if isinstance(node, GroupSpec):
            props["implicit"] = node.implicit
        return props
    if isinstance(node, GroupSpec):
        props.pop("consolidated_metadata", None)
        return props
    if node.zarr_format == 3:
        if props.get("storage_transformers") is None:
            props["storage_transformers"] = []
        props.setdefault("dimension_names", None)
        if "chunk_grid" in props:
            props["chunk_grid"] = _named(props["chunk_grid"])
        cke = props.get("chunk_key_encoding")
        if cke is not None:
            name = cke if isinstance(cke, str) else cke.get("name") if isinstance(
                cke, Mapping) else None
            default = {"separator": _SEPARATORS[name]} if name in _SEPARATORS else None
            props["chunk_key_encoding"] = _named(cke, default)
        if isinstance(props.get("codecs"), list):
            props["codecs"] = [_named(c) for c in props["codecs"]]
        if isinstance(props.get("data_type"), Mapping):
            props["data_type"] = _named(props["data_type"])
        return props
    filters = props.get("filters")
    if filters is None or (isinstance(filters, list | Mapping) and not filters):
        props["filters"] = None
    props.setdefault("dimension_separator", ".")
    return props


@dataclass(frozen=True)
class _Options:
    ignore: frozenset[str]
    attributes: bool
    allow_extra: bool


def _compare_node(a: Any, b: Any, path: str, opts: _Options, out: list[Difference]) -> None:
    where = display_path(path)
    if a.node_type != b.node_type:
        out.append(Difference(where, "node_type", a.node_type, b.node_type))
        return
    if a.zarr_format != b.zarr_format:
        out.append(Difference(where, "zarr_format", a.zarr_format, b.zarr_format))
    else:
        pa, pb = normalise(a), normalise(b)
        for key in [*pa, *(k for k in pb if k not in pa)]:
            if key in opts.ignore:
                continue
            va, vb = pa.get(key, MISSING), pb.get(key, MISSING)
            if va is MISSING or vb is MISSING or not json_equal(va, vb):
                out.append(Difference(where, key, va, vb))
    if opts.attributes and "attributes" not in opts.ignore:
        aa, ab = a.attributes, b.attributes
        for key in [*aa, *(k for k in ab if k not in aa)]:
            if f"attributes.{key}" in opts.ignore:
                continue
            va, vb = aa.get(key, MISSING), ab.get(key, MISSING)
            if va is MISSING or vb is MISSING or not json_equal(va, vb):
                out.append(Difference(where, f"attributes.{key}", va, vb))
    if isinstance(a, GroupSpec):
        for name in sorted(set(a.members) | set(b.members)):
            child = f"{path}/{name}" if path else name
            ma, mb = a.members.get(name), b.members.get(name)
            if mb is None:
                if not opts.allow_extra:
                    out.append(Difference(display_path(child), "node", ma.node_type, MISSING))
            elif ma is None:
                out.append(Difference(display_path(child), "node", MISSING, mb.node_type))
            else:
                _compare_node(ma, mb, child, opts, out)


def diff(
    a: Any, b: Any, *, ignore: Iterable[str] = (), attributes: bool = True,
    allow_extra: bool = False,
) -> list[Difference]:
    """The structural differences between two ZOMs (ArraySpec / GroupSpec, or their
    JSON), node by node, parents first.

    - ``ignore``: property names not compared at any node (``"codecs"``,
      ``"fill_value"`` …), ``"attributes"``, or single attributes (``"attributes.units"``);
    - ``attributes=False``: attributes are not compared at all;
    - ``allow_extra=True``: members that only ``a`` has are not differences (``a`` may
      hold more than ``b`` declares; e.g. a store checked against a required layout).
    """
    from zarrx.zom.model import from_json

    if isinstance(a, Mapping):
        a = from_json(a)
    if isinstance(b, Mapping):
        b = from_json(b)
    ignored = frozenset([ignore] if isinstance(ignore, str) else ignore)
    out: list[Difference] = []
    _compare_node(a, b, "", _Options(ignored, attributes, allow_extra), out)
    return out
