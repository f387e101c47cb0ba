"""The batch kernels on damaged data, without the libraries, and with a plugin's own step.

- A damaged chunk (truncated, extended, bytes changed, replaced, a frame of a larger
  chunk) stops ``BatchDecoder.place`` with the error the chunk-by-chunk path raises for it,
  carrying the chunk's position (``error.chunk``), after placing the chunks before it; a
  damage that path does not notice is not noticed either, and gives the same output. The
  stored bytes lie at the very end of memory followed by a page that cannot be read, so a
  read past any chunk's bytes would crash the test.
- Without c-blosc, zstd or zlib (``codecs.libraries`` finds none usable: a version too old,
  a function missing), chains holding them have no batch decoder or encoder and give the
  same results chunk by chunk.
- A plugin codec that gives a native step (ctypes callbacks) goes through the kernels.
"""

from __future__ import annotations

import ctypes
import mmap
import sys
import threading
from typing import Any, ClassVar

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from zarrx.abc.codec import Buffer, BytesBytesCodec, ChunkSpec, NativeStep
from zarrx.codecs import libraries
from zarrx.codecs.bytes import BytesCodec, as_byte_view
from zarrx.codecs.pipeline import CodecPipeline, PreparedChain, codec_from_json
from zarrx.errors import CodecError
from zarrx.runtime.elements import Elements
from zarrx.runtime.place import place_selection

CHAINS: dict[str, list[dict[str, Any]]] = {
    "bytes": [],
    "blosc-lz4": [{"name": "blosc", "configuration": {"cname": "lz4", "shuffle": "shuffle"}}],
    "blosc-zstd": [{"name": "blosc", "configuration": {"cname": "zstd",
                                                       "shuffle": "bitshuffle"}}],
    "blosc-blosclz": [{"name": "blosc", "configuration": {"cname": "blosclz"}}],
    "zstd": [{"name": "zstd"}],
    "zstd-checksum": [{"name": "zstd", "configuration": {"level": 1, "checksum": True}}],
    "gzip": [{"name": "gzip", "configuration": {"level": 6}}],
    "crc32c": [{"name": "crc32c"}],
    "zstd+crc32c": [{"name": "zstd"}, {"name": "crc32c"}],
    "crc32c+gzip": [{"name": "crc32c"}, {"name": "gzip"}],
}
SHAPE = (12, 10)
DTYPE = np.dtype("<u2")


def chain_of(codecs: list[dict[str, Any]], shape: tuple[int, ...] = SHAPE) -> PreparedChain:
    """A chain of a fresh pipeline (made after any monkeypatching of the test)."""
    parsed = [codec_from_json(c, where="test") for c in [{"name": "bytes"}, *codecs]]
    return CodecPipeline(parsed).prepare(ChunkSpec(shape, DTYPE, DTYPE.type(7)))


_PAGE = mmap.PAGESIZE
_kept: list[Any] = []


def guarded(data: bytes) -> memoryview:
    """``data`` at the very end of its memory, before a page nothing may read."""
    if sys.platform not in ("linux", "darwin"):
        return memoryview(bytearray(data))
    pages = -(-len(data) // _PAGE) + 1
    area = mmap.mmap(-1, pages * _PAGE)
    base = ctypes.addressof(ctypes.c_char.from_buffer(area))
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    assert libc.mprotect(base + (pages - 1) * _PAGE, _PAGE, 0) == 0  # PROT_NONE
    start = (pages - 1) * _PAGE - len(data)
    area[start:start + len(data)] = data
    _kept.append(area)
    if len(_kept) > 64:
        del _kept[:32]
    return memoryview(area)[start:start + len(data)]


def damage(frame: bytes, how: str, data: st.DataObject, larger: bytes) -> bytes:
    if how == "truncate":
        return frame[:data.draw(st.integers(0, max(len(frame) - 1, 0)))]
    if how == "extend":
        return frame + data.draw(st.binary(min_size=1, max_size=20))
    if how == "replace":
        return data.draw(st.binary(max_size=2 * len(frame) + 20))
    if how == "larger":  # a frame that decodes to more than the chunk's size
        return larger
    changed = bytearray(frame)
    for _ in range(data.draw(st.integers(1, 4))):
        if changed:
            at = data.draw(st.integers(0, len(changed) - 1))
            changed[at] = data.draw(st.integers(0, 255))
    return bytes(changed)


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(sorted(CHAINS)),
       st.sampled_from(["truncate", "extend", "replace", "larger", "change"]),
       st.integers(0, 3), st.booleans(), st.data())
