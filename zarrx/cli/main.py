"""The ``zarrx`` command: ``demo``, ``info`` and ``tree``."""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np


def _demo(args: argparse.Namespace) -> int:
    import zarrx

    if args.path:
        root = Path(args.path)
    else:
        root = Path(tempfile.mkdtemp(prefix="zarrx-demo-")) / "demo.zarr"
    if root.exists() and any(root.iterdir()) and not args.overwrite:
        print(f"{root} exists and is not empty; pass --overwrite to replace it", file=sys.stderr)
        return 2
    n = args.size
    print(f"zarrx {zarrx.__version__}: building an example hierarchy in {root}")
    group = zarrx.open_group(str(root), mode="w", attributes={"description": "zarrx demo"})
    rng = np.random.default_rng(0)
    data = rng.standard_normal((n, n, n), dtype=np.float32).cumsum(axis=2)
    volume = group.create_array(
        "volume", shape=data.shape, dtype="float32", chunks=(64, 64, 64),
        dimension_names=["z", "y", "x"], attributes={"units": "arbitrary"},
    )
    labels = group.create_group("labels").create_array(
        "mask", shape=(n, n), dtype="uint8", chunks=(128, 128),
        compressors={"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5,
                                                         "shuffle": "bitshuffle"}},
    )

    t0 = time.perf_counter()
    volume[...] = data
    t_write = time.perf_counter() - t0
    labels[...] = (data[0] > 0).astype("uint8")

    reopened = zarrx.open(str(root), mode="r")
    vol = reopened["volume"]
    t0 = time.perf_counter()
    back = np.asarray(vol)
    t_read = time.perf_counter() - t0
    t0 = time.perf_counter()
    strided = vol[::2]
    t_strided = time.perf_counter() - t0

    ok = np.array_equal(back, data) and np.array_equal(strided, data[::2])
    ok = ok and np.array_equal(reopened["labels/mask"][:], (data[0] > 0).astype("uint8"))
    stored = sum(f.stat().st_size for f in root.rglob("*") if f.is_file())
    mb = data.nbytes / 1e6
    print(reopened.tree())
    print(f"volume: {vol.shape} {vol.dtype}, chunks {vol.chunks}, {vol.nchunks} chunks, "
          f"{[c.name for c in vol.codecs]}")
    print(f"stored {stored / 1e6:.1f} MB for {mb + labels.nbytes / 1e6:.1f} MB of data")
    print(f"write  {mb:8.1f} MB in {t_write:.3f} s = {mb / t_write:8.1f} MB/s")
    print(f"read   {mb:8.1f} MB in {t_read:.3f} s = {mb / t_read:8.1f} MB/s")
    print(f"[::2]  {strided.nbytes / 1e6:8.1f} MB in {t_strided:.3f} s")
    print("round trip bit-exact:", "yes" if ok else "NO")
    if not args.path and not args.keep:
        shutil.rmtree(root.parent)
    return 0 if ok else 1


def _open(path: str):
    import zarrx

    return zarrx.open(path, mode="r")


def _info(args: argparse.Namespace) -> int:
    node = _open(args.path)
    if isinstance(node, __import__("zarrx").Array):
        print(node.info)
    else:
        print(f"Name        : {node.name}\nType        : Group\nZarr format : {node.zarr_format}")
        print(f"Members     : {len(node.members())}\nAttributes  : {dict(node.attrs)}")
    return 0


def _tree(args: argparse.Namespace) -> int:
    node = _open(args.path)
    print(node.tree() if hasattr(node, "tree") else repr(node))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="zarrx", description="Inspect and exercise Zarr data.")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser(
        "demo", help="build an example hierarchy on a local store, write it, read it back, "
        "print the tree and the throughput"
    )
    demo.add_argument("path", nargs="?", help="where to write (default: a temporary directory)")
    demo.add_argument("--size", type=int, default=256, help="edge of the cubic array (256)")
    demo.add_argument("--overwrite", action="store_true", help="replace an existing PATH")
    demo.add_argument("--keep", action="store_true", help="keep the temporary directory")
    demo.set_defaults(func=_demo)
    info = sub.add_parser("info", help="describe the array or group at PATH")
    info.add_argument("path")
    info.set_defaults(func=_info)
    tree = sub.add_parser("tree", help="print the hierarchy at PATH with shapes and dtypes")
    tree.add_argument("path")
    tree.set_defaults(func=_tree)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from zarrx.errors import ZarrxError

    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except ZarrxError as e:
        print(f"zarrx: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
