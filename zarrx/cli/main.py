"""The ``zarrx`` command: ``demo``, ``info``, ``tree``, ``spec``, ``validate``, ``convert``,
``rechunk`` (:mod:`zarrx.cli.rechunk`), ``plugins``, ``fsck``.

Exit status: 0 on success, 1 when ``validate`` finds differences (or ``convert --verify``
finds a differing chunk), 2 for bad input (a missing path, a malformed spec file, an
existing destination, a conversion the target format cannot hold, a malformed option of
``rechunk``), 130 on Ctrl-C.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import cast

import numpy as np

from zarrx.progress import add_options as progress_options


def _demo(args: argparse.Namespace) -> int:
    import zarrx
    from zarrx.errors import ArgumentError

    n = args.size
    if n < 1:
        raise ArgumentError(f"--size must be a positive integer (the cube's edge), got {n}")
    if args.path:
        root = Path(args.path)
        if root.exists() and not root.is_dir():
            raise ArgumentError(f"{root} exists and is not a directory")
    else:
        root = Path(tempfile.mkdtemp(prefix="zarrx-demo-")) / "demo.zarr"
    if root.exists() and any(root.iterdir()) and not args.overwrite:
        raise ArgumentError(f"{root} exists and is not empty; pass --overwrite to replace it")
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

    reopened = zarrx.open_group(str(root), mode="r")
    vol = cast(zarrx.Array, reopened["volume"])
    t0 = time.perf_counter()
    back = np.asarray(vol)
    t_read = time.perf_counter() - t0
    t0 = time.perf_counter()
    strided = vol[::2]
    t_strided = time.perf_counter() - t0

    ok = np.array_equal(back, data) and np.array_equal(strided, data[::2])
    mask = cast(zarrx.Array, reopened["labels/mask"])
    ok = ok and np.array_equal(mask[:], (data[0] > 0).astype("uint8"))
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


def _storage_options(text: str | None, *locations: str) -> dict | None:
    """``--storage-options`` (a JSON object) for the URLs a command opens."""
    from zarrx.errors import ArgumentError

    if text is None:
        return None
    try:
        options = json.loads(text)
    except ValueError as e:
        raise ArgumentError(f"--storage-options is not JSON: {e}") from None
    if not isinstance(options, dict):
        raise ArgumentError(f"--storage-options must be a JSON object, got {text!r}")
    local = [loc for loc in locations if "://" not in loc]
    if options and local:
        raise ArgumentError(
            f"--storage-options apply to URLs (s3://, gs://, https:// …); {local[0]!r} is a "
            "local path"
        )
    return options or None


def _hierarchy_root(location: str) -> tuple[str, str]:
    """``(root, path)``: a local path inside a hierarchy (``demo.zarr/volume``) as the
    hierarchy's root directory and the node's path in it, so the node is named as in its
    hierarchy (``/volume``); any other location as itself, at the root."""
    from zarrx.errors import ZarrxError
    from zarrx.metadata.io import find_node
    from zarrx.storage import LocalStore

    if "://" in location:
        return location, ""
    node = Path(location).absolute()
    root, parts = node, list[str]()
    while root.parent != root:
        try:
            parent = find_node(LocalStore(root.parent, read_only=True), "")
        except (ZarrxError, OSError):
            break
        if parent is None or parent.node_type != "group":
            break
        parts.insert(0, root.name)
        root = root.parent
    return (str(root), "/".join(parts)) if parts else (location, "")


def _open(path: str, storage_options: dict | None = None):
    import zarrx
    from zarrx.errors import PathNotFoundError

    root, inner = _hierarchy_root(path)
    try:
        return zarrx.open(root, mode="r", path=inner or None, storage_options=storage_options)
    except PathNotFoundError:
        raise PathNotFoundError(f"{path} does not exist") from None


def _info(args: argparse.Namespace) -> int:
    import zarrx
    from zarrx.info import array_summary, group_summary, render

    node = _open(args.path, _storage_options(args.storage_options, args.path))
    summary = array_summary(node) if isinstance(node, zarrx.Array) else group_summary(node)
    summary = {"location": args.path, **summary}
    print(json.dumps(summary, indent=2) if args.json else render(summary))
    return 0


def _tree(args: argparse.Namespace) -> int:
    node = _open(args.path, _storage_options(args.storage_options, args.path))
    if hasattr(node, "tree"):
        print(f"{node.tree()}")
    else:
        print(f"{node.name} {node.shape} {node.dtype}")
    return 0


def _spec(args: argparse.Namespace) -> int:
    from zarrx.zom import from_zarr

    spec = from_zarr(_open(args.path, _storage_options(args.storage_options, args.path)))
    if args.zarr_format is not None:
        spec = spec.to_format(int(args.zarr_format))
    text = spec.dumps(indent=args.indent if args.indent > 0 else None)
    if args.output:
        Path(args.output).write_text(text + "\n", encoding="utf-8")
    else:
        print(text)
    return 0


def _load_spec(path: str):
    from zarrx.errors import ArgumentError
    from zarrx.zom import from_json

    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise ArgumentError(f"cannot read the spec file {path!r}: {e.strerror or e}") from None
    try:
        doc = json.loads(text)
    except ValueError as e:
        raise ArgumentError(f"the spec file {path!r} is not JSON: {e}") from None
    return from_json(doc)


def _validate(args: argparse.Namespace) -> int:
    from zarrx.zom import diff, from_zarr

    options = _storage_options(args.storage_options, args.path)
    expected = _load_spec(args.spec)
    found = from_zarr(_open(args.path, options))
    differences = diff(found, expected, ignore=args.ignore or (),
                       attributes=not args.no_attributes, allow_extra=args.allow_extra)
    if not differences:
        print(f"{args.path}: matches {args.spec}")
        return 0
    print(f"{args.path}: {len(differences)} difference(s) from {args.spec} (stored != spec):")
    for d in differences:
        print(f"  {d}")
    return 1


def _convert(args: argparse.Namespace) -> int:
    from zarrx.cli.convert import convert

    # --storage-options: for SRC and DST, whichever is a URL; --dst-storage-options: DST's.
    urls = [loc for loc in (args.src, args.dst) if "://" in loc]
    options = _storage_options(args.storage_options, *(urls or (args.src, args.dst)))
    dst_options = options if "://" in args.dst else None
    if args.dst_storage_options is not None:
        dst_options = _storage_options(args.dst_storage_options, args.dst)
    report = convert(
        args.src, args.dst, args.zarr_format, overwrite=args.overwrite, resume=args.resume,
        verify=args.verify, threads=args.threads, progress=args.progress,
        src_options=options if "://" in args.src else None, dst_options=dst_options,
    )
    mb = report.bytes_copied / 1e6
    rate = mb / report.seconds if report.seconds else 0.0
    resumed = f", {report.chunks_skipped} done before" if report.resumed else ""
    print(
        f"converted {args.src} -> {args.dst} (zarr_format {args.zarr_format}): "
        f"{report.arrays} arrays, {report.groups} groups, {report.chunks_copied} chunks "
        f"copied{resumed} ({mb:.1f} MB, {rate:.1f} MB/s) in {report.seconds:.2f} s"
    )
    if args.verify:
        print(f"verified: {report.chunks_verified} chunks identical, structure as mapped")
    if report.consolidated:
        print("the source was consolidated: so is the destination")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="zarrx", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Inspect, describe, validate, convert and rechunk Zarr data (v3, v2 and "
        "the 3.0 draft).",
        epilog="Exit status: 0 success, 1 differences found, 2 bad input, 130 interrupted.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, summary: str, details: str) -> argparse.ArgumentParser:
        return sub.add_parser(name, help=summary, description=f"{summary}.\n\n{details}",
                              formatter_class=argparse.RawDescriptionHelpFormatter)

    demo = command(
        "demo", "build an example hierarchy on a local store, write it, read it back, "
        "print the tree and the throughput",
        "A quick check that zarrx works on this machine, and how fast.",
    )
    demo.add_argument("path", nargs="?", help="where to write (default: a temporary directory)")
    demo.add_argument("--size", type=int, default=256, help="edge of the cubic array (256)")
    demo.add_argument("--overwrite", action="store_true", help="replace an existing PATH")
    demo.add_argument("--keep", action="store_true", help="keep the temporary directory")
    demo.set_defaults(func=_demo)

    info = command(
        "info", "describe the array or group at PATH",
        "For an array: format, shape, data type, chunk and shard shape, codecs, fill value,\n"
        "how many chunks are initialised (stored), their stored size and the compression\n"
        "ratio. For a group: the same totals over every array below it.",
    )
    info.add_argument("path", help="a local path or URL (file://, memory://, zip://, s3://…)")
    info.add_argument("--json", action="store_true", help="print the facts as JSON")
    _url_options(info)
    info.set_defaults(func=_info)

    tree = command(
        "tree", "print the hierarchy at PATH with shapes and dtypes",
        "One line per node, nested as the hierarchy is.",
    )
    tree.add_argument("path", help="a local path or URL")
    _url_options(tree)
    tree.set_defaults(func=_tree)

    spec = command(
        "spec", "print the Zarr Object Model (ZEP 6) JSON of the hierarchy at PATH",
        "The ZOM is the hierarchy's structure without its data: every group's attributes\n"
        "and members, every array's metadata. Save it, then check a hierarchy against it\n"
        "with 'zarrx validate PATH --spec FILE'.",
    )
    spec.add_argument("path", help="a local path or URL")
    spec.add_argument("-o", "--output", help="write to this file instead of stdout")
    spec.add_argument("--indent", type=int, default=2, help="JSON indent (0: one line)")
    spec.add_argument("--zarr-format", choices=("2", "3"),
                      help="map the ZOM to this format's model first")
    _url_options(spec)
    spec.set_defaults(func=_spec)

    validate = command(
        "validate", "check that the hierarchy at PATH has the structure a ZOM file declares",
        "Exit 0 when it matches; exit 1 and print each difference (path, field, stored\n"
        "value != spec value) when it does not; exit 2 when the spec file is not a ZOM.",
    )
    validate.add_argument("path", help="a local path or URL")
    validate.add_argument("--spec", required=True, metavar="FILE",
                          help="a ZOM JSON file (e.g. from 'zarrx spec')")
    validate.add_argument("--ignore", action="append", metavar="FIELD",
                          help="a property not to compare (e.g. codecs, attributes.units); "
                          "repeatable")
    validate.add_argument("--no-attributes", action="store_true",
                          help="do not compare attributes")
    validate.add_argument("--allow-extra", action="store_true",
                          help="members the spec does not mention are not differences")
    _url_options(validate)
    validate.set_defaults(func=_validate)

    conv = command(
        "convert", "copy the hierarchy at SRC into DST in another Zarr format, chunk by chunk",
        "Groups, arrays and attributes are recreated in the target format, then every\n"
        "stored chunk is read from SRC and written to DST by a pool of threads\n"
        "(uninitialised chunks are skipped). Progress goes to stderr (on a terminal, or\n"
        "with --progress). An interrupted copy keeps its state in DST/.zarrx-convert.json:\n"
        "run the same command with --resume to finish it. --verify re-reads and compares\n"
        "every chunk. A conversion the target cannot hold (a data type, sharding in v2 …)\n"
        "is refused before DST is touched.",
    )
    conv.add_argument("src", help="source path or URL")
    conv.add_argument("dst", help="destination path or URL (empty, unless --overwrite/--resume)")
    conv.add_argument("--zarr-format", required=True, choices=("2", "3", "3-draft"),
                      help="the format to write")
    conv.add_argument("--overwrite", action="store_true",
                      help="replace an existing Zarr hierarchy at DST")
    conv.add_argument("--resume", action="store_true",
                      help="continue an interrupted conversion into DST")
    conv.add_argument("--verify", action="store_true",
                      help="re-read and compare every chunk (and the structure) afterwards")
    conv.add_argument("--threads", type=int, default=None,
                      help="chunks copied at once (default: zarrx.config 'threads')")
    _url_options(conv, "SRC and DST, whichever is a URL (DST's: --dst-storage-options)")
    conv.add_argument("--dst-storage-options", metavar="JSON",
                      help="options for DST's URL, as --storage-options")
    progress_options(conv)
    conv.set_defaults(func=_convert)

    from zarrx.cli import rechunk

    rechunk.register(command)

    plugins = command(
        "plugins", "list the codecs, data types, grids, key encodings, stores and extensions "
        "installed",
        "Every name of every zarrx entry-point group, with the object it points to and the\n"
        "package that provides it. Nothing is imported to list them.",
    )
    plugins.set_defaults(func=_plugins)

    fsck = command(
        "fsck", "remove what killed writers left in a local store",
        "Temporary files of writes that never finished (every key keeps its old or its new\n"
        "value, whole) and the store's lock files. Run it when no writer is active.",
    )
    fsck.add_argument("path", help="a local directory store")
    fsck.set_defaults(func=_fsck)
    return parser


def _url_options(parser: argparse.ArgumentParser, what: str = "PATH") -> None:
    parser.add_argument(
        "--storage-options", metavar="JSON",
        help=f"options for {what} when it is a URL, a JSON object passed to the store "
        "(fsspec's storage_options, e.g. '{\"anon\": true}' or an endpoint_url)",
    )


def _plugins(args: argparse.Namespace) -> int:
    from zarrx import registry

    for group in (registry.codecs, registry.data_types, registry.chunk_grids,
                  registry.chunk_key_encodings, registry.stores, registry.extensions):
        print(f"{group.group}:")
        for name, eps in sorted(group.entry_points().items()):
            for ep in eps:
                owner = ep.dist.name if ep.dist is not None else "?"
                print(f"  {name:45s} {ep.value}  [{owner}]")
    return 0


#: Files whose presence makes a directory a Zarr store (of any format) for ``fsck``.
_METADATA_FILES = frozenset({"zarr.json", ".zarray", ".zgroup", ".zattrs", ".zmetadata"})


def _is_store(root: str) -> bool:
    """Whether the directory holds a Zarr metadata document, or a temporary file of
    zarrx's writes, anywhere below it (stopping at the first one found)."""
    from zarrx.stores.keys import TEMP_PREFIX

    for _, _, filenames in os.walk(root, followlinks=False):
        if any(n in _METADATA_FILES or n.startswith(TEMP_PREFIX) for n in filenames):
            return True
    return False


