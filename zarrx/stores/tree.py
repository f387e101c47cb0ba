"""Listing the keys of a directory tree (:class:`~zarrx.stores.local.LocalStore`'s).

Listings skip names that are not valid keys (temporary files and lock files among them),
symlinked directories (which could form cycles) and symlinks that resolve outside the
store (``inside`` says which real paths lie inside it).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator

from zarrx.stores.keys import is_valid_key

Inside = Callable[[str], bool]


def _is_regular(path: str) -> bool:
    """Whether ``path`` is a regular file (not a link, not a directory), with one ``lstat``."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except (OSError, ValueError):
        return False


def listable(entry: os.DirEntry[str], inside: Inside) -> str | None:
    """``"file"``, ``"dir"`` or ``None`` (skipped) for one directory entry."""
    if not is_valid_key(entry.name):  # also skips temporary files
        return None
    try:
        if entry.is_dir(follow_symlinks=False):
            return "dir"
        if entry.is_file(follow_symlinks=False):
            return "file"
        if entry.is_symlink() and inside(os.path.realpath(entry.path)):
            return "file" if entry.is_file() else None  # no cycles through linked dirs
    except OSError:
        pass
    return None


def walk(directory: str, prefix: str, inside: Inside) -> Iterator[str]:
    """Every key below ``directory`` (whose keys start with ``prefix``)."""
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return
    for entry in entries:
        kind = listable(entry, inside)
        if kind == "file":
            yield prefix + entry.name
        elif kind == "dir":
            yield from walk(entry.path, prefix + entry.name + "/", inside)


def list_dir(directory: str, prefix: str, inside: Inside) -> tuple[list[str], list[str]]:
    """The keys and the prefixes directly below ``directory``, sorted."""
    keys: list[str] = []
    prefixes: list[str] = []
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return keys, prefixes
    probe: str | None = None  # a key name the last child held directly
    for entry in entries:
        kind = listable(entry, inside)
        if kind == "file":
            keys.append(prefix + entry.name)
        elif kind == "dir":  # a prefix only if a key lies below
            if probe is not None and _is_regular(entry.path + os.sep + probe):
                prefixes.append(prefix + entry.name + "/")  # siblings alike: one lstat
                continue
            found = _holds_key(entry.path, inside)
            if found:
                prefixes.append(prefix + entry.name + "/")
                if isinstance(found, str):
                    probe = found
    return sorted(keys), sorted(prefixes)


def _holds_key(directory: str, inside: Inside) -> str | bool:
    """The name of a key directly in ``directory``, else whether a key lies deeper (the
    members of a group each hold their document: the next sibling is probed for that
    name with one ``lstat`` instead of being listed)."""
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return False
    below = []
    for entry in entries:
        kind = listable(entry, inside)
        if kind == "file" and not entry.is_symlink():
            return entry.name
        if kind is not None:
            below.append(entry)
    for entry in below:
        if entry.is_symlink() or next(walk(entry.path, "", inside), None) is not None:
            return True  # a linked file (listable, checked above), or a key below
    return False
