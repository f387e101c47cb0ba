"""JSON Schemas of the Zarr Object Models (seed 004) and a validator for them.

:func:`json_schema` exports the schema of the ZOM for Zarr v3 or v2. The v3 schema is the
seed's, key for key. The seed's v2 schema contradicts its own v2 example (and the v2
spec) in a few places, so zarrx exports it with these errata, each a relaxation or a typo
fix (:data:`V2_ERRATA` lists them; ``docs/zom.md`` explains them):

1. ``required`` of ``Array`` names ``"attributess"`` (and its title reads
   ``"Attributess"``): read as ``"attributes"``.
2. Arrays and groups may carry ``zarr_format`` (``const`` 2), the key the v2 documents and
   the seed's example use; the schema only knew ``zarr_version``.
3. ``compressor`` may be ``null`` (no compression, as in the v2 spec and the example).
4. ``filters`` may be ``null`` (v2 spec) or ``{}`` (the example's spelling of "none").
5. A structured ``dtype`` is a list of ``[name, type]`` / ``[name, type, shape]`` lists,
   not of strings.

With ``lenient=True`` the schemas also accept what the Zarr specs allow and the seed's
schemas do not foresee: Zarr v3.1 extra keys (objects with ``"must_understand": false``),
ZEP 10 ``extensions``, ``null`` dimension names, data types given as objects, named
configurations without ``configuration`` or as a bare name, any v3 fill value, and
unknown keys of v2 ``.zarray`` documents. :func:`zarrx.zom.from_json` reads documents with
the lenient schema, so every hierarchy zarrx can open has a ZOM that loads.

The validator implements the subset of JSON Schema (2020-12) these schemas use: ``type``,
``const``, ``enum``, ``anyOf``, ``allOf``, local ``$ref`` (``#/$defs/…``,
``#/definitions/…``), ``properties``, ``additionalProperties``, ``required``, ``items``,
``prefixItems``, ``minItems``, ``maxItems``, ``minProperties``, ``maxProperties``.
Annotations (``title``, ``description``, ``default``) are ignored, as the standard says.

>>> validate_json({"zarr_format": 3, "node_type": "group", "attributes": {}, "members": {}})
[]
>>> validate_json({"zarr_format": 3, "node_type": "group", "members": {}})
["/: missing required property 'attributes'"]
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from zarrx.errors import MetadataError

_NAMED_CONFIG_REF = {"$ref": "#/$defs/NamedConfig"}

#: The seed's JSON Schema of the Zarr v3 ZOM, verbatim.
V3_SCHEMA: dict[str, Any] = {
    "$defs": {
        "ArraySpec": {
            "additionalProperties": False,
            "description": "A model of a Zarr version 3 Array",
            "properties": {
                "zarr_format": {"const": 3, "default": 3, "title": "Zarr Format"},
                "node_type": {"const": "array", "default": "array", "title": "Node Type"},
                "attributes": {"default": {}, "title": "Attributes", "type": "object"},
                "shape": {"items": {"type": "integer"}, "title": "Shape", "type": "array"},
                "data_type": {"title": "Data Type", "type": "string"},
                "chunk_grid": dict(_NAMED_CONFIG_REF),
                "chunk_key_encoding": dict(_NAMED_CONFIG_REF),
                "fill_value": {
                    "anyOf": [
                        {"type": "boolean"},
                        {"type": "integer"},
                        {"type": "number"},
                        {"const": "Infinity"},
                        {"const": "-Infinity"},
                        {"const": "NaN"},
                        {"type": "string"},
                        {
                            "maxItems": 2,
                            "minItems": 2,
                            "prefixItems": [{"type": "number"}, {"type": "number"}],
                            "type": "array",
                        },
                        {"items": {"type": "integer"}, "type": "array"},
                    ],
                    "title": "Fill Value",
                },
                "codecs": {"items": dict(_NAMED_CONFIG_REF), "title": "Codecs", "type": "array"},
                "storage_transformers": {
                    "anyOf": [
                        {"items": dict(_NAMED_CONFIG_REF), "type": "array"},
                        {"type": "null"},
                    ],
                    "default": None,
                    "title": "Storage Transformers",
                },
                "dimension_names": {
                    "anyOf": [
                        {"items": {"type": "string"}, "type": "array"},
                        {"type": "null"},
                    ],
                    "title": "Dimension Names",
                },
            },
            "required": [
                "shape",
                "data_type",
                "chunk_grid",
                "chunk_key_encoding",
                "fill_value",
                "codecs",
            ],
            "title": "ArraySpec",
            "type": "object",
        },
        "GroupSpec": {
            "additionalProperties": False,
            "properties": {
                "zarr_format": {"const": 3, "default": 3, "title": "Zarr Format"},
                "node_type": {"const": "group", "default": "group", "title": "Node Type"},
                "attributes": {"title": "Attributes", "type": "object"},
                "members": {
                    "additionalProperties": {
                        "anyOf": [{"$ref": "#/$defs/GroupSpec"}, {"$ref": "#/$defs/ArraySpec"}]
                    },
                    "default": {},
                    "title": "Members",
                    "type": "object",
                },
            },
            "required": ["attributes", "members"],
            "title": "GroupSpec",
            "type": "object",
        },
        "NamedConfig": {
            "additionalProperties": False,
            "properties": {
                "name": {"title": "Name", "type": "string"},
                "configuration": {
                    "anyOf": [{"type": "object"}, {"type": "null"}],
                    "title": "Configuration",
                },
            },
            "required": ["name", "configuration"],
            "title": "NamedConfig",
            "type": "object",
        },
    },
    "allOf": [{"$ref": "#/$defs/GroupSpec"}],
}

#: The seed's JSON Schema of the Zarr v2 ZOM, verbatim (see :data:`V2_ERRATA`).
SEED_V2_SCHEMA: dict[str, Any] = {
    "$ref": "#/definitions/Group",
    "definitions": {
        "Array": {
            "title": "Array",
            "description": "Model of a Zarr Version 2 Array",
            "type": "object",
            "properties": {
                "attributes": {"title": "Attributess", "type": "object"},
                "shape": {"title": "Shape", "type": "array", "items": {"type": "integer"}},
                "chunks": {"title": "Chunks", "type": "array", "items": {"type": "integer"}},
                "dtype": {
                    "title": "Dtype",
                    "anyOf": [
                        {"type": "string"},
                        {"type": "array", "items": {"type": "string"}},
                    ],
                },
                "compressor": {"title": "Compressor", "type": "object"},
                "fill_value": {"title": "Fill Value"},
                "order": {"title": "Order", "enum": ["C", "F"], "type": "string"},
                "filters": {"title": "Filters", "type": "array", "items": {"type": "object"}},
                "dimension_separator": {
                    "title": "Dimension Separator",
                    "enum": [".", "/"],
                    "type": "string",
                },
                "zarr_version": {"title": "Zarr Version", "default": 2, "type": "integer"},
            },
            "required": [
                "attributess",
                "shape",
                "chunks",
                "dtype",
                "compressor",
                "order",
                "filters",
            ],
            "additionalProperties": False,
        },
        "Group": {
            "title": "Group",
            "description": "Model of a Zarr Version 2 Group",
            "type": "object",
            "properties": {
                "attributes": {"title": "Attributes", "type": "object"},
                "members": {
                    "title": "Members",
                    "type": "object",
                    "additionalProperties": {
                        "anyOf": [
                            {"$ref": "#/definitions/Array"},
                            {"$ref": "#/definitions/Group"},
                        ]
                    },
                },
                "zarr_version": {"title": "Zarr Version", "default": 2, "type": "integer"},
            },
            "required": ["attributes", "members"],
            "additionalProperties": False,
        },
    },
}

_ZARR_FORMAT_2 = {"const": 2, "default": 2, "title": "Zarr Format"}

#: (JSON pointer into the v2 schema, what the seed says, what zarrx exports, why).
V2_ERRATA: tuple[tuple[str, Any, Any, str], ...] = (
    (
        "/definitions/Array/required/0", "attributess", "attributes",
        "typo: the property is 'attributes'",
    ),
    (
        "/definitions/Array/properties/attributes/title", "Attributess", "Attributes",
        "typo",
    ),
    (
        "/definitions/Array/properties/zarr_format", None, _ZARR_FORMAT_2,
        "the v2 documents and the seed's example name the format 'zarr_format'",
    ),
    (
        "/definitions/Group/properties/zarr_format", None, _ZARR_FORMAT_2,
        "the v2 documents and the seed's example name the format 'zarr_format'",
    ),
    (
        "/definitions/Array/properties/compressor",
        {"title": "Compressor", "type": "object"},
        {"title": "Compressor", "anyOf": [{"type": "object"}, {"type": "null"}]},
        "null means no compression (v2 spec; the seed's example)",
    ),
    (
        "/definitions/Array/properties/filters",
        {"title": "Filters", "type": "array", "items": {"type": "object"}},
        {
            "title": "Filters",
            "anyOf": [
                {"type": "array", "items": {"type": "object"}},
                {"type": "null"},
                {"type": "object", "maxProperties": 0},
            ],
        },
        "null means no filters (v2 spec); the seed's example writes {}",
    ),
    (
        "/definitions/Array/properties/dtype/anyOf/1/items",
        {"type": "string"},
        {"anyOf": [{"type": "string"}, {"type": "array"}]},
        "a structured dtype is a list of [name, type(, shape)] lists (v2 spec)",
    ),
)


def _pointer_set(doc: Any, pointer: str, value: Any) -> None:
    parts = pointer.strip("/").split("/")
    for part in parts[:-1]:
        doc = doc[int(part)] if isinstance(doc, list) else doc[part]
    last = parts[-1]
    if isinstance(doc, list):
        doc[int(last)] = value
    else:
        doc[last] = value


def apply_errata(schema: dict[str, Any]) -> dict[str, Any]:
    """The seed's v2 schema with :data:`V2_ERRATA` applied (a new dict)."""
    out = copy.deepcopy(schema)
    for pointer, _, fixed, _ in V2_ERRATA:
        _pointer_set(out, pointer, copy.deepcopy(fixed))
    return out


