"""Reading part of a chunk: the byte ranges of the stored value a small selection needs,
and decoding only those.

A prepared chain (:meth:`zarrx.codecs.pipeline.PreparedChain.partial_read`) offers this
when its chunks can be decoded in part: C-order chunks whose codecs are exactly ``bytes``
(the stored value is the elements: read their bytes) or ``bytes`` then ``blosc`` (read the
frame's header and block starts, then only the blocks that hold the elements, and decode
those blocks alone; see :func:`zarrx.codecs.blosc.read_frame`; in an lz4 frame only the
first bytes of each of their streams the elements need, see
:func:`zarrx.codecs.blosc.decode_blocks`). Every other chain —
checksums (``crc32c``) included, which need the whole value — decodes whole chunks.

One rule decides (:func:`touched_bytes`): the chunk holds at least
:data:`MIN_CHUNK_BYTES`, and the decoded bytes from the selection's first element to its
last are at most :data:`MAX_SHARE` of it. Those bytes are read as one range (an
uncompressed chunk), or the blocks they fall in are (blosc, after a first read of the
header and block starts); a chunk the selection touches more of is read whole.

A partial read is a :class:`~zarrx.abc.store.RangeReader`: the store serves its rounds
(:meth:`~zarrx.abc.store.Store.read_rounds`) from one version of the value, so the blocks
decoded are those of the frame whose header was read, whatever a writer does meanwhile.
Every answer is checked against the value's size (the chunk's, or the size its blosc
header states; a one-byte probe of the end where no range reaches it), so a truncated
chunk is refused as a whole read refuses it: the read fails (:attr:`PartialRead.failed`)
and the engine reads the chunk whole instead, which gives the chunk or the error a whole
read gives.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from zarrx.abc.store import ByteRange, Value
from zarrx.errors import CodecError
from zarrx.runtime.scratch import scratch

#: Chunks smaller than this are read whole: a ranged read of a small file costs about as
#: much as reading all of it, and the bookkeeping of a part would cost more.
MIN_CHUNK_BYTES = 64 * 1024
#: A selection spanning more than this share of a chunk's decoded bytes reads it whole.
MAX_SHARE = 0.25


#: A chunk already in memory (an inner chunk of a shard) is decoded in part when it holds
#: at least this many bytes and the selection spans at most this share of them (there is
#: no read to save, only decoding: a span of up to half a 32³ float32 lz4 chunk decodes in
#: less time than the whole; below 4 KiB the set-up costs as much as the decode).
IN_MEMORY_MIN_BYTES = 4096
IN_MEMORY_SHARE = 0.5


def touched_bytes(
    shape: tuple[int, ...], itemsize: int, selection: tuple[Any, ...],
    min_bytes: int | None = None, share: float | None = None,
) -> tuple[int, int] | None:
    """The decoded bytes ``[start, stop)`` of a C-order chunk of ``shape`` from the first
    to the last element of ``selection`` (one slice per axis, positive steps), when the
    chunk is worth reading in part (the rule of this module: ``min_bytes`` and ``share``
    default to :data:`MIN_CHUNK_BYTES` and :data:`MAX_SHARE`); else ``None``."""
    nbytes = itemsize
    for n in shape:
        nbytes *= n
    floor = MIN_CHUNK_BYTES if min_bytes is None else min_bytes
    if nbytes < floor or len(selection) != len(shape):
        return None
    first = last = 0  # the first and last selected elements' C-order positions
    for n, sel in zip(shape, selection):
        if type(sel) is not slice:
            return None
        start, stop, step = sel.start, sel.stop, sel.step
        if start is None or stop is None or stop <= start:
            return None
        if step is None:
            step = 1
        elif step < 1:
            return None
        first = first * n + start
        last = last * n + start + (stop - 1 - start) // step * step
    first *= itemsize
    stop = (last + 1) * itemsize
    if stop - first > nbytes * (MAX_SHARE if share is None else share):
        return None
    return first, stop


def in_memory_span(
    shape: tuple[int, ...], itemsize: int, selection: tuple[Any, ...]
) -> tuple[int, int] | None:
    """:func:`touched_bytes` for a chunk already in memory (:data:`IN_MEMORY_SHARE`)."""
    return touched_bytes(shape, itemsize, selection, IN_MEMORY_MIN_BYTES, IN_MEMORY_SHARE)


#: Byte ranges of one value at most this far apart are read as one request (the bytes
#: between are read and dropped): a few KiB more cost less than another request.
MERGE_GAP = 16 * 1024


class PartialRead(ABC):
    """One chunk read in part, in rounds (a :class:`~zarrx.abc.store.RangeReader`):
    :meth:`ranges` says what to read next (nothing once it has all it needs),
    :meth:`receive` takes those values, and the read then decodes like a prepared chain
    (:meth:`decoded`, :meth:`decode_into`) for :func:`zarrx.runtime.place.place_selection`,
    which copies the selection out of it. Only the selected elements of the chunk it
    yields are meaningful.

    What a round needs is a list of byte ranges; those close together are merged into one
    request (:data:`MERGE_GAP`). Where the value's size is known (the chunk's size, or the
    size a blosc header states), every answer is checked against it, and a range ending
    at the value's end is read with it (a one-byte probe where none does): a truncated
    chunk is refused as a whole read refuses it, not read in part as if nothing were
    missing."""

    def __init__(self, nbytes: int, dtype: np.dtype, shape: tuple[int, ...],
                 start: int, stop: int) -> None:
        self.nbytes, self.dtype, self.shape = nbytes, dtype, shape
        self.start, self.stop = start, stop
        self.restart()

    def restart(self) -> None:
        """Forget everything received: the next :meth:`ranges` is the first round's."""
        #: The key is absent: the chunk is the fill value.
        self.absent = False
        #: Why the read could not finish (a truncated value): the engine then reads the
        #: chunk whole, which says what is wrong if anything is.
        self.failed: CodecError | None = None
        self._asked: list[tuple[int, int]] = []  # the requests of the round
        self._needs: list[tuple[int, int]] = []  # the ranges of the round, in _next's order
        self._size: int | None = None  # the value's size, when known
        self._forget()

    @abstractmethod
    def _forget(self) -> None:
        """Forget what the rounds received (the subclass's state)."""

    #: The rule, for the chain to ask without importing this module each time.
    touched = staticmethod(touched_bytes)

    @staticmethod
    def worth_it(nbytes: int) -> bool:
        """Whether chunks of ``nbytes`` are ever read in part."""
        return nbytes >= MIN_CHUNK_BYTES

    def ranges(self) -> list[ByteRange]:
        """The byte ranges to read next (``[]``: done), kept as :attr:`pending` until
        :meth:`receive` gets their values."""
        self._needs = [] if self.absent or self.failed else self._next()
        self._asked = _merged(self._needs)
        return self.pending

    @property
    def pending(self) -> list[ByteRange]:
        return [ByteRange(lo, hi - lo) for lo, hi in self._asked]

    def receive(self, values: Sequence[Value | None]) -> None:
        """The values of the last :meth:`ranges`, in order (``None``: the key is absent).
        A value of another length than the value's size allows fails the read
        (:attr:`failed`)."""
        if any(v is None for v in values):
            self.absent = True
            return
        try:
            self._receive(values)
        except CodecError as error:
            self.failed = error

    def _receive(self, values: Sequence[Value | None]) -> None:
        size = self._size
        for (lo, hi), value in zip(self._asked, values):
            expect = hi - lo if size is None else min(hi, size) - lo
            if len(value) != expect and (size is not None or len(value) > expect):  # type: ignore[arg-type]
                raise CodecError(
                    f"truncated data: bytes {lo}-{min(hi, size or hi)} of the stored chunk "
                    f"were asked for, {len(value)} came back"  # type: ignore[arg-type]
                )
        answers = sorted(zip((lo for lo, _ in self._asked), values))
        starts = [lo for lo, _ in answers]
        parts = []
        for lo, hi in self._needs:
            base, value = answers[bisect_right(starts, lo) - 1]
            # A view, not a copy: a block read with the header (or another block) is
            # not copied out of the request's value (a fresh copy of a block of
            # hundreds of KiB costs its page faults again on every read).
            parts.append(memoryview(value)[lo - base : hi - base])  # type: ignore[arg-type]
        self._take(parts)

    @abstractmethod
    def _next(self) -> list[tuple[int, int]]:
        """The byte ranges to read next; ``[]``: done."""

    @abstractmethod
    def _take(self, values: Sequence[Any]) -> None:
        """The bytes of the ranges of :meth:`_next` (cut to the value's end; bytes-like
        objects: views of the values read)."""

    @abstractmethod
    def _fill(self, out: np.ndarray) -> None:
        """Write decoded bytes ``[start, stop)`` (at least) of the chunk into ``out``."""

    @contextmanager
    def decoded(
        self, data: Any, selection: tuple[Any, ...] | None = None
    ) -> Iterator[np.ndarray]:
        """The chunk, in a per-thread scratch buffer where only the bytes this read
        decoded are set. (``data`` is this read itself, as the engine passes it; the
        ``selection`` is the one this read was made for.)"""
        with scratch(self.nbytes) as buffer:
            self._fill(buffer)
            yield buffer.view(self.dtype).reshape(self.shape)

    def decode_into(self, data: Any, out: np.ndarray) -> bool:
        return False  # a part is never the whole chunk


