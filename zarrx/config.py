"""Runtime settings: thread budget, write behaviour, and what stored data may make zarrx do.

>>> import zarrx
>>> with zarrx.config.set(threads=1):
...     zarrx.config.get("threads")
1
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_DEFAULTS: dict[str, Any] = {
    # Threads that decode/encode chunks concurrently (codec internals get one each).
    "threads": max(1, os.cpu_count() or 1),
    # Write chunks whose every element equals the fill value (zarr-python's write_empty_chunks).
    "write_empty_chunks": False,
    # How many chunks one batched store request fetches before decoding starts.
    "batch_chunks": 256,
    # DANGEROUS. Open and decode arrays whose codecs unpickle stored bytes (numcodecs'
    # ``pickle``): unpickling runs any code the writer of the data chose. Only for data
    # from a source trusted as much as the code this process runs.
    "allow_pickle": False,
    # How often a read-modify-write on a store with conditional writes (an object store) is
    # tried when other writers keep changing the value between its read and its write.
    "update_attempts": 64,
    # shards="auto": None gives axes of more than 8 chunks shards of 2 chunks; a size in
    # bytes gives every axis as many chunks per shard as fit (zarr-python's rule and key).
    "target_shard_size_bytes": None,
}
_settings: dict[str, Any] = dict(_DEFAULTS)


def get(name: str) -> Any:
    """The current value of a setting."""
    if name not in _settings:
        raise KeyError(f"unknown zarrx setting {name!r}; known: {sorted(_settings)}")
    return _settings[name]


@contextmanager
def _restore(previous: dict[str, Any]) -> Iterator[None]:
    try:
        yield
    finally:
        _settings.update(previous)


def set(**values: Any) -> Any:
    """Change settings; usable as a context manager that restores them on exit."""
    unknown = values.keys() - _settings.keys()
    if unknown:
        raise KeyError(f"unknown zarrx settings {sorted(unknown)}; known: {sorted(_settings)}")
    for name in ("threads", "update_attempts"):
        if name in values and (not isinstance(values[name], int) or values[name] < 1):
            raise ValueError(f"{name} must be a positive integer, got {values[name]!r}")
    target = values.get("target_shard_size_bytes")
    if target is not None and (not isinstance(target, int) or isinstance(target, bool)
                               or target < 1):
        raise ValueError(f"target_shard_size_bytes must be None or a positive integer, "
                         f"got {target!r}")
    for flag in ("write_empty_chunks", "allow_pickle"):
        if flag in values and not isinstance(values[flag], bool):
            raise ValueError(f"{flag} must be True or False, got {values[flag]!r}")
    previous = {k: _settings[k] for k in values}
    _settings.update(values)
    return _restore(previous)


def reset() -> None:
    """Back to the defaults."""
    _settings.clear()
    _settings.update(_DEFAULTS)
