"""What a rechunk tells as it goes: a bar on stderr (:class:`zarrx.progress.Progress`) or
:class:`RechunkProgress` values handed to a callable (for notebooks and services)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from zarrx.progress import Progress


@dataclass(frozen=True)
class RechunkProgress:
    """What a ``progress=`` callable receives after every finished slab (and once at the
    start and at the end): ``done`` of ``total`` slabs (over every stage; those done before
    a resume included), ``nbytes`` moved by this call, ``seconds`` since it started,
    ``stage`` (``"target"``, or ``"intermediate"`` for the first stage of a two-stage
    plan) and ``finished``."""

    done: int
    total: int
    nbytes: int
    seconds: float
    stage: str
    finished: bool = False


class Reporter:
    """Progress to a bar on stderr (``progress=True``) or to a callable."""

    def __init__(self, progress: Any, total: int, done: int) -> None:
        self.callback = progress if callable(progress) else None
        self.bar = Progress(total, label="rechunk", unit="slabs", done=done,
                            enabled=progress is True)
        self.start = time.perf_counter()
        self.stage = "target"

    def update(self, n: int = 0, nbytes: int = 0, finished: bool = False) -> None:
        if n or nbytes:
            self.bar.advance(n, nbytes=nbytes)
        if self.callback is not None:
            self.callback(RechunkProgress(self.bar.done, self.bar.total, self.bar.nbytes,
                                          time.perf_counter() - self.start, self.stage,
                                          finished))

    def close(self) -> None:
        self.bar.close()


__all__ = ["RechunkProgress", "Reporter"]
