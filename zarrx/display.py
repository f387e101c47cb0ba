"""How arrays and groups show in a notebook (``_repr_html_``).

An array is a table — shape, data type, chunks, shards, fill value, codecs, what is stored —
beside a picture of its grid, drawn as dask draws its chunks: an inline SVG of the last
three axes (a rectangle for two, a box for three), thin lines between chunks and thick
lines between shards, so the two read apart at a glance. An axis with more boundaries than
:data:`MAX_LINES` is shaded instead of ruled.

What is stored comes from one listing of the array's keys; sizes only where the listing
gives them cheaply (a local directory: ``stat``; memory). No chunk is read, and a store
with high latency (``store.batched_reads``: object stores, HTTP) is not listed at all:
``a.info_complete()`` says everything, at the cost it takes.

A group is its facts and its hierarchy as a tree of nested lists (arrays with shape, data
type, chunks and shards), at most :data:`MAX_NODES` nodes.
"""

from __future__ import annotations

import html
import math
from typing import Any

from zarrx.info import array_summary, human, listed_keys, stored_size
from zarrx.metadata.io import document_keys

#: Chunk or shard boundaries drawn along one axis at most; more are shaded.
MAX_LINES = 64
#: Nodes a group's tree shows at most.
MAX_NODES = 200
#: The longest side of the picture, in pixels; the shortest side drawn is MIN_SIDE.
SIDE = 180
MIN_SIDE = 18
#: The most a three-dimensional picture's first axis recedes, in pixels.
DEPTH = 60
_STYLE = {
    "face": "fill:#ECB172;fill-opacity:0.8;stroke:#7a4f1d;stroke-width:1",
    "dense": "fill:#d18b3c;fill-opacity:0.9;stroke:#7a4f1d;stroke-width:1",
    "chunk": "stroke:#7a4f1d;stroke-width:0.5;stroke-opacity:0.7",
    "shard": "stroke:#1c3f8c;stroke-width:2.5",
    "label": "font-size:11px;font-family:sans-serif;fill:#333",
}


def _esc(value: Any) -> str:
    return html.escape(str(value), quote=True)


# -- the picture --------------------------------------------------------------------------
def _boundaries(length: int, step: int) -> list[float]:
    """Fractions of the axis where a new chunk (or shard) of ``step`` starts."""
    return [i / length for i in range(step, length, step)] if step and length else []


class _Axis:
    """One drawn axis: its length, and where its chunk and shard boundaries fall."""

    def __init__(self, length: int, chunk: int, shard: int | None) -> None:
        self.length = length
        shards = _boundaries(length, shard) if shard else []
        chunks = [f for f in _boundaries(length, chunk) if f not in set(shards)]
        self.dense = len(chunks) > MAX_LINES or len(shards) > MAX_LINES
        self.lines = [] if self.dense else (
            [(f, "chunk") for f in chunks] + [(f, "shard") for f in shards]
        )


def _sides(lengths: list[int]) -> list[float]:
    """Pixel sides proportional to ``lengths`` (the longest :data:`SIDE`), none shorter
    than :data:`MIN_SIDE` so that a long thin array still shows its grid."""
    longest = max(max(lengths), 1)
    return [max(MIN_SIDE, SIDE * n / longest) for n in lengths]


def _line(x1: float, y1: float, x2: float, y2: float, kind: str) -> str:
    return (f'<line class="{kind}" x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" '
            f'style="{_STYLE[kind]}"/>')


def _face(points: list[tuple[float, float]], dense: bool) -> str:
    kind = "dense" if dense else "face"
    joined = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
    return f'<polygon class="{kind}" points="{joined}" style="{_STYLE[kind]}"/>'


def _text(x: float, y: float, text: Any, *, rotate: bool = False, anchor: str = "middle") -> str:
    turn = f' transform="rotate(-90 {x:.1f} {y:.1f})"' if rotate else ""
    return (f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}"{turn} '
            f'style="{_STYLE["label"]}">{_esc(text)}</text>')


