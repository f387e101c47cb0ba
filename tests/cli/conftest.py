"""Hierarchies for the command-line tests, written by zarr-python 3 (v2 and v3) and zarrx."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import zarr

import zarrx

#: The ``zarrx`` command pip installed beside the interpreter running the tests (its
#: environment's scripts directory), whichever machine or virtual environment that is.
ZARRX = str(Path(sys.executable).parent / ("zarrx.exe" if sys.platform == "win32" else "zarrx"))


def zarrx_command(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run the installed ``zarrx`` command in a process of its own."""
    return subprocess.run([ZARRX, *args], capture_output=True, text=True, check=False, cwd=cwd)


def one_error_line(run: subprocess.CompletedProcess[str]) -> str:
    """The one ``zarrx: error: …`` line a run refusing bad input printed (exit status 2)."""
    assert run.returncode == 2, (run.stdout, run.stderr)
    assert "Traceback" not in run.stderr
    lines = run.stderr.splitlines()
    assert len(lines) == 1, run.stderr
    assert lines[0].startswith("zarrx: error: ")
    return lines[0]


def zarr_python_source(root: Path, zarr_format: int) -> Path:
    """A hierarchy with partly written arrays (so some chunks are not initialised), nested
    groups, attributes, a big-endian F-ordered v2 array and a float array with NaN fill."""
    g = zarr.create_group(store=str(root), zarr_format=zarr_format,
                          attributes={"title": "survey", "n": 3})
    a = g.create_array("temperature", shape=(20, 30), chunks=(8, 7), dtype="<f8",
                       fill_value=np.nan, attributes={"units": "K"})
    a[:10, :14] = np.arange(140, dtype="f8").reshape(10, 14) / 7
    dtype, order = (">i4", "F") if zarr_format == 2 else ("int32", "C")
    kw = {"order": order} if zarr_format == 2 else {}
    b = g.create_group("labels", attributes={"kind": "mask"}).create_array(
        "counts", shape=(9, 5), chunks=(4, 3), dtype=dtype, fill_value=-1, **kw)
    b[2:9, :] = np.arange(35, dtype="i4").reshape(7, 5)
    g.create_group("labels/empty")
    return root


def read_all(path: Path, name: str) -> np.ndarray:
    return zarrx.open_array(str(path), path=name)[...]


def chunk_files(root: Path) -> list[str]:
    """Stored keys that are not metadata documents."""
    meta = {"zarr.json", ".zarray", ".zgroup", ".zattrs", ".zmetadata"}
    return sorted(
        str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and p.name not in meta
    )


@pytest.fixture(params=[2, 3], ids=["v2", "v3"])
def zarr_format(request):
    return request.param
