"""array-statistics, installed: min/max follow writes and are read without data."""

import json

import numpy as np
from zarrx_array_statistics import ArrayStatistics

import zarrx
from zarrx.storage import MemoryStore

ENTRY = {"name": "example.array-statistics", "must_understand": False, "configuration": {}}


def test_range_follows_writes_and_persists():
    store = MemoryStore()
    a = zarrx.create_array(store, shape=(20,), dtype="f4", chunks=(5,), extensions=[ENTRY])
    a[:10] = np.linspace(-3, 7, 10)
    assert a.extensions["example.array-statistics"].range == (-3.0, 7.0)
    a.vindex[[15]] = [42.0]
    a.oindex[[1, 2]] = [np.nan, -8.0]
    b = zarrx.open_array(store)
    assert b.extensions["example.array-statistics"].range == (-8.0, 42.0)
    doc = json.loads(store.get("zarr.json"))
    assert doc["extensions"] == [{"name": "example.array-statistics", "must_understand": False,
                                  "configuration": {"min": -8.0, "max": 42.0}}]
    data = b[...]
    assert np.nanmin(data) >= -8
    assert np.nanmax(data) <= 42


def test_reading_the_range_reads_no_chunk():
    store = MemoryStore()
    zarrx.create_array(store, shape=(4,), dtype="i2", chunks=(2,), extensions=[ENTRY])[...] = [
        1, 9, -4, 3]
    reads = []
    original = store.get
    store.get = lambda key, byte_range=None: reads.append(key) or original(key, byte_range)
    stats = zarrx.open_array(store).extensions["example.array-statistics"]
    assert isinstance(stats, ArrayStatistics)
    assert stats.range == (-4, 9)
    assert reads  # the metadata was read...
    assert not [key for key in reads if key.startswith("c/")]  # ...and no chunk