def _merged(needs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``needs`` as the fewest requests: sorted, merged where they overlap or lie within
    :data:`MERGE_GAP` of each other."""
    merged: list[tuple[int, int]] = []
    for lo, hi in sorted(needs):
        if merged and lo - merged[-1][1] <= MERGE_GAP:
            merged[-1] = (merged[-1][0], max(hi, merged[-1][1]))
        else:
            merged.append((lo, hi))
    return merged


def _with_probe(ranges: list[tuple[int, int]], size: int) -> list[tuple[int, int]]:
    """``ranges`` of a value of ``size`` bytes, and a one-byte probe of its last byte
    unless a range ends there already."""
    if all(hi < size for _, hi in ranges):
        return [*ranges, (size - 1, size)]
    return ranges


class RawPartial(PartialRead):
    """A chunk stored as its elements (``bytes`` alone): the bytes from the selection's
    first element to its last, and a probe of the value's size (one byte past its end
    too: a value longer than the chunk is refused, as a whole read refuses it)."""

    _data: Any = None

    def _forget(self) -> None:
        self._data = None

    def _next(self) -> list[tuple[int, int]]:
        self._size = self.nbytes
        if self._data is not None:
            return []
        return [(self.start, self.stop), (self.nbytes - 1, self.nbytes + 1)]

    def _take(self, values: Sequence[Any]) -> None:
        self._data = values[0]

    def _fill(self, out: np.ndarray) -> None:
        assert self._data is not None
        out[self.start : self.stop] = np.frombuffer(self._data, dtype=np.uint8)


class BloscPartial(PartialRead):
    """A chunk stored as ``bytes`` then ``blosc``: the frame's header and block starts,
    then the blocks holding the selection and the probe of the frame's end."""

    def __init__(self, *args: Any) -> None:
        from zarrx.codecs import blosc

        self._blosc = blosc
        super().__init__(*args)

    def _forget(self) -> None:
        self._frame: Any = None
        self._parts: list[Any] | None = None
        self._prefix = self._blosc.frame_prefix(self.nbytes)

    def _next(self) -> list[tuple[int, int]]:
        if self._parts is not None:
            return []
        frame = self._frame
        if frame is None:
            return [(0, self._prefix)]  # the size is not known yet: a shorter answer is
            # the whole frame
        return _with_probe(frame.ranges(self.start, self.stop), frame.cbytes)

    def _take(self, values: Sequence[Any]) -> None:
        if self._frame is None:
            found = self._blosc.read_frame(values[0], self.nbytes)
            if isinstance(found, int):
                if len(values[0]) < self._prefix:  # the frame ends before its starts do
                    raise CodecError(
                        f"codec 'blosc': truncated data ({len(values[0])} bytes, the "
                        f"header and block starts take {found})"
                    )
                self._prefix = found  # small blocks: their starts need a longer read
            else:
                self._frame = found
                self._size = found.cbytes
            return
        self._parts = list(values[: len(self._frame.ranges(self.start, self.stop))])

    def _fill(self, out: np.ndarray) -> None:
        assert self._parts is not None
        self._blosc.decode_blocks(self._frame, self.start, self.stop, self._parts, out)
