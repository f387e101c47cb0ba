"""`zarrx convert`: whole hierarchies between formats, read back by zarr-python and
tensorstore bit for bit; progress, resumption after an interruption, verification, and
clear refusals."""

import json
import re
import signal
import subprocess
import sys
import threading

import numpy as np
import pytest
import tensorstore as ts
import zarr

import zarrx
from zarrx.cli import convert as convert_module
from zarrx.cli.main import main
from zarrx.zom import from_zarr

from .conftest import ZARRX, chunk_files, zarr_python_source

ARRAYS = ("temperature", "labels/counts")


def bits(array) -> bytes:
    array = np.asarray(array)
    return np.ascontiguousarray(array.astype(array.dtype.newbyteorder("="))).tobytes()


def zarr_read(root, name, zarr_format):
    return zarr.open_array(str(root / name), mode="r", zarr_format=zarr_format)[...]


def ts_read(root, name, driver):
    spec = {"driver": driver, "kvstore": {"driver": "file", "path": str(root / name)}}
    return ts.open(spec).result().read().result()


def test_v2_to_v3_reads_bit_exact_in_zarr_python_and_tensorstore(tmp_path, capsys):
    src = zarr_python_source(tmp_path / "v2", 2)
    dst = tmp_path / "v3"
    assert main(["convert", str(src), str(dst), "--zarr-format", "3", "--progress",
                 "--verify"]) == 0
    captured = capsys.readouterr()
    assert "copying 10/10 chunks 100.0%" in captured.err
    assert "verifying 21/21 chunks" in captured.err
    assert "MB/s" in captured.err
    assert "\r" in captured.err
    assert "10 chunks copied" in captured.out
    assert "verified: 21 chunks" in captured.out
    for name in ARRAYS:
        expected = zarr_read(src, name, 2)
        assert bits(zarr_read(dst, name, 3)) == bits(expected), name
        assert bits(ts_read(dst, name, "zarr3")) == bits(expected), name
    g = zarr.open_group(str(dst), mode="r", zarr_format=3)
    assert dict(g.attrs) == {"title": "survey", "n": 3}
    assert dict(g["labels"].attrs) == {"kind": "mask"}
    assert "empty" in g["labels"]
    assert dict(g["temperature"].attrs) == {"units": "K"}
    assert from_zarr(str(dst)) == from_zarr(str(src)).to_v3()
    # uninitialised chunks stay uninitialised; the state file is gone
    assert len([f for f in chunk_files(dst) if f != ".zarrx-convert.json"]) == 10
    assert not (dst / ".zarrx-convert.json").exists()


def test_v3_to_v2_reads_bit_exact_in_zarr_python_and_tensorstore(tmp_path):
    src = zarr_python_source(tmp_path / "v3", 3)
    dst = tmp_path / "v2"
    assert main(["convert", str(src), str(dst), "--zarr-format", "2", "--verify",
                 "--threads", "3"]) == 0
    for name in ARRAYS:
        expected = zarr_read(src, name, 3)
        assert bits(zarr_read(dst, name, 2)) == bits(expected), name
        assert bits(ts_read(dst, name, "zarr")) == bits(expected), name
    assert json.loads((dst / ".zattrs").read_text()) == {"title": "survey", "n": 3}
    assert from_zarr(str(dst)).zarr_format == 2
    assert len(chunk_files(dst)) == 10


