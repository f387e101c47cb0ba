"""``import zarrx`` stays cheap: no codec is imported until metadata names one."""

import subprocess
import sys

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
    assert loaded - MACHINERY <= {"zarrx.codecs.blosc", "zarrx.codecs.bytes"}
