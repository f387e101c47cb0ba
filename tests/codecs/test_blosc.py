from __future__ import annotations

import struct
import tracemalloc

import numcodecs
import numpy as np
import pytest
import zarr

import zarrx.codecs.blosc as blosc_module
from tests.codecs._peers import same_bytes, spec_of, zarr_read, zarr_write
from zarrx.codecs.blosc import BloscCodec
from zarrx.errors import CodecError, MetadataError
from zarrx.testing.codecs import BytesBytesCodecTests, spec

DATA = np.sin(np.arange(50_000) / 100).astype("float32")
SHUFFLE_INT = {"noshuffle": 0, "shuffle": 1, "bitshuffle": 2}


class TestBloscCodec(BytesBytesCodecTests):
    codecs = (
        BloscCodec(),
        BloscCodec(cname="lz4", clevel=5, shuffle="shuffle", typesize=4),
        BloscCodec(cname="zstd", clevel=3, shuffle="bitshuffle"),
        BloscCodec(cname="blosclz", clevel=0),
        BloscCodec(cname="lz4hc", clevel=9, shuffle="noshuffle", blocksize=4096),
        BloscCodec(cname="zlib", clevel=1, typesize=8),
    )


def test_defaults_like_zarr_python() -> None:
    codec = BloscCodec.from_config({})
    assert codec.to_dict() == {
        "name": "blosc",
        "configuration": {"cname": "zstd", "clevel": 5, "blocksize": 0},
    }
    assert codec.evolve(spec((10,), "float64")).to_config() == {
        "typesize": 8,
        "cname": "zstd",
        "clevel": 5,
        "shuffle": "shuffle",
        "blocksize": 0,
    }
    assert codec.evolve(spec((10,), "uint8")).to_config()["shuffle"] == "bitshuffle"
    assert codec.evolve(spec((10,), "S3")).to_config()["typesize"] == 3
    assert codec.evolve(spec((10,), object)).to_config()["typesize"] == 1
    # Explicit values are kept.
    explicit = BloscCodec(typesize=2, shuffle="noshuffle")
    assert explicit.evolve(spec((10,), "float64")) is explicit
    assert "https://purl.org/zarr/spec/codec/blosc/1.0" in BloscCodec.aliases


def test_key_order_matches_zarr_python() -> None:
    codec = BloscCodec().evolve(spec((3,), "int32"))
    peer = zarr.codecs.BloscCodec(typesize=4, shuffle="shuffle")
    assert list(codec.to_config()) == list(peer.to_dict()["configuration"])


@pytest.mark.parametrize(
    ("given", "expected"), [(0, "noshuffle"), (1, "shuffle"), (2, "bitshuffle")]
)
def test_integer_shuffle_from_v2_and_draft(given: int, expected: str) -> None:
    codec = BloscCodec.from_config({"cname": "lz4", "clevel": 5, "shuffle": given, "blocksize": 0})
    assert codec.shuffle == expected
    assert BloscCodec.from_config({"shuffle": -1}).shuffle is None  # numcodecs' AUTOSHUFFLE


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("cname", "LZ4"),
        ("cname", "brotli"),
        ("cname", 1),
        ("clevel", 10),
        ("clevel", -1),
        ("clevel", True),
        ("shuffle", 3),
        ("shuffle", "byteshuffle"),
        ("shuffle", False),
        ("typesize", 0),
        ("typesize", 4.0),
        ("blocksize", -1),
        ("blocksize", "auto"),
    ],
)
def test_bad_config(field: str, value: object) -> None:
    with pytest.raises(MetadataError, match=rf"'blosc'.*'{field}'"):
        BloscCodec.from_config({field: value})


def test_null_typesize_and_shuffle_mean_absent() -> None:
    # zarr-python reads null as "tunable": evolve() fills both from the dtype.
    codec = BloscCodec.from_config({"typesize": None, "shuffle": None, "cname": "lz4"})
    assert codec == BloscCodec.from_config({"cname": "lz4"})
    evolved = codec.evolve(spec((4,), "int16")).to_config()
    assert (evolved["typesize"], evolved["shuffle"]) == (2, "shuffle")
    peer = zarr.codecs.BloscCodec.from_dict(
        {"name": "blosc", "configuration": {"typesize": None, "shuffle": None, "cname": "lz4"}}
    )
    assert peer.to_dict()["configuration"]["cname"] == "lz4"


def test_snappy_only_when_available() -> None:
    available = numcodecs.blosc.list_compressors()
    if "snappy" in available:
        assert BloscCodec.from_config({"cname": "snappy"}).cname == "snappy"
    else:
        with pytest.raises(MetadataError, match="snappy"):
            BloscCodec.from_config({"cname": "snappy"})


def _header(nbytes: int, cbytes: int) -> bytes:
    return bytes([2, 1, 0x01, 4]) + struct.pack("<III", nbytes, 65536, cbytes)


def test_header_sizes_checked_before_allocating() -> None:
    codec = BloscCodec()
    frame = _header(2**31 - 100, 16)  # claims ~2 GiB from a 16-byte frame
    tracemalloc.start()
    try:
        with pytest.raises(CodecError, match="more than the expected 1048576"):
            codec.decode(frame, 1 << 20)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20
    with pytest.raises(CodecError, match="truncated"):
        codec.decode(_header(100, 1000) + bytes(100), 1000)
    with pytest.raises(CodecError, match="shorter than the 16-byte header"):
        codec.decode(b"\x02\x01\x01\x04", 1000)
    with pytest.raises(CodecError, match="corrupt header"):
        codec.decode(_header(100, 8) + bytes(100), 1000)


