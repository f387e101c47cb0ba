"""The Zarr Object Model (seed 004): frozen :class:`ArraySpec` and :class:`GroupSpec`.

A ZOM node is a Zarr node's metadata minus its user metadata, plus ``attributes``; a ZOM
group also has ``members``: child names mapped to nodes. A model is parametrised by the
Zarr version: ``zarr_format`` 3 (the final spec), 2, or ``"3-draft"`` (the 3.0 editor's
draft: its array and group documents as they are, data type extensions with their
fallback and ``extensions`` included, and ``implicit`` groups, which have no document).
``to_v3()`` maps a draft model onto v3, and ``to_zarr(..., zarr_format="3-draft")``
writes v3 specs as a draft hierarchy.

Properties are kept as the document gives them, in order, as frozen JSON: the ZOM is the
hierarchy's *structure* as declared, so ``from_json(doc).to_json() == doc``.
:meth:`ArraySpec.like` compares structure with the defaults the specs imply.

The model is plain data: the modules that work on it (:mod:`~zarrx.zom.mapping`,
:mod:`~zarrx.zom.storage`, :mod:`~zarrx.zom.compare`) depend on it, not it on them. The
specs' methods that reach those modules (``to_zarr``, ``to_v2``, ``diff`` …) call them
through :class:`Operations`, which :mod:`zarrx.zom` binds as it is imported.

>>> spec = from_json({"zarr_format": 3, "node_type": "group", "attributes": {"a": 1},
...                   "members": {}})
>>> spec.attributes["a"], spec.to_json()["members"]
(1, {})
"""

from __future__ import annotations

import json
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from zarrx.errors import MetadataError, NodeNotFoundError
from zarrx.zom.frozen import FrozenDict, canonical, freeze, json_equal, thaw
from zarrx.zom.schema import check_json, detect_format, node_schema

#: The 3.0 editor's draft (seed 000), whose hierarchies have a model of their own.
DRAFT = "3-draft"
FORMATS = (3, 2, DRAFT)
#: Keys of a ZOM document that are not properties of the Zarr node (``implicit``: a draft
#: group that exists only through its members, with no document).
_HEADER = frozenset({"zarr_format", "zarr_version", "node_type", "attributes", "implicit"})
_MEMBERS_ESCAPED = re.compile(r"^_+members$")
_MEMBERS_NAME = re.compile(r"^_*members$")


def escape_property(name: str) -> str:
    """A group property's name in ZOM JSON: ``members`` → ``_members`` → ``__members`` …
    (seed 004: the ZOM's own ``members`` wins, Zarr's gets an underscore)."""
    return "_" + name if _MEMBERS_NAME.match(name) else name


def unescape_property(name: str) -> str:
    return name[1:] if _MEMBERS_ESCAPED.match(name) else name


def check_name(name: Any, *, where: str) -> str:
    """A member name: a non-empty string without ``/``, not only periods."""
    if not isinstance(name, str) or not name or "/" in name or set(name) == {"."}:
        raise MetadataError(
            f"{where}: invalid member name {name!r} (names are non-empty, have no '/', and "
            "are not made of periods only)"
        )
    return name


def _check_format(zarr_format: Any, what: str) -> Any:
    if zarr_format not in FORMATS or isinstance(zarr_format, bool):
        raise MetadataError(
            f"{what}: zarr_format must be 3, 2 or {DRAFT!r}, got {zarr_format!r}"
        )
    return zarr_format if zarr_format == DRAFT else int(zarr_format)


def _check_node(spec: ArraySpec | GroupSpec, where: str) -> None:
    if spec.zarr_format == DRAFT:
        return  # seed 004 has no schema for the draft: its documents are checked on parse
    doc = spec._node_json()
    check_json(doc, node_schema(spec.zarr_format, spec.node_type, lenient=True), where=where)


def _join(path: str, name: str) -> str:
    return f"{path}/{name}" if path else name


def display_path(path: str) -> str:
    """``""`` → ``/``, ``a/b`` → ``/a/b``."""
    return "/" + path


