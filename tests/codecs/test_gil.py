"""The codecs the engine runs on its thread pool must release the GIL while they work:
otherwise decoding on several threads is no faster than on one."""

from __future__ import annotations

import numpy as np
import pytest

from tests.gil_probe import ticks_during
from zarrx.abc.codec import ChunkSpec
from zarrx.codecs.pipeline import CodecPipeline

N = 16 * 2**20  # float32 elements: 64 MiB, long enough for a counter thread to tick
SPEC = ChunkSpec((N,), np.dtype("float32"), np.float32(0))
BYTES = {"name": "bytes", "configuration": {"endian": "little"}}

CHAINS = {
    "blosc-lz4": [BYTES, {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5}}],
    "blosc-zstd": [BYTES, {"name": "blosc", "configuration": {"cname": "zstd", "clevel": 1}}],
    "zstd": [BYTES, {"name": "zstd", "configuration": {"level": 1}}],
    "gzip": [BYTES, {"name": "gzip", "configuration": {"level": 1}}],
}


@pytest.fixture(scope="module")
def data() -> np.ndarray:
    rng = np.random.default_rng(0)
    return np.cumsum(rng.integers(-2, 3, N), dtype=np.int64).astype("float32") / 4


@pytest.mark.parametrize("name", sorted(CHAINS))
def test_encode_and_decode_release_the_gil(name: str, data: np.ndarray) -> None:
    chain = CodecPipeline.from_json(CHAINS[name], where="test").prepare(SPEC)
    encoded = chain.encode(data)
    out = np.empty_like(data)
    assert ticks_during(lambda: chain.encode(data)) >= 3
    assert ticks_during(lambda: chain.decode_into(encoded, out)) >= 3
    np.testing.assert_array_equal(out, data)


def test_the_probe_sees_a_held_gil() -> None:
    """The control: work that keeps the GIL (Python summing a range)
    lets the counter thread tick at most at its edges."""
    assert ticks_during(lambda: sum(range(5_000_000))) <= 2


@pytest.mark.parametrize("name", sorted(CHAINS))
def test_batches_run_without_the_gil(name: str, data: np.ndarray) -> None:
    """BatchDecoder.place and encode_many: one stretch without the GIL for the batch."""
    chain = CodecPipeline.from_json([*CHAINS[name], {"name": "crc32c"}], where="test").prepare(
        ChunkSpec((1024, 1024), np.dtype("float32"), np.float32(0)))
    chunks = list(data.reshape(16, 1024, 1024)[:, :, ::-1])  # strided: laid out first
    frames: list = []
    assert ticks_during(lambda: frames.extend(chain.encode_many(chunks))) >= 3
    n = len(frames)
    out = np.empty((1024, 16 * 1024), "float32")
    decoder = chain.batch_decoder

    def place() -> None:
        decoder.place(frames, range(n), [0] * n, [len(f) for f in frames], [[0, 0]] * n,
                      [[1, 1]] * n, [[1024, 1024]] * n, [[0, 1024 * i] for i in range(n)],
                      out, bytes(4))

    assert ticks_during(place) >= 3
    np.testing.assert_array_equal(out, np.concatenate(chunks, axis=1))
