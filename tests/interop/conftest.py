"""Fixtures of the interop suite: every array lives in its own directory under ``tmp_path``.

The peers are the real libraries: zarr-python 3.1.6 and tensorstore's ``zarr3`` driver.
Helpers that write and read with each library are in :mod:`tests.interop._peers`.
"""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def path(tmp_path: Path) -> Path:
    """Where the array under test lives (a local directory store)."""
    return tmp_path / "array"