@dataclass(frozen=True)
class Operations:
    """What the specs' methods do with stores, metadata, other formats and other specs,
    implemented by the modules above the model (:mod:`zarrx.zom` binds them with
    :func:`bind_operations` as it is imported, before any of its modules can be used)."""

    to_zarr: Callable[..., Any]  # storage.to_zarr
    from_zarr: Callable[[Any], Any]  # storage.from_zarr
    consolidated: Callable[[Any], dict[str, Any]]  # storage.consolidated
    node_spec: Callable[[Any], Any]  # mapping.node_spec
    array_spec: Callable[..., Any]  # mapping.array_spec
    to_v3: Callable[..., Any]  # mapping.to_v3
    to_v2: Callable[[Any], Any]  # mapping.to_v2
    diff: Callable[..., list[Any]]  # compare.diff


_operations: Operations | None = None


def bind_operations(operations: Operations) -> None:
    global _operations
    _operations = operations


def _ops() -> Operations:
    if _operations is None:  # only while zarrx.zom itself is being imported
        raise RuntimeError("the ZOM's operations are not bound yet (import zarrx.zom)")
    return _operations


class _Spec(ABC):
    """What arrays and groups share."""

    zarr_format: int | str  # 2, 3 or "3-draft"
    attributes: Mapping[str, Any]
    properties: Mapping[str, Any]
    node_type: ClassVar[str]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _Spec):
            return NotImplemented
        return type(self) is type(other) and json_equal(self.to_json(), other.to_json())

    def __hash__(self) -> int:
        return hash((type(self).__name__, canonical(self.to_json())))

    def get(self, name: str, default: Any = None) -> Any:
        """A property of the node (``shape``, ``codecs``, ``dtype`` …), as frozen JSON."""
        return self.properties.get(name, default)

    @abstractmethod
    def to_json(self) -> dict[str, Any]:
        """The node's ZOM JSON (each spec class writes its own)."""

    @abstractmethod
    def _node_json(self) -> dict[str, Any]:
        """The node's own properties as JSON, without members."""

    def dumps(self, indent: int | None = 2) -> str:
        """The ZOM JSON text."""
        return json.dumps(self.to_json(), indent=indent, ensure_ascii=False, allow_nan=False)

    # -- operations, in the modules above (see Operations) --------------------------------
    def to_zarr(
        self, store: Any, path: str | None = None, *, overwrite: bool = False,
        zarr_format: Any = None,
    ) -> Any:
        """Create this node (and, for a group, every member) in ``store`` at ``path`` with
        :func:`zarrx.create_group` / :func:`zarrx.create_array`; arrays get no data.
        ``zarr_format="3-draft"`` writes a v3 spec as a 3.0 draft hierarchy."""
        return _ops().to_zarr(self, store, path, overwrite=overwrite, zarr_format=zarr_format)

    def like(
        self, other: Any, *, ignore: Any = (), attributes: bool = True,
        allow_extra: bool = False,
    ) -> bool:
        """Whether ``other`` has the same structure (see :func:`zarrx.zom.diff`)."""
        return not _ops().diff(self, other, ignore=ignore, attributes=attributes,
                        allow_extra=allow_extra)

    def diff(self, other: Any, **options: Any) -> list[Any]:
        """The structural differences to ``other`` (see :func:`zarrx.zom.diff`)."""
        return _ops().diff(self, other, **options)

    def to_v3(self, *, chunk_key_encoding: str = "default") -> Any:
        """This node in the v3 model (itself when it is already v3)."""
        return _ops().to_v3(self, chunk_key_encoding=chunk_key_encoding)

    def to_v2(self) -> Any:
        """This node in the v2 model; :class:`MetadataError` naming the node and property
        where v2 cannot represent it (sharding, several compressors, data types …)."""
        return _ops().to_v2(self)

    def to_format(self, zarr_format: Any) -> Any:
        """:meth:`to_v3` or :meth:`to_v2`; ``"3-draft"`` gives a draft spec as it is and
        the v3 model of the others (which ``to_zarr`` writes as a draft hierarchy)."""
        if zarr_format == 2:
            return self.to_v2()
        if zarr_format == DRAFT and self.zarr_format == DRAFT:
            return self
        if zarr_format in (3, DRAFT):
            return self.to_v3()
        raise MetadataError(f"unsupported zarr_format {zarr_format!r}; expected 2, 3 or '3-draft'")


