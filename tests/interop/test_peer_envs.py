"""The peers' environments: which interpreter is chosen, and the skip when none fits."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.interop import peer_envs
from tests.interop.peer_envs import PeerEnv


def test_lock_files_pin_every_package() -> None:
    for env in (peer_envs.ZARR2, peer_envs.ZARR34, peer_envs.RECHUNKER):
        lines = [line for line in env.lock.read_text().splitlines()
                 if line and not line.startswith("#")]
        assert lines
        assert all("==" in line for line in lines), env.lock
        assert f"{env.module}=={env.version}" in lines


def test_first_fitting_interpreter_is_chosen(monkeypatch: pytest.MonkeyPatch) -> None:
    versions = {"/a/python3.11": (3, 11), "/b/python3.13": (3, 13), "/c/broken": None,
                "/d/python3.12": (3, 12)}
    monkeypatch.setattr(peer_envs, "candidates", lambda: [Path(p) for p in versions])
    monkeypatch.setattr(peer_envs, "python_version", lambda p: versions[str(p)])
    assert peer_envs.find_python(peer_envs.ZARR34) == Path("/b/python3.13")
    assert peer_envs.find_python(peer_envs.ZARR2) == Path("/a/python3.11")
    assert peer_envs.find_python(PeerEnv("x", "x", "1", (3, 14))) is None


def test_no_fitting_interpreter_skips_and_says_where_it_looked(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ZARRX_FUTURE_PYTHON", raising=False)
    monkeypatch.setattr(peer_envs, "find_python", lambda env: None)
    with pytest.raises(pytest.skip.Exception, match=r"needs Python >= 3\.99: none found .*"
                                                   r"PYENV_ROOT.*set ZARRX_FUTURE_PYTHON"):
        peer_envs.peer_python(PeerEnv("future", "zarr", "9", (3, 99)))


def test_this_interpreter_is_asked_first() -> None:
    assert peer_envs.candidates()[0] == Path(sys.executable)
    assert peer_envs.python_version(sys.executable) == sys.version_info[:2]
    assert peer_envs.python_version("/nonexistent/python") is None
