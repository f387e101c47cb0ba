"""The example plugins in plugins/, installed for real into a virtual environment of their
own (so this environment stays "zarrx alone"), and the registry's promises about them."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import zarrx
from zarrx import registry
from zarrx.errors import UnknownCodecError, UnknownExtensionError

ROOT = Path(__file__).resolve().parents[2]
PLUGINS = ["zarrx-offset", "zarrx-array-statistics", "zarrx-xor"]


@pytest.fixture(scope="session")
def plugin_env(tmp_path_factory):
    """An environment for subprocesses: this one plus the plugins, installed with pip into
    a directory of their own that only the subprocesses put on their path."""
    target = tmp_path_factory.mktemp("plugins")
    result = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps",
         "--disable-pip-version-check", "--target", str(target),
         *(str(ROOT / "plugins" / plugin) for plugin in PLUGINS)],
        capture_output=True, text=True,
    )
    assert result.returncode == 0, result.stderr
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(target), str(ROOT)])}


def _run(env, *args):
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, env=env, cwd=ROOT
    )


def _offset_array(path: Path) -> np.ndarray:
    data = np.arange(30, dtype="i2").reshape(5, 6)
    zarrx.create_array(str(path), shape=(5, 6), dtype="i2", chunks=(2, 2))[...] = data
    doc = json.loads((path / "zarr.json").read_text())
    doc["extensions"] = [{"name": "example.offset", "configuration": {"offset": [1, 2]}}]
    (path / "zarr.json").write_text(json.dumps(doc))
    return data


def test_zarrx_alone_refuses_the_offset_array(tmp_path):
    _offset_array(tmp_path / "o.zarr")
    with pytest.raises(UnknownExtensionError) as info:
        zarrx.open(str(tmp_path / "o.zarr"))
    message = str(info.value)
    assert "example.offset" in message
    assert "zarrx.extensions" in message
    assert "zarr.json" in message


def test_after_install_the_same_array_opens_with_the_offset(tmp_path, plugin_env):
    data = _offset_array(tmp_path / "o.zarr")
    path = str(tmp_path / "o.zarr")
    script = (
        f"import zarrx, json; a = zarrx.open({path!r}); "
        "print(json.dumps({'shape': a.shape, 'values': a[...].tolist()}))"
    )
    result = _run(plugin_env, "-c", script)
    assert result.returncode == 0, result.stderr
    got = json.loads(result.stdout)
    assert tuple(got["shape"]) == (4, 4)
    assert got["values"] == data[1:, 2:].tolist()


def test_import_loads_no_plugin(plugin_env):
    script = (
        "import sys, zarrx, zarrx.registry as r; "
        "print([m for m in sys.modules if m.startswith('zarrx_')], "
        "r.extensions._entry_points is None, r.codecs._entry_points is None)"
    )
    result = _run(plugin_env, "-c", script)
    assert result.stdout.strip() == "[] True True", result.stderr


@pytest.mark.parametrize("plugin", PLUGINS)
def test_plugin_test_suites_pass_when_installed(plugin, plugin_env):
    result = _run(
        plugin_env,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        str(ROOT / "plugins" / plugin / "tests"),
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert " passed" in result.stdout


def test_the_codec_example_of_the_docs_is_the_plugin_s_source():
    """docs/plugins.md shows plugins/zarrx-xor as it is (installed and run above)."""
    doc = (ROOT / "docs" / "plugins.md").read_text()
    source = (ROOT / "plugins" / "zarrx-xor" / "zarrx_xor" / "__init__.py").read_text()
    assert f"```python\n{source}```" in doc
    toml = (ROOT / "plugins" / "zarrx-xor" / "pyproject.toml").read_text()
    assert '[project.entry-points."zarrx.codecs"]\n"example.xor" = "zarrx_xor:XorCodec"' in toml
    assert '"example.xor" = "zarrx_xor:XorCodec"' in doc


def test_the_codec_plugin_opens_what_zarrx_alone_refuses(tmp_path, plugin_env):
    path = str(tmp_path / "x.zarr")
    script = (
        f"import zarrx; a = zarrx.create_array({path!r}, shape=(4,), dtype='i4', chunks=(2,), "
        "compressors={'name': 'example.xor', 'configuration': {'key': 7}}); "
        "a[...] = [1, -2, 3, -4]"
    )
    result = _run(plugin_env, "-c", script)
    assert result.returncode == 0, result.stderr
    with pytest.raises(UnknownCodecError, match=r"example\.xor.*zarrx\.codecs"):
        zarrx.open(path)
    result = _run(plugin_env, "-c", f"import zarrx; print(zarrx.open({path!r})[...].tolist())")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[1, -2, 3, -4]"


def test_draft_uri_and_name_resolve_to_one_codec():
    assert registry.codecs.get("https://purl.org/zarr/spec/codec/gzip/1.0") is registry.codecs.get(
        "gzip"
    )


def test_two_implementations_for_one_name_is_an_error():
    first, second = type("First", (), {}), type("Second", (), {})
    registry.codecs.register(first, "conflict-test")
    try:
        with pytest.raises(zarrx.errors.RegistryConflictError, match="conflict-test"):
            registry.codecs.register(second, "conflict-test")
        assert registry.codecs.get("conflict-test") is first
    finally:
        registry.codecs.unregister("conflict-test")


def _draft_with_entries(path: Path, entries: list) -> np.ndarray:
    data = np.arange(6, dtype="i4")
    zarrx.create_array(str(path), name="a", shape=(6,), dtype="i4", chunks=(4,),
                       zarr_format="3-draft")[...] = data
    meta = path / "meta" / "root" / "a.array.json"
    doc = json.loads(meta.read_text())
    doc["extensions"] = entries
    meta.write_text(json.dumps(doc))
    return data


def _v3_with_entries(path: Path, entries: list) -> None:
    zarrx.create_array(str(path), shape=(6,), dtype="i4", chunks=(4,))[...] = np.arange(6)
    doc = json.loads((path / "zarr.json").read_text())
    doc["extensions"] = entries
    (path / "zarr.json").write_text(json.dumps(doc))


def test_offset_applies_to_a_draft_array_as_to_a_v3_array(tmp_path, plugin_env):
    """Seed 003's offset example on both formats: the draft spells the entry with the
    seed's ``extension`` key, v3 with ZEP 10's ``name``; both present elements 2-5."""
    _draft_with_entries(tmp_path / "d", [
        {"extension": "example.offset", "must_understand": True,
         "configuration": {"offset": [2]}}])
    _v3_with_entries(tmp_path / "v", [
        {"name": "example.offset", "configuration": {"offset": [2]}}])
    script = (
        "import sys, json, zarrx; out = {}\n"
        "for p, path in ((sys.argv[1], 'a'), (sys.argv[2], None)):\n"
        "    a = zarrx.open_array(p, path=path, mode='r+')\n"
        "    before = a[...].tolist(); a[0] = 20\n"
        "    out[a.zarr_format] = [list(a.shape), before, a[...].tolist()]\n"
        "print(json.dumps(out))"
    )
    result = _run(plugin_env, "-c", script, str(tmp_path / "d"), str(tmp_path / "v"))
    assert result.returncode == 0, result.stderr
    got = json.loads(result.stdout)
    assert got["3-draft"] == got["3"] == [[4], [2, 3, 4, 5], [20, 3, 4, 5]]
    # zarrx alone refuses the draft array: the entry must be understood
    with pytest.raises(UnknownExtensionError, match=r"example\.offset"):
        zarrx.open(str(tmp_path / "d"), path="a")


def test_write_hook_applies_to_a_draft_array(tmp_path, plugin_env):
    """``example.array-statistics`` (optional) widens its range on every write in the
    draft too, and is written back in the seed's form; without the plugin it is kept."""
    entry = {"extension": "example.array-statistics", "must_understand": False,
             "configuration": {"min": 0, "max": 5}}
    _draft_with_entries(tmp_path / "d", [entry])
    meta = tmp_path / "d" / "meta" / "root" / "a.array.json"
    a = zarrx.open_array(str(tmp_path / "d"), path="a", mode="r+")
    a[0] = 100  # zarrx alone: the unknown optional entry is kept as it is
    assert json.loads(meta.read_text())["extensions"] == [entry]
    script = "import sys, zarrx; zarrx.open_array(sys.argv[1], path='a', mode='r+')[1] = -7"
    result = _run(plugin_env, "-c", script, str(tmp_path / "d"))
    assert result.returncode == 0, result.stderr
    (written,) = json.loads(meta.read_text())["extensions"]
    assert written["extension"] == "example.array-statistics"
    assert written["must_understand"] is False
    assert written["configuration"]["min"] == -7
    assert written["configuration"]["max"] == 5
