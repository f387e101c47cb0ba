"""zarr-python 2.18 as a peer, in a virtual environment of its own.

zarr-python 2.18 (the last release with the Zarr v3.0 draft behind
``ZARR_V3_EXPERIMENTAL_API=1``) needs ``numpy<2`` and ``numcodecs<0.16``, which cannot live
beside zarrx's NumPy 2. The session fixture :func:`zarr2_python` gives the interpreter of
an environment that has them: ``$ZARRX_ZARR2_PYTHON`` when set, else ``.venv-zarr2`` in
the repository root, built on first use from ``tests/interop/locks/zarr2.txt`` (about a
minute; it is git-ignored and reused; see :mod:`tests.interop.peer_envs`). The peer scripts
beside this file run in it through :func:`run_peer`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.interop import peer_envs

HERE = Path(__file__).resolve().parent
PEER_ENV = {"ZARR_V3_EXPERIMENTAL_API": "1", "ZARR_V3_SHARDING": "1"}


@pytest.fixture(scope="session")
def zarr2_python() -> str:
    """The Python interpreter of an environment with zarr-python 2.18."""
    return peer_envs.peer_python(peer_envs.ZARR2)


def run_peer(python: str, script: str, *args: Any) -> dict[str, Any]:
    """Run a peer script under zarr-python 2.18; it prints one JSON document."""
    return peer_envs.run_peer(python, HERE / script, *args, env=PEER_ENV)
