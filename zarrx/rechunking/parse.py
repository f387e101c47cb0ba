"""Text forms of the options of :func:`zarrx.rechunk`, as a command line or a config file
gives them: memory sizes (``"512MiB"``), chunk shapes (``"64,64,64"``) and codec lists
(``"zstd:3,crc32c"``). Every parser raises :class:`~zarrx.errors.ArgumentError` with the
text it could not read.

>>> parse_mem("512MiB"), parse_mem("1GB"), parse_mem(4096)
(536870912, 1000000000, 4096)
>>> parse_chunks("64,64,-1")
(64, 64, -1)
>>> parse_codecs("zstd:3,crc32c")
[{'name': 'zstd', 'configuration': {'level': 3}}, {'name': 'crc32c'}]
>>> parse_codecs("none"), parse_codecs("keep")
([], 'keep')
>>> format_mem(536870912)
'512 MiB'
"""

from __future__ import annotations

import json
import re
from typing import Any

from zarrx.errors import ArgumentError

_UNITS = {
    "": 1, "b": 1,
    "k": 1000, "kb": 1000, "m": 1000**2, "mb": 1000**2, "g": 1000**3, "gb": 1000**3,
    "t": 1000**4, "tb": 1000**4,
    "ki": 1024, "kib": 1024, "mi": 1024**2, "mib": 1024**2, "gi": 1024**3, "gib": 1024**3,
    "ti": 1024**4, "tib": 1024**4,
}
_MEM = re.compile(r"\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*([A-Za-z]*)\s*")


def parse_mem(value: Any) -> int:
    """A memory size in bytes: an int, or text such as ``"512MiB"``, ``"1GB"``,
    ``"1.5 GiB"``, ``"65536"`` (decimal units are powers of 1000, binary ones of 1024).
    It must be positive."""
    if isinstance(value, bool):
        raise ArgumentError(
            f"max_mem must be a size in bytes or text such as '512MiB', got {value!r}"
        )
    if isinstance(value, int):
        n = value
    elif isinstance(value, float) and value.is_integer():
        n = int(value)
    elif isinstance(value, str):
        m = _MEM.fullmatch(value)
        unit = m.group(2).lower() if m else ""
        if m is None or unit not in _UNITS:
            raise ArgumentError(
                f"max_mem {value!r} is not a size: expected a number of bytes, or a number "
                "and a unit such as '512MiB', '1GB', '64 KiB'"
            )
        n = int(float(m.group(1)) * _UNITS[unit])
    else:
        raise ArgumentError(
            f"max_mem must be a size in bytes or text such as '512MiB', got {value!r}"
        )
    if n <= 0:
        raise ArgumentError(f"max_mem must be positive, got {value!r}")
    return n


def format_mem(n: int) -> str:
    """``536870912`` → ``'512 MiB'`` (for messages)."""
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if size < 1024 or unit == "TiB":
            return f"{int(size)} B" if unit == "B" else f"{size:.4g} {unit}"
        size /= 1024
    return f"{n} B"  # pragma: no cover


def parse_chunks(text: str) -> tuple[int, ...]:
    """``"64,64,64"`` (or ``"64x64x64"``) as a tuple of ints; ``-1`` is the whole axis.
    ``""`` is the shape of a 0-d array, ``()``."""
    text = text.strip().strip("()[]")
    if not text:
        return ()
    parts = re.split(r"\s*[,x]\s*", text)
    try:
        out = tuple(int(p) for p in parts)
    except ValueError:
        raise ArgumentError(
            f"chunks {text!r} must be integers separated by commas, e.g. '64,64,64'"
        ) from None
    if any(c == 0 or c < -1 for c in out):
        raise ArgumentError(f"chunks {text!r} must be positive (or -1: the whole axis)")
    return out


#: Codecs whose one positional setting is a level: ``zstd:3``, ``gzip:6``.
_LEVEL = {"zstd": "level", "gzip": "level", "numcodecs.zstd": "level",
          "numcodecs.gzip": "level", "numcodecs.zlib": "level", "numcodecs.bz2": "level",
          "numcodecs.lzma": "preset", "numcodecs.lz4": "acceleration"}


def _codec(text: str) -> dict[str, Any]:
    name, *args = [p.strip() for p in text.split(":")]
    if not name:
        raise ArgumentError(f"codec {text!r} has no name")
    config: dict[str, Any] = {}
    if name == "blosc" and args:  # blosc:CNAME[:CLEVEL[:SHUFFLE]]
        keys = ("cname", "clevel", "shuffle")
        if len(args) > len(keys):
            raise ArgumentError(f"codec {text!r}: blosc takes blosc:CNAME:CLEVEL:SHUFFLE")
        for key, value in zip(keys, args):
            config[key] = int(value) if key == "clevel" and value.isdigit() else value
    elif args:
        for arg in args:
            key, eq, value = arg.partition("=")
            if not eq:
                if name not in _LEVEL or config:
                    raise ArgumentError(
                        f"codec {text!r}: give settings as key=value (e.g. 'zstd:level=3')"
                    )
                key, value = _LEVEL[name], arg
            try:
                config[key] = json.loads(value)
            except ValueError:
                config[key] = value
    return {"name": name, "configuration": config} if config else {"name": name}


def parse_codecs(text: str) -> list[Any] | str:
    """A codec list as text: ``"zstd:3"``, ``"blosc:lz4:5,crc32c"``, ``"gzip:level=6"``,
    a JSON list or object of v3 codec dicts, ``"none"`` (``[]``: no codecs) or ``"keep"``
    (returned as is: the source's)."""
    text = text.strip()
    if text.lower() in ("keep", ""):
        return "keep"
    if text.lower() == "none":
        return []
    if text[0] in "[{":
        try:
            value = json.loads(text)
        except ValueError as e:
            raise ArgumentError(f"codecs {text!r} are not valid JSON: {e}") from None
        return value if isinstance(value, list) else [value]
    return [_codec(part) for part in text.split(",")]


__all__ = ["format_mem", "parse_chunks", "parse_codecs", "parse_mem"]
