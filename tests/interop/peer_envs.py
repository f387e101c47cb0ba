"""Peers that cannot live in zarrx's own environment, each in a virtual environment of its own.

zarr-python 2.18 needs NumPy 1; zarr-python 3.4 needs Python >= 3.12 while zarrx's tests run
on 3.11 too. Each :class:`PeerEnv` names a lock file beside this module (``locks/<name>.txt``:
every package of the environment, pinned) and the Python versions it runs on. On first use
:func:`peer_python` builds ``.venv-<name>`` in the repository root from the lock file, with a
Python of those versions found on the machine, under a lock (one builder at a time, across
processes); later runs reuse it while its stamp matches the lock file. ``$ZARRX_<NAME>_PYTHON``
names an interpreter to use instead. When the machine has no suitable Python the test is
skipped, and the reason says which versions were looked for and where.

Peer scripts run in such an environment through :func:`run_peer`, which never lets them import
zarrx or its NumPy: they exchange arrays saved with ``np.save`` and print one JSON document.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
LOCKS = HERE / "locks"


@dataclass(frozen=True)
class PeerEnv:
    """One peer's environment: its lock file, the Python versions it runs on, and the module
    whose version proves it installed."""

    name: str  # ``zarr2`` → locks/zarr2.txt, .venv-zarr2, $ZARRX_ZARR2_PYTHON
    module: str  # imported to check the environment; its ``__version__`` is compared
    version: str  # the version of ``module`` the lock file pins
    min_python: tuple[int, int]
    max_python: tuple[int, int] = (3, 99)

    @property
    def lock(self) -> Path:
        return LOCKS / f"{self.name}.txt"

    @property
    def venv(self) -> Path:
        return ROOT / f".venv-{self.name}"

    @property
    def variable(self) -> str:
        return f"ZARRX_{self.name.upper()}_PYTHON"

    def fits(self, version: tuple[int, int]) -> bool:
        return self.min_python <= version <= self.max_python

    def describe(self) -> str:
        low = ".".join(map(str, self.min_python))
        high = "" if self.max_python[1] == 99 else "-" + ".".join(map(str, self.max_python))
        return f"Python {low}{high}" if high else f"Python >= {low}"


ZARR2 = PeerEnv("zarr2", "zarr", "2.18.7", (3, 9), (3, 12))
ZARR34 = PeerEnv("zarr34", "zarr", "3.4.2", (3, 12))
#: rechunker with zarr-python 2.18, a peer of ``bench/rechunk.py`` (not of the tests).
RECHUNKER = PeerEnv("rechunker", "rechunker", "0.5.4", (3, 9), (3, 12))


def _venv_python(venv: Path) -> Path:
    return venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def python_version(python: str | Path) -> tuple[int, int] | None:
    """``(major, minor)`` of an interpreter, or ``None`` when it does not run (a pyenv shim
    of a version that is not selected fails, for instance)."""
    try:
        out = subprocess.run(
            [str(python), "-c", "import sys; print(*sys.version_info[:2])"],
            capture_output=True, text=True, timeout=60, check=False,
        )
    except OSError:
        return None
    if out.returncode != 0:
        return None
    try:
        major, minor = map(int, out.stdout.split())
    except ValueError:
        return None
    return major, minor


def candidates() -> list[Path]:
    """Interpreters worth asking, this one first: ``python3.N`` on ``PATH`` (newest first),
    then every version under ``$PYENV_ROOT`` (``~/.pyenv``) and uv's managed Pythons."""
    found = [Path(sys.executable)]
    for minor in range(20, 8, -1):
        path = shutil.which(f"python3.{minor}")
        if path:
            found.append(Path(path))
    roots = [Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions",
             Path(os.environ.get("UV_PYTHON_INSTALL_DIR",
                                 Path.home() / ".local/share/uv/python"))]
    for root in roots:
        if root.is_dir():
            for version in sorted(root.iterdir(), key=_version_key, reverse=True):
                python = version / "bin" / "python3"
                if python.exists():
                    found.append(python)
    return found


def _version_key(path: Path) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", path.name)[:3])


def find_python(env: PeerEnv) -> Path | None:
    """The first of :func:`candidates` whose version ``env`` runs on."""
    for python in candidates():
        version = python_version(python)
        if version is not None and env.fits(version):
            return python
    return None


def _stamp(env: PeerEnv) -> str:
    return hashlib.sha256(env.lock.read_bytes()).hexdigest()


def _installed(env: PeerEnv, python: Path | str) -> str | None:
    """The version of ``env.module`` the interpreter imports, or ``None``."""
    try:
        out = subprocess.run(
            [str(python), "-c", f"import {env.module}; print({env.module}.__version__)"],
            capture_output=True, text=True, timeout=120, check=False,
        )
    except OSError:
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def build(env: PeerEnv, base: Path) -> Path:
    """Create (or reuse) ``env.venv`` from ``env.lock`` with the interpreter ``base``,
    under an exclusive file lock so concurrent test processes build it once."""
    venv = env.venv
    stamp_file = venv / "zarrx-lock.sha256"
    venv.parent.mkdir(parents=True, exist_ok=True)
    with open(venv.parent / f"{venv.name}.lock", "w") as lock:
        try:
            import fcntl

            fcntl.flock(lock, fcntl.LOCK_EX)
        except ImportError:  # pragma: no cover - not POSIX
            pass
        python = _venv_python(venv)
        fresh = stamp_file.is_file() and stamp_file.read_text() == _stamp(env)
        if fresh and _installed(env, python) == env.version:
            return python
        subprocess.run([str(base), "-m", "venv", "--clear", str(venv)], check=True)
        subprocess.run(
            [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
             "-r", str(env.lock)],
            check=True,
        )
        stamp_file.write_text(_stamp(env))
    return python


def peer_python(env: PeerEnv) -> str:
    """The interpreter of ``env``'s environment: ``$ZARRX_<NAME>_PYTHON`` when set, else
    ``.venv-<name>`` built on first use; skips the test when no Python on this machine fits."""
    configured = os.environ.get(env.variable)
    if configured:
        python: Path = Path(configured)
    else:
        base = find_python(env)
        if base is None:
            pytest.skip(
                f"{env.module} {env.version} needs {env.describe()}: none found as "
                f"{sys.executable}, python3.N on PATH, under $PYENV_ROOT/versions or uv's "
                f"Pythons; install one or set {env.variable}"
            )
        python = build(env, base)
    version = _installed(env, python)
    assert version == env.version, (
        f"{python} must have {env.module} {env.version} (the packages of {env.lock.name}), "
        f"found {version}"
    )
    return str(python)


def run_peer(python: str, script: Path, *args: Any,
             env: dict[str, str] | None = None) -> dict[str, Any]:
    """Run a peer script; it prints one JSON document, returned parsed."""
    environ = {**os.environ, **(env or {}), "PYTHONWARNINGS": "ignore"}
    environ.pop("PYTHONPATH", None)  # never let the peer import zarrx or its NumPy
    proc = subprocess.run(
        [python, str(script), *map(str, args)],
        capture_output=True, text=True, env=environ, timeout=900, check=False,
    )
    assert proc.returncode == 0, f"{script.name} failed:\n{proc.stdout}\n{proc.stderr}"
    return json.loads(proc.stdout)