def test_trailing_bytes_after_the_frame_are_ignored() -> None:
    # As c-blosc and numcodecs do: the header's cbytes delimits the frame.
    codec = BloscCodec(cname="lz4").evolve(spec_of(DATA))
    frame = bytes(codec.encode(DATA))
    assert bytes(codec.decode(frame + b"\xff" * 9, DATA.nbytes)) == DATA.tobytes()


def test_decode_into() -> None:
    codec = BloscCodec(cname="lz4").evolve(spec_of(DATA))
    frame = codec.encode(DATA)
    out = np.empty_like(DATA)
    codec.decode_into(frame, out)
    assert (out == DATA).all()
    with pytest.raises(CodecError, match="more than the expected"):
        codec.decode_into(frame, bytearray(DATA.nbytes - 1))
    with pytest.raises(CodecError, match="expected 200004"):
        codec.decode_into(frame, bytearray(DATA.nbytes + 4))
    with pytest.raises(CodecError, match="writable"):
        codec.decode_into(frame, bytes(DATA.nbytes))


def test_encode_size_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(blosc_module, "MAX_BUFFERSIZE", 100)
    with pytest.raises(CodecError, match="at most 100"):
        BloscCodec().encode(bytes(101))
    assert len(BloscCodec().encode(bytes(100))) <= 116


def test_max_encoded_size_is_blosc_max_overhead() -> None:
    assert BloscCodec().max_encoded_size(0) == 16
    assert BloscCodec().max_encoded_size(1000) == 1000 + numcodecs.blosc.MAX_OVERHEAD


def test_numcodecs_configured_for_threads() -> None:
    BloscCodec().decode(BloscCodec().encode(b"x" * 100), 100)
    assert numcodecs.blosc.use_threads is False  # the *_ctx calls: no global lock


@pytest.mark.parametrize("typesize", [2, 4, 8, 16])
@pytest.mark.parametrize("n", [2999, 3001, 4100, 65537])
def test_bitshuffle_leftover_bytes_exact(typesize: int, n: int) -> None:
    # python-blosc2 4.14 decodes the trailing bytes of these c-blosc 1 frames wrongly;
    # zarrx decodes with c-blosc 1, as numcodecs and zarr-python do.
    raw = (np.arange(n) // 13).astype("uint8").tobytes()
    codec = BloscCodec(cname="lz4", shuffle="bitshuffle", typesize=typesize)
    frame = numcodecs.Blosc("lz4", 5, 2, 0, typesize).encode(raw)
    assert bytes(codec.decode(frame, n)) == raw
    assert bytes(codec.encode(raw)) == frame


# -- interop with numcodecs and zarr-python 3 -------------------------------------------

CONFIGS = [
    {},
    {"cname": "lz4", "clevel": 5, "shuffle": "shuffle"},
    {"cname": "lz4hc", "clevel": 9, "shuffle": "bitshuffle", "blocksize": 8192},
    {"cname": "blosclz", "clevel": 1, "shuffle": "noshuffle"},
    {"cname": "zlib", "clevel": 4, "typesize": 2},
    {"cname": "zstd", "clevel": 0},
]
ARRAYS = [
    np.sin(np.arange(5000) / 30).reshape(50, 100),
    np.arange(1000, dtype="int16"),
    np.random.default_rng(0).integers(0, 255, 3000, dtype="uint8"),
    DATA,
]


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("data", ARRAYS, ids=["f8", "i2", "u1", "f4"])
def test_numcodecs_interop(config: dict[str, object], data: np.ndarray) -> None:
    ours = BloscCodec.from_config(config).evolve(spec_of(data))
    theirs = numcodecs.Blosc(
        cname=ours.cname,
        clevel=ours.clevel,
        shuffle=SHUFFLE_INT[ours.shuffle or "bitshuffle"],
        blocksize=ours.blocksize,
        typesize=ours.typesize,
    )
    raw = data.tobytes()
    encoded = bytes(ours.encode(raw))
    assert encoded == theirs.encode(raw)  # the same c-blosc call: identical frames
    assert bytes(theirs.decode(encoded)) == raw
    assert bytes(ours.decode(theirs.encode(raw), len(raw))) == raw


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("data", ARRAYS, ids=["f8", "i2", "u1", "f4"])
def test_zarr_python_interop(config: dict[str, object], data: np.ndarray) -> None:
    peer = zarr.codecs.BloscCodec.from_dict({"name": "blosc", "configuration": config})
    raw, codecs = zarr_write(data, compressors=[peer])
    chunk = spec_of(data)
    ours = BloscCodec.from_config(config).evolve(chunk)
    assert codecs[1] == ours.to_dict()  # zarr-python's evolved metadata equals ours
    assert BloscCodec.from_config(codecs[1]["configuration"]) == ours
    assert zarr.codecs.BloscCodec.from_dict(ours.to_dict()).to_dict() == ours.to_dict()
    little = data.astype(data.dtype.newbyteorder("<")).tobytes()
    assert bytes(ours.decode(raw, len(little))) == little
    encoded = bytes(ours.encode(little))
    assert encoded == raw
    assert same_bytes(zarr_read(encoded, data, compressors=[peer]), data)
