"""`zarrx info`, `tree`, `spec` and `validate`, run through main() and once as a process."""

import json
import os
import subprocess

import numpy as np
import pytest

import zarrx
from zarrx.cli.main import build_parser, main
from zarrx.zom import from_json, from_zarr

from .conftest import ZARRX, zarr_python_source

COMMANDS = {
    "demo": "A quick check that zarrx works",
    "info": "how many chunks are initialised",
    "tree": "One line per node",
    "spec": "structure without its data",
    "validate": "Exit 0 when it matches",
    "convert": "run the same command with --resume",
    "rechunk": "at most --max-mem of data is held at once",
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_explains_itself(command, capsys):
    with pytest.raises(SystemExit) as exit_:
        main([command, "--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    assert f"usage: zarrx {command}" in out
    assert COMMANDS[command] in " ".join(out.split())


def test_top_level_help_lists_the_commands(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    for command in COMMANDS:
        assert command in out
    assert build_parser().prog == "zarrx"


def test_info_of_an_array(tmp_path, zarr_format, capsys):
    root = zarr_python_source(tmp_path / "h", zarr_format)
    assert main(["info", str(root / "temperature"), "--json"]) == 0
    facts = json.loads(capsys.readouterr().out)
    assert facts["type"] == "array"
    assert facts["zarr_format"] == zarr_format
    assert facts["shape"] == [20, 30]
    assert facts["chunks"] == [8, 7]
    assert facts["dtype"] == "float64"
    assert facts["fill_value"] != facts["fill_value"]
    # rows 0..9 x cols 0..13 touch chunk rows 0-1 and chunk columns 0-1: 4 of 3*5
    assert facts["chunks_initialised"] == 4
    assert facts["chunks_total"] == 15
    keys = [k for k in zarrx.storage.LocalStore(str(root)).list_prefix("temperature/")
            if not k.endswith((".zarray", ".zattrs", "zarr.json"))]
    assert len(keys) == 4
    assert facts["stored_bytes"] == sum(os.path.getsize(root / k) for k in keys)
    assert facts["data_bytes"] == 4 * 8 * 7 * 8
    assert facts["compression_ratio"] == round(facts["data_bytes"] / facts["stored_bytes"], 3)
    assert facts["attributes"] == {"units": "K"}
    if zarr_format == 2:
        assert facts["compressor"]["id"] in ("blosc", "zstd")
    else:
        assert [c["name"] for c in facts["codecs"]] == ["bytes", "zstd"]
    assert main(["info", str(root / "temperature")]) == 0
    text = capsys.readouterr().out
    assert "Chunks initialised : 4 / 15 (26.7%)" in text
    assert "Shape              : (20, 30)" in text
    assert "Compression ratio  :" in text
    assert "Fill value         : nan" in text


def test_info_of_a_sharded_array_counts_shards(tmp_path, capsys):
    a = zarrx.create_array(str(tmp_path / "s"), shape=(16,), chunks=(2,), shards=(8,),
                           dtype="u2")
    a[:3] = 1
    assert main(["info", str(tmp_path / "s")]) == 0
    text = capsys.readouterr().out
    assert "Shard shape        : (8,)" in text
    assert "Shards initialised : 1 / 2 (50.0%)" in text
    assert "sharding_indexed(" in text


def test_info_of_a_group(tmp_path, zarr_format, capsys):
    root = zarr_python_source(tmp_path / "h", zarr_format)
    assert main(["info", str(root), "--json"]) == 0
    facts = json.loads(capsys.readouterr().out)
    assert facts["type"] == "group"
    assert facts["arrays"] == 2
    assert facts["groups"] == 2
    assert facts["chunks_total"] == 15 + 3 * 2
    # temperature: 4 chunks written; counts: rows 2..8 touch every chunk row, so all 6
    assert facts["chunks_initialised"] == 4 + 6
    assert facts["attributes"] == {"title": "survey", "n": 3}


def test_tree_shows_shapes_and_dtypes(tmp_path, zarr_format, capsys):
    root = zarr_python_source(tmp_path / "h", zarr_format)
    assert main(["tree", str(root)]) == 0
    out = capsys.readouterr().out
    assert "temperature (20, 30) float64" in out
    assert "counts (9, 5) int32" in out
    assert "└── empty" in out or "├── empty" in out
    assert main(["tree", str(root / "temperature")]) == 0
    assert capsys.readouterr().out.strip() == "/temperature (20, 30) float64"  # (as named)


def test_spec_prints_the_zom(tmp_path, zarr_format, capsys):
    root = zarr_python_source(tmp_path / "h", zarr_format)
    assert main(["spec", str(root)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert from_json(doc) == from_zarr(str(root))
    assert doc["members"]["labels"]["attributes"] == {"kind": "mask"}
    out = tmp_path / "spec.json"
    assert main(["spec", str(root), "-o", str(out), "--indent", "0"]) == 0
    assert len(out.read_text().splitlines()) == 1
    other = 5 - zarr_format
    assert main(["spec", str(root), "--zarr-format", str(other)]) == 0
    assert json.loads(capsys.readouterr().out)["zarr_format"] == other


def test_validate_against_its_own_spec_and_an_altered_one(tmp_path, zarr_format, capsys):
    root = zarr_python_source(tmp_path / "h", zarr_format)
    spec_file = tmp_path / "spec.json"
    assert main(["spec", str(root), "-o", str(spec_file)]) == 0
    assert main(["validate", str(root), "--spec", str(spec_file)]) == 0
    assert "matches" in capsys.readouterr().out

    doc = json.loads(spec_file.read_text())
    doc["members"]["labels"]["members"]["counts"]["shape"] = [9, 6]
    doc["members"]["temperature"]["attributes"]["units"] = "C"
    doc["members"]["extra"] = {**doc["members"]["labels"]["members"]["empty"]}
    altered = tmp_path / "altered.json"
    altered.write_text(json.dumps(doc))
    assert main(["validate", str(root), "--spec", str(altered)]) == 1
    out = capsys.readouterr().out
    assert "3 difference(s)" in out
    assert "(stored != spec)" in out
    assert "  /labels/counts: shape (9, 5) != (9, 6)\n" in out
    assert '  /temperature: attributes.units "K" != "C"\n' in out
    assert '  /extra: node (absent) != "group"\n' in out
    assert main(["validate", str(root), "--spec", str(altered), "--ignore", "shape",
                 "--ignore", "attributes.units"]) == 1
    assert "1 difference(s)" in capsys.readouterr().out

    del doc["members"]["extra"]
    doc["members"]["labels"]["members"]["counts"]["shape"] = [9, 5]
    del doc["members"]["temperature"]
    altered.write_text(json.dumps(doc))
    assert main(["validate", str(root), "--spec", str(altered)]) == 1
    assert '/temperature: node "array" != (absent)' in capsys.readouterr().out
    assert main(["validate", str(root), "--spec", str(altered), "--allow-extra"]) == 0


def test_validate_and_info_errors_exit_2(tmp_path, capsys):
    root = zarr_python_source(tmp_path / "h", 3)
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert main(["validate", str(root), "--spec", str(bad)]) == 2
    assert "is not JSON" in capsys.readouterr().err
    bad.write_text(json.dumps({"zarr_format": 3, "node_type": "group", "members": []}))
    assert main(["validate", str(root), "--spec", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "does not match the Zarr object model" in err
    assert "/members: expected object" in err
    assert main(["validate", str(root), "--spec", str(tmp_path / "missing.json")]) == 2
    assert "cannot read the spec file" in capsys.readouterr().err
    assert main(["info", str(tmp_path / "nothing")]) == 2
    assert f"{tmp_path / 'nothing'} does not exist" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_:
        main(["validate", str(root)])  # --spec is required
    assert exit_.value.code == 2


def test_the_installed_command(tmp_path):
    root = zarr_python_source(tmp_path / "h", 2)
    spec = subprocess.run([ZARRX, "spec", str(root), "-o", str(tmp_path / "s.json")],
                          capture_output=True, text=True, check=False)
    assert spec.returncode == 0, spec.stderr
    ok = subprocess.run([ZARRX, "validate", str(root), "--spec", str(tmp_path / "s.json")],
                        capture_output=True, text=True, check=False)
    assert ok.returncode == 0
    assert "matches" in ok.stdout
    doc = json.loads((tmp_path / "s.json").read_text())
    doc["attributes"]["n"] = 4
    (tmp_path / "s.json").write_text(json.dumps(doc))
    bad = subprocess.run([ZARRX, "validate", str(root), "--spec", str(tmp_path / "s.json")],
                         capture_output=True, text=True, check=False)
    assert bad.returncode == 1
    assert "/: attributes.n 3 != 4" in bad.stdout
    converted = subprocess.run(
        [ZARRX, "convert", str(root), str(tmp_path / "out"), "--zarr-format", "3", "--verify"],
        capture_output=True, text=True, check=False)
    assert converted.returncode == 0, converted.stderr
    assert converted.stderr == ""  # not a terminal: no progress bar
    assert "verified" in converted.stdout
    np.testing.assert_array_equal(
        zarrx.open_array(str(tmp_path / "out"), path="labels/counts")[...],
        zarrx.open_array(str(root), path="labels/counts")[...])


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_a_node_inside_a_hierarchy_is_named_as_in_it(tmp_path, zarr_format, capsys,
                                                     monkeypatch):
    """``zarrx info demo.zarr/volume`` says ``Path : /volume``, not ``/``, however the path
    is written (relative, from inside the hierarchy, nested deeper)."""
    root = zarr_python_source(tmp_path / "h", zarr_format)
    assert main(["info", str(root / "temperature"), "--json"]) == 0
    facts = json.loads(capsys.readouterr().out)
    assert (facts["location"], facts["path"]) == (str(root / "temperature"), "/temperature")
    assert main(["info", str(root / "labels" / "counts"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["path"] == "/labels/counts"
    monkeypatch.chdir(root / "labels")
    assert main(["info", "counts"]) == 0
    assert "Path               : /labels/counts" in capsys.readouterr().out.splitlines()
    assert main(["info", "."]) == 0
    assert "Path               : /labels" in capsys.readouterr().out.splitlines()
    assert main(["tree", "."]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "/labels"
    spec = from_zarr(zarrx.open(str(root / "labels"), mode="r"))
    assert main(["spec", "."]) == 0  # (the ZOM of the node, as before)
    assert from_json(json.loads(capsys.readouterr().out)) == spec


def test_a_hierarchy_in_a_plain_directory_is_its_own_root(tmp_path, capsys):
    """Only directories that are Zarr groups count as the hierarchy above a node."""
    zarrx.create_array(str(tmp_path / "plain" / "a.zarr"), shape=(2,), dtype="u1")
    assert main(["info", str(tmp_path / "plain" / "a.zarr"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["path"] == "/"


def test_storage_options_are_a_json_object_for_urls(tmp_path, capsys):
    root = zarr_python_source(tmp_path / "h", 3)
    for argv, message in [
        (["info", str(root), "--storage-options", "{anon"], "--storage-options is not JSON"),
        (["tree", str(root), "--storage-options", "[1]"], "must be a JSON object"),
        (["spec", str(root), "--storage-options", '{"anon": true}'], "is a local path"),
        (["validate", str(root), "--spec", "x.json", "--storage-options", '{"a": 1}'],
         "is a local path"),
        (["convert", str(root), str(tmp_path / "out"), "--zarr-format", "2",
          "--dst-storage-options", '{"a": 1}'], "is a local path"),
    ]:
        assert main(argv) == 2, argv
        assert message in capsys.readouterr().err, argv
    assert main(["info", str(root), "--storage-options", "{}"]) == 0  # (empty: nothing to pass)
    assert not (tmp_path / "out").exists()


def test_an_existing_node_is_named_with_its_article(tmp_path):
    zarrx.create_array(str(tmp_path / "a"), shape=(2,), dtype="u1")
    with pytest.raises(zarrx.errors.NodeExistsError, match=r"^an array already exists at '/'"):
        zarrx.create_array(str(tmp_path / "a"), shape=(2,), dtype="u1")
    zarrx.create_group(str(tmp_path / "g"))
    with pytest.raises(zarrx.errors.NodeExistsError, match=r"^a group already exists at '/'"):
        zarrx.create_array(str(tmp_path / "g"), shape=(2,), dtype="u1")


@pytest.mark.parametrize(("zarr_format", "key"), [(3, "zarr.json"), (2, ".zgroup")])
def test_invalid_json_names_the_store_and_the_key(tmp_path, zarr_format, key, capsys):
    zarrx.create_group(str(tmp_path / "g"), zarr_format=zarr_format)
    (tmp_path / "g" / key).write_text("{not json")
    with pytest.raises(zarrx.errors.MetadataError) as e:
        zarrx.open(str(tmp_path / "g"), mode="r")
    message = str(e.value)
    assert message.startswith(f"{key}: invalid JSON (")
    assert message.endswith(f"(store: LocalStore('{tmp_path / 'g'}', read_only=True))")
    assert main(["info", str(tmp_path / "g")]) == 2
    assert f"{key}: invalid JSON" in capsys.readouterr().err
