"""The LMDB store plugin (plugins/zarrx-lmdb), installed as a user would install it.

A session fixture installs the plugin package (editable, no dependencies) when it is not
installed yet. ``lmdb://`` must then open through zarrx's ``zarrx.stores`` entry points
with no change to zarrx: that is checked in a fresh interpreter, which sees only what is
installed. The plugin's own suite (``pytest plugins/zarrx-lmdb``) goes further.
"""

from __future__ import annotations

import importlib
import importlib.util
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from zarrx.testing.stores import StoreTests

PLUGIN = Path(__file__).resolve().parents[2] / "plugins" / "zarrx-lmdb"


@pytest.fixture(scope="session")
def lmdb_plugin() -> ModuleType:
    """The installed ``zarrx_lmdb`` module (installed now if it is not)."""
    if importlib.util.find_spec("zarrx_lmdb") is None:
        command = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps"]
        # Offline with the environment's setuptools first; else pip's isolated build.
        done = subprocess.run(
            [*command, "--no-build-isolation", "-e", str(PLUGIN)], timeout=300, check=False
        )
        if done.returncode:
            subprocess.run([*command, "-e", str(PLUGIN)], check=True, timeout=300)
        if str(PLUGIN) not in sys.path:  # this interpreter read its .pth files already
            sys.path.insert(0, str(PLUGIN))
        importlib.invalidate_caches()
    return importlib.import_module("zarrx_lmdb")


class TestLMDBStore(StoreTests):
    @pytest.fixture
    def store(self, lmdb_plugin: ModuleType, tmp_path: Path) -> Iterator[Any]:
        store = lmdb_plugin.LMDBStore(tmp_path / "db")
        yield store
        store.close()


def test_lmdb_url_opens_through_the_entry_point(lmdb_plugin: ModuleType, tmp_path: Path) -> None:
    db = tmp_path / "db"
    script = textwrap.dedent(f"""
        import numpy as np, zarrx
        url = "lmdb://" + {str(db)!r}
        a = zarrx.create_array(url, name="x", shape=(40, 30), dtype="i4", chunks=(16, 8))
        a[...] = np.arange(1200, dtype="i4").reshape(40, 30)
        print(type(a.store).__module__, type(a.store).__name__)
        a.store.close()
        b = zarrx.open(url, mode="r", path="x")
        assert (b[...] == np.arange(1200).reshape(40, 30)).all()
        b.store.close()
    """)
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["zarrx_lmdb", "LMDBStore"]
    # The data is in the LMDB database, where this process reads it back directly.
    import zarrx

    store = lmdb_plugin.LMDBStore(db, read_only=True)
    np.testing.assert_array_equal(
        zarrx.open_array(store, path="x")[...], np.arange(1200, dtype="i4").reshape(40, 30)
    )
    assert store.list_dir("x/") == (["x/zarr.json"], ["x/c/"])
    store.close()
