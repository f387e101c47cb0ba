"""Chunk key encodings ``default`` and ``v2`` with both separators, both directions: every
library stores the same keys and reads the others' keys."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.interop._peers import (
    DIRECTION_IDS,
    DIRECTIONS,
    Layout,
    check_roundtrip,
    load_json,
    region_for,
    stored_chunks,
)

ENCODINGS = {
    "default-slash": {"name": "default", "configuration": {"separator": "/"}},
    "default-dot": {"name": "default", "configuration": {"separator": "."}},
    "v2-dot": {"name": "v2", "configuration": {"separator": "."}},
    "v2-slash": {"name": "v2", "configuration": {"separator": "/"}},
}


def expected_keys(layout: Layout, region: tuple[slice, ...]) -> set[str]:
    """The keys of the chunks ``region`` touches, spelled by hand from the spec."""
    encoding = layout.chunk_key_encoding
    separator = encoding["configuration"]["separator"]
    ranges = [
        range(r.start // c, (r.stop - 1) // c + 1) for r, c in zip(region, layout.chunks)
    ]
    keys = set()
    for coords in itertools.product(*ranges):
        parts = [str(i) for i in coords]
        keys.add(separator.join(["c", *parts] if encoding["name"] == "default" else parts))
    return keys


@pytest.mark.parametrize(("writer", "reader"), DIRECTIONS, ids=DIRECTION_IDS)
@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("dtype", ["uint8", "float32"])
def test_chunk_key_encoding(
    encoding: str, dtype: str, writer: str, reader: str, path: Path
) -> None:
    layout = Layout(
        dtype=dtype, shape=(5, 7, 9), chunks=(2, 3, 4), fill_value=1,
        chunk_key_encoding=ENCODINGS[encoding],
    )
    region = region_for(layout)
    check_roundtrip(writer, reader, path, layout, region=region)
    assert set(stored_chunks(path)) == expected_keys(layout, region)


@pytest.mark.parametrize("writer", ["zarrx", "zarr", "tensorstore"])
@pytest.mark.parametrize("name", ["default", "v2"])
def test_encoding_without_configuration(name: str, writer: str, path: Path) -> None:
    """``{"name": ...}`` alone means the encoding's default separator (tensorstore writes
    it so); every library reads it, and writes its default separator."""
    layout = Layout(dtype="int16", shape=(5, 7, 9), chunks=(2, 3, 4),
                    chunk_key_encoding={"name": name})
    spelled = {"default": "/", "v2": "."}[name]
    full = Layout(dtype="int16", shape=(5, 7, 9), chunks=(2, 3, 4),
                  chunk_key_encoding={"name": name, "configuration": {"separator": spelled}})
    region = region_for(layout)
    readers: Any = ["zarrx"] if writer != "zarrx" else ["zarr", "tensorstore"]
    for i, reader in enumerate(readers):
        target = path.with_name(f"{path.name}{i}")
        check_roundtrip(writer, reader, target, layout, region=region)
        assert set(stored_chunks(target)) == expected_keys(full, region)
        written = load_json(target / "zarr.json")["chunk_key_encoding"]
        assert written["name"] == name
        assert written.get("configuration", {}).get("separator", spelled) == spelled


@pytest.mark.parametrize(("writer", "reader"), DIRECTIONS, ids=DIRECTION_IDS)
@pytest.mark.parametrize("encoding", ENCODINGS)
def test_zero_dimensional_key(encoding: str, writer: str, reader: str, path: Path) -> None:
    """The one chunk of a 0-d array is ``c`` under ``default`` and ``0`` under ``v2``."""
    layout = Layout(dtype="complex64", shape=(), chunks=(),
                    chunk_key_encoding=ENCODINGS[encoding])
    check_roundtrip(writer, reader, path, layout, np.asarray(np.complex64(2.5 - 1j)))
    assert set(stored_chunks(path)) == {"c" if encoding.startswith("default") else "0"}
