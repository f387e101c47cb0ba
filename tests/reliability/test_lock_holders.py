"""The lock-holder rule: a thread that holds a key's lock never waits for a pool, so
updates whose work uses the pools, whole writes handed to the I/O threads and writers of
parts of shared shards all finish, whatever the pool sizes (``holders.py`` runs each
case in a process of its own; a case that never finishes fails, it does not hang)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).with_name("holders.py")
#: A guard against a hang only (a case takes a few seconds), never a deadline.
HANG_GUARD = 300


@pytest.mark.parametrize("threads", [1, 2, 8])
@pytest.mark.parametrize("kind", ["memory", "zip", "local"])
@pytest.mark.parametrize("job", ["updates", "shards"])
def test_lock_holders_never_wait_for_a_pool(job: str, kind: str, threads: int,
                                            tmp_path: Path) -> None:
    try:
        done = subprocess.run(
            [sys.executable, str(SCRIPT), job, kind, str(threads), str(tmp_path)],
            capture_output=True, text=True, timeout=HANG_GUARD, check=False)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{job} on a {kind} store with {threads} threads never finished")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["ok"], done.stdout
