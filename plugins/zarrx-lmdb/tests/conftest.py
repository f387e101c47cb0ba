"""Make ``pytest plugins/zarrx-lmdb`` work on a fresh checkout: install the plugin
(editable, without dependencies) if it is not installed, before any test module imports it.
Installing registers its ``lmdb`` entry point for zarrx, which is what the tests check."""

from __future__ import annotations

import importlib
import importlib.util
import subprocess
import sys
from pathlib import Path

PLUGIN = Path(__file__).resolve().parents[1]


def _ensure_installed() -> None:
    if importlib.util.find_spec("zarrx_lmdb") is not None:
        return
    command = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps"]
    # Offline with the environment's setuptools first; else pip's isolated build.
    done = subprocess.run(
        [*command, "--no-build-isolation", "-e", str(PLUGIN)], timeout=300, check=False
    )
    if done.returncode:
        subprocess.run([*command, "-e", str(PLUGIN)], check=True, timeout=300)
    if str(PLUGIN) not in sys.path:  # this interpreter read its .pth files before the install
        sys.path.insert(0, str(PLUGIN))
    importlib.invalidate_caches()


_ensure_installed()