def test_a_damaged_chunk_stops_the_batch_where_the_general_path_does(
        name: str, how: str, bad: int, one_source: bool, data: st.DataObject) -> None:
    chain = chain_of(CHAINS[name])
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    values = [(np.arange(120) // 7 + rng.integers(0, 3, 120)).astype(DTYPE).reshape(SHAPE)
              for _ in range(4)]
    frames = [bytes(chain.encode_general(v)) for v in values]
    larger = bytes(chain_of(CHAINS[name], (12, 11)).encode_general(
        np.ones((12, 11), DTYPE)))
    frames[bad] = damage(frames[bad], how, data, larger)
    n = len(frames)
    if one_source:
        offsets = np.cumsum([0] + [len(f) for f in frames[:-1]]).astype(np.int64)
        sources = [guarded(b"".join(frames))]
        which = np.zeros(n, np.int64)
    else:
        offsets = np.zeros(n, np.int64)
        sources = [guarded(f) for f in frames]
        which = np.arange(n, dtype=np.int64)
    sizes = np.array([len(f) for f in frames], np.int64)
    geometry = (np.zeros((n, 2), np.int64), np.ones((n, 2), np.int64),
                np.tile(np.array(SHAPE, np.int64), (n, 1)),
                np.array([(0, 10 * i) for i in range(n)], np.int64))
    start = np.full((12, 40), 9, DTYPE)
    # The general path, chunk by chunk: what it places, and what it raises.
    expected = start.copy()
    elements = Elements.of(DTYPE, DTYPE.type(7))
    raised: CodecError | None = None
    for i, frame in enumerate(frames):
        try:
            place_selection(chain, elements, (slice(0, 12), slice(0, 10)),
                            (slice(0, 12), slice(10 * i, 10 * i + 10)), False, frame, expected)
        except CodecError as e:
            raised = e
            break
    out = start.copy()
    event(f"{how}: {'raised' if raised else 'unnoticed'}")
    if raised is None:
        chain.batch_decoder.place(sources, which, offsets, sizes, *geometry, out, b"\7\0")
        np.testing.assert_array_equal(out, expected)
        return
    with pytest.raises(CodecError) as info:
        chain.batch_decoder.place(sources, which, offsets, sizes, *geometry, out, b"\7\0")
    assert info.value.chunk == bad
    assert type(info.value) is type(raised)
    assert str(info.value) == str(raised)
    np.testing.assert_array_equal(out[:, :10 * bad], expected[:, :10 * bad])
    np.testing.assert_array_equal(out[:, 10 * (bad + 1):], start[:, 10 * (bad + 1):])


# -- without the libraries -----------------------------------------------------------------


@pytest.mark.parametrize(("library", "names"), [
    ("blosc", ["blosc-lz4", "blosc-zstd", "blosc-blosclz"]),
    ("zstd", ["zstd", "zstd-checksum", "zstd+crc32c"]),
    ("zlib", ["gzip", "crc32c+gzip"]),
])
def test_without_a_library_chunk_by_chunk(monkeypatch: pytest.MonkeyPatch, library: str,
                                          names: list[str]) -> None:
    values = [np.arange(120, dtype=DTYPE).reshape(SHAPE) * k for k in range(3)]
    views = [v[::-1] for v in values]
    natively = {}
    for name in names:
        chain = chain_of(CHAINS[name])
        assert chain.batch_decoder is not None
        natively[name] = chain.encode_many(views)
    monkeypatch.setitem(libraries._FOUND, library, None)  # none usable
    for name in names:
        chain = chain_of(CHAINS[name])
        assert chain.batch_decoder is None
        assert chain._batch_encoder is None
        encoded = chain.encode_many(views)
        assert [bytes(e) for e in encoded] == natively[name]
        for e, v in zip(encoded, views):
            np.testing.assert_array_equal(chain.decode(e), v)
    assert chain_of(CHAINS["crc32c"]).batch_decoder is not None  # (its step is zarrx's own)


def _spec(name: str, **changes: Any) -> Any:
    import dataclasses

    return dataclasses.replace(libraries._SPECS[name], **changes)


@pytest.mark.parametrize("name", ["blosc", "lz4", "zstd", "zlib"])
def test_lookup_checks_version_and_every_function(name: str) -> None:
    found = libraries._look_up(name, libraries._SPECS[name])
    assert found is not None
    assert found.number >= libraries._SPECS[name].least
    assert set(found.functions) == set(libraries._SPECS[name].functions)
    assert all(address > 0 for address in found.functions.values())
    spec = libraries._SPECS[name]
    # a library older than the kernels know
    assert libraries._look_up(name, _spec(name, least=(99,))) is None
    # a function missing
    missing = (*spec.functions, "zx_no_such_function")
    assert libraries._look_up(name, _spec(name, functions=missing)) is None
    # no version function, no module, a module without the library
    assert libraries._look_up(name, _spec(name, version="zx_no_such_function")) is None
    assert libraries._look_up(name, _spec(name, module="zx_no_such_module")) is None
    assert libraries._look_up(name, _spec(name, module="numpy")) is None


def test_versions_are_read_as_numbers() -> None:
    class Reports:
        restype: Any = None

        def __init__(self, value: Any) -> None:
            self.value = value

        def __call__(self) -> Any:
            return self.value

    assert libraries._string(Reports(b"1.21.7.dev")) == ("1.21.7.dev", (1, 21, 7))
    assert libraries._string(Reports(b"1.3.0.zlib-ng")) == ("1.3.0.zlib-ng", (1, 3, 0))
    assert libraries._string(Reports(b"2.0rc1")) == ("2.0rc1", (2, 0))
    assert libraries._number(Reports(10506)) == ("10506", (1, 5, 6))


def test_lookup_from_many_threads_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(libraries, "_FOUND", {})
    seen: list[Any] = []
    barrier = threading.Barrier(8)

    def look() -> None:
        barrier.wait()
        seen.append(libraries.find("zstd"))

    threads = [threading.Thread(target=look) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(seen) == 8
    assert all(found is seen[0] for found in seen)
    assert seen[0] is not None


def test_gzip_encodes_in_batches_only_with_pythons_own_zlib(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import zarrx.codecs.gzip as gzip_module

    assert chain_of(CHAINS["gzip"])._batch_encoder is not None
    monkeypatch.setattr(gzip_module.zlib, "ZLIB_RUNTIME_VERSION", "0.0.0")
    chain = chain_of(CHAINS["gzip"])
    assert chain._batch_encoder is None  # another zlib may deflate differently
    assert chain.batch_decoder is not None  # ... but inflates alike


# -- a plugin's own step ---------------------------------------------------------------------

_DECODE = ctypes.CFUNCTYPE(ctypes.c_ssize_t, ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p),
                           ctypes.c_void_p, ctypes.c_ssize_t, ctypes.c_void_p, ctypes.c_ssize_t,
                           ctypes.POINTER(ctypes.c_void_p))
_ENCODE = ctypes.CFUNCTYPE(ctypes.c_ssize_t, ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p),
                           ctypes.c_void_p, ctypes.c_ssize_t, ctypes.c_void_p, ctypes.c_ssize_t)
_RELEASE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p)


