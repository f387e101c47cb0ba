"""zarrx._core.steps: CRC-32C against google-crc32c (the CPU instruction and the table, any
length and alignment, continued checksums), and the contexts' argument checks."""

from __future__ import annotations

from collections.abc import Iterator

import google_crc32c
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zarrx._core import steps


@pytest.fixture(params=[True, False], ids=["instruction", "table"])
def way(request: pytest.FixtureRequest) -> Iterator[bool]:
    used = steps._use_hardware(request.param)
    try:
        yield used
    finally:
        steps._use_hardware(True)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300), st.integers(0, 15))
def test_crc32c_equals_google_crc32c(data: bytes, shift: int) -> None:
    for hardware in (True, False):
        steps._use_hardware(hardware)
        try:
            # At every alignment: the data at an offset into a larger buffer.
            buffer = np.zeros(len(data) + 16, dtype=np.uint8)
            buffer[shift:shift + len(data)] = np.frombuffer(data, dtype=np.uint8)
            view = buffer[shift:shift + len(data)]
            assert steps.crc32c(view) == google_crc32c.value(data)
            assert steps.crc32c(data) == google_crc32c.value(data)
        finally:
            steps._use_hardware(True)


def test_large_buffers_and_continuation(way: bool) -> None:
    data = np.random.default_rng(1).integers(0, 256, 3 * 2**20 + 5, dtype=np.uint8)
    whole = google_crc32c.value(data.tobytes())
    assert steps.crc32c(data) == whole  # (without the GIL: over 64 KiB)
    first = steps.crc32c(data[:1000])
    assert steps.crc32c(data[1000:], first) == whole
    assert steps.crc32c(b"") == 0
    assert steps.crc32c(b"", 1234) == 1234
    assert steps.crc32c(b"123456789") == 0xE3069283  # the check value


def test_crc32c_arguments() -> None:
    assert steps.crc32c(np.arange(10, dtype="<u4")) == google_crc32c.value(
        np.arange(10, dtype="<u4").tobytes())
    with pytest.raises(TypeError, match="contiguous bytes-like"):
        steps.crc32c("text")
    with pytest.raises((TypeError, ValueError, BufferError)):
        steps.crc32c(np.arange(10)[::2])


def test_contexts_check_their_arguments() -> None:
    with pytest.raises(ValueError, match="function's address"):
        steps.blosc_context(0, 1, 5, 1, 4, 0, b"lz4")
    with pytest.raises(ValueError, match="cname"):
        steps.blosc_context(1, 1, 5, 1, 4, 0, b"")
    with pytest.raises(ValueError, match="blosc settings"):
        steps.blosc_context(1, 1, 10, 1, 4, 0, b"lz4")
    with pytest.raises(ValueError, match="12 bytes"):
        steps.blosc_context(1, 1, 5, 0, 4, 0, b"lz4", b"short")
    with pytest.raises(ValueError, match="byte values"):
        steps.blosc_context(1, 1, 5, 0, 4, 0, b"lz4", bytes(12), 256)
    with pytest.raises(ValueError, match="function's address"):
        steps.zstd_context(1, 1, 1, 1, 1, 1, 1, -1, 3, False)
    with pytest.raises(ValueError, match="version"):
        steps.zlib_context(1, 1, 1, 1, 1, 1, 1, 1, 1, b"", 5)
    with pytest.raises(ValueError, match="level"):
        steps.zlib_context(1, 1, 1, 1, 1, 1, 1, 1, 1, b"1.2.13", 10)
    made = steps.blosc_context(1, 2, 5, 1, 4, 0, b"lz4")
    assert made.address != 0
    assert set(steps.FUNCTIONS) == {"blosc", "zstd", "gzip", "crc32c"}
    assert all(decode and encode for decode, encode, _ in steps.FUNCTIONS.values())
