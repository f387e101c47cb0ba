"""Full writes of an array of a chunk per key: the covered chunks are encoded in runs of
``KEY_RUN`` (one ``encode_many`` call each), every chunk then committed on its own — equal
to NumPy, the fill-value chunks not stored, the partly covered chunks updated."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import zarrx
from zarrx import config
from zarrx.codecs.pipeline import PreparedChain
from zarrx.engine.write import KEY_RUN


@pytest.mark.parametrize("threads", [1, 2, 8])
def test_covered_chunks_are_encoded_in_runs(tmp_path: Path, monkeypatch: Any,
                                            threads: int) -> None:
    a = zarrx.create_array(tmp_path / "a.zarr", shape=(40, 30), chunks=(4, 6), dtype="int32",
                           fill_value=0, compressors=[{"name": "blosc", "configuration": {
                               "cname": "lz4", "clevel": 5, "shuffle": "shuffle",
                               "typesize": 4, "blocksize": 0}}])
    runs: list[int] = []
    real_many = PreparedChain.encode_many

    def encode_many(self: PreparedChain, chunks: list[np.ndarray]) -> Any:
        runs.append(len(chunks))
        return real_many(self, chunks)

    monkeypatch.setattr(PreparedChain, "encode_many", encode_many)
    data = np.arange(1200, dtype="int32").reshape(40, 30)
    data[0:4, 0:6] = 0  # a covered chunk of fill values: not stored
    with config.set({"threads": threads}):
        a[...] = data
        first, runs[:] = list(runs), []
        assert not (tmp_path / "a.zarr" / "c" / "0" / "0").exists()  # all fill: not stored
        assert (tmp_path / "a.zarr" / "c" / "0" / "1").exists()
        a[1:39, 2:29] = data[1:39, 2:29] + 1  # edges only partly covered
    expected = data.copy()
    expected[1:39, 2:29] += 1
    np.testing.assert_array_equal(a[...], expected)
    # 50 chunks covered, 49 of them stored: encoded KEY_RUN a call (less the fill chunk)
    assert sum(first) == 49
    assert max(first) == KEY_RUN
    assert len(first) == -(-50 // KEY_RUN)
    assert sum(runs) == 8 * 3  # the second write covers 8 x 3 chunks whole
