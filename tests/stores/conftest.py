"""Bind the built-in URL schemes in-process: the tests run without the package installed,
so the entry points declared in pyproject.toml are not visible."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from zarrx import registry
from zarrx.stores.local import LocalStore
from zarrx.stores.memory import MemoryStore


@pytest.fixture(autouse=True, scope="session")
def _builtin_store_schemes() -> Iterator[None]:
    with (
        registry.stores.override("file", LocalStore),
        registry.stores.override("memory", MemoryStore),
    ):
        yield
