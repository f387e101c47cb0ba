"""`zarrx rechunk`: round trips through the installed command (the data is the source's, the
layout the one asked for, progress on stderr), and bad options refused in one line with
exit status 2 before anything is written."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import zarr

import zarrx
from zarrx.cli.main import main

from .conftest import one_error_line, zarr_python_source, zarrx_command

SHAPE = (24, 30, 36)


def planes(root: Path) -> np.ndarray:
    """A v2 array of whole planes (1, 30, 36), blosc-compressed, written by zarr-python."""
    data = np.random.default_rng(7).standard_normal(SHAPE).astype("float32")
    z = zarr.create_array(str(root), shape=SHAPE, dtype="float32", chunks=(1, 30, 36),
                          zarr_format=2, fill_value=0)
    z[...] = data
    return data


def test_planes_into_columns_with_progress(tmp_path: Path) -> None:
    data = planes(tmp_path / "src.zarr")
    dst = tmp_path / "dst.zarr"
    run = zarrx_command("rechunk", str(tmp_path / "src.zarr"), str(dst), "--chunks", "24,5,6",
                        "--max-mem", "64KiB", "--progress", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "100.0%" in run.stderr
    assert "MB/s" in run.stderr
    assert "Traceback" not in run.stderr
    assert "rechunked" in run.stdout
    out = zarrx.open_array(str(dst), mode="r")
    assert out.chunks == (24, 5, 6)
    assert out.metadata.zarr_format == 2  # the source's
    np.testing.assert_array_equal(out[...], data)
    np.testing.assert_array_equal(zarr.open_array(str(dst), mode="r")[...], data)


def test_v2_into_sharded_v3_with_zstd(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = planes(tmp_path / "src.zarr")
    dst = tmp_path / "dst.zarr"
    assert main(["rechunk", str(tmp_path / "src.zarr"), str(dst), "--chunks", "6,10,12",
                 "--shards", "12,30,36", "--compressor", "zstd:3", "--zarr-format", "3",
                 "--threads", "2", "--no-progress"]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    assert "shards (12, 30, 36)" in captured.out
    z = zarr.open_array(str(dst), mode="r")
    assert z.metadata.zarr_format == 3
    assert (z.chunks, z.shards) == ((6, 10, 12), (12, 30, 36))
    codecs = json.dumps(json.loads((dst / "zarr.json").read_text())["codecs"])
    assert '"zstd"' in codecs
    np.testing.assert_array_equal(z[...], data)
    np.testing.assert_array_equal(zarrx.open_array(str(dst), mode="r")[...], data)


def test_overwrite_replaces_the_destination(tmp_path: Path) -> None:
    data = planes(tmp_path / "src.zarr")
    dst = tmp_path / "dst.zarr"
    zarrx.create_array(str(dst), shape=(3,), dtype="int8")
    assert main(["rechunk", str(tmp_path / "src.zarr"), str(dst), "--chunks", "8,8,8",
                 "--overwrite"]) == 0
    out = zarrx.open_array(str(dst), mode="r")
    assert out.chunks == (8, 8, 8)
    np.testing.assert_array_equal(out[...], data)


def test_arrays_inside_groups(tmp_path: Path) -> None:
    src = zarr_python_source(tmp_path / "src", 3)
    dst = tmp_path / "dst.zarr"
    zarrx.create_group(str(dst))
    assert main(["rechunk", str(src), str(dst), "--src-path", "temperature", "--dst-path",
                 "t/by_row", "--chunks", "1,-1", "--no-progress"]) == 0
    out = zarr.open_array(str(dst / "t" / "by_row"), mode="r")
    assert out.chunks == (1, 30)
    expected = zarr.open_array(str(src / "temperature"), mode="r")[...]
    np.testing.assert_array_equal(out[...], expected)  # NaN where never written, as there
    assert dict(out.attrs) == {"units": "K"}


class Stop(Exception):
    pass


def test_an_interrupted_rechunk_is_resumed(tmp_path: Path) -> None:
    data = planes(tmp_path / "src.zarr")
    src, dst = str(tmp_path / "src.zarr"), tmp_path / "dst.zarr"
    seen = []

    def stop_after_three(progress: object) -> None:
        seen.append(progress)
        if len(seen) == 4:  # the first call is the start
            raise Stop

    with pytest.raises(Stop):
        zarrx.rechunk(src, str(dst), chunks=(24, 5, 6), max_mem="64KiB",
                      progress=stop_after_three)
    options = ("--chunks", "24,5,6", "--max-mem", "64KiB")
    line = one_error_line(zarrx_command("rechunk", src, str(dst), *options, cwd=tmp_path))
    assert "--resume" in line
    run = zarrx_command("rechunk", src, str(dst), *options, "--resume", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    out = zarrx.open_array(str(dst), mode="r")
    assert out.chunks == (24, 5, 6)
    np.testing.assert_array_equal(out[...], data)


BAD = {
    "malformed chunks": (["--chunks", "8,x,8"], "chunks"),
    "zero chunks": (["--chunks", "8,0,8"], "chunks"),
    "wrong rank": (["--chunks", "8,8"], "8"),
    "wrong rank of shards": (["--chunks", "8,8,8", "--shards", "16,16"], "16"),
    "unknown compressor": (["--chunks", "8,8,8", "--compressor", "nosuchcodec"],
                           "unknown codec 'nosuchcodec'"),
    "malformed compressor": (["--chunks", "8,8,8", "--compressor", "nosuchcodec:3"],
                             "nosuchcodec"),
    "shards in v2": (["--chunks", "8,8,8", "--shards", "16,16,16"], "no sharding"),
    "shards not a multiple": (["--chunks", "8,8,8", "--shards", "12,12,12", "--zarr-format",
                               "3"], "multiple"),
    "bad memory size": (["--chunks", "8,8,8", "--max-mem", "12 parsecs"], "12 parsecs"),
    "zero memory": (["--chunks", "8,8,8", "--max-mem", "0"], "max_mem"),
    "unknown format": (["--chunks", "8,8,8", "--zarr-format", "7"], "--zarr-format"),
    "threads": (["--chunks", "8,8,8", "--threads", "none"], "--threads"),
    "overwrite and resume": (["--chunks", "8,8,8", "--overwrite", "--resume"], "exclude"),
    "no chunks": ([], "--chunks"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_bad_option_is_one_line_and_writes_nothing(tmp_path: Path, case: str) -> None:
    planes(tmp_path / "src.zarr")
    args, named = BAD[case]
    dst = tmp_path / "dst.zarr"
    line = one_error_line(zarrx_command("rechunk", str(tmp_path / "src.zarr"), str(dst), *args,
                                        cwd=tmp_path))
    assert named in line
    assert not dst.exists()


def test_an_existing_destination_is_left_as_it_was(tmp_path: Path) -> None:
    planes(tmp_path / "src.zarr")
    dst = tmp_path / "dst.zarr"
    zarrx.create_array(str(dst), shape=(3,), dtype="int8")[...] = 5
    before = {p: p.read_bytes() for p in dst.rglob("*") if p.is_file()}
    line = one_error_line(zarrx_command("rechunk", str(tmp_path / "src.zarr"), str(dst),
                                        "--chunks", "8,8,8", cwd=tmp_path))
    assert "--overwrite" in line
    assert {p: p.read_bytes() for p in dst.rglob("*") if p.is_file()} == before


def test_a_group_without_src_path_is_one_line(tmp_path: Path) -> None:
    src = zarr_python_source(tmp_path / "src", 2)
    for extra, named in (((), "--src-path"), (("--src-path", "nothing"), "'nothing'")):
        line = one_error_line(zarrx_command("rechunk", str(src), str(tmp_path / "dst.zarr"),
                                            "--chunks", "8,8", *extra, cwd=tmp_path))
        assert named in line
        assert not (tmp_path / "dst.zarr").exists()


def test_a_missing_source_is_one_line(tmp_path: Path) -> None:
    line = one_error_line(zarrx_command("rechunk", str(tmp_path / "none.zarr"),
                                        str(tmp_path / "dst.zarr"), "--chunks", "8",
                                        cwd=tmp_path))
    assert "none.zarr" in line
    assert not (tmp_path / "dst.zarr").exists()
