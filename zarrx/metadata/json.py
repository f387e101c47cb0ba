"""Reading and writing metadata JSON, deliberately.

Duplicate keys, non-standard constants (``NaN`` literals), nesting deeper than the parser's
recursion limit and bytes that are not UTF-8 are errors naming the document.
"""

from __future__ import annotations

import json
from typing import Any

from zarrx.errors import MetadataError


def _no_duplicates(where: str):
    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in pairs:
            if key in out:
                raise MetadataError(f"{where}: duplicate key {key!r}")
            out[key] = value
        return out

    return hook


def load_json(data: bytes, *, where: str, allow_nan: bool = False) -> Any:
    """Parse a metadata document; :class:`MetadataError` if it is not strict JSON."""

    def bad_constant(name: str) -> Any:
        if allow_nan:
            return float(name)
        raise MetadataError(f"{where}: {name} is not valid JSON (write it as the string {name!r})")

    try:
        text = bytes(data).decode("utf-8")
    except UnicodeDecodeError as e:
        raise MetadataError(f"{where}: metadata is not UTF-8 ({e})") from None
    try:
        value = json.loads(
            text, object_pairs_hook=_no_duplicates(where), parse_constant=bad_constant
        )
    except RecursionError:  # Python's parser stops near its recursion limit: refuse it here
        raise MetadataError(f"{where}: JSON nested too deeply") from None
    except json.JSONDecodeError as e:
        raise MetadataError(f"{where}: invalid JSON ({e})") from None
    return value


def dump_json(value: Any) -> bytes:
    """Serialise a metadata document (indented, UTF-8, NaN refused)."""
    return json.dumps(value, indent=2, ensure_ascii=False, allow_nan=False).encode("utf-8")
