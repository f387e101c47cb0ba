"""zarr-python 2.18 as a peer, in a virtual environment of its own.

zarr-python 2.18 (the last release with the Zarr v3.0 draft behind
``ZARR_V3_EXPERIMENTAL_API=1``) needs ``numpy<2`` and ``numcodecs<0.16``, which cannot live
beside zarrx's NumPy 2. The session fixture :func:`zarr2_python` gives the interpreter of
an environment that has them: ``$ZARRX_ZARR2_PYTHON`` when set, else ``.venv-zarr2`` in
the repository root, created on first use (about a minute; it is git-ignored and reused).
The peer scripts beside this file run in it through :func:`run_peer`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
ZARR2_VERSION = "2.18.7"
#: pytest: zarr-python 2.18 imports it to decode any storage transformer (a peer quirk).
REQUIREMENTS = (f"zarr=={ZARR2_VERSION}", "numcodecs<0.16", "numpy<2", "pytest")
PEER_ENV = {"ZARR_V3_EXPERIMENTAL_API": "1", "ZARR_V3_SHARDING": "1"}


def _venv_python(venv: Path) -> Path:
    return venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def _zarr_version(python: Path | str) -> str | None:
    try:
        out = subprocess.run(
            [str(python), "-c", "import zarr, numcodecs, pytest; print(zarr.__version__)"],
            capture_output=True, text=True, timeout=120, check=False,
        )
    except OSError:
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def _build(venv: Path) -> Path:
    """Create ``venv`` with zarr-python 2.18 (under a lock: one builder at a time)."""
    venv.parent.mkdir(parents=True, exist_ok=True)
    lock_path = venv.parent / (venv.name + ".lock")
    with open(lock_path, "w") as lock:
        try:
            import fcntl

            fcntl.flock(lock, fcntl.LOCK_EX)
        except ImportError:  # pragma: no cover - not POSIX
            pass
        python = _venv_python(venv)
        if _zarr_version(python) == ZARR2_VERSION:
            return python
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
        subprocess.run(
            [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
             *REQUIREMENTS],
            check=True,
        )
    return python


@pytest.fixture(scope="session")
def zarr2_python() -> str:
    """The Python interpreter of an environment with zarr-python 2.18."""
    configured = os.environ.get("ZARRX_ZARR2_PYTHON")
    python = Path(configured) if configured else _build(ROOT / ".venv-zarr2")
    version = _zarr_version(python)
    assert version == ZARR2_VERSION, (
        f"{python} must have zarr-python {ZARR2_VERSION} (and numcodecs, pytest), found {version}"
    )
    return str(python)


def run_peer(python: str, script: str, *args: Any) -> dict[str, Any]:
    """Run a peer script under zarr-python 2.18; it prints one JSON document."""
    env = {**os.environ, **PEER_ENV, "PYTHONWARNINGS": "ignore"}
    env.pop("PYTHONPATH", None)  # never let the peer import zarrx or its NumPy
    proc = subprocess.run(
        [python, str(HERE / script), *map(str, args)],
        capture_output=True, text=True, env=env, timeout=600, check=False,
    )
    assert proc.returncode == 0, f"{script} failed:\n{proc.stdout}\n{proc.stderr}"
    return json.loads(proc.stdout)
