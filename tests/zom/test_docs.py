"""docs/zom.md runs: its Python blocks, in order, in an empty directory, each in a fresh
namespace (each stands alone), print what the page says they print."""

import contextlib
import io
import re
from pathlib import Path

DOC = Path(__file__).parents[2] / "docs" / "zom.md"


def _blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)


def _expected(block: str) -> list[str]:
    """Output the page shows: ``print(...)  # text`` lines, and ``# text`` lines right
    after a ``print(`` line that has no comment."""
    out: list[str] = []
    after_print = False
    for line in block.splitlines():
        stripped = line.strip()
        if "print(" in stripped:
            _, sep, comment = stripped.partition("  # ")
            after_print = not sep
            if sep:
                out.append(comment)
        elif after_print and stripped.startswith("# "):
            out.append(stripped[2:])
        else:
            after_print = False
    return out


def test_the_examples_run_and_print_what_the_page_says(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    blocks = _blocks()
    assert len(blocks) >= 6
    for block in blocks:
        stdout = io.StringIO()
        with contextlib.redirect_stdout(stdout):
            exec(compile(block, str(DOC), "exec"), {})
        assert stdout.getvalue().splitlines() == _expected(block), block
    assert (tmp_path / "experiment.zarr" / "zarr.json").exists()
