"""A one-line progress display for long commands (no dependency).

It writes to stderr and redraws the line in place with ``\\r``: the phase, chunks done of
the total, the percentage, the throughput in MB/s and the estimated time left. It is
quiet when stderr is not a terminal, unless asked for (``--progress``); redraws happen
at most every ``interval`` seconds, and :meth:`Progress.close` draws the final state and
ends the line.

>>> import io
>>> out = io.StringIO()
>>> with Progress(4, label="copying", stream=out, enabled=True, interval=0) as bar:
...     bar.advance(3, nbytes=3_000_000)
>>> "3/4 chunks" in out.getvalue(), out.getvalue().endswith("\\n")
(True, True)
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any, TextIO


def format_duration(seconds: float) -> str:
    """``75`` → ``1:15``; ``3725`` → ``1:02:05``."""
    seconds = round(seconds)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class Progress:
    """Counts work items and bytes; draws ``label done/total unit pct MB/s ETA``."""

    def __init__(
        self,
        total: int,
        *,
        label: str = "",
        unit: str = "chunks",
        done: int = 0,
        stream: TextIO | None = None,
        enabled: bool | None = None,
        interval: float = 0.1,
    ) -> None:
        self.total = total
        self.label = label
        self.unit = unit
        self.done = done
        self._start_done = done
        self.nbytes = 0
        self.stream = sys.stderr if stream is None else stream
        if enabled is None:
            isatty = getattr(self.stream, "isatty", None)
            enabled = bool(isatty and isatty())
        self.enabled = enabled
        self.interval = interval
        self._start = time.perf_counter()
        self._last_draw = -float("inf")
        self._width = 0
        self._closed = False

    # -- counting -------------------------------------------------------------------------
    def advance(self, n: int = 1, *, nbytes: int = 0) -> None:
        self.done += n
        self.nbytes += nbytes
        now = time.perf_counter()
        if now - self._last_draw >= self.interval:
            self._draw(now)

    def line(self, now: float | None = None) -> str:
        """The text of the display as it stands."""
        now = time.perf_counter() if now is None else now
        elapsed = max(now - self._start, 1e-9)
        pct = 100.0 * self.done / self.total if self.total else 100.0
        rate_mb = self.nbytes / 1e6 / elapsed
        session = self.done - self._start_done
        remaining = self.total - self.done
        if remaining <= 0:
            eta = "0:00"
        elif session > 0:
            eta = format_duration(remaining * elapsed / session)
        else:
            eta = "--:--"
        label = f"{self.label} " if self.label else ""
        return (
            f"{label}{self.done}/{self.total} {self.unit} {pct:5.1f}% "
            f"{rate_mb:8.1f} MB/s  ETA {eta}"
        )

    def _draw(self, now: float | None = None) -> None:
        if not self.enabled:
            return
        text = self.line(now)
        pad = max(self._width - len(text), 0)
        self.stream.write("\r" + text + " " * pad)
        self.stream.flush()
        self._width = len(text)
        self._last_draw = time.perf_counter() if now is None else now

    def close(self) -> None:
        """Draw the final state and end the line (once)."""
        if self._closed:
            return
        self._closed = True
        if self.enabled:
            self._draw()
            self.stream.write("\n")
            self.stream.flush()

    def __enter__(self) -> Progress:
        self._draw()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def add_options(parser: argparse.ArgumentParser) -> None:
    """A command's ``--progress`` / ``--no-progress``: ``args.progress`` is then ``True``,
    ``False``, or ``None`` (the default: shown when stderr is a terminal), as
    :class:`Progress`'s ``enabled`` takes it."""
    bar = parser.add_mutually_exclusive_group()
    bar.add_argument("--progress", dest="progress", action="store_const", const=True,
                     help="always show the progress bar (default: only on a terminal)")
    bar.add_argument("--no-progress", dest="progress", action="store_const", const=False,
                     help="never show the progress bar")
    parser.set_defaults(progress=None)