def test_draft_to_v3_and_v3_to_draft(tmp_path):
    g = zarrx.create_group(str(tmp_path / "draft"), zarr_format="3-draft", attributes={"k": 1})
    a = g.create_array("x/y", shape=(10, 10), chunks=(3, 4), dtype=">u2", fill_value=7,
                       order="F")
    a[:6] = np.arange(60).reshape(6, 10)
    s = g.create_array("sharded", shape=(8, 8), chunks=(2, 2), shards=(4, 4), dtype="<f8")
    s[:4, :5] = 2.5
    assert main(["convert", str(tmp_path / "draft"), str(tmp_path / "v3"),
                 "--zarr-format", "3", "--verify"]) == 0
    for name in ("x/y", "sharded"):
        expected = zarrx.open_array(str(tmp_path / "draft"), path=name)[...]
        assert bits(zarr_read(tmp_path / "v3", name, 3)) == bits(expected)
        assert bits(ts_read(tmp_path / "v3", name, "zarr3")) == bits(expected)
    assert zarr.open_group(str(tmp_path / "v3"), mode="r").attrs["k"] == 1
    assert main(["convert", str(tmp_path / "v3"), str(tmp_path / "back"),
                 "--zarr-format", "3-draft", "--verify"]) == 0
    back = zarrx.open_group(str(tmp_path / "back"))
    assert back.zarr_format == "3-draft"
    assert back.attrs["k"] == 1
    for name in ("x/y", "sharded"):
        assert bits(back[name][...]) == bits(
            zarrx.open_array(str(tmp_path / "draft"), path=name)[...])


def test_a_single_array(tmp_path):
    a = zarrx.create_array(str(tmp_path / "a"), shape=(5, 5), chunks=(2, 2), dtype="i8",
                           attributes={"x": 1})
    a[1:3, 1:3] = 9
    assert main(["convert", str(tmp_path / "a"), str(tmp_path / "b"), "--zarr-format", "2"]) == 0
    b = zarrx.open_array(str(tmp_path / "b"))
    assert b.zarr_format == 2
    assert b.attrs["x"] == 1
    np.testing.assert_array_equal(b[...], a[...])


def test_an_interrupted_conversion_resumes(tmp_path, monkeypatch, capsys):
    src = zarr_python_source(tmp_path / "v2", 2)
    dst = tmp_path / "v3"
    real = convert_module._copy_region
    lock = threading.Lock()
    copied = []

    def failing(job, coords):
        with lock:
            if len(copied) >= 4:
                raise RuntimeError("disk on fire")
            copied.append((job.path, coords))
        return real(job, coords)

    monkeypatch.setattr(convert_module, "_copy_region", failing)
    with pytest.raises(RuntimeError, match="disk on fire"):
        main(["convert", str(src), str(dst), "--zarr-format", "3", "--threads", "2"])
    err = capsys.readouterr().err
    assert "conversion stopped after 4/10 chunks" in err
    assert "--resume" in err
    state = json.loads((dst / ".zarrx-convert.json").read_text())
    assert state["phase"] == "copying"
    assert state["zarr_format"] == 3
    done = {path: convert_module.from_ranges(r) for path, r in state["arrays"].items()}
    assert sum(len(n) for n in done.values()) == 4

    # without --resume the destination is refused, and left alone
    monkeypatch.setattr(convert_module, "_copy_region", real)
    assert main(["convert", str(src), str(dst), "--zarr-format", "3"]) == 2
    assert "holds an interrupted conversion (4 chunks copied)" in capsys.readouterr().err
    # nor can it be resumed as another format
    assert main(["convert", str(src), str(dst), "--zarr-format", "2", "--resume"]) == 2
    assert "cannot be resumed" in capsys.readouterr().err

    second = []

    def counting(job, coords):
        with lock:
            second.append((job.path, coords))
        return real(job, coords)

    monkeypatch.setattr(convert_module, "_copy_region", counting)
    assert main(["convert", str(src), str(dst), "--zarr-format", "3", "--resume", "--verify",
                 "--progress"]) == 0
    captured = capsys.readouterr()
    assert len(second) == 6
    assert not set(second) & set(copied)
    assert "copying 10/10 chunks" in captured.err
    assert "6 chunks copied, 4 done before" in captured.out
    assert not (dst / ".zarrx-convert.json").exists()
    for name in ARRAYS:
        assert bits(zarr_read(dst, name, 3)) == bits(zarr_read(src, name, 2))
        assert bits(ts_read(dst, name, "zarr3")) == bits(zarr_read(src, name, 2))


