"""The submodules of :mod:`zarrx.api` (a module, not a package): ``zarrx/__init__.py`` points
``zarrx.api.__path__`` here, so ``zarrx.api.asynchronous`` is ``asynchronous.py`` of this
folder. Import them by that name, never as ``zarrx._api.…`` (a second copy)."""
