"""First imports, one thread at a time.

zarrx imports codec libraries, store backends and plugins on first use, and that first
use may come from many threads at once (a thread pool opening arrays of different codecs).
Python imports a plain module safely from any number of threads, but not every package
survives it: numcodecs' ``__init__`` imports its submodules and they import the package
back, so a thread importing ``numcodecs.blosc`` while another imports ``numcodecs`` can
meet a partially initialised module (``ImportError: cannot import name 'Blosc' from
partially initialized module``, ``KeyError: 'numcodecs'``), and numcodecs' codec registry
fills itself from entry points without a lock.

So every import zarrx makes on demand, every entry-point load of :mod:`zarrx.registry`
and every call into numcodecs' registry holds one process-wide lock (re-entrant: loading
a plugin may load another). Once a module is imported, :func:`import_module` finds it in
``sys.modules`` without taking the lock.

The other lazily filled state of zarrx needs no lock of its own: caches of parsed
metadata and prepared codec chains may compute one value twice, never a wrong one;
scratch buffers are per thread; the thread pools are made under their own lock.
"""

from __future__ import annotations

import importlib
import os
import sys
import threading
from types import ModuleType

lock = threading.RLock()


def import_module(name: str) -> ModuleType:
    """``importlib.import_module(name)``, imported by one thread at a time."""
    module = sys.modules.get(name)
    spec = getattr(module, "__spec__", None)
    if module is not None and not getattr(spec, "_initializing", False):
        return module
    with lock:
        return importlib.import_module(name)


def _forget_lock() -> None:
    """A forked child has none of its parent's threads: a lock they held stays free."""
    global lock
    lock = threading.RLock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_lock)
