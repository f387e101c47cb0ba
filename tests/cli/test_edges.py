"""Bad input at the command line: one `zarrx: error: …` line on stderr and exit 2, never a
traceback; a missing optional package is named with the pip extra that installs it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import zarrx

from .conftest import one_error_line, zarrx_command

#: Run the command line in a fresh interpreter where some packages cannot be imported
#: (as if not installed): argv[1] is a comma-separated list of them, the rest is the command.
WITHOUT = """
import sys
for name in sys.argv[1].split(","):
    sys.modules[name] = None  # `import name` now raises ImportError
from zarrx.cli.main import main
sys.exit(main(sys.argv[2:]))
"""


@pytest.mark.parametrize("size", ["-5", "0"])
def test_demo_with_a_size_that_is_not_positive(tmp_path: Path, size: str) -> None:
    line = one_error_line(zarrx_command("demo", str(tmp_path / "d"), "--size", size,
                                        cwd=tmp_path))
    assert f"--size must be a positive integer (the cube's edge), got {size}" in line
    assert not (tmp_path / "d").exists()


def test_demo_onto_a_file(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    line = one_error_line(zarrx_command("demo", str(tmp_path / "f"), cwd=tmp_path))
    assert "is not a directory" in line


@pytest.mark.parametrize("url", ["zip://missing.zip", "zip://{tmp}/missing.zip"])
def test_info_of_a_missing_zip_file(tmp_path: Path, url: str) -> None:
    line = one_error_line(zarrx_command("info", url.format(tmp=tmp_path), cwd=tmp_path))
    assert "cannot open the zip archive" in line
    assert "missing.zip" in line
    assert "No such file or directory" in line


@pytest.mark.parametrize(("blocked", "missing"), [("s3fs", "s3fs"), ("fsspec", "fsspec"),
                                                  ("fsspec,s3fs", "fsspec")])
def test_info_of_s3_without_its_packages_names_the_extra(
    tmp_path: Path, blocked: str, missing: str
) -> None:
    run = subprocess.run([sys.executable, "-c", WITHOUT, blocked, "info", "s3://bucket/data"],
                         capture_output=True, text=True, check=False, cwd=tmp_path)
    line = one_error_line(run)
    assert f"opening 's3://bucket/data' needs {missing}, which is not installed" in line
    assert "pip install 'zarrx[s3]'" in line


def test_the_api_raises_a_zarrx_import_error_for_a_missing_backend(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "gcsfs", None)
    with pytest.raises(zarrx.errors.MissingDependencyError, match=r"zarrx\[gcs\]") as e:
        zarrx.open("gs://bucket/data", mode="r")
    assert isinstance(e.value, ImportError)


@pytest.mark.parametrize("what", ["missing", "file", "empty", "other"])
def test_fsck_of_what_is_not_a_store(tmp_path: Path, what: str) -> None:
    path = tmp_path / "x"
    if what == "file":
        path.write_text("not a directory")
    elif what == "empty":
        path.mkdir()
    elif what == "other":
        (path / "sub").mkdir(parents=True)
        (path / "sub" / "notes.txt").write_text("no Zarr here")
    line = one_error_line(zarrx_command("fsck", str(path), cwd=tmp_path))
    expected = {"missing": "does not exist", "file": "is not a directory",
                "empty": "is not a Zarr store", "other": "is not a Zarr store"}[what]
    assert f"{path} {expected}" in line
    if what == "other":
        assert (path / "sub" / "notes.txt").exists()


def test_fsck_of_a_store_still_cleans(tmp_path: Path) -> None:
    root = tmp_path / "s.zarr"
    zarrx.create_array(str(root), shape=(2,), dtype="i1")
    run = zarrx_command("fsck", str(root), cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "0 leftover(s) removed" in run.stdout


def test_an_unwritable_output_file_is_one_line(tmp_path: Path) -> None:
    root = tmp_path / "s.zarr"
    zarrx.create_group(str(root))
    line = one_error_line(zarrx_command("spec", str(root), "-o",
                                        str(tmp_path / "no" / "such" / "dir.json"),
                                        cwd=tmp_path))
    assert "No such file or directory" in line
    assert "dir.json" in line


def test_python_dash_m_zarrx_runs_the_command(tmp_path: Path) -> None:
    run = subprocess.run([sys.executable, "-m", "zarrx", "fsck", str(tmp_path / "none")],
                         capture_output=True, text=True, check=False)
    assert "does not exist" in one_error_line(run)