def grid_svg(shape: tuple[int, ...], chunks: tuple[int, ...],
             shards: tuple[int, ...] | None = None) -> str:
    """The picture of an array's grid: its last three axes (fewer when it has fewer),
    chunk boundaries as thin lines (class ``chunk``), shard boundaries as thick ones
    (class ``shard``); an axis with too many of either is shaded (class ``dense``)."""
    if not shape:
        return ""
    drawn = min(3, len(shape))
    axes = [_Axis(n, c, None if shards is None else s)
            for n, c, s in zip(shape[-drawn:], chunks[-drawn:],
                               (shards or chunks)[-drawn:])]
    if drawn == 1:
        axes.insert(0, _Axis(1, 1, None))  # a 1-d array: one row
    parts: list[str] = []
    if len(axes) == 2:
        rows, cols = axes
        h, w = _sides([rows.length, cols.length]) if drawn > 1 else (MIN_SIDE, SIDE)
        x0, y0 = 10.0, 10.0
        parts.append(_face([(x0, y0), (x0 + w, y0), (x0 + w, y0 + h), (x0, y0 + h)],
                           rows.dense or cols.dense))
        parts += [_line(x0 + f * w, y0, x0 + f * w, y0 + h, k) for f, k in cols.lines]
        parts += [_line(x0, y0 + f * h, x0 + w, y0 + f * h, k) for f, k in rows.lines]
        parts.append(_text(x0 + w / 2, y0 + h + 16, cols.length))
        if drawn > 1:
            parts.append(_text(x0 + w + 14, y0 + h / 2, rows.length, rotate=True))
        width, height = x0 + w + 24, y0 + h + 24
    else:
        depth, rows, cols = axes
        d, h, w = _sides([depth.length, rows.length, cols.length])
        dx = dy = min(0.5 * d, DEPTH)  # the first axis recedes, as dask draws it
        x0, y0 = 10.0, 10.0
        front = [(x0, y0 + dy), (x0 + w, y0 + dy), (x0 + w, y0 + dy + h), (x0, y0 + dy + h)]
        top = [(x0, y0 + dy), (x0 + dx, y0), (x0 + dx + w, y0), (x0 + w, y0 + dy)]
        side = [(x0 + w, y0 + dy), (x0 + w + dx, y0), (x0 + w + dx, y0 + h),
                (x0 + w, y0 + dy + h)]
        parts.append(_face(top, depth.dense or cols.dense))
        parts.append(_face(side, depth.dense or rows.dense))
        parts.append(_face(front, rows.dense or cols.dense))
        for f, k in cols.lines:  # front and top faces
            parts.append(_line(x0 + f * w, y0 + dy, x0 + f * w, y0 + dy + h, k))
            parts.append(_line(x0 + f * w, y0 + dy, x0 + f * w + dx, y0, k))
        for f, k in rows.lines:  # front and side faces
            parts.append(_line(x0, y0 + dy + f * h, x0 + w, y0 + dy + f * h, k))
            parts.append(_line(x0 + w, y0 + dy + f * h, x0 + w + dx, y0 + f * h, k))
        for f, k in depth.lines:  # top and side faces, front to back
            x, y = x0 + f * dx, y0 + dy - f * dy
            parts.append(_line(x, y, x + w, y, k))
            parts.append(_line(x + w, y, x + w, y + h, k))
        parts.append(_text(x0 + w / 2, y0 + dy + h + 16, cols.length))
        parts.append(_text(x0 + w + dx + 14, y0 + h / 2, rows.length, rotate=True))
        parts.append(_text(x0 + dx / 2 - 4, y0 + dy / 2 - 4, depth.length, anchor="end"))
        width, height = x0 + w + dx + 24, y0 + dy + h + 24
    if len(shape) > 3:
        parts.append(_text(4, height + 8, f"\u00d7 {shape[:-3]} (the first axes)", anchor="start"))
        height += 14
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}"'
            f' viewBox="0 0 {width:.0f} {height:.0f}" role="img" class="zarrx-grid">'
            + "".join(parts) + "</svg>")


# -- the array's facts --------------------------------------------------------------------
def _codec_text(spec: Any) -> str:
    """A codec's JSON as ``name(key=value, …)``, its inner codecs likewise."""
    if isinstance(spec, list):
        return ", ".join(_codec_text(s) for s in spec) if spec else "none"
    if not isinstance(spec, dict):
        return str(spec)
    name = spec.get("name", spec.get("id", "?"))
    config = spec.get("configuration", {k: v for k, v in spec.items() if k != "id"})
    inner = [f"{k}=[{_codec_text(v)}]" if isinstance(v, list) and v and isinstance(v[0], dict)
             else f"{k}={v}" for k, v in config.items()]
    return f"{name}({', '.join(inner)})" if inner else str(name)


def stored(array: Any) -> tuple[int, int | None] | None:
    """``(stored objects, their bytes or None)`` from one listing, or ``None`` where the
    store is not listed (high latency). Bytes only where a listing gives them cheaply."""
    from zarrx.stores.local import LocalStore
    from zarrx.stores.memory import MemoryStore

    store = array.store
    if store.batched_reads or not store.listable:
        return None
    # the listed keys less the node's documents: O(keys stored), not O(chunks in the grid)
    found = sorted(listed_keys(array) - set(document_keys(array.path, array.metadata)))
    if not isinstance(store, LocalStore | MemoryStore):
        return len(found), None
    return len(found), stored_size(store, found)


