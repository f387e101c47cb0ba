"""``pread_rounds``: a reader's rounds served from one open file, each range resolved as
``Store.get`` resolves it (the store's rule, :func:`zarrx.stores.keys.resolve_byte_range`,
is the oracle), on any descriptor (it needs no ``openat2``)."""

from __future__ import annotations

import errno
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zarrx._core.files import pread_rounds
from zarrx.abc.store import ByteRange
from zarrx.errors import InvalidKeyError
from zarrx.stores.keys import resolve_byte_range, validate_byte_range


class Rounds:
    """A reader asking fixed rounds of ranges, keeping every answer."""

    def __init__(self, rounds: Sequence[Sequence[ByteRange]]) -> None:
        self.rounds, self.answers = list(rounds), []  # type: ignore[var-annotated]

    def ranges(self) -> Sequence[ByteRange]:
        return self.rounds[len(self.answers)] if len(self.answers) < len(self.rounds) else []

    def receive(self, values: Sequence[Any]) -> None:
        self.answers.append(list(values))

    def restart(self) -> None:  # pragma: no cover - never asked here
        raise AssertionError


def _serve(fd: int, reader: Rounds) -> int:
    return pread_rounds(fd, reader, reader.ranges(), validate_byte_range, "k")


ranges = st.builds(ByteRange, st.integers(-300, 300),
                   st.none() | st.integers(0, 300) | st.integers(2**62, 2**64))


@settings(max_examples=200, deadline=None)
@given(data=st.binary(max_size=256),
       rounds=st.lists(st.lists(ranges, min_size=1, max_size=4), min_size=1, max_size=3))
def test_rounds_are_answered_as_get_answers(data: bytes,
                                            rounds: list[list[ByteRange]]) -> None:
    reader = Rounds(rounds)
    with tempfile.TemporaryFile() as f:
        f.write(data)
        f.flush()
        fd = os.dup(f.fileno())
    try:
        assert _serve(fd, reader) == 0
    finally:
        os.close(fd)
    expected = [[data[slice(*resolve_byte_range(r, len(data), "k"))] for r in round_]
                for round_ in rounds]
    assert reader.answers == expected
    assert all(type(v) is bytes for answer in reader.answers for v in answer)


def test_a_negative_length_is_refused_by_the_callers_rule(tmp_path: Path) -> None:
    path = tmp_path / "value"
    path.write_bytes(b"0123456789")
    fd = os.open(path, os.O_RDONLY)
    try:
        reader = Rounds([[ByteRange(0, 2)], [ByteRange(1, -1)]])
        with pytest.raises(InvalidKeyError, match="'k'"):
            _serve(fd, reader)
        assert reader.answers == [[b"01"]]  # the first round was served
    finally:
        os.close(fd)


def test_not_a_regular_file_reads_nothing(tmp_path: Path) -> None:
    fd = os.open(tmp_path, os.O_RDONLY)
    try:
        reader = Rounds([[ByteRange(0)]])
        assert _serve(fd, reader) == -1
        assert reader.answers == []
    finally:
        os.close(fd)


def test_a_failed_call_returns_its_errno(tmp_path: Path) -> None:
    path = tmp_path / "value"
    path.write_bytes(b"x")
    fd = os.open(path, os.O_RDONLY)
    os.close(fd)
    assert _serve(fd, Rounds([[ByteRange(0)]])) == errno.EBADF
    fd = os.open(path, os.O_WRONLY)  # fstat works, pread does not
    try:
        assert _serve(fd, Rounds([[ByteRange(0)]])) == errno.EBADF
    finally:
        os.close(fd)


@pytest.mark.parametrize("bounds", [(1.5, 2), (1, 2.0), (np.float64(1), 2)])
def test_a_bound_that_is_not_an_integer_is_refused_not_rounded(tmp_path: Path,
                                                                bounds: tuple[Any, Any]) -> None:
    asked = ByteRange(*bounds)
    path = tmp_path / "value"
    path.write_bytes(b"0123456789")
    fd = os.open(path, os.O_RDONLY)
    try:
        reader = Rounds([[asked]])
        with pytest.raises(TypeError):
            pread_rounds(fd, reader, reader.ranges(), lambda r, k: None, "k")
        assert reader.answers == []
    finally:
        os.close(fd)