def test_verify_finds_a_bad_chunk_and_resume_repairs_it(tmp_path, monkeypatch, capsys):
    src = zarr_python_source(tmp_path / "v3", 3)
    dst = tmp_path / "v2"
    real = convert_module._copy_region

    def corrupting(job, coords):
        if job.path == "temperature" and coords == (1, 1):
            region = job.region(coords)
            job.dest[region] = job.source[region] + 1
            return 0
        return real(job, coords)

    monkeypatch.setattr(convert_module, "_copy_region", corrupting)
    assert main(["convert", str(src), str(dst), "--zarr-format", "2", "--verify"]) == 1
    err = capsys.readouterr().err
    assert "verification failed" in err
    assert "/temperature: chunk (1, 1) differs" in err
    monkeypatch.setattr(convert_module, "_copy_region", real)
    assert main(["convert", str(src), str(dst), "--zarr-format", "2", "--resume",
                 "--verify"]) == 0
    assert "1 chunks copied, 9 done before" in capsys.readouterr().out
    assert bits(zarr_read(dst, "temperature", 2)) == bits(zarr_read(src, "temperature", 3))


def test_progress_only_on_request_when_not_a_terminal(tmp_path, capsys):
    src = zarr_python_source(tmp_path / "v2", 2)
    assert main(["convert", str(src), str(tmp_path / "a"), "--zarr-format", "3"]) == 0
    assert capsys.readouterr().err == ""
    assert main(["convert", str(src), str(tmp_path / "b"), "--zarr-format", "3",
                 "--no-progress"]) == 0
    assert capsys.readouterr().err == ""


def test_destinations_are_protected(tmp_path, capsys):
    src = zarr_python_source(tmp_path / "v2", 2)
    dst = tmp_path / "out"
    assert main(["convert", str(src), str(dst), "--zarr-format", "3"]) == 0
    capsys.readouterr()
    assert main(["convert", str(src), str(dst), "--zarr-format", "3"]) == 2
    assert "exists and is not empty; pass --overwrite" in capsys.readouterr().err
    assert main(["convert", str(src), str(dst), "--zarr-format", "3", "--resume"]) == 2
    assert "nothing to resume" in capsys.readouterr().err
    assert main(["convert", str(src), str(dst), "--zarr-format", "2", "--overwrite"]) == 0
    assert from_zarr(str(dst)).zarr_format == 2
    assert not list(dst.glob("**/zarr.json"))  # the v3 documents were replaced

    precious = tmp_path / "home"
    precious.mkdir()
    (precious / "thesis.txt").write_text("years of work")
    assert main(["convert", str(src), str(precious), "--zarr-format", "3", "--overwrite"]) == 2
    assert "holds no Zarr hierarchy; refusing to delete it" in capsys.readouterr().err
    assert (precious / "thesis.txt").read_text() == "years of work"

    assert main(["convert", str(src), str(src), "--zarr-format", "3"]) == 2
    assert "overlap" in capsys.readouterr().err
    assert main(["convert", str(src), str(src / "inside"), "--zarr-format", "3"]) == 2
    assert "overlap" in capsys.readouterr().err
    assert not (src / "inside").exists()
    assert main(["convert", str(src), str(tmp_path / "x"), "--zarr-format", "3",
                 "--overwrite", "--resume"]) == 2
    assert main(["convert", str(tmp_path / "missing"), str(tmp_path / "y"),
                 "--zarr-format", "3"]) == 2
    assert f"the source {tmp_path / 'missing'} does not exist" in capsys.readouterr().err
    assert main(["convert", str(src), str(tmp_path / "z"), "--zarr-format", "3",
                 "--threads", "0"]) == 2
    assert "--threads must be a positive integer" in capsys.readouterr().err
    # --resume into an empty destination simply starts
    assert main(["convert", str(src), str(tmp_path / "fresh"), "--zarr-format", "3",
                 "--resume"]) == 0


