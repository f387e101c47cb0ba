"""The example codec, installed: found through its entry point, round-trips, stores what
it says, and refuses a bad configuration."""

import numpy as np
import pytest
from zarrx_xor import XorCodec

import zarrx
from zarrx import registry
from zarrx.errors import MetadataError
from zarrx.storage import MemoryStore


def test_the_entry_point_names_the_codec():
    assert registry.codecs.get("example.xor") is XorCodec


def test_round_trip_and_stored_bytes():
    store = MemoryStore()
    a = zarrx.create_array(store, shape=(6,), dtype="<u2", chunks=(3,),
                           compressors={"name": "example.xor", "configuration": {"key": 90}})
    a[...] = np.arange(6, dtype="<u2") * 300
    b = zarrx.open_array(store, mode="r")
    np.testing.assert_array_equal(b[...], np.arange(6) * 300)
    unxored = bytes(x ^ 90 for x in store.get("c/1"))
    np.testing.assert_array_equal(np.frombuffer(unxored, "<u2"), [900, 1200, 1500])


@pytest.mark.parametrize("config", [{}, {"key": 256}, {"key": "1"}, {"key": 1, "x": 2}])
def test_bad_configuration_is_refused(config):
    with pytest.raises(MetadataError, match=r"example\.xor"):
        XorCodec.from_config(config)