@dataclass(frozen=True, eq=False, kw_only=True)
class ArraySpec(_Spec):
    """A ZOM array: the array's metadata properties (``shape``, ``data_type`` or ``dtype``,
    ``codecs`` or ``compressor`` …) and its ``attributes``.

    >>> a = ArraySpec.new(shape=(4, 6), dtype="int16", chunks=(2, 3))
    >>> a.shape, a.chunks, a.data_type, a.get("fill_value")
    ((4, 6), (2, 3), 'int16', 0)
    """

    properties: Mapping[str, Any]
    attributes: Mapping[str, Any] = field(default_factory=FrozenDict)
    zarr_format: Any = 3

    node_type: ClassVar[str] = "array"

    def __post_init__(self) -> None:
        fmt = _check_format(self.zarr_format, "ArraySpec")
        props = freeze(self.properties, where="ArraySpec properties")
        if not isinstance(props, Mapping):
            raise MetadataError("ArraySpec: properties must be an object")
        clash = _HEADER.intersection(props)
        if clash:
            raise MetadataError(
                f"ArraySpec: {sorted(clash)} are not array properties (pass zarr_format= and "
                "attributes= instead)"
            )
        attrs = freeze(self.attributes, where="ArraySpec attributes")
        if not isinstance(attrs, Mapping):
            raise MetadataError("ArraySpec: attributes must be an object")
        object.__setattr__(self, "zarr_format", fmt)
        object.__setattr__(self, "properties", props)
        object.__setattr__(self, "attributes", attrs)
        _check_node(self, "ArraySpec")

    # -- JSON -----------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        """The ZOM JSON object (seed 004)."""
        doc: dict[str, Any] = {"zarr_format": self.zarr_format}
        if self.zarr_format in (3, DRAFT):
            doc["node_type"] = "array"
            doc["attributes"] = thaw(self.attributes)
            doc.update(thaw(self.properties))
        else:
            doc.update(thaw(self.properties))
            doc["attributes"] = thaw(self.attributes)
        return doc

    _node_json = to_json

    @classmethod
    def from_json(cls, doc: Any, *, zarr_format: int | None = None) -> ArraySpec:
        spec = from_json(doc, zarr_format=zarr_format)
        if not isinstance(spec, ArraySpec):
            raise MetadataError("ZOM document: expected an array, got a group")
        return spec

    # -- reading the model ----------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.properties.get("shape", ()))

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def data_type(self) -> Any:
        """``data_type`` (v3) or ``dtype`` (v2), as written."""
        return self.properties.get("dtype" if self.zarr_format == 2 else "data_type")

    @property
    def chunks(self) -> tuple[int, ...] | None:
        """The chunk grid's chunk shape (of a shard, when sharded); ``None`` if irregular."""
        if self.zarr_format == 2:
            return tuple(self.properties.get("chunks", ()))
        grid = self.properties.get("chunk_grid")
        if self.zarr_format == DRAFT and isinstance(grid, Mapping) and grid.get(
                "type") == "regular":
            return tuple(grid.get("chunk_shape", ()))
        if isinstance(grid, Mapping) and grid.get("name") == "regular":
            config = grid.get("configuration") or {}
            shape = config.get("chunk_shape")
            return None if shape is None else tuple(shape)
        return None

    @property
    def fill_value(self) -> Any:
        return self.properties.get("fill_value")

    @property
    def dimension_names(self) -> tuple[str | None, ...] | None:
        names = self.properties.get("dimension_names")
        return None if names is None else tuple(names)

    def replace(self, **changes: Any) -> ArraySpec:
        """A copy with ``attributes``, ``zarr_format`` or properties changed.

        >>> ArraySpec.new(shape=(4,), dtype="uint8").replace(shape=[8]).shape
        (8,)
        """
        attributes = changes.pop("attributes", self.attributes)
        zarr_format = changes.pop("zarr_format", self.zarr_format)
        props = dict(self.properties)
        props.update(changes)
        return ArraySpec(properties=props, attributes=attributes, zarr_format=zarr_format)

    @classmethod
    def new(cls, *, shape: Any, dtype: Any = "float64", zarr_format: Any = 3,
            **keywords: Any) -> ArraySpec:
        """The spec of the array :func:`zarrx.create_array` would make with these keywords
        (``chunks``, ``shards``, ``compressors``, ``fill_value`` …)."""
        spec: ArraySpec = _ops().array_spec(
            zarr_format=zarr_format, shape=shape, dtype=dtype, **keywords)
        return spec

    @classmethod
    def from_zarr(cls, array: Any) -> ArraySpec:
        """The spec of a stored :class:`zarrx.Array` (its metadata; no data is read)."""
        spec = _ops().node_spec(array.metadata)
        if not isinstance(spec, ArraySpec):
            raise MetadataError(f"{array.name!r} is a group; use GroupSpec.from_zarr")
        return spec

    def __repr__(self) -> str:
        return (
            f"ArraySpec(zarr_format={self.zarr_format}, shape={self.shape}, "
            f"data_type={thaw(self.data_type)!r}, chunks={self.chunks})"
        )


