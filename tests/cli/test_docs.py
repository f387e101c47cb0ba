"""docs/cli.md runs: every ``$ zarrx …`` line of its console blocks, in order, in an empty
directory, exits as the page says (0 unless marked ``# exit N``) and prints the lines shown
below it."""

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from zarrx.cli.main import main

DOC = Path(__file__).parents[2] / "docs" / "cli.md"


def _steps() -> list[tuple[str, int, list[str]]]:
    steps: list[tuple[str, int, list[str]]] = []
    for block in re.findall(r"```console\n(.*?)```", DOC.read_text(), re.S):
        for line in block.splitlines():
            if line.startswith("$ "):
                command, _, comment = line[2:].partition("  # ")
                match = re.fullmatch(r"exit (\d+)", comment.strip())
                steps.append((command, int(match.group(1)) if match else 0, []))
            elif steps and line.strip():
                steps[-1][2].append(line)
    return steps


def test_the_examples_run_as_shown(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    steps = _steps()
    assert sum(command.startswith("zarrx ") for command, _, _ in steps) >= 10
    for command, status, shown in steps:
        argv = shlex.split(command)
        if argv[0] == "python":
            done = subprocess.run([sys.executable, *argv[1:]], check=False)
            assert done.returncode == status, command
            continue
        assert argv[0] == "zarrx"
        try:
            code = main(argv[1:])
        except SystemExit as e:  # --help
            code = e.code
        out = capsys.readouterr().out
        assert code == status, (command, out)
        lines = out.splitlines()
        for expected in shown:
            assert expected in lines, (command, expected, out)
    assert not (tmp_path / "demo-v3.zarr" / ".zarrx-convert.json").exists()


def test_the_page_documents_every_command():
    text = DOC.read_text()
    for command in ("demo", "info", "tree", "spec", "validate", "convert", "rechunk"):
        assert f"`zarrx {command}" in text
    with pytest.raises(SystemExit):
        main(["--help"])
