"""``zarrx.rechunk``: copy an array into another chunking (and format, codecs, dtype) within
a memory bound, resumably, on threads or a cluster. See ``docs/rechunk.md``.

>>> import numpy as np, zarrx
>>> from zarrx.storage import MemoryStore
>>> src = zarrx.create_array(MemoryStore(), data=np.arange(24.0).reshape(4, 6), chunks=(1, 6))
>>> out = zarrx.rechunk(src, MemoryStore(), chunks=(4, 1), max_mem="1MiB")
>>> out.chunks, bool((out[...] == src[...]).all())
((4, 1), True)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from zarrx import config
from zarrx.arrays import Array
from zarrx.errors import ArgumentError, NodeTypeError
from zarrx.metadata.io import normalize_path
from zarrx.metadata.nodes import open_store
from zarrx.rechunking.jobs import prepare, run_jobs
from zarrx.rechunking.parse import parse_mem
from zarrx.rechunking.report import RechunkProgress
from zarrx.rechunking.target import Options
from zarrx.rechunking.tasks import executor_slots


def _open_source(source: Any, path: str | None, storage_options: Any) -> Array:
    if isinstance(source, Array):
        if path is not None:
            raise ArgumentError("source_path is for a source given as a store, path or URL; "
                                "the source is already an Array")
        return source
    from zarrx.api import open_array

    return open_array(source, mode="r", path=path, storage_options=storage_options)


def check_executor(executor: Any, src: Array, store: Any) -> None:
    from concurrent.futures import ThreadPoolExecutor

    if executor is None or isinstance(executor, ThreadPoolExecutor):
        return
    if not callable(getattr(executor, "submit", None)):
        raise ArgumentError(f"executor must have a submit method (a dask Client, a "
                            f"concurrent.futures executor), got {executor!r}")
    import pickle

    for what, s in (("source", src.store), ("target", store)):
        if not s.shared:
            raise ArgumentError(
                f"the {what} is {s!r}, whose data lives in this process only: an "
                "executor's workers cannot reach it; use a store they share (a local "
                "directory, an object store), or no executor"
            )
        try:
            pickle.dumps(s)
        except Exception as e:
            raise ArgumentError(
                f"the {what}'s store {s!r} cannot be sent to an executor's workers: {e}"
            ) from None


def check_threads(threads: Any) -> int:
    n = config.get("threads") if threads is None else threads
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ArgumentError(f"threads must be a positive integer, got {threads!r}")
    return n


def rechunk(
    source: Any,
    target: Any,
    *,
    chunks: Any = None,
    shards: Any = None,
    compressors: Any = None,
    filters: Any = None,
    serializer: Any = None,
    zarr_format: Any = None,
    dtype: Any = None,
    fill_value: Any = None,
    attributes: Any = None,
    max_mem: int | str = "512MiB",
    resume: bool = True,
    overwrite: bool = False,
    progress: bool | Callable[[RechunkProgress], Any] = False,
    threads: int | None = None,
    executor: Any = None,
    source_path: str | None = None,
    target_path: str | None = None,
    source_storage_options: dict[str, Any] | None = None,
    target_storage_options: dict[str, Any] | None = None,
) -> Array:
    """Copy the array ``source`` into ``target`` with other chunks (and, if asked, shards,
    codecs, format or dtype); returns the target Array, equal to the source element for
    element. See ``docs/rechunk.md``.

    ``source``: a zarrx Array, or a store, path or URL with ``source_path=`` the array's
    path in it. ``target``: a store, path or URL, with ``target_path=`` the path of the new
    array in it (default: the root). Every option left ``None`` keeps the source's:
    ``chunks`` (inner chunks when sharded), ``shards`` (``False``: none), ``compressors``,
    ``filters``, ``serializer`` (``"keep"`` also keeps; ``[]`` is none), ``zarr_format``
    (2, 3 or ``"3-draft"``), ``dtype`` (cast under NumPy's ``"same_kind"`` rule),
    ``fill_value``, ``attributes``. Dimension names are kept.

    ``max_mem`` (bytes, or text such as ``"512MiB"``, ``"1GB"``) bounds the memory of the
    copy; ``threads`` (default ``zarrx.config`` "threads") copy slabs at once, fewer when
    ``max_mem`` requires. ``executor``: a dask ``Client`` or any executor with ``submit``
    runs the slabs there (``max_mem`` then bounds each worker process, running ``threads``
    tasks at once: by default a dask worker's thread count). ``progress=True`` draws a bar
    on stderr; a callable receives a :class:`RechunkProgress` after every slab.

    An interrupted rechunk called again the same way (``resume=True``) finishes what is
    left; an existing target is otherwise refused unless ``overwrite=True``."""
    limit = parse_mem(max_mem)
    n = check_threads(threads)
    if not isinstance(resume, bool) or not isinstance(overwrite, bool):
        raise ArgumentError("resume and overwrite must be True or False")
    if not (progress is True or progress is False or progress is None or callable(progress)):
        raise ArgumentError(f"progress must be True, False or a callable, got {progress!r}")
    src = _open_source(source, source_path, source_storage_options)
    if isinstance(target, Array):
        raise NodeTypeError("target must be a store, path or URL (with target_path=), not an "
                            "Array")
    store = open_store(target, "a", target_storage_options)
    path = normalize_path(target_path)
    check_executor(executor, src, store)
    per_worker, window = (n, 0) if executor is None else executor_slots(executor, threads)
    opts = Options(chunks, shards, compressors, filters, serializer, zarr_format, dtype,
                   fill_value, attributes)
    job = prepare(src, store, path, opts, max_mem=limit, threads=per_worker,
                  engine_threads=n if executor is None else per_worker, resume=resume,
                  overwrite=overwrite)
    return run_jobs([job], progress, n, executor, window)[0]


__all__ = ["RechunkProgress", "check_executor", "check_threads", "rechunk"]
