"""What is stored for an array or group (``zarrx info``, ``a.info_complete()``): which chunks
are initialised, their size, and a readable summary.

A chunk is *initialised* when its key exists in the store. The keys under an array's
data prefix are listed once (``list_prefix``) and matched against the chunk grid's keys;
sizes come from ``os.stat`` on a local store and from reading the value elsewhere.
For a sharded array the stored objects are shards, and they are what is counted.
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Iterator
from typing import Any

import numpy as np

from zarrx.metadata.io import data_prefix, document_keys


def grid_shape(array: Any) -> tuple[int, ...]:
    """Stored objects (chunks, or shards when sharded) along each axis."""
    return tuple(array.metadata.chunk_grid.grid_shape(array.shape))


def chunk_keys(array: Any) -> Iterator[tuple[tuple[int, ...], str]]:
    """``(coords, store key)`` of every stored object of the grid, in C order."""
    prefix = data_prefix(array.path, array.metadata)
    for coords in np.ndindex(*grid_shape(array)):
        yield coords, prefix + array.metadata.chunk_key(coords)


def listed_keys(array: Any) -> set[str]:
    return set(array.store.list_prefix(data_prefix(array.path, array.metadata)))


def initialised(array: Any) -> list[tuple[tuple[int, ...], str]]:
    """``(coords, key)`` of the stored objects whose key exists (one listing)."""
    present = listed_keys(array)
    if not present:
        return []
    return [(coords, key) for coords, key in chunk_keys(array) if key in present]


def stored_keys(array: Any) -> list[str]:
    """Every key the array occupies: its documents and its stored chunks (or shards)."""
    keys = set(listed_keys(array)) | set(document_keys(array.path, array.metadata))
    return sorted(keys)


def stored_size(store: Any, keys: list[str]) -> int:
    """Bytes stored under ``keys``."""
    from zarrx.storage import LocalStore

    if isinstance(store, LocalStore):
        root = store.root
        total = 0
        for key in keys:
            with contextlib.suppress(FileNotFoundError):  # erased since the listing
                total += os.stat(os.path.join(root, *key.split("/"))).st_size
        return total
    return sum(len(v) for v in store.get_many([(k, None) for k in keys]) if v is not None)


def human(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{int(n)} B" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"  # pragma: no cover


def _decoded_bytes(array: Any, coords: list[tuple[int, ...]] | None) -> int | None:
    """Bytes of the whole stored objects at ``coords`` (``None``: all of them) when
    decoded (``None`` for variable-length types)."""
    dtype = array.metadata.dtype
    if dtype.hasobject or dtype.kind == "T":
        return None
    grid = array.metadata.chunk_grid
    if coords is None:
        elements = math.prod(grid.axis_boundary(a, n) for a, n in enumerate(grid_shape(array)))
    else:
        elements = sum(math.prod(grid.chunk_shape_at(c)) for c in coords)
    return elements * dtype.itemsize


def array_summary(array: Any, *, stored: bool = True) -> dict[str, Any]:
    """The facts ``zarrx info`` prints for an array, as JSON-able values; ``stored=False``
    leaves out what needs the store (initialised chunks, stored bytes): ``a.info``."""
    from zarrx.zom.frozen import thaw
    from zarrx.zom.mapping import node_spec

    spec = node_spec(array.metadata)
    fill = array.fill_value
    fill = fill.item() if hasattr(fill, "item") else fill
    if isinstance(fill, bytes):
        fill = fill.hex()
    elif isinstance(fill, complex):
        fill = [fill.real, fill.imag]
    out: dict[str, Any] = {
        "path": array.name,
        "type": "array",
        "zarr_format": array.zarr_format,
        "shape": list(array.shape),
        "dtype": str(array.dtype),
        "chunks": list(array.chunks),
        "shards": None if array.shards is None else list(array.shards),
        "fill_value": fill,
    }
    if array.zarr_format == 2:
        out["compressor"] = thaw(spec.get("compressor"))
        out["filters"] = thaw(spec.get("filters"))
        out["order"] = spec.get("order")
    else:
        out["codecs"] = thaw(spec.get("codecs"))
    if array.dimension_names is not None:
        out["dimension_names"] = list(array.dimension_names)
    if not stored:
        out.update(
            {
                "chunks_total": math.prod(grid_shape(array)),
                "data_bytes": _decoded_bytes(array, None),
                "read_only": array.read_only,
                "store": type(array.store).__name__,
                "attributes": dict(array.attrs),
            }
        )
        return out
    found = initialised(array)
    stored_bytes = stored_size(array.store, [k for _, k in found])
    decoded = _decoded_bytes(array, [c for c, _ in found])
    out.update(
        {
            "chunks_initialised": len(found),
            "chunks_total": math.prod(grid_shape(array)),
            "stored_bytes": stored_bytes,
            "data_bytes": decoded,
            "compression_ratio": (
                None if not stored_bytes or decoded is None
                else round(decoded / stored_bytes, 3)
            ),
            "attributes": dict(array.attrs),
        }
    )
    return out


def group_summary(group: Any, *, stored: bool = True) -> dict[str, Any]:
    """Counts and sizes over every array below ``group`` (one listing of the hierarchy);
    ``stored=False`` says only what needs no store access: ``g.info``."""
    import zarrx

    if not stored:
        return {
            "path": group.name,
            "type": "group",
            "zarr_format": group.zarr_format,
            "consolidated": group.consolidated is not None,
            "read_only": group.read_only,
            "store": type(group.store).__name__,
            "attributes": dict(group.attrs),
        }
    members = group.members(max_depth=None)
    arrays = [node for _, node in members if isinstance(node, zarrx.Array)]
    summaries = [array_summary(a) for a in arrays]
    total_stored = sum(s["stored_bytes"] for s in summaries)
    fixed = [s for s in summaries if s["data_bytes"] is not None]
    decoded = sum(s["data_bytes"] for s in fixed) if fixed else None
    fixed_stored = sum(s["stored_bytes"] for s in fixed)
    return {
        "path": group.name,
        "type": "group",
        "zarr_format": group.zarr_format,
        "consolidated": group.consolidated is not None,
        "arrays": len(arrays),
        "groups": len(members) - len(arrays),
        "chunks_initialised": sum(s["chunks_initialised"] for s in summaries),
        "chunks_total": sum(s["chunks_total"] for s in summaries),
        "stored_bytes": total_stored,
        "data_bytes": decoded,
        "compression_ratio": (
            None if not fixed_stored or decoded is None else round(decoded / fixed_stored, 3)
        ),
        "variable_length_arrays": len(summaries) - len(fixed),
        "attributes": dict(group.attrs),
    }


_LABELS = {
    "location": "Location",
    "path": "Path",
    "type": "Type",
    "zarr_format": "Zarr format",
    "shape": "Shape",
    "dtype": "Data type",
    "chunks": "Chunk shape",
    "shards": "Shard shape",
    "fill_value": "Fill value",
    "codecs": "Codecs",
    "compressor": "Compressor",
    "filters": "Filters",
    "order": "Order",
    "dimension_names": "Dimension names",
    "consolidated": "Consolidated",
    "arrays": "Arrays",
    "groups": "Groups",
    "chunks_initialised": "Chunks initialised",
    "stored_bytes": "Stored size",
    "data_bytes": "Data size",
    "compression_ratio": "Compression ratio",
    "read_only": "Read-only",
    "store": "Store type",
    "attributes": "Attributes",
}


def _codec_text(codec: Any) -> str:
    if not isinstance(codec, dict):
        return str(codec)
    name = codec.get("name") or codec.get("id")
    config = codec.get("configuration", {k: v for k, v in codec.items() if k != "id"})
    if not config:
        return str(name)
    inner = ", ".join(f"{k}={_codec_text(v) if isinstance(v, dict) else v}"
                      for k, v in config.items())
    return f"{name}({inner})"


def render(summary: dict[str, Any]) -> str:
    """The summary as aligned ``Label : value`` lines."""
    rows: list[tuple[str, str]] = []
    for key, value in summary.items():
        if key == "chunks_total" and "chunks_initialised" not in summary:
            label, text = ("Shards" if summary.get("shards") else "Chunks"), str(value)
            rows.append((label, text))
            continue
        if key in ("chunks_total", "variable_length_arrays"):
            continue
        if key == "shards" and value is None:
            continue
        label = _LABELS.get(key, key)
        if key == "type":
            text = str(value).capitalize()
        elif key in ("shape", "chunks", "shards"):
            text = str(tuple(value))
        elif key == "chunks_initialised":
            unit = "shards" if summary.get("shards") else "chunks"
            label = f"{unit.capitalize()} initialised"
            total = summary["chunks_total"]
            pct = 100.0 * value / total if total else 100.0
            text = f"{value} / {total} ({pct:.1f}%)"
        elif key in ("stored_bytes", "data_bytes"):
            if value is None:
                text = "n/a (variable-length data)"
            else:
                text = human(value) if value < 1024 else f"{human(value)} ({value} B)"
                if key == "data_bytes" and summary.get("variable_length_arrays"):
                    text += " (fixed-size arrays only)"
        elif key == "compression_ratio":
            text = "n/a" if value is None else f"{value:.2f}"
            if value is not None and summary.get("variable_length_arrays"):
                text += " (fixed-size arrays only)"
        elif key == "codecs":
            text = " → ".join(_codec_text(c) for c in value or [])
        elif key == "compressor":
            text = "none" if value is None else _codec_text(value)
        elif key == "filters":
            text = "none" if not value else ", ".join(_codec_text(f) for f in value)
        elif key in ("consolidated", "read_only"):
            text = "yes" if value else "no"
        else:
            text = str(value)
        rows.append((label, text))
    width = max(len(label) for label, _ in rows)
    return "\n".join(f"{label:<{width}} : {text}" for label, text in rows)


class Info:
    """A printable summary of an array or group (``a.info``, ``a.info_complete()``):
    ``repr`` gives aligned ``Label : value`` lines, :meth:`as_dict` the JSON-able facts."""

    def __init__(self, summary: dict[str, Any]) -> None:
        self._summary = summary

    def as_dict(self) -> dict[str, Any]:
        return dict(self._summary)

    def __repr__(self) -> str:
        return render(self._summary)

    __str__ = __repr__