V2_SCHEMA: dict[str, Any] = apply_errata(SEED_V2_SCHEMA)

# -- the lenient variants --------------------------------------------------------------------

_OPTIONAL_EXTRA = {
    "type": "object",
    "properties": {"must_understand": {"const": False}},
    "required": ["must_understand"],
}
_EXTENSIONS = {"type": "array", "items": {"type": "object"}}


def _lenient_v3() -> dict[str, Any]:
    schema = copy.deepcopy(V3_SCHEMA)
    defs = schema["$defs"]
    for name in ("ArraySpec", "GroupSpec"):
        defs[name]["additionalProperties"] = copy.deepcopy(_OPTIONAL_EXTRA)
        defs[name]["properties"]["extensions"] = copy.deepcopy(_EXTENSIONS)
    array = defs["ArraySpec"]["properties"]
    array["dimension_names"]["anyOf"][0]["items"] = {"type": ["string", "null"]}
    array["data_type"] = {"anyOf": [{"type": "string"}, {"$ref": "#/$defs/NamedConfig"}]}
    array["fill_value"] = {"title": "Fill Value"}
    named = defs["NamedConfig"]
    named["required"] = ["name"]
    named["properties"]["must_understand"] = {"type": "boolean"}
    for key in ("chunk_grid", "chunk_key_encoding"):
        array[key] = {"anyOf": [{"type": "string"}, {"$ref": "#/$defs/NamedConfig"}]}
    array["codecs"]["items"] = {"anyOf": [{"type": "string"}, {"$ref": "#/$defs/NamedConfig"}]}
    return schema


