"""Runtime settings: thread budget, write behaviour, and what stored data may make zarrx do.

>>> import zarrx
>>> with zarrx.config.set(threads=1):
...     zarrx.config.get("threads")
1
>>> with zarrx.config.set({"array.write_empty_chunks": True}):  # zarr-python's form
...     zarrx.config.get("write_empty_chunks")
True

zarr-python's configuration keys that have a meaning in zarrx are accepted under their
zarr-python names (:data:`ZARR_PYTHON_KEYS`), flat (``"array.write_empty_chunks"``) or
nested (``{"array": {"write_empty_chunks": True}}``); those that have none are refused
with the reason (:data:`NO_MEANING`), like any unknown key.

Per array, zarr-python's ``config={"write_empty_chunks": ..., "order": ...}`` of
``create_array`` / ``open_array`` (:func:`array_settings`) overrides the process-wide
setting for that array object.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from zarrx.errors import ArgumentError


def _default_threads() -> int:
    return max(1, os.cpu_count() or 1)


_DEFAULTS: dict[str, Any] = {
    # Threads that decode/encode chunks concurrently (codec internals get one each).
    "threads": _default_threads(),
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

#: zarr-python's keys and the zarrx setting each sets. zarr-python's two limits on its
#: concurrency (coroutines in flight, threads of its pool) are both zarrx's one thread
#: budget; ``None`` for ``threading.max_workers`` is zarrx's default (one per core).
ZARR_PYTHON_KEYS = {
    "array.write_empty_chunks": "write_empty_chunks",
    "array.target_shard_size_bytes": "target_shard_size_bytes",
    "async.concurrency": "threads",
    "threading.max_workers": "threads",
}

#: zarr-python's keys that mean nothing in zarrx, and why.
NO_MEANING = {
    "array.order": "zarrx returns C-ordered NumPy arrays; pass order='F' to create_array "
                   "to store chunks in Fortran order",
    "async.timeout": "zarrx's store calls are synchronous and use each store's own timeouts",
    "default_zarr_format": "pass zarr_format= when creating (the default is 3)",
    "json_indent": "zarrx writes metadata documents indented by 2, as zarr-python does",
    "codec_pipeline": "zarrx has one codec pipeline",
    "codecs": "zarrx finds codecs through its entry points (see docs/plugins.md)",
    "buffer": "zarrx reads into NumPy arrays",
    "ndbuffer": "zarrx reads into NumPy arrays",
}


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


def _flat(values: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    """``{"array": {"write_empty_chunks": True}}`` as ``("array.write_empty_chunks", True)``
    (a dict is a value only under a key that is a zarrx setting or a known zarr-python key)."""
    for key, value in values.items():
        if not isinstance(key, str):
            raise ArgumentError(f"zarrx.config keys are strings, got {key!r}")
        name = prefix + key
        if isinstance(value, Mapping) and name not in _settings and name not in ZARR_PYTHON_KEYS:
            yield from _flat(value, name + ".")
        else:
            yield name, value


def _zarrx_name(name: str) -> str:
    if name in _settings:
        return name
    if name in ZARR_PYTHON_KEYS:
        return ZARR_PYTHON_KEYS[name]
    head = name.split(".")[0]
    for key in (name, head):
        if key in NO_MEANING:
            raise ArgumentError(
                f"zarr-python's setting {name!r} has no zarrx counterpart: {NO_MEANING[key]}"
            )
    raise ArgumentError(
        f"unknown zarrx setting {name!r}; zarrx's: {', '.join(sorted(_settings))}; "
        f"zarr-python's it takes: {', '.join(sorted(ZARR_PYTHON_KEYS))}"
    )


def _checked(values: dict[str, Any]) -> dict[str, Any]:
    for name in ("threads", "update_attempts", "batch_chunks"):
        value = values.get(name)
        if name in values and (not isinstance(value, int) or isinstance(value, bool)
                               or value < 1):
            raise ArgumentError(f"{name} must be a positive integer, got {value!r}")
    target = values.get("target_shard_size_bytes")
    if target is not None and (not isinstance(target, int) or isinstance(target, bool)
                               or target < 1):
        raise ArgumentError(f"target_shard_size_bytes must be None or a positive integer, "
                            f"got {target!r}")
    for flag in ("write_empty_chunks", "allow_pickle"):
        if flag in values and not isinstance(values[flag], bool):
            raise ArgumentError(f"{flag} must be True or False, got {values[flag]!r}")
    return values


def set(values: Mapping[str, Any] | None = None, /, **keywords: Any) -> Any:
    """Change settings, given as keywords or as a dict (zarr-python's form, its key names
    too); usable as a context manager that restores them on exit. Nothing changes when a
    key or a value is refused (:class:`zarrx.errors.ArgumentError`)."""
    given = list(_flat(values)) if values is not None else []
    given += list(_flat(keywords))
    changes: dict[str, Any] = {}
    for name, value in given:
        target = _zarrx_name(name)
        if name == "threading.max_workers" and value is None:
            value = _default_threads()
        if target in changes and changes[target] != value:
            raise ArgumentError(
                f"zarrx.config.set: {target!r} is given twice, as {changes[target]!r} and "
                f"{value!r} ({name!r})"
            )
        changes[target] = value
    _checked(changes)
    previous = {k: _settings[k] for k in changes}
    _settings.update(changes)
    return _restore(previous)


def reset() -> None:
    """Back to the defaults."""
    _settings.clear()
    _settings.update(_DEFAULTS)


#: zarr-python's per-array settings (its ``ArrayConfig``).
ARRAY_KEYS = ("order", "write_empty_chunks")


def array_settings(
    config: Any, *, where: str, write_empty_chunks: bool | None = None
) -> dict[str, Any]:
    """A per-array ``config`` — zarr-python's ``{"write_empty_chunks": ..., "order": ...}``
    (or its ``ArrayConfig`` object) — as the zarrx settings it overrides for that array:
    ``{}`` or ``{"write_empty_chunks": bool}``. ``order`` may only be ``"C"``.
    ``write_empty_chunks`` is zarr-python's older keyword for the same setting."""
    if write_empty_chunks is not None:
        given = array_settings(config, where=where)
        if given.get("write_empty_chunks", write_empty_chunks) != write_empty_chunks:
            raise ArgumentError(
                f"{where}: write_empty_chunks={write_empty_chunks!r} and config "
                f"{{'write_empty_chunks': {given['write_empty_chunks']!r}}} differ; pass one"
            )
        return array_settings({**given, "write_empty_chunks": write_empty_chunks}, where=where)
    if config is None:
        return {}
    if not isinstance(config, Mapping):
        if not all(hasattr(config, k) for k in ARRAY_KEYS):
            raise ArgumentError(
                f"{where}: config must be a dict of {', '.join(ARRAY_KEYS)}, got {config!r}"
            )
        config = {k: getattr(config, k) for k in ARRAY_KEYS}
    unknown = sorted(str(k) for k in config if k not in ARRAY_KEYS)
    if unknown:
        raise ArgumentError(
            f"{where}: unknown array config key(s) {unknown}; an array takes "
            f"{', '.join(ARRAY_KEYS)} (process-wide settings: zarrx.config.set)"
        )
    order = getattr(config.get("order", "C"), "value", config.get("order", "C"))
    if order != "C":
        raise ArgumentError(f"{where}: config order {order!r}: {NO_MEANING['array.order']}")
    out = {k: v for k, v in config.items() if k == "write_empty_chunks"}
    try:
        return _checked(out)
    except ArgumentError as e:
        raise ArgumentError(f"{where}: config {e}") from None