def test_unsupported_conversions_are_refused_before_writing(tmp_path, capsys):
    sharded = zarrx.create_group(str(tmp_path / "s"))
    sharded.create_array("a", shape=(8,), chunks=(2,), shards=(4,), dtype="i2")[...] = 1
    assert main(["convert", str(tmp_path / "s"), str(tmp_path / "s2"),
                 "--zarr-format", "2"]) == 2
    assert "/a: Zarr v2 has no sharding" in capsys.readouterr().err
    assert not (tmp_path / "s2").exists()

    subarray = zarrx.create_array(str(tmp_path / "rec"), shape=(3,), zarr_format=2,
                                  dtype=[("a", "<i4", (2,)), ("b", "<f8")])
    assert subarray.shape == (3,)
    assert main(["convert", str(tmp_path / "rec"), str(tmp_path / "rec3"),
                 "--zarr-format", "3"]) == 2
    assert "subarray" in capsys.readouterr().err  # v3 struct fields have no shape
    assert not (tmp_path / "rec3").exists()

    text = zarrx.create_array(str(tmp_path / "t"), shape=(2,), dtype=str)
    text[...] = ["a", "b"]
    assert main(["convert", str(tmp_path / "t"), str(tmp_path / "t2"),
                 "--zarr-format", "3-draft"]) == 2
    assert "draft has no variable-length" in capsys.readouterr().err


def test_strings_and_fill_values_survive(tmp_path):
    g = zarr.create_group(store=str(tmp_path / "v2"), zarr_format=2)
    t = g.create_array("text", shape=(5,), chunks=(2,), dtype=str)
    t[:3] = ["\u00e9t\u00e9", "", "long string"]
    f = g.create_array("f", shape=(4,), chunks=(2,), dtype="<f4", fill_value=np.nan)
    f[0] = 1
    assert main(["convert", str(tmp_path / "v2"), str(tmp_path / "v3"), "--zarr-format", "3",
                 "--verify"]) == 0
    out = zarr.open_group(str(tmp_path / "v3"), mode="r")
    assert list(out["text"][...]) == ["\u00e9t\u00e9", "", "long string", "", ""]
    assert bits(out["f"][...]) == bits(g["f"][...])
    assert np.isnan(out["f"].fill_value)


def test_ctrl_c_stops_cleanly_and_resumes(tmp_path, monkeypatch, capsys):
    src = zarr_python_source(tmp_path / "v3", 3)
    dst = tmp_path / "v2"
    real = convert_module._copy_region
    calls = []

    def interrupted(job, coords):
        calls.append(coords)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(job, coords)

    monkeypatch.setattr(convert_module, "_copy_region", interrupted)
    assert main(["convert", str(src), str(dst), "--zarr-format", "2", "--threads", "1"]) == 130
    err = capsys.readouterr().err
    assert "zarrx: interrupted" in err
    # the two chunks before the interrupt, and any that was already running, are recorded
    state = json.loads((dst / ".zarrx-convert.json").read_text())
    done = sum(len(convert_module.from_ranges(r)) for r in state["arrays"].values())
    assert 2 <= done < 10
    assert f"conversion stopped after {done}/10 chunks" in err
    monkeypatch.setattr(convert_module, "_copy_region", real)
    assert main(["convert", str(src), str(dst), "--zarr-format", "2", "--resume"]) == 0
    assert f"{10 - done} chunks copied, {done} done before" in capsys.readouterr().out
    for name in ARRAYS:
        assert bits(zarr_read(dst, name, 2)) == bits(zarr_read(src, name, 3))


def test_consolidated_in_consolidated_out(tmp_path):
    src = zarr_python_source(tmp_path / "v2", 2)
    zarrx.consolidate_metadata(str(src))
    assert main(["convert", str(src), str(tmp_path / "v3"), "--zarr-format", "3"]) == 0
    root = json.loads((tmp_path / "v3" / "zarr.json").read_text())
    assert sorted(root["consolidated_metadata"]["metadata"]) == [
        "labels", "labels/counts", "labels/empty", "temperature"]
    assert zarrx.open_group(str(tmp_path / "v3")).consolidated is not None