def _lenient_v2() -> dict[str, Any]:
    schema = copy.deepcopy(V2_SCHEMA)
    schema["definitions"]["Array"]["additionalProperties"] = True
    return schema


_SCHEMAS: dict[tuple[int, bool], dict[str, Any]] = {
    (3, False): V3_SCHEMA,
    (2, False): V2_SCHEMA,
    (3, True): _lenient_v3(),
    (2, True): _lenient_v2(),
}


def json_schema(zarr_format: int = 3, *, lenient: bool = False) -> dict[str, Any]:
    """The JSON Schema of a ZOM hierarchy (a group document) for ``zarr_format`` 3 or 2."""
    try:
        return copy.deepcopy(_SCHEMAS[(zarr_format, bool(lenient))])
    except (KeyError, TypeError):
        raise MetadataError(
            f"a Zarr object model exists for zarr_format 3 and 2, not {zarr_format!r} "
            "(the 3.0 draft maps onto the v3 model)"
        ) from None


def node_schema(zarr_format: int, node_type: str, *, lenient: bool = False) -> dict[str, Any]:
    """The schema of one node (``"array"`` or ``"group"``), with its definitions."""
    schema = _SCHEMAS[(zarr_format, lenient)]
    defs_key = "$defs" if zarr_format == 3 else "definitions"
    name = {
        (3, "array"): "ArraySpec", (3, "group"): "GroupSpec",
        (2, "array"): "Array", (2, "group"): "Group",
    }[(zarr_format, node_type)]
    return {defs_key: schema[defs_key], "$ref": f"#/{defs_key}/{name}"}