@dataclass(frozen=True, eq=False, kw_only=True)
class GroupSpec(_Spec):
    """A ZOM group: ``attributes``, ``members`` (name → :class:`ArraySpec` or
    :class:`GroupSpec`) and any other group metadata properties.

    >>> g = GroupSpec(attributes={"kind": "image"},
    ...               members={"x": ArraySpec.new(shape=(2,), dtype="uint8")})
    >>> sorted(g.members), g["x"].shape
    (['x'], (2,))
    """

    attributes: Mapping[str, Any] = field(default_factory=FrozenDict)
    members: Mapping[str, Any] = field(default_factory=FrozenDict)
    properties: Mapping[str, Any] = field(default_factory=FrozenDict)
    zarr_format: Any = 3
    #: A draft group with no document, which exists through its members (seed 000).
    implicit: bool = False

    node_type: ClassVar[str] = "group"

    def __post_init__(self) -> None:
        fmt = _check_format(self.zarr_format, "GroupSpec")
        if self.implicit and (fmt != DRAFT or self.attributes or self.properties):
            raise MetadataError(
                "GroupSpec: only a Zarr v3.0 draft group without attributes or properties "
                "can be implicit"
            )
        attrs = freeze(self.attributes, where="GroupSpec attributes")
        if not isinstance(attrs, Mapping):
            raise MetadataError("GroupSpec: attributes must be an object")
        props = freeze(self.properties, where="GroupSpec properties")
        if not isinstance(props, Mapping):
            raise MetadataError("GroupSpec: properties must be an object")
        clash = _HEADER.intersection(props)
        if clash:
            raise MetadataError(f"GroupSpec: {sorted(clash)} are not group properties")
        if not isinstance(self.members, Mapping):
            raise MetadataError("GroupSpec: members must be a mapping of names to specs")
        members: dict[str, ArraySpec | GroupSpec] = {}
        for name, member in self.members.items():
            check_name(name, where="GroupSpec")
            if isinstance(member, Mapping):
                member = from_json(member, zarr_format=fmt)
            if not isinstance(member, ArraySpec | GroupSpec):
                raise MetadataError(
                    f"GroupSpec: member {name!r} must be an ArraySpec or a GroupSpec, "
                    f"got {type(member).__name__}"
                )
            if member.zarr_format != fmt:
                raise MetadataError(
                    f"GroupSpec: member {name!r} has zarr_format {member.zarr_format}, the "
                    f"group {fmt}; convert it with to_v{fmt}()"
                )
            members[name] = member
        object.__setattr__(self, "zarr_format", fmt)
        object.__setattr__(self, "attributes", attrs)
        object.__setattr__(self, "properties", props)
        object.__setattr__(self, "members", FrozenDict(members))
        _check_node(self, "GroupSpec")

    # -- JSON -----------------------------------------------------------------------------
    def _node_json(self, members: Any = None) -> dict[str, Any]:
        doc: dict[str, Any] = {"zarr_format": self.zarr_format}
        if self.zarr_format in (3, DRAFT):
            doc["node_type"] = "group"
        if self.implicit:
            doc["implicit"] = True
        doc["attributes"] = thaw(self.attributes)
        for key, value in self.properties.items():
            doc[escape_property(key)] = thaw(value)
        doc["members"] = {} if members is None else members
        return doc

    def to_json(self) -> dict[str, Any]:
        """The ZOM JSON object (seed 004), members nested."""
        return self._node_json({name: m.to_json() for name, m in self.members.items()})

    @classmethod
    def from_json(cls, doc: Any, *, zarr_format: int | None = None) -> GroupSpec:
        spec = from_json(doc, zarr_format=zarr_format)
        if not isinstance(spec, GroupSpec):
            raise MetadataError("ZOM document: expected a group, got an array")
        return spec

    # -- navigation -----------------------------------------------------------------------
    def __getitem__(self, path: str) -> ArraySpec | GroupSpec:
        """The member at a ``/``-separated path below this group."""
        node: Any = self
        for name in path.strip("/").split("/") if path.strip("/") else []:
            if not isinstance(node, GroupSpec) or name not in node.members:
                raise NodeNotFoundError(f"the spec has no member {path!r}")
            node = node.members[name]
        return node

    def __contains__(self, path: object) -> bool:
        if not isinstance(path, str):
            return False
        try:
            self[path]
        except NodeNotFoundError:
            return False
        return True

    def walk(self, path: str = "") -> Iterator[tuple[str, ArraySpec | GroupSpec]]:
        """``(relative path, node)`` for this group (``""``) and every node below,
        parents before children, names sorted."""
        yield path, self
        for name in sorted(self.members):
            member = self.members[name]
            child = _join(path, name)
            if isinstance(member, GroupSpec):
                yield from member.walk(child)
            else:
                yield child, member

    def replace(self, **changes: Any) -> GroupSpec:
        """A copy with ``attributes``, ``members``, ``zarr_format`` or properties changed."""
        attributes = changes.pop("attributes", self.attributes)
        members = changes.pop("members", self.members)
        zarr_format = changes.pop("zarr_format", self.zarr_format)
        implicit = changes.pop("implicit", self.implicit)
        props = dict(self.properties)
        props.update(changes)
        return GroupSpec(attributes=attributes, members=members, properties=props,
                         zarr_format=zarr_format, implicit=implicit)

    def with_member(self, path: str, node: ArraySpec | GroupSpec | None) -> GroupSpec:
        """A copy with the member at ``path`` replaced, added (parents must exist) or,
        with ``None``, removed."""
        head, _, rest = path.strip("/").partition("/")
        check_name(head, where="GroupSpec.with_member")
        members = dict(self.members)
        if rest:
            child = members.get(head)
            if not isinstance(child, GroupSpec):
                raise NodeNotFoundError(f"the spec has no group {head!r} on the way to {path!r}")
            members[head] = child.with_member(rest, node)
        elif node is None:
            if head not in members:
                raise NodeNotFoundError(f"the spec has no member {path!r}")
            del members[head]
        else:
            members[head] = node
        return self.replace(members=members)

    # -- flattening (seed 004: consolidated metadata) ------------------------------------------
    def to_flat(self) -> dict[str, ArraySpec | GroupSpec]:
        """Every node by path relative to this group (``""`` is the group), groups without
        their members: the flat form consolidated metadata is made of.

        >>> g = GroupSpec(members={"a": GroupSpec(members={"b": GroupSpec()})})
        >>> list(g.to_flat())
        ['', 'a', 'a/b']
        """
        return {
            path: node.replace(members={}) if isinstance(node, GroupSpec) else node
            for path, node in self.walk()
        }

    @classmethod
    def from_flat(cls, flat: Mapping[str, ArraySpec | GroupSpec]) -> GroupSpec:
        """The hierarchy of a flat mapping (paths relative to the root, which is ``""``;
        members of the groups in it are ignored)."""
        nodes = {str(path).strip("/"): node for path, node in flat.items()}
        if not isinstance(nodes.get(""), GroupSpec):
            raise MetadataError("a flat ZOM needs a group at the root path ''")
        children: dict[str, dict[str, str]] = {}
        for path in nodes:
            if not path:
                continue
            parent, _, name = path.rpartition("/")
            if not isinstance(nodes.get(parent), GroupSpec):
                raise MetadataError(
                    f"flat ZOM: {display_path(path)!r} has no parent group "
                    f"{display_path(parent)!r}"
                )
            children.setdefault(parent, {})[name] = path

        def build(path: str) -> ArraySpec | GroupSpec:
            node = nodes[path]
            if not isinstance(node, GroupSpec):
                return node
            kids = children.get(path, {})
            return node.replace(members={name: build(kids[name]) for name in sorted(kids)})

        return build("")  # type: ignore[return-value]

    def to_consolidated(self) -> dict[str, Any]:
        """The consolidated metadata of this hierarchy, by flattening its ZOM: for v3 the
        inline ``consolidated_metadata`` object zarr-python and zarrx write in the root
        ``zarr.json``, for v2 the ``.zmetadata`` document."""
        return _ops().consolidated(self)

    @classmethod
    def from_zarr(cls, group: Any) -> GroupSpec:
        """The spec of a stored :class:`zarrx.Group` and everything below it, from one
        listing (``members(max_depth=None)``), or from its consolidated metadata when it
        was opened with some; no data is read."""
        spec = _ops().from_zarr(group)
        if not isinstance(spec, GroupSpec):
            raise MetadataError(f"{group.name!r} is an array; use ArraySpec.from_zarr")
        return spec

    def __repr__(self) -> str:
        return (
            f"GroupSpec(zarr_format={self.zarr_format}, attributes={thaw(self.attributes)!r}, "
            f"members={sorted(self.members)})"
        )


