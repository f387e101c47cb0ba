"""Bind the built-in URL schemes in-process (the tests run without the package installed,
so the entry points declared in pyproject.toml are not visible), and serve S3 from a moto
server on 127.0.0.1 for the tests of the object-store stores."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from tests.stores.s3 import S3Server, serve
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


@pytest.fixture(scope="session")
def s3() -> Iterator[S3Server]:
    """A moto S3 server on 127.0.0.1 with its buckets, for the whole session."""
    yield from serve()


@pytest.fixture
def where() -> str:
    """A fresh prefix in the bucket for one test."""
    return f"t-{uuid.uuid4().hex[:12]}"
