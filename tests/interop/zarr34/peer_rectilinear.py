"""Peer script (zarr-python 3.4): write and read arrays on the ``rectilinear`` chunk grid.

Run by ``test_rectilinear.py`` in zarr-python 3.4's own environment, never imported by
pytest. Usage:

- ``python peer_rectilinear.py write CASES OUT``: for each case of the JSON file ``CASES``
  (name → shape, dtype, chunks, shards, fill_value, compressors, written region), writes
  the array ``OUT/<name>`` with zarr-python and saves what it handed in, the whole array as
  it must read, as ``OUT/<name>.npy``.
- ``python peer_rectilinear.py read CASES DIR``: reads each array ``DIR/<name>`` (written
  by zarrx) with zarr-python and saves it as ``DIR/<name>.read.npy``.

Prints one JSON document: per case, the chunk grid and the sizes of the stored chunks
(shards) zarr-python sees.
"""

import json
import sys
from pathlib import Path

import numpy as np
import zarr

zarr.config.set({"array.rectilinear_chunks": True})


def data_for(dtype, shape):
    n = int(np.prod(shape))
    values = np.arange(n) * 3 % 251 - 100
    if np.dtype(dtype).kind == "f":
        values = values * 0.25
    if np.dtype(dtype).kind == "b":
        values = values % 3 == 0
    if np.dtype(dtype).kind == "u":
        values = np.abs(values)
    return np.asarray(values).astype(dtype).reshape(shape)


def region(case):
    return tuple(slice(a, b) for a, b in case["written"])


def write(case, path):
    fill = case["fill_value"]
    array = zarr.create_array(
        str(path), shape=tuple(case["shape"]), dtype=case["dtype"], chunks=case["chunks"],
        shards=case["shards"], fill_value=float(fill) if fill == "NaN" else fill,
        compressors=case["compressors"],
    )
    box = region(case)
    part = data_for(case["dtype"], tuple(s.stop - s.start for s in box))
    array[box] = part
    expected = np.full(tuple(case["shape"]), np.nan if fill == "NaN" else fill,
                       dtype=case["dtype"])
    expected[box] = part
    np.save(f"{path}.npy", expected)
    return array


def describe(array, path):
    meta = json.loads((path / "zarr.json").read_text())
    return {"chunk_grid": meta["chunk_grid"],
            "write_chunk_sizes": [list(s) for s in array.write_chunk_sizes]}


def main():
    mode, cases_file, out = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    cases = json.loads(cases_file.read_text())
    report = {}
    for name, case in cases.items():
        path = out / name
        if mode == "write":
            array = write(case, path)
        else:
            array = zarr.open_array(str(path), mode="r")
            np.save(f"{path}.read.npy", array[...])
        report[name] = describe(array, path)
    print(json.dumps({"zarr": zarr.__version__, "arrays": report}))


if __name__ == "__main__":
    main()
