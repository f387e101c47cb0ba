"""A memory store that records what the engine asks of it: every round of
``read_rounds`` (all its readers' ranges of that round, as one batch, the way a
high-latency store sends them) and every other read."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from zarrx.abc.store import ByteRange, RangeReader
from zarrx.stores.memory import MemoryStore


class RoundsRecording(MemoryStore):
    """Serves ``read_rounds`` round by round across its readers (each round of every
    reader at once), recording each round's requests as one batch, and records the
    ``get``s and ``get_many`` batches it is asked beside them."""

    def __init__(self, *, batched: bool = False) -> None:
        super().__init__()
        self.batched_reads = batched
        self.rounds: list[list[tuple[str, ByteRange]]] = []
        self.calls: list[str] = []
        self.gets: list[tuple[str, ByteRange | None]] = []
        self._record = threading.Lock()

    def clear(self) -> None:
        with self._record:
            self.rounds.clear()
            self.calls.clear()
            self.gets.clear()

    def get(self, key: str, byte_range: ByteRange | None = None) -> bytes | None:
        with self._record:
            self.calls.append("get")
            self.gets.append((key, byte_range))
        return super().get(key, byte_range)

    def get_many(self, requests: Any) -> list[bytes | None]:
        with self._record:
            self.calls.append("get_many")
        return [MemoryStore.get(self, k, r) for k, r in requests]

    def read_rounds(self, reads: Sequence[tuple[str, RangeReader]]) -> None:
        with self._record:
            self.calls.append("read_rounds")
        values = {key: MemoryStore.get(self, key) for key, _ in reads}
        pending = [(key, reader, reader.ranges()) for key, reader in reads]
        while pending := [(k, r, asked) for k, r, asked in pending if asked]:
            with self._record:
                self.rounds.append([(k, b) for k, _, asked in pending for b in asked])
            following = []
            for key, reader, asked in pending:
                value = values[key]
                reader.receive([None if value is None else _cut(value, b) for b in asked])
                following.append((key, reader, reader.ranges()))
            pending = following


def _cut(value: bytes, r: ByteRange) -> bytes:
    if r.start < 0:
        part = value[max(len(value) + r.start, 0):]
    else:
        part = value[r.start:]
    return part if r.length is None else part[:r.length]

