"""Write workloads for comparing two zarrx source trees process against process.

    python bench/ab_writes.py SRC ROUNDS full|partial

imports zarrx from the source tree ``SRC`` (built in place), makes a (256, 256, 512)
float32 array of ``compare.py``'s data and writes it ``ROUNDS`` times into a blosc-lz4
array of 64³ chunks and ``ROUNDS`` times into one of 128³ shards of 32³ chunks, in a
temporary directory: every chunk whole (``full``), or a slab whose end chunks and shards
are updated in part (``partial``). Run it alternately for the two trees under
``/usr/bin/time -v`` and compare the CPU and wall times pair by pair.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile

if __name__ == "__main__":
    src, rounds, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    sys.path.insert(0, src)
    sys.path.insert(1, os.path.dirname(os.path.abspath(__file__)))
    from compare import make_data

    import zarrx

    if not zarrx.__file__ or not zarrx.__file__.startswith(os.path.abspath(src)):
        raise SystemExit(f"zarrx came from {zarrx.__file__}, not from {src}")
    shape = (256, 256, 512)
    data = make_data(shape)
    blosc = [{"name": "blosc", "configuration": {
        "cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 4}}]
    layouts = {"chunked": {"chunks": (64, 64, 64)},
               "sharded": {"chunks": (32, 32, 32), "shards": (128, 128, 128)}}
    selection = (Ellipsis,) if mode == "full" else (slice(None), slice(None), slice(32, 480))
    root = tempfile.mkdtemp()
    try:
        for name, layout in layouts.items():
            a = zarrx.create_array(os.path.join(root, name), shape=shape, dtype="f4",
                                   compressors=blosc, **layout)
            for _ in range(rounds):
                a[selection] = data[selection]
    finally:
        shutil.rmtree(root)
