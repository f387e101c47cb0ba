"""``zarrx rechunk``: copy an array into another chunk (and shard) layout, within a memory
budget, with :func:`zarrx.rechunk`.

Every option is read and checked before anything is written: a malformed ``--chunks`` or
``--shards``, an unknown compressor, a memory size that is not one, a ``--zarr-format`` or
``--threads`` out of range, a layout whose rank is not the source's, a destination that
exists without ``--overwrite`` (or ``--resume``) — each is one ``zarrx: error: …`` line on
stderr and exit status 2, and ``DST`` is left as it was (:func:`zarrx.rechunk` checks and
plans before it writes). The text forms of chunks, codecs and sizes are
:mod:`zarrx.rechunking.parse`'s, the library's own; ``--zarr-format`` is read as ``convert``
reads it. Progress goes to stderr (on a terminal, or with ``--progress``).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from typing import Any

from zarrx.progress import add_options as progress_options


def register(command: Callable[[str, str, str], argparse.ArgumentParser]) -> None:
    """Add the subcommand through ``zarrx.cli.main``'s ``command(name, summary, details)``."""
    p = command(
        "rechunk", "copy the array at SRC into DST with other chunks (and shards)",
        "The array is read and written a region at a time, the regions chosen so that at\n"
        "most --max-mem of data is held at once (with an intermediate copy in DST when the\n"
        "two layouts cross badly, e.g. planes into columns). Codecs, fill value, attributes\n"
        "and dimension names are kept unless given. Examples:\n\n"
        "  zarrx rechunk in.zarr out.zarr --chunks 64,64,64\n"
        "  zarrx rechunk v2.zarr v3.zarr --chunks 64,64,64 --shards 256,256,256 \\\n"
        "      --compressor zstd:3 --zarr-format 3 --max-mem 1GiB --progress",
    )
    p.add_argument("src", help="the source array: a path or URL")
    p.add_argument("dst", help="where to write the new array (absent or empty, unless "
                   "--overwrite)")
    p.add_argument("--chunks", metavar="C1,C2,...",
                   help="the new chunk shape, one size per axis (-1: the whole axis); "
                   "required")
    p.add_argument("--shards", metavar="S1,S2,...",
                   help="the shard shape (Zarr v3), each a multiple of the chunk shape")
    p.add_argument("--compressor", metavar="CODECS",
                   help="the bytes-to-bytes codecs: 'zstd:3', 'blosc:lz4:5:shuffle', "
                   "'gzip:level=6', a JSON list of codec objects, or 'none' (default: the "
                   "source's)")
    p.add_argument("--max-mem", metavar="SIZE",
                   help="memory budget for the data in flight, e.g. 256MiB, 2GB (default: "
                   "zarrx.rechunk's, 512MiB)")
    p.add_argument("--zarr-format", metavar="{2,3,3-draft}",
                   help="the format of DST (default: the source's)")
    p.add_argument("--threads", metavar="N",
                   help="threads reading and writing (default: zarrx.config 'threads')")
    p.add_argument("--src-path", metavar="PATH",
                   help="the array's path inside SRC when SRC is a group (default: the root)")
    p.add_argument("--dst-path", metavar="PATH",
                   help="where in DST to write the array (default: the root)")
    p.add_argument("--overwrite", action="store_true",
                   help="replace an existing array or hierarchy at DST")
    p.add_argument("--resume", action="store_true",
                   help="finish an interrupted rechunk into DST (run with the same options)")
    progress_options(p)
    p.set_defaults(func=run)


def _positive(text: str, option: str) -> int:
    from zarrx.errors import ArgumentError

    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise ArgumentError(f"{option} must be a positive integer, got {text!r}")
    return value


def options(args: argparse.Namespace) -> dict[str, Any]:
    """The keywords of :func:`zarrx.rechunk` the arguments ask for, every one checked."""
    from zarrx.cli.convert import parse_format
    from zarrx.errors import ArgumentError
    from zarrx.rechunking.parse import parse_chunks, parse_codecs, parse_mem

    if args.chunks is None:
        raise ArgumentError("--chunks is required (the new chunk shape, e.g. 64,64,64)")
    kwargs: dict[str, Any] = {"chunks": parse_chunks(args.chunks)}
    if args.shards is not None:
        kwargs["shards"] = parse_chunks(args.shards)
    if args.compressor is not None:
        kwargs["compressors"] = parse_codecs(args.compressor)
    if args.max_mem is not None:
        kwargs["max_mem"] = parse_mem(args.max_mem)
    if args.zarr_format is not None:
        kwargs["zarr_format"] = parse_format(args.zarr_format)
    if args.threads is not None:
        kwargs["threads"] = _positive(args.threads, "--threads")
    if args.overwrite and args.resume:
        raise ArgumentError("--overwrite and --resume exclude each other")
    kwargs["progress"] = sys.stderr.isatty() if args.progress is None else args.progress
    kwargs["overwrite"] = args.overwrite
    kwargs["resume"] = args.resume
    kwargs["source_path"] = args.src_path
    kwargs["target_path"] = args.dst_path
    return kwargs


def _occupied(location: str, path: str | None) -> bool:
    """Whether the local directory ``location`` (``path`` in it) exists and is not empty;
    URLs are left to :func:`zarrx.rechunk`, which refuses an existing node."""
    if "://" in location:
        return False
    where = os.path.join(location, *(path or "").strip("/").split("/"))
    if not os.path.exists(where):
        return False
    if not os.path.isdir(where):
        return True
    with os.scandir(where) as entries:
        return any(entries)


def run(args: argparse.Namespace) -> int:
    import zarrx
    from zarrx.errors import NodeExistsError, NodeTypeError, PathNotFoundError
    from zarrx.rechunking import rechunk

    kwargs = options(args)
    if not (args.overwrite or args.resume) and _occupied(args.dst, args.dst_path):
        raise NodeExistsError(f"{args.dst} exists and is not empty; pass --overwrite to "
                              "replace it (or --resume to finish an interrupted rechunk)")
    inner = kwargs.pop("source_path")
    try:
        source = zarrx.open_array(args.src, mode="r", path=inner)
    except PathNotFoundError:
        where = f"{args.src} has nothing at {inner!r}" if inner else f"{args.src} does not exist"
        raise PathNotFoundError(where) from None
    except NodeTypeError as e:
        raise NodeTypeError(f"{args.src}: {e} (name the array with --src-path)") from None
    t0 = time.perf_counter()
    target = rechunk(source, args.dst, **kwargs)
    seconds = time.perf_counter() - t0
    mb = source.nbytes / 1e6
    shards = f", shards {target.shards}" if target.shards else ""
    print(f"rechunked {args.src} -> {args.dst}: {target.shape} {target.dtype}, chunks "
          f"{source.chunks} -> {target.chunks}{shards} ({mb:.1f} MB in {seconds:.2f} s, "
          f"{mb / seconds if seconds else 0.0:.1f} MB/s)")
    return 0