#: `zarrx convert` in a process that announces on stdout when it has copied 100 chunks
#: (saving its state after every chunk) and then stops, for its parent to kill it there.
STOPPING_CONVERT = """
import sys, threading
from zarrx.cli import convert
from zarrx.cli.main import main

convert.SAVE_INTERVAL = 0
copy, copied, lock = convert._copy_region, [0], threading.Lock()

def copy_then_stop(job, coords):
    with lock:
        copied[0] += 1
        n = copied[0]
    if n > 100:
        print("stopped", flush=True)
        threading.Event().wait()  # until killed
    return copy(job, coords)

convert._copy_region = copy_then_stop
sys.exit(main(sys.argv[1:]))
"""


def test_a_killed_process_resumes(tmp_path):
    """The real thing: SIGKILL a converting process in the middle (once it has copied 100
    chunks, by its own signal, not by a clock), then finish with the installed command's
    --resume."""
    src = tmp_path / "many"
    a = zarrx.create_array(str(src), shape=(3000, 16), chunks=(1, 16), dtype="i4",
                           zarr_format=2)
    a[...] = np.arange(48000).reshape(3000, 16)
    dst = tmp_path / "out"
    state_file = dst / ".zarrx-convert.json"
    args = ["convert", str(src), str(dst), "--zarr-format", "3", "--threads", "1"]
    process = subprocess.Popen([sys.executable, "-c", STOPPING_CONVERT, *args],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = process.stdout.readline()
    finally:
        process.kill()
        _, err = process.communicate()
    assert line == "stopped\n", err
    assert process.returncode == -signal.SIGKILL
    state = json.loads(state_file.read_text())
    assert state["phase"] == "copying"
    done = sum(len(convert_module.from_ranges(r)) for r in state["arrays"].values())
    assert 97 <= done <= 100  # saved after each chunk; at most 4 were in flight
    argv = [ZARRX, *args]
    resumed = subprocess.run([*argv, "--resume"], capture_output=True, text=True, check=False)
    assert resumed.returncode == 0, resumed.stderr
    copied = int(re.search(r"(\d+) chunks copied", resumed.stdout).group(1))
    before = int(re.search(r"(\d+) done before", resumed.stdout).group(1))
    assert before >= done
    assert copied + before == 3000
    assert not state_file.exists()
    assert bits(zarr_read(dst, "", 3)) == bits(a[...])


@pytest.mark.parametrize("existed", [False, True], ids=["new", "empty directory"])
def test_a_corrupt_source_leaves_no_partial_copy(tmp_path, capsys, existed):
    """A chunk the source cannot decode stops the copy for good: no --resume advice (a
    re-run meets the same chunk), and the partial destination is removed — or emptied,
    when it was an empty directory before — as the message says."""
    src = zarr_python_source(tmp_path / "v3", 3)
    bad = sorted(p for p in (src / "temperature").rglob("*") if p.is_file()
                 and p.name != "zarr.json")[-1]
    bad.write_bytes(b"not zstd")
    dst = tmp_path / "out"
    if existed:
        dst.mkdir()
    assert main(["convert", str(src), str(dst), "--zarr-format", "2", "--threads", "1"]) == 2
    err = capsys.readouterr().err
    assert "--resume" not in err
    assert f"the partial destination {dst} was {'emptied' if existed else 'removed'}" in err
    assert "could not be decoded" in err
    assert "temperature" in err
    assert dst.exists() == existed
    if existed:
        assert list(dst.iterdir()) == []
    bad.unlink()  # (a missing chunk is the fill value: the same command now succeeds)
    assert main(["convert", str(src), str(dst), "--zarr-format", "2"]) == 0
