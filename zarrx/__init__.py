"""zarrx: a fast, NumPy-native Zarr library (v3, v2 and the v3.0 draft) with a Cython core.

>>> import numpy as np, zarrx
>>> a = zarrx.create_array(zarrx.storage.MemoryStore(), shape=(4, 4), dtype="int32", chunks=(2, 2))
>>> a[1:3] = 7
>>> int(np.asarray(a)[::2].sum())
28
"""

from zarrx import config, errors, storage
from zarrx.api import (
    consolidate_metadata,
    create_array,
    create_group,
    open,
    open_array,
    open_consolidated,
    open_group,
)
from zarrx.arrays import Array
from zarrx.groups import Group
from zarrx.integrations.dask import store_dask, to_dask

__version__ = "0.1.0"

__all__ = [
    "Array",
    "Group",
    "__version__",
    "config",
    "consolidate_metadata",
    "create_array",
    "create_group",
    "errors",
    "open",
    "open_array",
    "open_consolidated",
    "open_group",
    "storage",
    "store_dask",
    "to_dask",
]


def __getattr__(name: str) -> object:
    """Subpackages loaded on first use, so ``import zarrx`` stays cheap."""
    if name == "zom":
        import zarrx.zom

        return zarrx.zom
    raise AttributeError(f"module 'zarrx' has no attribute {name!r}")
