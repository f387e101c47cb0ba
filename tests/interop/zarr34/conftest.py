"""zarr-python 3.4 as a peer, in a virtual environment of its own.

zarr-python 3.4 needs Python >= 3.12; zarrx's test environment pins zarr-python 3.1.6 so that
it runs on Python 3.11 too. The session fixture :func:`zarr34_python` gives the interpreter
of an environment with zarr-python 3.4 and the packages its codecs need (cast-value-rs for
``cast_value``, pcodec, zfpy, ml_dtypes, crc32c): ``$ZARRX_ZARR34_PYTHON`` when set, else
``.venv-zarr34`` in the repository root, built on first use from
``tests/interop/locks/zarr34.txt`` with a Python 3.12+ found on the machine (see
:mod:`tests.interop.peer_envs`); without one, these tests are skipped and say why.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.interop import peer_envs

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="session")
def zarr34_python() -> str:
    """The Python interpreter of an environment with zarr-python 3.4."""
    return peer_envs.peer_python(peer_envs.ZARR34)


def run_peer(python: str, script: str, *args: Any) -> dict[str, Any]:
    """Run a peer script beside this file under zarr-python 3.4; it prints one JSON document."""
    return peer_envs.run_peer(python, HERE / script, *args)
