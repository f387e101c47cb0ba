"""From what a user passes as ``store`` (a Store, a zarr-python store, a path or a URL)
to a Store.

URL schemes resolve through the ``zarrx.stores`` registry, so a plugin adds a scheme by
declaring an entry point; the backend is a class with a ``from_url`` classmethod.
"""

from __future__ import annotations

import os
from typing import Any

from zarrx.abc.store import Store
from zarrx.stores.local import LocalStore

MODES = ("r", "r+", "a", "w", "w-")


def store_from_url(
    url: str, *, read_only: bool, storage_options: dict[str, Any] | None = None
) -> Store:
    """Open ``scheme://...`` with the backend registered for ``scheme``."""
    scheme, sep, _ = url.partition("://")
    if not sep or not scheme:
        raise ValueError(f"not a URL (expected 'scheme://...'): {url!r}")
    from zarrx.registry import stores  # reads entry points: only when a URL is opened

    backend = stores.get(scheme.lower())
    from_url = getattr(backend, "from_url", None)
    if from_url is None:
        raise TypeError(
            f"store backend {backend!r} for scheme {scheme!r} has no from_url classmethod"
        )
    return from_url(url, read_only=read_only, storage_options=storage_options)


def make_store(
    store_like: Store | str | os.PathLike[str],
    *,
    mode: str,
    storage_options: dict[str, Any] | None = None,
) -> Store:
    """A Store for ``store_like``: a Store as is, a zarr-python store wrapped in a
    :class:`~zarrx.stores.zarr_python.ZarrPythonStore`, a URL by scheme, a path as a
    LocalStore.

    ``mode="r"`` opens paths and URLs read-only; the other modes follow zarr-python.
    """
    if mode not in MODES:
        raise ValueError(f"invalid mode {mode!r}; expected one of {', '.join(MODES)}")
    if not isinstance(store_like, Store):
        from zarrx.stores.zarr_python import ZarrPythonStore, is_zarr_python_store

        if is_zarr_python_store(store_like):  # an Icechunk session's store, ...
            store_like = ZarrPythonStore(store_like)
    if isinstance(store_like, Store):
        if storage_options:
            raise TypeError("storage_options are only used when the store is given as a URL")
        return store_like
    if not isinstance(store_like, str | os.PathLike):
        raise TypeError(
            f"cannot make a store from a {type(store_like).__name__}: "
            "expected a Store, a zarr-python store, a path or a URL"
        )
    location = os.fspath(store_like)
    if not isinstance(location, str):
        raise TypeError(f"expected a str path, got {location!r}")
    read_only = mode == "r"
    if "://" in location:
        return store_from_url(location, read_only=read_only, storage_options=storage_options)
    if storage_options:
        raise TypeError("storage_options are only used when the store is given as a URL")
    return LocalStore(location, read_only=read_only)
