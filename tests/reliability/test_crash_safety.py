"""Writers killed with SIGKILL at random moments: every key holds its old or its new value,
whole; no temporary file is ever listed; clean_leftovers removes what they left."""

import os
import random
import subprocess
import sys
import time

import numpy as np

import zarrx
from zarrx.stores.keys import TEMP_PREFIX

WRITER = """
import sys, numpy as np, zarrx
a = zarrx.open_array(sys.argv[1], mode="r+")
g = zarrx.open_group(sys.argv[2], mode="r+")
i = 0
while True:
    i += 1
    a[...] = np.full(a.shape, i % 100 + 1, dtype=a.dtype)   # every chunk rewritten whole
    g.attrs["counter"] = i                                   # metadata rewritten
"""


def test_sigkill_leaves_old_or_new_values(tmp_path):
    array_root = str(tmp_path / "a.zarr")
    group_root = str(tmp_path / "g.zarr")
    zarrx.create_array(array_root, shape=(64, 64), dtype="f8", chunks=(16, 16))[...] = 0
    zarrx.create_group(group_root)
    rng = random.Random(1234)
    for _ in range(8):
        proc = subprocess.Popen([sys.executable, "-c", WRITER, array_root, group_root])
        time.sleep(0.3 + rng.random() * 0.7)
        proc.kill()  # SIGKILL; nothing to do when it has ended and been reaped
        proc.wait()
        a = zarrx.open_array(array_root)
        data = a[...]  # every chunk decodes: none is partial
        for block in (data[i:i + 16, j:j + 16] for i in range(0, 64, 16) for j in range(0, 64, 16)):
            assert len(np.unique(block)) == 1  # a chunk is all old or all new, never a mix
        assert isinstance(zarrx.open_group(group_root).attrs.get("counter", 0), int)
        for key in a.store.list():
            assert TEMP_PREFIX not in key
    for root in (array_root, group_root):
        store = zarrx.storage.LocalStore(root)
        store.clean_leftovers()
        leftovers = [name for _, _, files in os.walk(root) for name in files
                     if name.startswith(TEMP_PREFIX)]
        assert leftovers == []
    assert zarrx.open_array(array_root)[...].shape == (64, 64)
