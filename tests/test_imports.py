"""``import zarrx`` stays cheap: no codec is imported until metadata names one."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

#: The codec chain's machinery (not a codec): the pipeline (its scratch buffers are in
#: zarrx.runtime, below the codecs).
MACHINERY = {"zarrx.codecs", "zarrx.codecs.pipeline"}


def _codec_modules_after(code: str) -> set[str]:
    script = (
        f"{code}\nimport sys\n"
        "print(' '.join(m for m in sys.modules if m.startswith('zarrx.codecs')))"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            check=False)
    assert result.returncode == 0, result.stderr
    return set(result.stdout.split())


def test_import_zarrx_imports_no_codec_module() -> None:
    assert _codec_modules_after("import zarrx") <= MACHINERY


def test_codecs_load_on_first_use() -> None:
    """The same probe sees a codec module once an array is created (so it can fail)."""
    loaded = _codec_modules_after(
        "import zarrx\n"
        "zarrx.create_array(zarrx.storage.MemoryStore(), shape=(2,), dtype='u1')"
    )
    assert {"zarrx.codecs.bytes", "zarrx.codecs.zstd"} <= loaded


def test_codec_classes_load_on_first_use() -> None:
    """``zarrx.codecs.BloscCodec`` (zarr-python's name) loads the blosc module and what it
    needs, nothing else."""
    loaded = _codec_modules_after("import zarrx\nzarrx.codecs.BloscCodec(cname='lz4')")
    assert "zarrx.codecs.blosc" in loaded
    assert loaded - MACHINERY <= {"zarrx.codecs.blosc", "zarrx.codecs.bytes",
                                  "zarrx.codecs.libraries"}  # (its C functions, found lazily)


#: ``import zarrx`` as in a clone after ``pip install .``: where the test's own zarrx is an
#: editable install, its import hook would find the clone's missing compiled modules in
#: the installed tree; a newcomer's ``pip install .`` has no such hook.
IMPORT = ("import sys\n"
          "sys.meta_path[:] = [f for f in sys.meta_path\n"
          "                    if getattr(f, '__name__', '') != '_EditableFinder']\n"
          "import zarrx\n")


def _clone_without_kernels(root: Path) -> Path:
    """The repository's Python sources as a fresh clone has them: no compiled modules."""
    repo = Path(__file__).resolve().parents[1]
    shutil.copytree(repo / "zarrx", root / "zarrx",
                    ignore=shutil.ignore_patterns("*.so", "*.pyd", "__pycache__", "*.c"))
    for name in ("setup.py", "pyproject.toml"):
        shutil.copy(repo / name, root / name)
    return root


def test_the_unbuilt_source_tree_says_what_to_do(tmp_path: Path) -> None:
    """``import zarrx`` inside a clone after ``pip install .`` imports the clone's unbuilt
    ``zarrx/`` (the current directory comes first): one clear error, not a missing module."""
    clone = _clone_without_kernels(tmp_path / "clone")
    result = subprocess.run([sys.executable, "-c", IMPORT], cwd=clone,
                            capture_output=True, text=True, check=False)
    assert result.returncode == 1
    assert "No module named" not in result.stderr  # (one message, no chained traceback)
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("zarrx.errors.KernelsMissingError: zarrx's compiled kernels are "
                           "missing (zarrx._core.")
    assert f"unbuilt source tree at {clone / 'zarrx'}" in last
    assert f"Run `pip install -e .` in {clone}" in last
    # an ImportError: `except ImportError` around an optional import still works
    probe = (IMPORT.replace("import zarrx\n", "") + "try:\n    import zarrx\n"
             "except ImportError as x:\n"
             "    sys.exit(0 if type(x).__name__ == 'KernelsMissingError' else 1)")
    assert subprocess.run([sys.executable, "-c", probe], cwd=clone, check=False).returncode == 0


def test_the_message_names_the_hidden_installed_package(tmp_path: Path) -> None:
    """With zarrx installed (not in editable mode) elsewhere, the message says where —
    though the build left the clone's own ``zarrx.egg-info`` first on the path."""
    clone = _clone_without_kernels(tmp_path / "clone")
    (clone / "zarrx.egg-info").mkdir()
    (clone / "zarrx.egg-info" / "PKG-INFO").write_text(
        "Metadata-Version: 2.1\nName: zarrx\nVersion: 0.1.0\n")
    site = tmp_path / "site"
    (site / "zarrx").mkdir(parents=True)
    info = site / "zarrx-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: zarrx\nVersion: 0.1.0\n")
    env = {**os.environ, "PYTHONPATH": str(site)}
    result = subprocess.run([sys.executable, "-c", IMPORT], cwd=clone, env=env,
                            capture_output=True, text=True, check=False)
    assert f"(the zarrx installed at {site / 'zarrx'} is hidden by it)" in result.stderr
