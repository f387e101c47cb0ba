"""Peer script (zarr-python 3.4): write the cases zarrx's test lists, and read what zarrx wrote.

Run by ``test_codecs34.py`` in zarr-python 3.4's own environment, never imported by pytest.
Usage: ``python peer.py DIR``. ``DIR/cases.json`` lists the arrays (codecs as v3 JSON, data
type, shape, chunks, shards, fill value, the region written); ``DIR/in/<name>.npy`` holds the
values written there. For each case the script

- writes the array with zarr-python under ``DIR/zarr/<name>`` and saves what zarr-python
  reads back from it as ``DIR/zarr_read/<name>.npy``;
- reads the array zarrx wrote under ``DIR/zarrx/<name>`` and saves it as
  ``DIR/zarr_reads_zarrx/<name>.npy``;

and prints one JSON document: per case, the ``codecs`` zarr-python wrote, or the error it
raised (as ``"write_error"`` / ``"read_error"``).
"""

import json
import math
import os
import sys
import traceback

import numpy as np
import zarr


def fill_of(value):
    if value in ("NaN", "Infinity", "-Infinity"):
        return {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}[value]
    return value


def write(root, case, values):
    codecs = case["codecs"]
    filters = [c for c in codecs if c["role"] == "array"]
    serializer = [c for c in codecs if c["role"] == "serializer"]
    compressors = [c for c in codecs if c["role"] == "bytes"]
    plain = [{"name": c["name"], **({"configuration": c["configuration"]}
                                    if "configuration" in c else {})}
             for c in filters + serializer + compressors]
    array = zarr.create_array(
        store=os.path.join(root, "zarr", case["name"]),
        shape=tuple(case["shape"]),
        chunks=tuple(case["chunks"]),
        shards=tuple(case["shards"]) if case["shards"] else None,
        dtype=case["dtype"],
        fill_value=fill_of(case["fill_value"]),
        filters=plain[: len(filters)] or None,
        serializer=plain[len(filters)] if serializer else "auto",
        compressors=plain[len(filters) + len(serializer):] or None,
        config={"write_empty_chunks": False},
    )
    region = tuple(slice(a, b) for a, b in case["region"])
    array[region] = values
    return array.metadata.to_dict()["codecs"]


def main(root):
    with open(os.path.join(root, "cases.json")) as f:
        cases = json.load(f)
    for folder in ("zarr_read", "zarr_reads_zarrx"):
        os.makedirs(os.path.join(root, folder), exist_ok=True)
    report = {}
    for case in cases:
        name = case["name"]
        entry = report.setdefault(name, {})
        values = np.load(os.path.join(root, "in", name + ".npy"))
        try:
            entry["codecs"] = write(root, case, values)
            got = zarr.open_array(os.path.join(root, "zarr", name), mode="r")[...]
            np.save(os.path.join(root, "zarr_read", name + ".npy"), got)
        except Exception:
            entry["write_error"] = traceback.format_exc(limit=3)
        try:
            got = zarr.open_array(os.path.join(root, "zarrx", name), mode="r")[...]
            np.save(os.path.join(root, "zarr_reads_zarrx", name + ".npy"), got)
        except Exception:
            entry["read_error"] = traceback.format_exc(limit=3)
    print(json.dumps(report))


if __name__ == "__main__":
    main(sys.argv[1])
