"""Reads in rounds from stores that tell which version of a value answered (an object
store's ETag): :meth:`~zarrx.abc.store.Store.read_rounds` for S3 and its kin.

Each round of every reader is sent at once (one event-loop call for the whole batch; the
ranges of one reader's round that lie close together as one request,
:mod:`zarrx.stores.ranges`). A reader's first round is sent without a condition, and its
answers must all come from one version; every later round is sent on condition that the
value still is that version (``If-Match``), and its answers are checked against it too
(a server that ignored the condition is caught). A value that changed between or within
rounds restarts the reader (its ``restart()``) from its first round, at most ``zarrx.config``
``"update_attempts"`` times; then :class:`~zarrx.errors.StoreError` names the key. A value
the store gives no version for (a web server without ETags) is read whole, once, and the
reader's rounds are answered from it.

A store provides ``fetch(key, byte_range, version)``, a coroutine answering one range:
``(bytes, version)``, or ``(None, None)`` when the key is absent (and no version was
asked), raising :class:`Changed` when the value is not (or no longer) ``version``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from functools import partial
from typing import Any

from zarrx import config
from zarrx.abc.store import (
    ByteRange,
    RangeReader,
    Value,
    resolve_byte_range,
    validate_byte_range,
)
from zarrx.errors import StoreError
from zarrx.stores.ranges import COALESCE_GAP, coalesced

#: ``fetch(key, byte_range, version)``: see the module's docstring.
Fetch = Callable[[str, ByteRange, Any], Awaitable[tuple[bytes | None, Any]]]
#: Runs a coroutine made by the function it is given on the store's event loop.
Run = Callable[[Callable[[], Coroutine[Any, Any, Any]]], Any]


class Changed(Exception):
    """The value is not the version a request asked for: it changed."""


_CHANGED: Any = object()
_WHOLE = ByteRange(0)


class _Read:
    """One reader, between rounds."""

    __slots__ = ("absent", "key", "ranges", "reader", "tries", "value", "version")

    def __init__(self, key: str, reader: RangeReader, ranges: Sequence[ByteRange]) -> None:
        self.key, self.reader, self.ranges = key, reader, ranges
        self.tries = 0
        self.restart()

    def restart(self) -> None:
        self.version: Any = None  # the version of the first round's answers
        self.value: Any = None  # the whole value, on a store without versions for it
        self.absent = False


def serve(reads: Sequence[tuple[str, RangeReader]], fetch: Fetch, run: Run,
          limit: int, where: object) -> None:
    """Serve ``reads`` (keys already validated) round after round, every round of all of
    them in one ``run``, at most ``limit`` requests in flight; ``where`` (the store) is
    named in errors."""
    active = []
    for key, reader in reads:
        read = _Read(key, reader, reader.ranges())
        if _checked(read):
            active.append(read)
    attempts = config.get("update_attempts")
    while active:
        results = run(partial(_round, active, fetch, limit))
        following = []
        for read, result in zip(active, results):
            if result is _CHANGED:
                read.tries += 1
                if read.tries >= attempts:
                    raise StoreError(
                        f"could not read key {read.key!r} in {where!r}: its value changed "
                        f"during each of {attempts} reads (raise zarrx.config "
                        "'update_attempts', or read while fewer writers replace it)"
                    )
                read.restart()
                read.reader.restart()
            else:
                read.reader.receive(result)
            read.ranges = read.reader.ranges()
            if _checked(read):
                following.append(read)
        active = following


def _checked(read: _Read) -> bool:
    """Whether ``read`` asks for more; its ranges refused before any request if bad."""
    for byte_range in read.ranges:
        validate_byte_range(byte_range, read.key)
    return bool(read.ranges)


async def _round(reads: list[_Read], fetch: Fetch, limit: int) -> list[Any]:
    """One round of every read: its answers, or ``_CHANGED``."""
    semaphore = asyncio.Semaphore(limit)

    async def bounded(key: str, byte_range: ByteRange, version: Any) -> Any:
        async with semaphore:
            return await fetch(key, byte_range, version)

    results = await asyncio.gather(*(_answers(read, bounded) for read in reads),
                                   return_exceptions=True)
    for result in results:
        if isinstance(result, BaseException):
            raise result  # every request has ended: nothing is left running
    return results


async def _answers(read: _Read, fetch: Fetch) -> Any:
    """The answers to the round ``read`` asks for, from one version, or ``_CHANGED``."""
    key, ranges = read.key, read.ranges
    if read.absent:
        return [None] * len(ranges)
    if read.value is not None:
        return _sliced(read.value, key, ranges)
    fetches, answer = coalesced([(key, r) for r in ranges], COALESCE_GAP)
    found = await asyncio.gather(*(fetch(key, r or _WHOLE, read.version) for _, r in fetches),
                                 return_exceptions=True)
    answers: list[tuple[bytes | None, Any]] = []
    for f in found:
        if isinstance(f, Changed):
            return _CHANGED
        if isinstance(f, BaseException):
            raise f
        answers.append(f)
    values = [data for data, _ in answers]
    versions = {version for _, version in answers}
    if read.version is not None:  # a later round: asked on condition, checked again
        if versions != {read.version} or any(v is None for v in values):
            return _CHANGED
        return answer(values)
    if all(v is None for v in values):
        read.absent = True
        return [None] * len(ranges)
    if len(versions) != 1 or any(v is None for v in values):
        return _CHANGED  # changed during the first round
    version = versions.pop()
    if version is None:  # no version to hold the rounds to: the value, whole, once
        whole, _ = await fetch(key, _WHOLE, None)
        if whole is None:
            read.absent = True
            return [None] * len(ranges)
        read.value = whole
        return _sliced(whole, key, ranges)
    read.version = version
    return answer(values)


def _sliced(value: Value, key: str, ranges: Sequence[ByteRange]) -> list[memoryview]:
    view = memoryview(value)
    return [view[slice(*resolve_byte_range(r, len(view), key))] for r in ranges]
