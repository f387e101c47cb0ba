"""Every Python example in the docs runs as a user copies it: each ```python block of each
page of docs/ and of the README alone, in a fresh namespace and an empty directory; and a
page's blocks one after another in one directory (each in a fresh namespace), as a user
trying them in turn does.

A block that needs what a test machine has not (a cloud bucket, credentials) is preceded
by an HTML comment saying why, ``<!-- no-run: needs … -->``; there are few, and each
must give its reason."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest
from zarr.errors import UnstableSpecificationWarning

import zarrx

ROOT = Path(__file__).resolve().parents[1]
PAGES = [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]
BLOCK = re.compile(r"(?:<!--\s*no-run:(?P<reason>[^>]*)-->\s*\n)?```python\n(?P<code>.*?)```",
                   re.S)
#: The most blocks the docs may exempt, all told.
MOST_EXEMPT = 3


def blocks(page: Path) -> list[tuple[int, str, str | None]]:
    """``(line, code, reason it does not run or None)`` of each ```python block."""
    text = page.read_text(encoding="utf-8")
    return [(text.count("\n", 0, m.start("code")) + 1, m.group("code"),
             None if m.group("reason") is None else m.group("reason").strip())
            for m in BLOCK.finditer(text)]


def test_the_docs_have_examples_and_exempt_few() -> None:
    every = [b for page in PAGES for b in blocks(page)]
    assert len(every) >= 15
    exempt = [b for b in every if b[2] is not None]
    assert len(exempt) <= MOST_EXEMPT
    assert all(reason for _, _, reason in exempt), "a no-run comment must say why"


EXAMPLES = [(page, line, code) for page in PAGES for line, code, reason in blocks(page)
            if reason is None]


def _run(page: Path, line: int, code: str) -> None:
    """One example, in a namespace of its own, as a script a user pasted it into."""
    namespace: dict[str, object] = {"__name__": f"docs_{page.stem}"}
    try:
        with warnings.catch_warnings():
            # zarr-python (writing data for the xarray example) warns that its v3 encoding
            # of fixed-width text is not yet in a specification: its users' business.
            warnings.filterwarnings("ignore", category=UnstableSpecificationWarning)
            exec(compile(code, f"{page.name}:{line}", "exec"), namespace)
    finally:
        zarrx.config.reset()


@pytest.mark.parametrize(("page", "line", "code"), EXAMPLES,
                         ids=[f"{page.name}:{line}" for page, line, _ in EXAMPLES])
def test_each_example_runs_alone(page: Path, line: int, code: str, tmp_path: Path,
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    _run(page, line, code)


@pytest.mark.parametrize("page", [p for p in PAGES if blocks(p)], ids=lambda p: p.name)
def test_a_pages_examples_run_one_after_another(page: Path, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    for line, code, reason in blocks(page):
        if reason is not None:
            compile(code, f"{page.name}:{line}", "exec")  # still valid Python
            continue
        _run(page, line, code)
