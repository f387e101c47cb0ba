"""What a store request may name: keys, prefixes and byte ranges.

This module is the single place that decides what a key is, so every store refuses the
same inputs, and does so before any I/O. A key is a non-empty ``/``-separated string of
non-empty segments (seed 000). On top of the seed we refuse whatever could make a key
mean something else on some backend: a leading ``/``, ``.`` and ``..`` segments,
backslashes, control characters, lone surrogates (not encodable as UTF-8) and Windows
drive forms (``C:``). Segments starting with :data:`TEMP_PREFIX` are reserved for the
temporary files of atomic writes, and segments starting with :data:`LOCK_PREFIX` for the
lock files of atomic updates, so neither can ever be listed, read or erased as a key.
"""

from __future__ import annotations

import re

# What a byte range asks of a value is decided beside ByteRange; stores import it from here.
from zarrx.abc.store import resolve_byte_range, validate_byte_range
from zarrx.errors import InvalidKeyError

__all__ = [
    "LOCK_PREFIX", "TEMP_PREFIX", "is_valid_key", "lock_name", "resolve_byte_range",
    "validate_byte_range", "validate_key", "validate_prefix",
]

TEMP_PREFIX = ".zarrx-tmp-"
"""Reserved segment prefix: stores write temporary files under names that start with it."""
LOCK_PREFIX = ".zarrx-lock-"
"""Reserved segment prefix of lock files (:func:`lock_name`)."""


def lock_name(name: str, name_max: int = 255) -> str:
    """The name of the lock file of a key whose last segment is ``name``, in the same
    directory: ``zarr.json`` -> ``.zarrx-lock-zarr.json.lock``. It is never a key, and it
    ends like no metadata document (a reader that finds nodes by their documents' suffix,
    as the 2020 draft's ``*.array.json``, never takes it for one). A name that would
    exceed the file system's ``name_max`` bytes uses a digest of ``name`` instead."""
    lock = f"{LOCK_PREFIX}{name}.lock"
    if len(lock.encode("utf-8", "surrogatepass")) > name_max:
        import hashlib

        digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()
        lock = f"{LOCK_PREFIX}{digest}.lock"
    return lock

# Most keys are plain ASCII names ("c/0/1", "zarr.json"): one fullmatch accepts them.
_PLAIN = re.compile(r"[\w\-][\w.\-]*(?:/[\w\-][\w.\-]*)*", re.ASCII).fullmatch
# Otherwise one search finds any defect; _RULES only run to explain a refusal.
_BAD = re.compile(
    r"[\x00-\x1f\x7f-\x9f\\\ud800-\udfff]"  # control characters, backslash, surrogates
    r"|^/|/$|//"  # leading, trailing or doubled separator
    r"|(?:^|/)\.\.?(?:/|$)"  # "." or ".." segment
    r"|(?:^|/)[A-Za-z]:"  # Windows drive form
    r"|(?:^|/)(?:" + re.escape(TEMP_PREFIX) + "|" + re.escape(LOCK_PREFIX) + ")"
)

_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"[\x00-\x1f\x7f-\x9f]"), "it contains a control character"),
    (re.compile(r"\\"), "it contains a backslash (the separator is '/')"),
    (re.compile(r"[\ud800-\udfff]"), "it contains a lone surrogate (not valid UTF-8)"),
    (re.compile(r"^/"), "it starts with '/' (keys are relative to the store root)"),
    (re.compile(r"/$"), "it ends with '/' (that is a prefix, not a key)"),
    (re.compile(r"//"), "it has an empty segment"),
    (re.compile(r"(?:^|/)\.\.?(?:/|$)"), "it has a '.' or '..' segment"),
    (re.compile(r"(?:^|/)[A-Za-z]:"), "it has a Windows drive form such as 'C:'"),
    (re.compile(r"(?:^|/)" + re.escape(TEMP_PREFIX)), f"{TEMP_PREFIX!r} is reserved"),
    (re.compile(r"(?:^|/)" + re.escape(LOCK_PREFIX)), f"{LOCK_PREFIX!r} is reserved"),
)


def _refuse(what: str, value: object, reason: str) -> InvalidKeyError:
    return InvalidKeyError(
        f"invalid store {what} {value!r}: {reason} "
        "(expected non-empty '/'-separated segments, such as 'a/b/c')"
    )


def _reason(key: object) -> str:
    """Why ``key`` is not a valid key (only called once it has been refused)."""
    if not isinstance(key, str):
        return f"it is a {type(key).__name__}, not a str"
    if not key:
        return "it is empty"
    for rule, reason in _RULES:
        if rule.search(key):
            return reason
    return "it is malformed"  # pragma: no cover - _RULES cover _BAD


def validate_key(key: str) -> str:
    """Return ``key`` if it is a valid store key, else raise :class:`InvalidKeyError`."""
    if type(key) is str and (_PLAIN(key) or (key and _BAD.search(key) is None)):
        return key
    raise _refuse("key", key, _reason(key))


def validate_prefix(prefix: str) -> str:
    """Return ``prefix`` if it is ``""`` or a valid key followed by ``/``."""
    if prefix == "":
        return prefix
    if type(prefix) is str and len(prefix) > 1 and prefix[-1] == "/":
        end = len(prefix) - 1
        if _PLAIN(prefix, 0, end) or _BAD.search(prefix, 0, end) is None:
            return prefix
    if isinstance(prefix, str) and not prefix.endswith("/"):
        raise _refuse("prefix", prefix, "a prefix is '' or ends with '/'")
    if prefix == "/":
        raise _refuse("prefix", prefix, "the prefix of the whole store is ''")
    raise _refuse("prefix", prefix, _reason(prefix[:-1] if isinstance(prefix, str) else prefix))


def is_valid_key(key: str) -> bool:
    """Whether ``key`` is a valid key (for filtering names found in a listing)."""
    return type(key) is str and (_PLAIN(key) is not None or (key != "" and not _BAD.search(key)))
