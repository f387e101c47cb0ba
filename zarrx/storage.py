"""Stores: where arrays and groups keep their bytes (``from zarrx.storage import ...``).

Every store implements :class:`Store` (seed 000's readable / writeable / listable
interface, plus byte ranges and batched reads). ``store_from_url`` opens a URL through the
``zarrx.stores`` registry, so plugins can add schemes.
"""

from typing import TYPE_CHECKING

from zarrx.abc.store import ByteRange, Store
from zarrx.stores.local import LocalStore
from zarrx.stores.memory import MemoryStore
from zarrx.stores.url import store_from_url

if TYPE_CHECKING:
    from zarrx.stores.cache import CacheStore
    from zarrx.stores.fsspec import FsspecStore
    from zarrx.stores.obstore import ObstoreStore
    from zarrx.stores.zarr_python import ZarrPythonStore
    from zarrx.stores.zip import ZipStore

__all__ = [
    "ByteRange",
    "CacheStore",
    "FsspecStore",
    "LocalStore",
    "MemoryStore",
    "ObstoreStore",
    "Store",
    "ZarrPythonStore",
    "ZipStore",
    "store_from_url",
]

_LAZY = {
    "CacheStore": "zarrx.stores.cache",
    "ZipStore": "zarrx.stores.zip",
    "FsspecStore": "zarrx.stores.fsspec",
    "ObstoreStore": "zarrx.stores.obstore",
    "ZarrPythonStore": "zarrx.stores.zarr_python",
}


def __getattr__(name: str) -> object:
    """Stores with optional dependencies are imported on first use (keeps ``import zarrx``
    fast, and works without them)."""
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
