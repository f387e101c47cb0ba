"""The record of a rechunk in progress, kept in the target's store beside its data.

Everything lives under one reserved prefix inside the target node's data prefix,
``<node data prefix>.zarrx-rechunk/`` (for a v3 array at ``a/b``: ``a/b/.zarrx-rechunk/``),
which no Zarr format uses for a chunk or a document — listings of the hierarchy, ``tree``,
consolidation and ``validate`` never see it, and a resume works from any machine that
reaches the store:

- ``state.json``: the source (a description, a digest of its metadata and of its stored
  keys), the target's metadata digest, the options' digest, and the plan;
- ``done/<stage>/<n>``: an empty value per finished slab (written by the task itself, after
  its objects, so a task on a cluster worker records itself);
- ``intermediate/``: the chunks of a two-stage plan's scratch array.

The prefix is erased, through validated keys, once the rechunk completed; ``state.json``
goes last, after its ``phase`` said ``"complete"``, so an interruption of the clean-up is
finished by the next call.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from zarrx.errors import RechunkError
from zarrx.metadata.io import data_prefix
from zarrx.stores.keys import validate_key, validate_prefix

RECORD_DIR = ".zarrx-rechunk"
STATE = "state.json"
FORMAT = "zarrx-rechunk"
VERSION = 1


def record_prefix(path: str, meta: Any) -> str:
    """The reserved prefix of the record of the array ``meta`` at ``path``."""
    return validate_prefix(f"{data_prefix(path, meta)}{RECORD_DIR}/")


def digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def metadata_digest(meta: Any) -> str:
    return digest(meta.to_json())


def source_fingerprint(array: Any) -> dict[str, str]:
    """What identifies the source's state: its metadata, and its stored objects (their
    keys; on a local store also their sizes and modification times)."""
    from zarrx.info import listed_keys

    store = array.store
    listing = [[key, store.stamp(key)] for key in sorted(listed_keys(array))]
    return {"metadata": metadata_digest(array.metadata), "data": digest(listing)}


@dataclass
class State:
    """The ``state.json`` of a rechunk."""

    source: str  # a description, for messages
    fingerprint: dict[str, str]
    target: str  # digest of the target's metadata as written
    options: str  # digest of the options (the target's metadata as asked)
    plan: dict[str, Any]
    phase: str = "copying"  # then "complete"
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT, "version": VERSION, "source": self.source,
            "fingerprint": self.fingerprint, "target": self.target, "options": self.options,
            "plan": self.plan, "phase": self.phase, **self.extra,
        }


class _Taken(Exception):
    """A record exists where :meth:`Record.claim` was to create one."""


class Record:
    """The record of the rechunk of one target array (``prefix``: :func:`record_prefix`)."""

    def __init__(self, store: Any, prefix: str, where: str) -> None:
        self.store = store
        self.prefix = prefix
        self.where = where

    @property
    def state_key(self) -> str:
        return validate_key(self.prefix + STATE)

    def marker(self, stage: str, number: int) -> str:
        return validate_key(f"{self.prefix}done/{stage}/{number}")

    @property
    def intermediate_path(self) -> str:
        return f"{self.prefix}intermediate"

    def load(self) -> State | None:
        raw = self.store.get(self.state_key)
        if raw is None:
            return None
        try:
            doc = json.loads(raw)
            if doc.get("format") != FORMAT or doc.get("version") != VERSION:
                raise ValueError
            return State(doc["source"], dict(doc["fingerprint"]), doc["target"],
                         doc["options"], dict(doc["plan"]), doc.get("phase", "copying"))
        except (ValueError, KeyError, TypeError, AttributeError):
            raise RechunkError(
                f"{self.where}: the key {self.state_key!r} does not hold a zarrx rechunk "
                f"record (format {FORMAT!r} version {VERSION}); pass overwrite=True to start over"
            ) from None

    def save(self, state: State) -> None:
        self.store.set(self.state_key, json.dumps(state.to_json(), indent=1).encode())

    def claim(self, state: State) -> bool:
        """Write ``state`` as a new record, atomically only if there is none (the store's
        atomic update); ``False``, nothing written, when another rechunk holds one."""
        new = json.dumps(state.to_json(), indent=1).encode()

        def create(existing: bytes | None) -> bytes:
            if existing is not None:
                raise _Taken
            return new

        try:
            self.store.atomic_update(self.state_key, create)
        except _Taken:
            return False
        return True

    def done(self, stage: str) -> set[int]:
        """The numbers of the slabs of ``stage`` recorded as finished (one listing)."""
        prefix = validate_prefix(f"{self.prefix}done/{stage}/")
        out = set()
        for key in self.store.list_prefix(prefix):
            tail = key[len(prefix):]
            if tail.isdigit():
                out.add(int(tail))
        return out

    def erase(self) -> None:
        """Remove the record: the markers and scratch data, then ``state.json``."""
        state = self.load()
        if state is not None and state.phase != "complete":
            state.phase = "complete"
            self.save(state)
        keys = [k for k in self.store.list_prefix(self.prefix) if k != self.state_key]
        for key in keys:
            self.store.erase(validate_key(key))
        self.store.erase(self.state_key)
        self.store.erase_prefix(self.prefix)  # (directories of a local store)

    def check(self, state: State, fingerprint: dict[str, str], options: str,
              target_meta: Any | None) -> None:
        """Refuse to resume when the source, the options or the target changed since."""
        key = self.state_key
        if state.fingerprint.get("metadata") != fingerprint["metadata"]:
            raise RechunkError(
                f"{self.where}: the source {state.source} changed since the interrupted "
                f"rechunk recorded in {key!r} (its metadata differs); pass overwrite=True "
                "to start over"
            )
        if state.fingerprint.get("data") != fingerprint["data"]:
            raise RechunkError(
                f"{self.where}: the source {state.source} changed since the interrupted "
                f"rechunk recorded in {key!r} (its stored chunks differ); pass "
                "overwrite=True to start over"
            )
        if state.options != options:
            raise RechunkError(
                f"{self.where}: {key!r} records a rechunk with other options (chunks, "
                "shards, codecs, format or dtype); call again with the same options to "
                "resume it, or pass overwrite=True to start over"
            )
        if target_meta is not None and metadata_digest(target_meta) != state.target:
            raise RechunkError(
                f"{self.where}: the target's metadata changed since the interrupted rechunk "
                f"recorded in {key!r} (expected the metadata it wrote); pass overwrite=True "
                "to start over"
            )
