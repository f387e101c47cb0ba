"""Arrays committed by zarrs' test suite (``tests/fixtures/zarrs``, see its README): each
reads as its generator wrote it, and writes back and reads again with zarrx."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numcodecs
import numpy as np
import pytest

import zarrx

HERE = Path(__file__).resolve().parents[1] / "fixtures" / "zarrs"
DATA = np.arange(100, dtype="f4").reshape(10, 10)
#: codecs/bitround/sample_data/README.md of zarr-extensions, the "Rounded" columns
BITROUND = {
    "bitround_float32": np.array([0.0, 0.1015625, 1.25, 12.0, 120.0, 1280.0, np.nan, np.inf,
                                  -np.inf], "f4"),
    "bitround_uint8": np.array([0, 1, 10, 12, 96, 128, 192, 192, 224, 224], "u1"),
}
ARRAYS = [("v3/array_zfpy.zarr", 3), ("v3/array_zfpy.zarr", 2), ("v3/array_pcodec.zarr", 3),
          ("v3/array_pcodec.zarr", 2), ("v2/array_zfpy_C.zarr", 2),
          ("v2/array_pcodec_C.zarr", 2),
          *((f"v3_zarr_python/array_{n}.zarr", 3)
            for n in ("zfpy", "pcodec", "adler32", "fletcher32", "bz2", "zlib"))]


@pytest.mark.parametrize("name", sorted(BITROUND))
def test_bitround_samples(name: str) -> None:
    a = zarrx.open_array(str(HERE / "codec" / "bitround" / f"{name}.zarr"), mode="r")
    assert a.metadata.to_json()["codecs"][0] == {"name": "bitround",
                                                 "configuration": {"keepbits": 3}}
    got, expected = a[...], BITROUND[name]
    assert got.dtype == expected.dtype
    assert got.tobytes() == expected.tobytes()


def _numcodecs_decoded(path: Path, fmt: int) -> np.ndarray:
    """The array as numcodecs itself decodes each chunk (zfpy is lossy)."""
    if fmt == 2:
        config = json.loads((path / ".zarray").read_text())["compressor"]
    else:
        entry = json.loads((path / "zarr.json").read_text())["codecs"][0]
        config = {"id": entry["name"].removeprefix("numcodecs."), **entry["configuration"]}
    codec = numcodecs.get_codec({k: v for k, v in config.items() if k != "compression_kwargs"})
    out = np.empty((10, 10), "f4")
    for i in range(2):
        for j in range(2):
            key = f"c/{i}/{j}" if (path / "c").is_dir() else f"{i}.{j}"
            chunk = codec.decode((path / key).read_bytes())
            out[5 * i:5 * i + 5, 5 * j:5 * j + 5] = np.frombuffer(chunk, "f4").reshape(5, 5)
    return out


@pytest.mark.parametrize(("path", "fmt"), ARRAYS, ids=[f"{p}-v{f}" for p, f in ARRAYS])
def test_numcodecs_arrays(path: str, fmt: int, tmp_path: Path) -> None:
    a = zarrx.open_array(str(HERE / path), mode="r", zarr_format=fmt)
    got = a[...]
    assert got.dtype == np.dtype("f4")
    if "zfpy" in path:
        assert np.abs(got - DATA).max() <= 0.01
        np.testing.assert_array_equal(got, _numcodecs_decoded(HERE / path, fmt))
    else:
        np.testing.assert_array_equal(got, DATA)
    copy = tmp_path / "copy.zarr"
    shutil.copytree(HERE / path, copy)
    b = zarrx.open_array(str(copy), mode="r+", zarr_format=fmt)
    b[...] = DATA[::-1]
    again = zarrx.open_array(str(copy), mode="r", zarr_format=fmt)[...]
    if "zfpy" in path:
        assert np.abs(again - DATA[::-1]).max() <= 0.01
    else:
        np.testing.assert_array_equal(again, DATA[::-1])