def _node_kind(doc: Mapping[str, Any], fmt: int | str) -> str:
    declared = doc.get("node_type")
    if declared in ("array", "group"):
        return declared
    if declared is not None:
        raise MetadataError(f"node_type must be 'array' or 'group', got {declared!r}")
    if "members" in doc:
        return "group"
    if "shape" in doc:
        return "array"
    raise MetadataError(
        "cannot tell whether the document is an array (it has no 'shape') or a group "
        "(it has no 'members')"
    )


def _build(doc: Mapping[str, Any], fmt: int | str, path: str) -> ArraySpec | GroupSpec:
    where = display_path(path)
    try:
        kind = _node_kind(doc, fmt)
    except MetadataError as e:
        raise MetadataError(f"ZOM document {where}: {e}") from None
    attributes = doc.get("attributes") or {}
    if kind == "array":
        props = {k: v for k, v in doc.items() if k not in _HEADER}
        return ArraySpec(properties=props, attributes=attributes, zarr_format=fmt)
    members = {
        check_name(name, where=f"ZOM document {where}"): _build(member, fmt, _join(path, name))
        for name, member in (doc.get("members") or {}).items()
    }
    props = {
        unescape_property(k): v for k, v in doc.items() if k not in _HEADER and k != "members"
    }
    return GroupSpec(attributes=attributes, members=members, properties=props, zarr_format=fmt,
                     implicit=doc.get("implicit") is True)


