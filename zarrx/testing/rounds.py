"""The contract of :meth:`zarrx.abc.store.Store.read_rounds` and
:meth:`zarrx.abc.store.Store.atomic_set_parts`, part of
:class:`~zarrx.testing.stores.StoreTests`, and the pieces race tests build on:

- :func:`version_value` and :class:`VersionReader`: values that carry their version number
  (and every word its position) everywhere, in lengths that differ from version to version,
  and a reader of three rounds, each chosen from what the last returned, that tells whether
  all it read came from one version;
- :class:`Counters`: a whole-value writer beside updaters of parts of the same value, kept
  so that a lost write of either kind shows.
"""

from __future__ import annotations

import struct
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from fractions import Fraction
from typing import Any

import numpy as np
import pytest

from zarrx import config
from zarrx.abc.store import ByteRange, RangeReader, Store, Value
from zarrx.errors import InvalidKeyError, ReadOnlyError, StoreError
from zarrx.stores.keys import LOCK_PREFIX

VALUE = bytes(range(256)) * 4  # 1 KiB, every byte value
RANGES = [
    (0, None), (10, None), (10, 5), (0, 0), (1020, 10), (1024, None), (2000, None),
    (2000, 5), (-10, None), (-1024, None), (-5000, None), (-10, 4), (-10, 50), (0, 5000),
]


def expected(value: bytes, start: int, length: int | None) -> bytes:
    """The reference semantics of a byte range: Python slicing, suffix for negative start."""
    begin = max(len(value) + start, 0) if start < 0 else start
    part = value[begin:]
    return part if length is None else part[:length]


# -- values that say which version they are ---------------------------------------------------

_WORD = 8


def version_words(version: int) -> int:
    """How many 8-byte words the value of ``version`` holds (lengths differ by version)."""
    return 512 + (version * 7919) % 8000


def version_value(version: int) -> bytes:
    """The value of ``version``: word 0 is the version, word 1 the length in words, every
    other word ``version << 32 | its position``."""
    n = version_words(version)
    words = (np.uint64(version) << np.uint64(32)) | np.arange(n, dtype=np.uint64)
    words[0], words[1] = version, n
    return words.astype("<u8").tobytes()


