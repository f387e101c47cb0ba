"""Stores: where arrays and groups keep their bytes (``from zarrx.storage import ...``).

Every store implements :class:`Store` (seed 000's readable / writeable / listable
interface, plus byte ranges and batched reads). ``store_from_url`` opens a URL through the
``zarrx.stores`` registry, so plugins can add schemes.
"""

from zarrx.abc.store import ByteRange, Store
from zarrx.stores.local import LocalStore
from zarrx.stores.memory import MemoryStore
from zarrx.stores.url import store_from_url

__all__ = ["ByteRange", "LocalStore", "MemoryStore", "Store", "store_from_url"]
