"""Peer script (zarr-python 2.18.7, ``ZARR_V3_EXPERIMENTAL_API=1``): write draft hierarchies.

Run by ``test_zarr2.py`` in zarr-python 2.18's own environment, never imported by pytest.
Usage: ``python peer_write.py OUT``. Writes two stores under ``OUT`` (``store``, with the
default entry point, and ``store_suffix``, whose ``metadata_key_suffix`` is ``.meta``),
saves what zarr-python 2.18 itself reads back from every array with ``np.save`` under
``OUT/expected``, and prints a manifest (JSON) of what it wrote.
"""

import json
import os
import sys

import numcodecs
import numpy as np
import zarr
from zarr._storage.v3 import DirectoryStoreV3
from zarr._storage.v3_storage_transformers import ShardingStorageTransformer

DTYPES = {
    "bool": "|b1", "int8": "|i1", "uint8": "|u1",
    "int16_le": "<i2", "int16_be": ">i2", "int32_le": "<i4", "int32_be": ">i4",
    "int64_le": "<i8", "int64_be": ">i8", "uint16_le": "<u2", "uint16_be": ">u2",
    "uint32_le": "<u4", "uint32_be": ">u4", "uint64_le": "<u8", "uint64_be": ">u8",
    "float16_le": "<f2", "float16_be": ">f2", "float32_le": "<f4", "float32_be": ">f4",
    "float64_le": "<f8", "float64_be": ">f8", "complex64_le": "<c8", "complex64_be": ">c8",
    "complex128_le": "<c16", "complex128_be": ">c16",
    "datetime_ns": "<M8[ns]", "timedelta_s": ">m8[s]",
}
COMPRESSORS = [
    None,
    numcodecs.GZip(level=1),
    numcodecs.Blosc(cname="lz4", clevel=5, shuffle=numcodecs.Blosc.SHUFFLE),
    numcodecs.Blosc(cname="zstd", clevel=3, shuffle=numcodecs.Blosc.BITSHUFFLE),
    numcodecs.Blosc(cname="blosclz", clevel=9, shuffle=numcodecs.Blosc.NOSHUFFLE),
    numcodecs.Zstd(level=3),
    numcodecs.Zlib(level=2),
    numcodecs.BZ2(level=1),
    numcodecs.LZ4(),
    numcodecs.LZMA(preset=1),
]


def data_for(dtype, shape):
    dtype = np.dtype(dtype)
    n = int(np.prod(shape))
    if dtype.kind == "b":
        values = np.arange(n) % 3 == 0
    elif dtype.kind in "mM":
        values = (np.arange(n, dtype="i8") * 1_000_003).view(dtype.newbyteorder("="))
    elif dtype.kind == "c":
        values = np.arange(n) * 1.25 - 3j * np.arange(n)
    elif dtype.kind == "f":
        values = np.arange(n) * 0.5 - 7
    elif dtype.kind == "u":
        values = np.iinfo(dtype).max - np.arange(n)
    else:
        values = np.iinfo(dtype).min + np.arange(n)
    return np.asarray(values).astype(dtype).reshape(shape)


class Writer:
    def __init__(self, out, name, suffix=None):
        self.out = out
        self.name = name
        self.root = os.path.abspath(os.path.join(out, name))
        os.makedirs(self.root, exist_ok=True)
        if suffix is not None:
            entry = {
                "zarr_format": "https://purl.org/zarr/spec/protocol/core/3.0",
                "metadata_encoding": "https://purl.org/zarr/spec/protocol/core/3.0",
                "metadata_key_suffix": suffix,
                "extensions": [],
            }
            with open(os.path.join(self.root, "zarr.json"), "w") as f:
                json.dump(entry, f)
        self.store = DirectoryStoreV3(self.root)
        self.group = zarr.group(store=self.store, zarr_version=3)
        self.arrays = {}
        self.groups = {}

    def array(self, path, data, *, written=None, **kwargs):
        a = self.group.create_dataset(path, shape=data.shape, dtype=data.dtype, **kwargs)
        if written is None:
            a[...] = data
        else:
            a[written] = data[written]
        expected = a[...]
        name = f"{self.name}-{len(self.arrays)}.npy"
        os.makedirs(os.path.join(self.out, "expected"), exist_ok=True)
        np.save(os.path.join(self.out, "expected", name), np.asarray(expected))
        self.arrays[path] = {
            "expected": name,
            "dtype": np.dtype(a.dtype).str,
            "shape": list(a.shape),
            "chunks": list(a.chunks),
            "order": a.order,
            "attrs": a.attrs.asdict(),
        }
        return a

    def manifest(self):
        return {"root": self.root, "arrays": self.arrays, "groups": self.groups}