class XorCodec(BytesBytesCodec):
    """A plugin's codec: every byte xor'ed with a key, then the key appended; its native
    step is ctypes callbacks (they take the GIL), counted."""

    name: ClassVar[str] = "test.xor"
    native = True

    def __init__(self, key: int = 0x5A) -> None:
        self.key = key
        self.calls = {"decode": 0, "encode": 0, "release": 0}

    @classmethod
    def from_config(cls, configuration: Any) -> XorCodec:
        return cls(**configuration)

    def to_config(self) -> dict[str, Any]:
        return {"key": self.key}

    def encode(self, data: Buffer) -> Buffer:
        view = np.frombuffer(as_byte_view(data, self.name), np.uint8)
        return (view ^ self.key).tobytes() + bytes([self.key])

    def decode(self, data: Buffer, max_size: int | None) -> Buffer:
        view = np.frombuffer(as_byte_view(data, self.name), np.uint8)
        if len(view) == 0 or view[-1] != self.key:
            raise CodecError(f"codec {self.name!r}: not a frame of key {self.key}")
        if max_size is not None and len(view) - 1 > max_size:
            raise CodecError(f"codec {self.name!r}: too large")
        return (view[:-1] ^ self.key).tobytes()

    def max_encoded_size(self, n: int) -> int:
        return n + 1

    def native_step(self) -> NativeStep | None:
        if not self.native:
            return None
        key, calls = self.key, self.calls

        def decode(context: Any, state: Any, src: int, n: int, dst: int, capacity: int,
                   out: Any) -> int:
            calls["decode"] += 1
            state[0] = 1234  # a step's own state for the call, released below
            if n == 0 or n - 1 > capacity or ctypes.c_ubyte.from_address(src + n - 1).value != key:
                return -1
            source = np.ctypeslib.as_array((ctypes.c_ubyte * (n - 1)).from_address(src))
            target = np.ctypeslib.as_array((ctypes.c_ubyte * (n - 1)).from_address(dst))
            np.bitwise_xor(source, key, out=target)
            out[0] = dst
            return n - 1

        def encode(context: Any, state: Any, src: int, n: int, dst: int, capacity: int) -> int:
            calls["encode"] += 1
            source = np.ctypeslib.as_array((ctypes.c_ubyte * n).from_address(src))
            target = np.ctypeslib.as_array((ctypes.c_ubyte * (n + 1)).from_address(dst))
            np.bitwise_xor(source, key, out=target[:n])
            target[n] = key
            return n + 1

        def release(context: Any, state: Any) -> None:
            assert state == 1234
            calls["release"] += 1

        functions = (_DECODE(decode), _ENCODE(encode), _RELEASE(release))
        address = [ctypes.cast(f, ctypes.c_void_p).value or 0 for f in functions]
        return NativeStep(address[0], address[1], 0, address[2], functions)