class VersionReader:
    """A reader of a :func:`version_value` in three rounds: the first two words (version and
    length); then the middle, the last two words (a suffix) and the last three (open-ended),
    placed by that length; then three words at a place chosen by the middle word's bytes.
    :meth:`consistent` says whether everything it read came from one version.
    ``between(round)`` runs after each round it receives (a test's writer, say)."""

    def __init__(self, between: Callable[[int], None] | None = None) -> None:
        self.between = between
        self.restarts = -1
        self.restart()

    def restart(self) -> None:
        self.restarts += 1
        self.round = 0
        self.absent = False
        self.version: int | None = None
        self.size = 0
        self.words: dict[int, int] = {}
        self.short = False
        self.asked: list[ByteRange] = []

    def ranges(self) -> list[ByteRange]:
        n = self.size
        if self.absent or self.round >= 3:
            self.asked = []
        elif self.round == 0:
            self.asked = [ByteRange(0, 2 * _WORD)]
        elif self.round == 1:
            self.asked = [ByteRange(n // 2 * _WORD, 8 * _WORD), ByteRange(-2 * _WORD),
                          ByteRange((n - 3) * _WORD)]
        else:
            middle = self.words.get(n // 2, 0)
            self.asked = [ByteRange((middle * 31 + 7) % max(n - 3, 1) * _WORD, 3 * _WORD)]
        return self.asked

    def receive(self, values: Sequence[Value | None]) -> None:
        if any(v is None for v in values):
            self.absent = all(v is None for v in values) and self.round == 0
            self.short |= not self.absent
            return
        for byte_range, value in zip(self.asked, values):
            self._take(byte_range, bytes(value))  # type: ignore[arg-type]
        if self.round == 0 and not self.short:
            self.version, self.size = self.words[0], max(self.words[1], 4)
        self.round += 1
        if self.between is not None:
            self.between(self.round)

    def _take(self, byte_range: ByteRange, data: bytes) -> None:
        n = self.size
        if byte_range.start < 0:
            first = n + byte_range.start // _WORD
            want = -byte_range.start
        else:
            first = byte_range.start // _WORD
            want = (n - first) * _WORD if byte_range.length is None else byte_range.length
        if len(data) != want or (self.round and first + want // _WORD > n):
            self.short = True
        for i, (word,) in enumerate(struct.iter_unpack("<Q", data[: len(data) // 8 * 8])):
            self.words[first + i] = word

    def consistent(self) -> bool:
        """Whether every word read is the word of one version at its place (and the
        reader finished, or found the key absent)."""
        if self.absent:
            return not self.words and not self.short
        version = self.version
        if self.short or version is None or self.round != 3:
            return False
        return all(word == (version if p == 0 else self.size if p == 1 else
                            version << 32 | p) for p, word in self.words.items())


class Scripted:
    """A reader whose rounds are ``plan(received)``: the answers so far, one list a round,
    as bytes (``None``: absent); done when ``plan`` gives no range."""

    def __init__(self, plan: Callable[[list[list[bytes | None]]], Sequence[ByteRange]]) -> None:
        self.plan = plan
        self.received: list[list[bytes | None]] = []
        self.restarts = 0

    def ranges(self) -> Sequence[ByteRange]:
        return self.plan(self.received)

    def receive(self, values: Sequence[Value | None]) -> None:
        self.received.append([None if v is None else bytes(v) for v in values])

    def restart(self) -> None:
        self.received.clear()
        self.restarts += 1


class Noted:
    """A reader passed on with its rounds' ranges noted in ``requests`` as ``(key, range)``
    (what a store that reads ranges would fetch), and ``after(round)`` run after each
    round it receives (a test's writer, say)."""

    def __init__(self, reader: RangeReader, key: str, requests: list[Any],
                 after: Callable[[int], None] | None = None) -> None:
        self.reader, self.key, self.requests, self.after = reader, key, requests, after
        self.round = 0

    def ranges(self) -> Sequence[ByteRange]:
        ranges = self.reader.ranges()
        self.requests.extend((self.key, r) for r in ranges)
        return ranges

    def receive(self, values: Sequence[Value | None]) -> None:
        self.reader.receive(values)
        self.round += 1
        if self.after is not None:
            self.after(self.round)

    def restart(self) -> None:
        self.reader.restart()


def _rounds(*rounds: Sequence[ByteRange]) -> Callable[[list[Any]], Sequence[ByteRange]]:
    return lambda received: rounds[len(received)] if len(received) < len(rounds) else []


# -- a whole-value writer beside updaters of its parts ---------------------------------------


class Counters:
    """One value of ``1 + updaters`` little-endian 64-bit words: word 0 is a generation
    that only the whole-value writer sets (each whole write is the next generation with
    every counter 0), word ``i`` a counter only updater ``i`` increments (an atomic update
    of the value). A lost whole write shows as a generation going back (after the
    writer's write, or at the end); a lost increment as a counter that is not the number
    of its updater's increments kept since the last generation."""

    def __init__(self, store: Store, key: str, updaters: int) -> None:
        self.store, self.key, self.updaters = store, key, updaters
        self.lost: list[str] = []
        self.kept: list[list[tuple[int, int]]] = [[] for _ in range(updaters)]
        self.generation = 0
        store.set(key, np.zeros(1 + updaters, "<u8").tobytes())

    def write_whole(self, generations: int) -> None:
        for generation in range(1, generations + 1):
            counters = np.zeros(self.updaters, "<u8")
            # parts of several kinds: bytes, an array, a memoryview
            parts: list[Any] = [struct.pack("<Q", generation), counters[: self.updaters // 2],
                                memoryview(counters[self.updaters // 2:].tobytes())]
            self.store.atomic_set_parts(self.key, parts)
            self.generation = generation
            seen = self._words(self.store.get(self.key))[0]
            if seen != generation:
                self.lost.append(f"whole write {generation} lost: generation {seen} read")
            time.sleep(0)

    def update(self, updater: int, rounds: int) -> None:
        def increment(old: bytes | None) -> bytes:
            words = self._words(old)
            time.sleep(0)  # other threads run between this update's read and its write
            words[1 + updater] += 1
            return words.tobytes()

        for _ in range(rounds):
            words = self._words(self.store.atomic_update(self.key, increment))
            kept = self.kept[updater]
            if kept and words[0] < kept[-1][0]:
                self.lost.append(f"updater {updater} saw generation {words[0]} after "
                                 f"{kept[-1][0]}")
            kept.append((int(words[0]), int(words[1 + updater])))

    def check(self) -> list[str]:
        """Every lost write found, the final value checked against the writers' logs."""
        words = self._words(self.store.get(self.key))
        lost = list(self.lost)
        if words[0] != self.generation:
            lost.append(f"generation {words[0]} at the end, {self.generation} written last")
        for updater, kept in enumerate(self.kept):
            counts = [count for generation, count in kept if generation == words[0]]
            if counts != list(range(1, len(counts) + 1)) or words[1 + updater] != len(counts):
                lost.append(f"updater {updater}: counter {words[1 + updater]}, "
                            f"increments kept in generation {words[0]}: {counts}")
        return lost

    def _words(self, value: bytes | None) -> np.ndarray:
        assert value is not None
        assert len(value) == 8 * (1 + self.updaters), value
        return np.frombuffer(value, "<u8").copy()


def race_counters(store: Store, key: str, generations: int, updaters: int,
                  rounds: int) -> list[str]:
    """Run :class:`Counters`' whole writer and updaters on threads at once; the lost writes."""
    counters = Counters(store, key, updaters)
    start = threading.Barrier(updaters + 1)

    def work(i: int) -> None:
        start.wait()
        if i == updaters:
            counters.write_whole(generations)
        else:
            counters.update(i, rounds)

    with ThreadPoolExecutor(updaters + 1) as pool:
        list(pool.map(work, range(updaters + 1)))
    return counters.check()


# -- the contract --------------------------------------------------------------------------------


class RoundTests:
    """Reads in rounds from one version, and whole writes atomic against updates."""

    def open_read_only(self, store: Store) -> Store:
        raise NotImplementedError  # StoreTests provides it

    def test_read_rounds_follow_what_they_read(self, store: Store) -> None:
        store.set("a/v", version_value(3))
        reader = VersionReader()
        store.read_rounds([("a/v", reader)])
        assert reader.consistent()
        assert (reader.version, reader.restarts) == (3, 0)
        store.set("k", b"0123456789")

        def plan(received: list[list[bytes | None]]) -> list[ByteRange]:
            if not received:
                return [ByteRange(4, 1)]
            if len(received) == 1:  # where the head points: two bytes there, and a suffix
                first = received[0][0]
                assert first is not None
                return [ByteRange(int(first), 2), ByteRange(-3)]
            return []

        scripted = Scripted(plan)
        store.read_rounds([("k", scripted)])
        assert scripted.received == [[b"4"], [b"45", b"789"]]

    @pytest.mark.parametrize(("start", "length"), RANGES)
    def test_read_rounds_answer_ranges_as_get(self, store: Store, start: int,
                                              length: int | None) -> None:
        """Ranges outside the value are clipped as :meth:`get` clips them; suffixes too."""
        store.set("v", VALUE)
        asked = ByteRange(start, length)
        reader = Scripted(_rounds([asked], [ByteRange(0, 2), asked]))
        store.read_rounds([("v", reader)])
        want = expected(VALUE, start, length)
        assert reader.received == [[want], [VALUE[:2], want]]
        assert reader.received[0] == [store.get("v", asked)]

    @pytest.mark.parametrize("bounds", [(1.5, 2), (1, 2.0), (Fraction(3, 2), None),
                                        (np.float64(1), 2), (2, 1e9), (-1e9, None),
                                        (Fraction(10**9), None), (np.array(1.5), 2)])
    def test_read_rounds_refuse_ranges_get_refuses(self, store: Store,
                                                   bounds: tuple[Any, Any]) -> None:
        """A start or length that is not an integer is refused (``TypeError``) by a read
        in rounds as by :meth:`get`, never rounded; an integer of NumPy's is taken."""
        asked = ByteRange(*bounds)
        store.set("v", VALUE)
        with pytest.raises(TypeError):
            store.get("v", asked)
        with pytest.raises(TypeError):
            store.read_rounds([("v", Scripted(_rounds([asked])))])
        numpy_ints = ByteRange(np.int64(1), np.int32(2))  # type: ignore[arg-type]
        reader = Scripted(_rounds([numpy_ints]))
        store.read_rounds([("v", reader)])
        assert reader.received == [[VALUE[1:3]]] == [[store.get("v", numpy_ints)]]

    def test_read_rounds_of_an_empty_value(self, store: Store) -> None:
        store.set("e", b"")
        asked = [ByteRange(0, 4), ByteRange(-3), ByteRange(5), ByteRange(0, 0)]
        reader = Scripted(_rounds(asked, asked))
        store.read_rounds([("e", reader)])
        assert reader.received == [[b""] * 4] * 2

    def test_read_rounds_of_absent_keys(self, store: Store) -> None:
        store.set("a/b", b"x")
        for key in ("absent", "a", "a/b/c"):
            reader = Scripted(_rounds([ByteRange(0, 4)], [ByteRange(-2), ByteRange(1)]))
            store.read_rounds([(key, reader)])
            assert reader.received == [[None], [None, None]]
        empty = Scripted(_rounds())
        store.read_rounds([("a/b", empty), ("absent", Scripted(_rounds()))])
        assert empty.received == []
        store.read_rounds([])

    def test_read_rounds_of_many_keys(self, store: Store) -> None:
        keys = [f"c/{i % 3}/{i}" for i in range(24)]
        for i, key in enumerate(keys):
            store.set(key, version_value(i))
        reads = [(key, VersionReader()) for key in keys]
        reads += [(key, VersionReader()) for key in keys[::5]]  # a key read twice at once
        reads += [(f"c/absent/{i}", VersionReader()) for i in range(3)]
        store.read_rounds(reads)
        for key, reader in reads:
            assert reader.consistent(), key
            if "absent" in key:
                assert reader.absent
            else:
                assert reader.version == int(key.rsplit("/", 1)[1])

    def test_read_rounds_refuse_bad_keys_and_ranges_first(self, store: Store) -> None:
        store.set("k", b"0123456789")
        bad_keys: list[Any] = ["../x", "/a", "a//b", LOCK_PREFIX + "k", 3]
        for bad in bad_keys:
            reader = Scripted(_rounds([ByteRange(0, 1)]))
            with pytest.raises(InvalidKeyError):
                store.read_rounds([("k", reader), (bad, Scripted(_rounds([ByteRange(0, 1)])))])
            assert reader.received == []  # nothing read before the refusal
        with pytest.raises(InvalidKeyError):
            store.read_rounds([("k", Scripted(_rounds([ByteRange(0, -1)])))])
        with pytest.raises(InvalidKeyError):
            store.read_rounds([("k", Scripted(_rounds([ByteRange(0, 1)], [ByteRange(2, -3)])))])

    def test_read_rounds_pass_on_a_reader_error(self, store: Store) -> None:
        store.set("k", b"0123456789")

        class Refusing(Scripted):
            def receive(self, values: Sequence[Value | None]) -> None:
                raise ValueError("bad index")

        with pytest.raises(ValueError, match="bad index"):
            store.read_rounds([("k", Refusing(_rounds([ByteRange(0, 2)])))])

    def test_read_rounds_see_one_version_when_a_write_comes_between(self, store: Store) -> None:
        """The value replaced after the first round: every round of the reader comes from
        one version (the old one, or the new one after a restart)."""
        store.set("v", version_value(1))

        def write_once(round_: int) -> None:
            if round_ == 1 and reader.restarts == 0:
                store.set("v", version_value(2))

        reader = VersionReader(write_once)
        store.read_rounds([("v", reader)])
        assert reader.consistent()
        assert reader.version == (2 if reader.restarts else 1)
        # erased between rounds: the old version, or absent after a restart
        store.set("w", version_value(4))
        erasing = VersionReader(lambda r: store.erase("w") if r == 1 else None)
        store.read_rounds([("w", erasing)])
        assert erasing.consistent()
        assert erasing.absent == bool(erasing.restarts)

    def test_read_rounds_give_up_on_a_value_that_keeps_changing(self, store: Store) -> None:
        """A store that restarts readers does so a bounded number of times, then names the
        key; a store that serves one version never needs to."""
        written = [1]
        store.set("v", version_value(1))

        def write(round_: int) -> None:
            if round_ == 1:
                written.append(written[-1] + 1)
                store.set("v", version_value(written[-1]))

        probe = VersionReader(lambda r: write(r) if probe.restarts == 0 else None)
        store.read_rounds([("v", probe)])
        restarts = bool(probe.restarts)  # whether this store restarts a reader
        store.set("v", version_value(1))
        reader = VersionReader(write)
        with config.set(update_attempts=3):
            if restarts:
                with pytest.raises(StoreError, match="'v'"):
                    store.read_rounds([("v", reader)])
                assert reader.restarts == 2
                return
            store.read_rounds([("v", reader)])
        assert reader.consistent()
        assert (reader.version, reader.restarts) == (1, 0)

    # -- whole writes ------------------------------------------------------------------------
    def test_atomic_set_parts_writes_and_erases(self, store: Store) -> None:
        array = np.arange(6, dtype="<u2").reshape(2, 3)
        parts: list[Any] = [b"ab", bytearray(b"cd"), memoryview(b"ef"), array, array[:, ::2]]
        store.atomic_set_parts("a/k", parts)
        want = b"abcdef" + array.tobytes() + np.ascontiguousarray(array[:, ::2]).tobytes()
        assert store.get("a/k") == want
        store.atomic_set_parts("a/k", [b"new"])
        assert store.get("a/k") == b"new"
        store.atomic_set_parts("a/empty", [])
        assert store.get("a/empty") == b""
        store.atomic_set_parts("a/empty", None)
        store.atomic_set_parts("a/absent", None)
        assert store.list() == ["a/k"]  # no lock or temporary file is ever a key
        store.atomic_set_parts("a/k", None)
        assert store.list() == []
        with pytest.raises(TypeError):
            store.atomic_set_parts("a/k", ["text"])  # type: ignore[list-item]

    def test_atomic_set_parts_refuses_bad_keys_and_read_only(self, store: Store) -> None:
        for key in ("../x", "/a", "a//b", LOCK_PREFIX + "k"):
            with pytest.raises(InvalidKeyError):
                store.atomic_set_parts(key, [b"v"])
        store.set("k", b"v")
        view = self.open_read_only(store)
        for parts in ([b"w"], None):
            with pytest.raises(ReadOnlyError):
                view.atomic_set_parts("k", parts)
        assert store.get("k") == b"v"

    def test_whole_writes_and_updates_lose_nothing(self, store: Store) -> None:
        """A thread writing whole values beside threads updating parts of them: where the
        store's updates are atomic, neither kind of write is ever lost."""
        lost = race_counters(store, "counters", generations=10, updaters=3, rounds=10)
        if store.supports_atomic_update:
            assert lost == []
        else:
            assert store.atomic_updates is None
        assert store.list() == ["counters"]