def _stored_rows(array: Any) -> list[tuple[str, str]]:
    listed = stored(array)
    total = math.prod(array.metadata.chunk_grid.grid_shape(array.shape))
    unit = "shards" if array.shards else "chunks"
    if listed is None:
        return [("Stored", f"not listed ({type(array.store).__name__}): a.info_complete()")]
    count, size = listed
    rows = [(f"{unit.capitalize()} stored", f"{count} of {total}")]
    if size is not None:
        decoded = None if array.dtype.hasobject or array.dtype.kind == "T" else (
            count * math.prod(array.metadata.chunk_grid.chunk_shape) * array.dtype.itemsize)
        ratio = f" (ratio {decoded / size:.1f})" if decoded and size else ""
        rows.append(("Stored size", f"{human(size)}{ratio}"))
    return rows


def _table(rows: list[tuple[str, str]]) -> str:
    cells = "".join(
        f'<tr><th style="text-align:left;padding:1px 8px 1px 0;white-space:nowrap">'
        f"{_esc(k)}</th>"
        f'<td style="text-align:left;font-family:monospace">{_esc(v)}</td></tr>'
        for k, v in rows
    )
    return f'<table class="zarrx-facts" style="border-collapse:collapse">{cells}</table>'


def array_rows(array: Any) -> list[tuple[str, str]]:
    """The facts an array's display lists, as (label, text)."""
    summary = array_summary(array, stored=False)
    rows = [
        ("Type", f"zarrx.Array (Zarr {array.zarr_format})"),
        ("Name", array.name),
        ("Shape", str(array.shape)),
        ("Data type", str(array.dtype)),
        ("Chunk shape", str(array.chunks)),
    ]
    if array.shards is not None:
        rows.append(("Shard shape", str(array.shards)))
    rows.append(("Fill value", str(summary["fill_value"])))
    if "codecs" in summary:
        rows.append(("Codecs", _codec_text(summary["codecs"])))
    else:
        rows.append(("Compressor", _codec_text(summary.get("compressor") or "none")))
        rows.append(("Filters", _codec_text(summary.get("filters") or [])))
    if array.dimension_names is not None:
        rows.append(("Dimensions", str(tuple(array.dimension_names))))
    rows.append(("Data size", human(array.nbytes)))
    rows += _stored_rows(array)
    if len(array.attrs):
        rows.append(("Attributes", ", ".join(sorted(array.attrs))))
    if array.read_only:
        rows.append(("Read-only", "yes"))
    return rows


def array_html(array: Any) -> str:
    """An array's notebook display: its facts beside the picture of its grid."""
    legend = ""
    picture = grid_svg(array.shape, array.chunks, array.shards)
    if array.ndim:
        notes = ["thin lines: chunks"] + (["thick blue lines: shards"] if array.shards else [])
        if 'class="dense"' in picture:
            notes.append(f"shaded: over {MAX_LINES} boundaries along an axis")
        legend = f'<div style="font-size:11px;color:#555">{"; ".join(notes)}</div>'
    return ('<div class="zarrx-repr zarrx-array" style="display:flex;gap:24px;'
            'align-items:flex-start">' + _table(array_rows(array))
            + f"<div>{picture}{legend}</div></div>")


# -- groups ------------------------------------------------------------------------------
def _node_line(name: str, node: Any) -> str:
    label = f"<b>{_esc(name)}</b>"
    if hasattr(node, "dtype"):  # an array (this module is below arrays and groups)
        shards = f" shards {node.shards}" if node.shards else ""
        return (f'<span class="array">{label} <code>{_esc(node.shape)} {_esc(node.dtype)}'
                f"</code> chunks {_esc(node.chunks)}{_esc(shards)}</span>")
    return f'<span class="group">{label}{"" if name.endswith("/") else "/"}</span>'


def group_html(group: Any) -> str:
    """A group's notebook display: its facts and its hierarchy as a tree."""
    members = group.members(max_depth=None)
    shown = members[:MAX_NODES]
    children: dict[str, list[tuple[str, Any]]] = {}
    for key, node in shown:
        children.setdefault(key.rpartition("/")[0], []).append((key, node))

    def tree(parent: str) -> str:
        items = []
        for key, node in children.get(parent, []):
            line = _node_line(key.rpartition("/")[2], node)
            if key in children:
                line = f'<details open=""><summary>{line}</summary>{tree(key)}</details>'
            items.append(f"<li>{line}</li>")
        return ('<ul style="list-style:none;margin:0;padding-left:16px">'
                + "".join(items) + "</ul>")

    rows = [("Type", f"zarrx.Group (Zarr {group.zarr_format})"), ("Name", group.name),
            ("Members", f"{len(members)} (all levels)"),
            ("Store", type(group.store).__name__)]
    if group.consolidated is not None:
        rows.append(("Consolidated", "yes"))
    if len(group.attrs):
        rows.append(("Attributes", ", ".join(sorted(group.attrs))))
    note = (f"<div>… {len(members) - MAX_NODES} more not shown</div>"
            if len(members) > MAX_NODES else "")
    return ('<div class="zarrx-repr zarrx-group">' + _table(rows)
            + f'<div class="zarrx-tree">{_node_line(group.name, group)}{tree("")}{note}</div>'
            + "</div>")
