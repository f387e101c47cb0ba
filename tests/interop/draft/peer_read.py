"""Peer script (zarr-python 2.18.7, ``ZARR_V3_EXPERIMENTAL_API=1``): read a draft hierarchy.

Run by ``test_zarr2.py`` in zarr-python 2.18's own environment, never imported by pytest.
Usage: ``python peer_read.py STORE OUT PATH...``: for each array path, saves what
zarr-python 2.18 reads with ``np.save`` as ``OUT/<i>.npy``; prints (JSON) each node's
dtype, shape, chunks, order, fill value and attributes, and each group's members.
"""

import json
import os
import sys

import numpy as np
import zarr
from zarr._storage.v3 import DirectoryStoreV3


def fill_json(value, dtype):
    if value is None:
        return None
    value = np.asarray(value, dtype=dtype)
    if value.dtype.byteorder != "|":
        value = value.astype(value.dtype.newbyteorder("<"))
    return {"dtype": value.dtype.str, "hex": value.tobytes().hex()}


def main(root, out, paths):
    store = DirectoryStoreV3(root)
    nodes = {}
    for i, path in enumerate(paths):
        node = zarr.hierarchy.Group(store, path="", read_only=True, zarr_version=3)
        node = node[path] if path else node
        if isinstance(node, zarr.Array):
            np.save(os.path.join(out, f"{i}.npy"), np.asarray(node[...]))
            nodes[path] = {
                "type": "array",
                "file": f"{i}.npy",
                "dtype": node.dtype.str,
                "shape": list(node.shape),
                "chunks": list(node.chunks),
                "order": node.order,
                "fill_value": fill_json(node.fill_value, node.dtype),
                "attrs": node.attrs.asdict(),
                "compressor": None if node.compressor is None else node.compressor.get_config(),
                "filters": [f.get_config() for f in node.filters or []],
            }
        else:
            nodes[path] = {
                "type": "group",
                "arrays": sorted(node.array_keys()),
                "groups": sorted(node.group_keys()),
                "attrs": node.attrs.asdict(),
            }
    print(json.dumps(nodes))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3:])