def main(out):
    w = Writer(out, "store")
    w.group.attrs["title"] = "written by zarr-python 2.18"
    # Every core data type, C and F layout, with a compressor each and unwritten chunks.
    for i, (name, dtype) in enumerate(sorted(DTYPES.items())):
        for order in "CF":
            data = data_for(dtype, (7, 9))
            fill = (np.ones((), dtype=dtype)[()] if np.dtype(dtype).kind not in "mM"
                    else np.array(5, "i8").view(dtype)[()])
            w.array(f"dtypes/{order}/{name}", data, chunks=(3, 4), order=order,
                    compressor=COMPRESSORS[(i + (order == "F")) % len(COMPRESSORS)],
                    fill_value=fill, written=(slice(0, 5), slice(0, 6)))
    # Fill values of floating types.
    for label, fill in (("nan", np.nan), ("inf", np.inf), ("neginf", -np.inf), ("half", 0.5)):
        w.array(f"fills/f8_{label}", data_for("<f8", (10,)), chunks=(3,), fill_value=fill,
                written=(slice(0, 4),), compressor=numcodecs.Zstd(level=1))
        w.array(f"fills/f4be_{label}", data_for(">f4", (10,)), chunks=(3,), fill_value=fill,
                written=(slice(0, 4),), compressor=None)
    w.array("fills/c16_nan", data_for("<c16", (6,)), chunks=(4,), fill_value=complex(np.nan, 1),
            written=(slice(0, 2),))
    w.array("fills/null", data_for("<i4", (6, 6)), chunks=(3, 3), fill_value=None)
    # numcodecs filters, kept by zarr-python 2.18 in attributes["filters"].
    w.array("filters/delta", data_for("<i4", (20,)), chunks=(6,),
            filters=[numcodecs.Delta(dtype="<i4")], compressor=numcodecs.Blosc())
    w.array("filters/delta_be_F", data_for(">i8", (6, 5)), chunks=(4, 3), order="F",
            filters=[numcodecs.Delta(dtype=">i8")], compressor=numcodecs.GZip(level=1))
    w.array("filters/scale_offset", (np.arange(30).reshape(5, 6) * 0.1).astype("<f8"),
            chunks=(2, 4), filters=[numcodecs.FixedScaleOffset(0, 10, dtype="<f8",
                                                               astype="<i4")])
    # The other chunk-key separator, a 0-d array, a 1-chunk array, and attributes.
    w.array("layout/dot", data_for("<u2", (5, 5)), chunks=(2, 2), dimension_separator=".")
    w.array("layout/scalar", np.array(2.5 - 1j, dtype="<c8"), fill_value=1 + 1j)
    attrs = w.array("layout/attrs", data_for("<f4", (3,)), chunks=(3,))
    attrs.attrs.update({"units": "m", "nested": {"a": [1, 2, {"b": None}]}, "n": 3})
    w.arrays["layout/attrs"]["attrs"] = attrs.attrs.asdict()
    # Sharding as a storage transformer (chunks_per_shard, index at the shard's end).
    for order in "CF":
        sharding = ShardingStorageTransformer("indexed", chunks_per_shard=(2, 2))
        w.array(f"sharded/{order}", data_for("<i2", (9, 10)), chunks=(2, 3), order=order,
                storage_transformers=[sharding], compressor=numcodecs.Zstd(level=1),
                fill_value=-1, written=(slice(0, 5), slice(0, 7)))
    # Nested implicit groups, and an explicit group with attributes.
    w.array("x/y/z/deep", data_for("<f8", (4, 4)), chunks=(2, 2))
    explicit = w.group.create_group("explicit")
    explicit.attrs["kind"] = "explicit"
    w.array("explicit/child", data_for("|u1", (5,)), chunks=(5,))
    w.groups = {
        "": {"explicit": True, "attrs": w.group.attrs.asdict()},
        "explicit": {"explicit": True, "attrs": {"kind": "explicit"}},
        "x": {"explicit": False, "attrs": {}},
        "x/y": {"explicit": False, "attrs": {}},
        "x/y/z": {"explicit": False, "attrs": {}},
    }

    # zarr-python 2.18's placeholder data types (no fallback): fixed-size bytes and unicode,
    # and objects with a vlen filter and its default fill 0 (partly written: unwritten
    # elements of a written chunk are empty, those of unwritten chunks the fill 0).
    w.array("placeholder/bytes", np.array([b"a", b"bb", b"", b"dddd", b"eeeee"]), chunks=(2,),
            written=(slice(0, 4),))
    w.array("placeholder/unicode", np.array(["a", "b\u00e9", "d\u20acf"], dtype="<U3"),
            chunks=(2,))
    w.array("placeholder/text", np.array(["x", "y\u00ff", "zzz", "", ""], dtype=object),
            chunks=(2,), object_codec=numcodecs.VLenUTF8(), written=(slice(0, 3),))
    w.array("placeholder/objects", np.array([b"x", b"\x00y", b"", b""], dtype=object),
            chunks=(2,), object_codec=numcodecs.VLenBytes(), written=(slice(0, 2),))
    w.array("placeholder/gzip_text", np.array(["p", "q"], dtype=object), chunks=(1,),
            object_codec=numcodecs.VLenUTF8(), compressor=numcodecs.GZip(level=1))

    s = Writer(out, "store_suffix", suffix=".meta")
    s.array("a/b", data_for("<i4", (6, 4)), chunks=(4, 4), compressor=numcodecs.GZip(level=5))
    s.array("c", data_for(">f8", (3,)), chunks=(2,), fill_value=np.nan, written=(slice(0, 1),))
    # Zarr v2 (not the draft): object arrays with a vlen filter and the default fill 0.
    v2 = {"root": os.path.abspath(os.path.join(out, "store_v2")), "arrays": {}}
    for name, codec, values in (
        ("text", numcodecs.VLenUTF8(), ["a", "bb", "c\u00e7c"]),
        ("objects", numcodecs.VLenBytes(), [b"a", b"", b"\xffc"]),
    ):
        a = zarr.open_array(os.path.join(v2["root"], name), mode="w", shape=(5,), chunks=(2,),
                            dtype=object, object_codec=codec, zarr_version=2)
        a[:3] = np.array(values, dtype=object)
        expected = f"v2-{name}.npy"
        np.save(os.path.join(out, "expected", expected), a[...])
        v2["arrays"][name] = {"expected": expected, "fill_value": a.fill_value}
    print(json.dumps({"store": w.manifest(), "store_suffix": s.manifest(), "store_v2": v2}))


if __name__ == "__main__":
    main(sys.argv[1])
