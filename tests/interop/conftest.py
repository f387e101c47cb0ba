"""Fixtures of the interop suite: every array lives in its own directory under ``tmp_path``.

The peers are the real libraries: zarr-python 3.1.6 and tensorstore's ``zarr3`` driver.
Helpers that write and read with each library are in :mod:`tests.interop._peers`.

Every test collected below this directory carries the ``interop`` marker (registered in
``pyproject.toml``), so ``pytest -m "not interop"`` runs without the peers' live round trips
(and without building zarr-python 2.18's environment); CI runs everything. What the peers
wrote once is checked offline by ``tests/test_golden.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


@pytest.hookimpl(tryfirst=True)  # before ``-m`` deselects by marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the tests of this directory ``interop`` (pytest calls this hook of a directory's
    conftest with every collected item, so it filters by path)."""
    for item in items:
        if HERE in item.path.resolve().parents:
            item.add_marker(pytest.mark.interop)


@pytest.fixture
def path(tmp_path: Path) -> Path:
    """Where the array under test lives (a local directory store)."""
    return tmp_path / "array"
