"""zarrx: a fast, NumPy-native Zarr library (v3, v2 and the v3.0 draft) with a Cython core.

>>> import numpy as np, zarrx
>>> a = zarrx.create_array(zarrx.storage.MemoryStore(), shape=(4, 4), dtype="int32", chunks=(2, 2))
>>> a[1:3] = 7
>>> int(np.asarray(a)[::2].sum())
28
"""

import os as _os


def _kernels_missing(error: ModuleNotFoundError) -> ImportError:
    """What to do when ``zarrx._core``'s compiled modules are not beside this file: the
    usual cause is a clone's unbuilt ``zarrx/`` shadowing the installed package."""
    from importlib import metadata

    from zarrx.errors import KernelsMissingError

    here = _os.path.dirname(_os.path.abspath(__file__))
    tree = _os.path.dirname(here)
    installed = ""
    for dist in metadata.distributions(name="zarrx"):  # (the build's egg-info is one)
        found = str(dist.locate_file("zarrx"))
        try:
            if _os.path.isdir(found) and not _os.path.samefile(found, here):
                installed = f" (the zarrx installed at {found} is hidden by it)"
                break
        except OSError:
            continue
    if _os.path.exists(_os.path.join(tree, "setup.py")):
        return KernelsMissingError(
            f"zarrx's compiled kernels are missing ({error.name}): you are importing the "
            f"unbuilt source tree at {here}{installed}. Run `pip install -e .` in {tree} to "
            "build them in place, or run Python from another directory"
        )
    return KernelsMissingError(
        f"zarrx's compiled kernels are missing from {here} ({error.name}); reinstall zarrx "
        "(`pip install --force-reinstall zarrx`)"
    )


try:
    import zarrx._core.keys  # noqa: F401  (the compiled kernels are here: else say what to do)
    from zarrx import codecs, config, errors, storage
    from zarrx.api import (
        consolidate_metadata,
        create_group,
        group,
        load,
        open,
        open_array,
        open_consolidated,
        open_group,
        open_like,
        save,
        save_array,
        save_group,
        tree,
    )
    from zarrx.arrays import Array
    from zarrx.convenience import (
        array,
        create,
        empty,
        empty_like,
        from_array,
        full,
        full_like,
        ones,
        ones_like,
        zeros,
        zeros_like,
    )
    from zarrx.copying import copy, copy_all, copy_store
    from zarrx.groups import Group
    from zarrx.hierarchy import create_array
    from zarrx.integrations.dask import store_dask, to_dask
except ModuleNotFoundError as _error:
    if not (_error.name or "").startswith("zarrx._core."):
        raise
    raise _kernels_missing(_error) from None  # (the message names the module)

__version__ = "0.1.0"

__all__ = [
    "Array",
    "AsyncArray",
    "AsyncGroup",
    "Group",
    "__version__",
    "array",
    "codecs",
    "config",
    "consolidate_metadata",
    "copy",
    "copy_all",
    "copy_store",
    "create",
    "create_array",
    "create_group",
    "empty",
    "empty_like",
    "errors",
    "from_array",
    "full",
    "full_like",
    "group",
    "load",
    "ones",
    "ones_like",
    "open",
    "open_array",
    "open_consolidated",
    "open_group",
    "open_like",
    "rechunk",
    "rechunk_group",
    "save",
    "save_array",
    "save_group",
    "storage",
    "store_dask",
    "to_dask",
    "tree",
    "zeros",
    "zeros_like",
]


def __getattr__(name: str) -> object:
    """Subpackages loaded on first use, so ``import zarrx`` stays cheap."""
    if name == "zom":
        import zarrx.zom

        return zarrx.zom
    if name in ("AsyncArray", "AsyncGroup"):
        from zarrx import async_nodes

        return getattr(async_nodes, name)
    if name in ("rechunk", "rechunk_group"):
        # (the import system's lock makes a first use from several threads safe)
        from zarrx import rechunking

        return getattr(rechunking, name)
    raise AttributeError(f"module 'zarrx' has no attribute {name!r}")


def _attach_asynchronous() -> None:
    """Make ``zarrx.api.asynchronous`` (zarr-python's name for the asyncio API) a submodule
    of the module :mod:`zarrx.api`, imported on first use from ``zarrx/_api/``."""
    import os
    import sys

    module = sys.modules["zarrx.api"]
    module.__path__ = [os.path.join(os.path.dirname(__file__), "_api")]

    def __getattr__(name: str) -> object:
        if name == "asynchronous":
            import importlib

            return importlib.import_module("zarrx.api.asynchronous")
        raise AttributeError(f"module 'zarrx.api' has no attribute {name!r}")

    module.__dict__["__getattr__"] = __getattr__


_attach_asynchronous()