# -- the validator ---------------------------------------------------------------------------

def _type_ok(value: Any, kind: str) -> bool:
    if kind == "null":
        return value is None
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "integer":
        if isinstance(value, bool):
            return False
        return isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "string":
        return isinstance(value, str)
    if kind == "array":
        return isinstance(value, list | tuple)
    if kind == "object":
        return isinstance(value, Mapping)
    raise MetadataError(f"JSON Schema type {kind!r} is not supported by this validator")


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _equal(a: Any, b: Any) -> bool:
    from zarrx.zom.frozen import json_equal

    return json_equal(a, b)


class _Validator:
    def __init__(self, root: Mapping[str, Any]) -> None:
        self.root = root

    def resolve(self, ref: str) -> Mapping[str, Any]:
        if not ref.startswith("#/"):
            raise MetadataError(f"only local $ref are supported, got {ref!r}")
        node: Any = self.root
        for part in ref[2:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(node, Mapping) or part not in node:
                raise MetadataError(f"$ref {ref!r} does not resolve")
            node = node[part]
        return node

    def errors(self, value: Any, schema: Any, path: str) -> list[str]:
        if schema is True or schema == {}:
            return []
        if schema is False:
            return [f"{path or '/'}: no value is allowed here"]
        out: list[str] = []
        where = path or "/"
        if "$ref" in schema:
            out += self.errors(value, self.resolve(schema["$ref"]), path)
        for sub in schema.get("allOf", ()):
            out += self.errors(value, sub, path)
        if "anyOf" in schema:
            results = [self.errors(value, sub, path) for sub in schema["anyOf"]]
            if all(results):
                out += self._best(value, schema["anyOf"], results, where)
        if "const" in schema and not _equal(value, schema["const"]):
            out.append(f"{where}: expected {schema['const']!r}, got {_show(value)}")
        if "enum" in schema and not any(_equal(value, v) for v in schema["enum"]):
            out.append(f"{where}: expected one of {schema['enum']!r}, got {_show(value)}")
        if "type" in schema:
            kinds = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
            if not any(_type_ok(value, k) for k in kinds):
                out.append(f"{where}: expected {' or '.join(kinds)}, got {_show(value)}")
                return out
        if isinstance(value, Mapping):
            out += self._object(value, schema, path)
        if isinstance(value, list | tuple):
            out += self._array(value, schema, path)
        return out

    def _best(
        self, value: Any, options: list[Any], results: list[list[str]], where: str
    ) -> list[str]:
        """Errors of the alternative the value was most likely meant to be: for objects,
        the one whose declared ``node_type`` it has, else whose properties it shares most;
        for other values, one line naming every alternative."""
        if isinstance(value, Mapping):
            scored = []
            for i, sub in enumerate(options):
                target = self.resolve(sub["$ref"]) if "$ref" in sub else sub
                props = target.get("properties", {})
                declared = props.get("node_type", {}).get("const")
                if declared is not None and value.get("node_type") == declared:
                    return results[i]
                shared = sum(key in props for key in value)
                missing = sum(key not in value for key in target.get("required", ()))
                scored.append((-(shared - missing), len(results[i]), i))
            return results[min(scored)[2]]
        if all(len(e) == 1 and e[0].startswith(where + ":") for e in results):
            wanted = "; ".join(e[0].split(": ", 1)[1] for e in results)
            return [f"{where}: does not match any allowed form ({wanted})"]
        return min(results, key=len)

    def _object(self, value: Mapping[str, Any], schema: Mapping[str, Any], path: str) -> list[str]:
        out: list[str] = []
        where = path or "/"
        for key in schema.get("required", ()):
            if key not in value:
                out.append(f"{where}: missing required property {key!r}")
        if "minProperties" in schema and len(value) < schema["minProperties"]:
            out.append(f"{where}: expected at least {schema['minProperties']} properties")
        if "maxProperties" in schema and len(value) > schema["maxProperties"]:
            out.append(
                f"{where}: expected at most {schema['maxProperties']} properties, "
                f"got {len(value)}"
            )
        properties = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        for key, item in value.items():
            child = f"{path}/{key}"
            if key in properties:
                out += self.errors(item, properties[key], child)
            elif extra is False:
                out.append(f"{where}: property {key!r} is not allowed")
            elif extra is not True:
                out += self.errors(item, extra, child)
        return out

    def _array(self, value: Any, schema: Mapping[str, Any], path: str) -> list[str]:
        out: list[str] = []
        where = path or "/"
        if "minItems" in schema and len(value) < schema["minItems"]:
            out.append(f"{where}: expected at least {schema['minItems']} items, got {len(value)}")
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            out.append(f"{where}: expected at most {schema['maxItems']} items, got {len(value)}")
        prefix = schema.get("prefixItems", ())
        for i, item in enumerate(value):
            if i < len(prefix):
                out += self.errors(item, prefix[i], f"{path}/{i}")
            elif "items" in schema:
                out += self.errors(item, schema["items"], f"{path}/{i}")
        return out


def validate_json(
    doc: Any, schema: Mapping[str, Any] | None = None, *, lenient: bool = False
) -> list[str]:
    """The reasons ``doc`` does not satisfy ``schema`` (``[]`` when it does).

    Without ``schema``, the ZOM schema of the document's format is used (``zarr_format``
    of the root; 3 when it has a ``node_type`` or says nothing).
    """
    if schema is None:
        schema = json_schema(detect_format(doc, default=3), lenient=lenient)
    return _Validator(schema).errors(doc, schema, "")


def check_json(doc: Any, schema: Mapping[str, Any], *, where: str = "ZOM document") -> None:
    """Raise :class:`MetadataError` listing every violation of ``schema`` by ``doc``."""
    problems = _Validator(schema).errors(doc, schema, "")
    if problems:
        shown = "\n  ".join(problems[:20])
        more = f"\n  … and {len(problems) - 20} more" if len(problems) > 20 else ""
        raise MetadataError(f"{where} does not match the Zarr object model:\n  {shown}{more}")


def detect_format(doc: Any, *, default: int | None = None) -> int:
    """The ZOM format of a document: its ``zarr_format`` (or the seed's ``zarr_version``);
    3 when it has a ``node_type``; else ``default``."""
    if isinstance(doc, Mapping):
        for key in ("zarr_format", "zarr_version"):
            value = doc.get(key)
            if value in (2, 3) and not isinstance(value, bool):
                return int(value)
            if value == "3-draft" and key == "zarr_format":
                return value  # type: ignore[return-value]
            if value is not None:
                raise MetadataError(
                    f"ZOM document: {key} must be 2, 3 or '3-draft', got {value!r}"
                )
        if "node_type" in doc:
            return 3
    if default is None:
        raise MetadataError(
            "ZOM document: no zarr_format; say which model it follows (zarr_format=2 or 3)"
        )
    return default