def _fsck(args: argparse.Namespace) -> int:
    from zarrx.errors import ArgumentError
    from zarrx.storage import LocalStore

    if not os.path.isdir(args.path):
        what = "does not exist" if not os.path.exists(args.path) else "is not a directory"
        raise ArgumentError(f"{args.path} {what}: fsck cleans a local directory store")
    if not _is_store(args.path):
        raise ArgumentError(
            f"{args.path} is not a Zarr store: no zarr.json, .zarray, .zgroup or .zmetadata "
            "(nor a zarrx temporary file) anywhere below it"
        )
    removed = LocalStore(args.path).clean_leftovers()
    for path in removed:
        print(f"removed {path}")
    print(f"{len(removed)} leftover(s) removed from {args.path}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    from zarrx.errors import ZarrxError

    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except ZarrxError as e:
        print(f"zarrx: error: {e}", file=sys.stderr)
        from zarrx.errors import VerificationError

        return 1 if isinstance(e, VerificationError) else 2
    except KeyboardInterrupt:
        print("zarrx: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `zarrx spec PATH | head`: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except (OSError, ImportError, MemoryError) as e:  # the machine, not zarrx: one line
        print(f"zarrx: error: {_describe(e)}", file=sys.stderr)
        return 2


def _describe(error: BaseException) -> str:
    """An error of the environment (a file, a permission, a package, memory) in a line."""
    if isinstance(error, OSError) and error.strerror:
        where = f": {error.filename!r}" if error.filename else ""
        return f"{error.strerror}{where}"
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__


if __name__ == "__main__":
    sys.exit(main())
