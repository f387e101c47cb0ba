"""Reading and writing metadata JSON, deliberately.

Duplicate keys, non-standard constants (``NaN`` literals), nesting deeper than the parser's
recursion limit and bytes that are not UTF-8 are errors naming the document.
"""

from __future__ import annotations

import json
from json.scanner import make_scanner
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
# What decode() runs, without its Python wrapper (typeshed types the argument wrongly).
_SCANNERS = {
    False: make_scanner(_STRICT),  # type: ignore[arg-type]
    True: make_scanner(_WITH_NAN),  # type: ignore[arg-type]
}
_JSON_SPACE = " \t\n\r"  # JSON's white space (str.isspace would allow more)


def load_json(data: bytes, *, where: str, allow_nan: bool = False) -> Any:
    """Parse a metadata document; :class:`MetadataError` if it is not strict JSON."""
    try:
        text = bytes(data).decode("utf-8")
    except UnicodeDecodeError as e:
        raise MetadataError(f"{where}: metadata is not UTF-8 ({e})") from None
    decoder = _WITH_NAN if allow_nan else _STRICT
    try:
        # The scanner itself for a document that is one value and at most trailing
        # white space (as written); anything else takes decode(), which says what is wrong.
        try:
            value, end = _SCANNERS[allow_nan](text, 0)
        except StopIteration:  # nothing at 0 (leading white space?): decode() tells
            return decoder.decode(text)
        if end == len(text) or not text[end:].strip(_JSON_SPACE):
            return value
        return decoder.decode(text)
    except _Refused as e:
        raise MetadataError(f"{where}: {e}") from None
    except RecursionError:  # Python's parser stops near its recursion limit: refuse it here
        raise MetadataError(f"{where}: JSON nested too deeply") from None
    except json.JSONDecodeError as e:
        raise MetadataError(f"{where}: invalid JSON ({e})") from None


def dump_json(value: Any) -> bytes:
    """Serialise a metadata document (indented, UTF-8, NaN refused)."""
    return json.dumps(value, indent=2, ensure_ascii=False, allow_nan=False).encode("utf-8")
