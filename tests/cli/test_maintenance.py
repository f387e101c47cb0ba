"""`zarrx plugins` and `zarrx fsck`."""

import os

import zarrx
from zarrx.cli.main import main
from zarrx.stores.keys import TEMP_PREFIX


def test_plugins_lists_entry_points_without_importing(capsys):
    assert main(["plugins"]) == 0
    out = capsys.readouterr().out
    assert "zarrx.codecs:" in out
    assert "https://purl.org/zarr/spec/codec/gzip/1.0" in out
    assert "sharding_indexed" in out
    assert "zarrx.data_types:" in out
    assert "numpy.datetime64" in out


def test_fsck_removes_temporary_files_only(tmp_path, capsys):
    root = tmp_path / "s.zarr"
    a = zarrx.create_array(str(root), shape=(4,), dtype="u1", chunks=(2,))
    a[...] = [1, 2, 3, 4]
    a[1] = 9  # a partial write: takes a lock file
    leftover = root / "c" / (TEMP_PREFIX + "deadbeef")
    leftover.write_bytes(b"half a chunk")
    assert main(["fsck", str(root)]) == 0
    out = capsys.readouterr().out
    assert str(leftover) in out
    assert not leftover.exists()
    assert sorted(os.listdir(root / "c")) == ["0", "1"]
    assert zarrx.open_array(str(root))[...].tolist() == [1, 9, 3, 4]
