"""Reading and writing metadata JSON, deliberately.

Duplicate keys, non-standard constants (``NaN`` literals), nesting deeper than the parser's
recursion limit and bytes that are not UTF-8 are errors naming the document.
"""

from __future__ import annotations

import json
from typing import Any

from zarrx.errors import MetadataError


class _Refused(Exception):
    """Raised inside the parser's hooks; :func:`load_json` names the document."""


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):  # a key came twice: find which
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _Refused(f"duplicate key {key!r}")
            seen.add(key)
    return out


def _refuse_constant(name: str) -> Any:
    raise _Refused(f"{name} is not valid JSON (write it as the string {name!r})")


# Built once: json.loads with hooks would build a decoder per document.
_STRICT = json.JSONDecoder(object_pairs_hook=_no_duplicates, parse_constant=_refuse_constant)
_WITH_NAN = json.JSONDecoder(object_pairs_hook=_no_duplicates, parse_constant=float)


def load_json(data: bytes, *, where: str, allow_nan: bool = False) -> Any:
    """Parse a metadata document; :class:`MetadataError` if it is not strict JSON."""
    try:
        text = bytes(data).decode("utf-8")
    except UnicodeDecodeError as e:
        raise MetadataError(f"{where}: metadata is not UTF-8 ({e})") from None
    try:
        return (_WITH_NAN if allow_nan else _STRICT).decode(text)
    except _Refused as e:
        raise MetadataError(f"{where}: {e}") from None
    except RecursionError:  # Python's parser stops near its recursion limit: refuse it here
        raise MetadataError(f"{where}: JSON nested too deeply") from None
    except json.JSONDecodeError as e:
        raise MetadataError(f"{where}: invalid JSON ({e})") from None


def dump_json(value: Any) -> bytes:
    """Serialise a metadata document (indented, UTF-8, NaN refused)."""
    return json.dumps(value, indent=2, ensure_ascii=False, allow_nan=False).encode("utf-8")