def test_a_plugin_codec_joins_the_batches() -> None:
    xor = XorCodec()
    chain = CodecPipeline([BytesCodec(), xor]).prepare(ChunkSpec(SHAPE, DTYPE, DTYPE.type(0)))
    assert chain.batch_decoder is not None
    values = [np.arange(120, dtype=DTYPE).reshape(SHAPE)[::-1] + k for k in range(5)]
    frames = chain.encode_many(values)
    assert xor.calls["encode"] == 5
    assert frames == [bytes(chain.encode_general(v)) for v in values]
    out = np.zeros((12, 50), DTYPE)
    n = 5
    sizes = [len(f) for f in frames]
    sizes[2] = -1  # absent: the fill value
    chain.batch_decoder.place(frames, range(n), [0] * n, sizes, [[0, 0]] * n, [[1, 1]] * n,
                              [SHAPE] * n, [[0, 10 * i] for i in range(n)], out, b"\0\0")
    assert xor.calls["decode"] == 4
    assert xor.calls["release"] == 1
    values[2] = np.zeros(SHAPE, DTYPE)
    np.testing.assert_array_equal(out, np.concatenate(values, axis=1))
    # A frame the step refuses: the general path's error, naming the chunk.
    bad = [*frames[:3], frames[3][:-1] + b"\0", frames[4]]
    with pytest.raises(CodecError, match="not a frame of key") as info:
        chain.batch_decoder.place(bad, range(n), [0] * n, [len(f) for f in bad],
                                  [[0, 0]] * n, [[1, 1]] * n, [SHAPE] * n,
                                  [[0, 10 * i] for i in range(n)], out, b"\0\0")
    assert info.value.chunk == 3


def test_a_plugin_codec_without_a_step_is_decoded_chunk_by_chunk() -> None:
    xor = XorCodec()
    xor.native = False  # the base class' default: not capable
    chain = CodecPipeline([BytesCodec(), xor]).prepare(ChunkSpec(SHAPE, DTYPE, DTYPE.type(0)))
    assert chain.batch_decoder is None
    values = [np.arange(120, dtype=DTYPE).reshape(SHAPE)[::-1]]
    assert chain.encode_many(values) == [XorCodec().encode(np.ascontiguousarray(values[0]))]
    assert xor.calls == {"decode": 0, "encode": 0, "release": 0}