def from_json(doc: Any, *, zarr_format: int | None = None) -> ArraySpec | GroupSpec:
    """The ZOM of a JSON document (a ``dict``, or JSON text): a :class:`GroupSpec` when
    it has ``members`` (or ``node_type`` ``"group"``), else an :class:`ArraySpec`.

    The format is the document's ``zarr_format`` (the seed's ``zarr_version`` is read as
    its alias); documents that have neither need ``zarr_format=``. The document is checked
    against the lenient schema of that format first, so errors name the JSON path.
    """
    if isinstance(doc, str | bytes | bytearray):
        try:
            doc = json.loads(doc)
        except ValueError as e:
            raise MetadataError(f"ZOM document: invalid JSON ({e})") from None
    if not isinstance(doc, Mapping):
        raise MetadataError(f"ZOM document: expected a JSON object, got {type(doc).__name__}")
    fmt = detect_format(doc, default=zarr_format)
    if zarr_format is not None and fmt != zarr_format:
        raise MetadataError(f"ZOM document: zarr_format is {fmt}, expected {zarr_format}")
    _check_format(fmt, "ZOM document")
    try:
        kind = _node_kind(doc, fmt)
    except MetadataError as e:
        raise MetadataError(f"ZOM document: {e}") from None
    if fmt != DRAFT:
        check_json(doc, node_schema(fmt, kind, lenient=True))  # a group's members included
    return _build(doc, fmt, "")
