"""``CodecTests``: the codec contract as reusable pytest base classes.

Subclass the class matching the codec's kind in a test module (the name must start with
``Test``) and set class attributes:

- ``codecs``: codec instances, one per configuration worth testing;
- ``specs``: the decoded-side :class:`~zarrx.abc.codec.ChunkSpec` s to test them on (each
  codec is paired with every spec it accepts after :meth:`~zarrx.abc.codec.Codec.evolve`);
  :data:`DEFAULT_SPECS` when not set;
- ``detects_corruption``: ``True`` when every corrupted input must raise (checksums);
  otherwise a decoder may also return a result of the right size;
- ``deterministic``: ``False`` when equal input may encode to different bytes;
- ``wrong_values``: values no configuration field accepts (:data:`WRONG_VALUES`).

The kinds: :class:`ArrayArrayCodecTests` (e.g. ``transpose``), :class:`ArrayBytesCodecTests`
(e.g. ``bytes``) and :class:`BytesBytesCodecTests` (compressors and checksums), all
built on :class:`CodecTests`::

    from zarrx.testing.codecs import BytesBytesCodecTests

    class TestMyCompressor(BytesBytesCodecTests):
        codecs = (MyCompressor(level=1), MyCompressor(level=9))

Every codec zarrx ships and every plugin codec runs these tests, so they are the
executable form of :mod:`zarrx.abc.codec`: round trips on random data (hypothesis),
configuration round trips through JSON, strict configuration parsing, truncated and
bit-flipped input (:class:`~zarrx.errors.CodecError`, never another exception or a crash),
``max_size`` refusal, the ``max_encoded_size`` bound, and decoding from several threads.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from zarrx.abc.codec import (
    ArrayArrayCodec,
    ArrayBytesCodec,
    BytesBytesCodec,
    ChunkSpec,
    Codec,
)
from zarrx.errors import CodecError, MetadataError

__all__ = [
    "DEFAULT_SPECS",
    "WRONG_VALUES",
    "ArrayArrayCodecTests",
    "ArrayBytesCodecTests",
    "BytesBytesCodecTests",
    "CodecTests",
    "chunk_arrays",
    "spec",
]

_NAME = re.compile(r"^[a-z][a-z0-9-_.]+$")
#: Values no configuration field of any codec accepts.
WRONG_VALUES: tuple[Any, ...] = ([[]], {"zarrx": 1}, "zarrx-not-a-value", 1.5)
_SETTINGS = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[
        HealthCheck.differing_executors,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
    ],
)


def spec(shape: tuple[int, ...], dtype: Any, fill_value: Any = 0) -> ChunkSpec:
    """A :class:`ChunkSpec` with a native-endian ``dtype`` and a fill value of that type."""
    dt = np.dtype(dtype)
    dt = dt.newbyteorder("=") if dt.byteorder in "<>" else dt
    fill = np.zeros((), dt)
    if not (isinstance(fill_value, int) and fill_value == 0):
        fill[()] = fill_value
    return ChunkSpec(shape=tuple(shape), dtype=dt, fill_value=fill[()])


DEFAULT_SPECS: tuple[ChunkSpec, ...] = (
    spec((0,), "uint8"),
    spec((1,), "uint8"),
    spec((), "float64"),
    spec((1000,), "float32"),
    spec((37, 29), "int16"),
    spec((16, 16, 4), "float64"),
    spec((100,), "complex64"),
    spec((64,), "bool"),
    spec((5, 7), [("a", "int32"), ("b", "float64")]),
    spec((128, 128), "float32"),
    spec((3001,), "uint8"),
)


@st.composite
def chunk_arrays(draw: Any, chunk: ChunkSpec) -> np.ndarray:
    """Arrays of ``chunk``'s shape and dtype: hypothesis-chosen values (mostly one value,
    so compressible), uniformly random bytes (incompressible), or a smooth ramp."""
    kind = draw(st.sampled_from(["hypothesis", "random", "ramp"]))
    n = int(np.prod(chunk.shape, dtype=np.int64))
    if kind == "random":
        seed = draw(st.integers(0, 2**32 - 1))
        raw = np.random.default_rng(seed).integers(0, 256, chunk.nbytes, dtype=np.uint8)
        if chunk.dtype.kind == "b":
            raw &= 1  # only 0 and 1 are booleans
        return raw.view(chunk.dtype).reshape(chunk.shape)
    if kind == "ramp" and chunk.dtype.fields is None and chunk.dtype.kind in "iufcb":
        ramp = np.arange(n) // draw(st.integers(1, 16))
        return ramp.astype(chunk.dtype).reshape(chunk.shape)
    return draw(hnp.arrays(chunk.dtype, chunk.shape))


def _bytes_of(arr: np.ndarray) -> bytes:
    return np.ascontiguousarray(arr).tobytes()


def _as_bytes(buf: Any) -> bytes:
    view = memoryview(buf)
    return view.tobytes() if view.ndim <= 1 else view.cast("B").tobytes()


def _flip_bits(data: bytes, positions: Sequence[int]) -> bytes:
    out = bytearray(data)
    for bit in positions:
        out[bit // 8] ^= 1 << (bit % 8)
    return bytes(out)


class CodecTests:
    """What every codec must do, whatever its kind."""

    codecs: ClassVar[Sequence[Codec]] = ()
    specs: ClassVar[Sequence[ChunkSpec]] = DEFAULT_SPECS
    detects_corruption: ClassVar[bool] = False
    deterministic: ClassVar[bool] = True
    #: Values every configuration field of the tested codecs must refuse.
    wrong_values: ClassVar[tuple[Any, ...]] = WRONG_VALUES

    # -- helpers -------------------------------------------------------------------------

    def cases(self) -> list[tuple[Codec, ChunkSpec]]:
        """(evolved codec, spec) for every pair the codec accepts."""
        pairs = []
        for codec in self.codecs:
            for chunk in self.specs:
                evolved = codec.evolve(chunk)
                try:
                    evolved.validate(chunk)
                except MetadataError:
                    continue
                pairs.append((evolved, chunk))
        assert pairs, f"{type(self).__name__}: no codec accepts any of the specs"
        return pairs

    def sample(self) -> tuple[Codec, ChunkSpec, np.ndarray]:
        """The case with the largest chunk up to 64 KiB, and deterministic data for it
        (random but compressible: small values with a period)."""
        sized = [(chunk.nbytes, i) for i, (_, chunk) in enumerate(self.cases())]
        candidates = [pair for pair in sized if 0 < pair[0] <= 65536]
        assert candidates, f"{type(self).__name__}: no case with a chunk of 1 B to 64 KiB"
        codec, chunk = self.cases()[max(candidates)[1]]
        rng = np.random.default_rng(1234)
        raw = (np.arange(chunk.nbytes) % 7).astype(np.uint8)
        raw += rng.integers(0, 4, chunk.nbytes, dtype=np.uint8)
        if chunk.dtype.kind == "b":
            raw &= 1
        return codec, chunk, raw.view(chunk.dtype).reshape(chunk.shape)

    def check_round_trip(self, codec: Codec, chunk: ChunkSpec, arr: np.ndarray) -> None:
        raise NotImplementedError

    # -- the tests -----------------------------------------------------------------------

    def test_codecs_are_given(self) -> None:
        assert self.codecs, f"{type(self).__name__} sets no codecs to test"
        assert all(isinstance(codec, Codec) for codec in self.codecs)

    def test_name_and_aliases(self) -> None:
        for codec in self.codecs:
            cls = type(codec)
            assert isinstance(cls.name, str)
            assert _NAME.match(cls.name), f"{cls.name!r} is not a valid Zarr v3.1 name"
            assert isinstance(cls.aliases, tuple)
            assert all(isinstance(alias, str) and alias for alias in cls.aliases)
            assert cls.name not in cls.aliases
            assert len(set(cls.aliases)) == len(cls.aliases)

    def test_config_round_trip(self) -> None:
        for codec in self.codecs:
            for candidate in {codec, *(c for c, _ in self.cases())}:
                cls = type(candidate)
                config = candidate.to_config()
                assert isinstance(config, dict)
                assert cls.from_config(config) == candidate
                as_json = json.loads(json.dumps(candidate.to_dict()))
                assert as_json["name"] == cls.name
                assert set(as_json) <= {"name", "configuration"}
                assert ("configuration" in as_json) == bool(config)
                assert cls.from_config(as_json.get("configuration", {})) == candidate
                assert hash(cls.from_config(as_json.get("configuration", {}))) == hash(candidate)
                assert repr(candidate).startswith(cls.__name__)

    def test_evolve_is_idempotent(self) -> None:
        for codec, chunk in self.cases():
            assert codec.evolve(chunk) == codec
            assert codec.evolve(chunk).to_dict() == codec.to_dict()

    def test_unknown_field_refused(self) -> None:
        for codec in self.codecs:
            config = {**codec.to_config(), "zarrx-unknown-field": 1}
            with pytest.raises(MetadataError) as info:
                type(codec).from_config(config)
            assert type(codec).name in str(info.value)
            assert "zarrx-unknown-field" in str(info.value)

    def test_wrong_types_refused(self) -> None:
        for codec in self.codecs:
            config = codec.to_config()
            for field in config:
                for wrong in self.wrong_values:
                    with pytest.raises(MetadataError) as info:
                        type(codec).from_config({**config, field: wrong})
                    assert type(codec).name in str(info.value)
                    assert field in str(info.value)

    def test_configuration_must_be_an_object(self) -> None:
        for codec in self.codecs:
            for wrong in (["x"], "x", 1, None):
                with pytest.raises(MetadataError) as info:
                    type(codec).from_config(wrong)  # type: ignore[arg-type]
                assert type(codec).name in str(info.value)

    @_SETTINGS
    @given(data=st.data())
    def test_round_trip(self, data: st.DataObject) -> None:
        codec, chunk = data.draw(st.sampled_from(self.cases()), label="case")
        arr = data.draw(chunk_arrays(chunk), label="chunk")
        self.check_round_trip(codec, chunk, arr)


class ArrayArrayCodecTests(CodecTests):
    """Array → array codecs (``transpose``)."""

    def check_round_trip(self, codec: Codec, chunk: ChunkSpec, arr: np.ndarray) -> None:
        assert isinstance(codec, ArrayArrayCodec)
        encoded_spec = codec.resolve_spec(chunk)
        encoded = codec.encode(arr, chunk)
        assert encoded.shape == encoded_spec.shape
        assert encoded.dtype == encoded_spec.dtype
        decoded = codec.decode(encoded, chunk)
        assert decoded.shape == chunk.shape
        assert decoded.dtype == chunk.dtype
        assert _bytes_of(decoded) == _bytes_of(arr)

    def test_resolve_spec_keeps_size(self) -> None:
        for codec, chunk in self.cases():
            assert isinstance(codec, ArrayArrayCodec)
            resolved = codec.resolve_spec(chunk)
            assert isinstance(resolved, ChunkSpec)
            assert resolved.nbytes == chunk.nbytes or resolved.dtype != chunk.dtype


class _SerialisedTests(CodecTests):
    """Shared by the codecs whose output is bytes: corruption and truncation."""

    def encode_sample(self) -> tuple[Codec, ChunkSpec, np.ndarray, bytes]:
        raise NotImplementedError

    def try_decode(self, codec: Codec, chunk: ChunkSpec, data: bytes) -> None:
        """Decode corrupt ``data``: a CodecError, or (without integrity checks) a result of
        the right size. Any other exception fails the test."""
        raise NotImplementedError

    def test_truncated_input(self) -> None:
        codec, chunk, _, encoded = self.encode_sample()
        n = len(encoded)
        cuts = sorted({0, 1, 4, n // 2, n - 4, n - 1} & set(range(n)))
        assert cuts
        for cut in cuts:
            with pytest.raises(CodecError):
                self.try_decode(codec, chunk, encoded[:cut])

    def test_extended_input(self) -> None:
        # Trailing bytes: a CodecError, or a result of the right size (``try_decode``).
        codec, chunk, _, encoded = self.encode_sample()
        outcomes = []
        for tail in (b"\0", b"\xff" * 7):
            try:
                self.try_decode(codec, chunk, encoded + tail)
            except CodecError:
                outcomes.append("refused")
            else:
                outcomes.append("decoded")
        assert len(outcomes) == 2

    @_SETTINGS
    @given(data=st.data())
    def test_bit_flips(self, data: st.DataObject) -> None:
        codec, chunk, _, encoded = self.encode_sample()
        nbits = len(encoded) * 8
        positions = data.draw(
            st.lists(st.integers(0, nbits - 1), min_size=1, max_size=3, unique=True),
            label="bits",
        )
        corrupt = _flip_bits(encoded, positions)
        try:
            self.try_decode(codec, chunk, corrupt)
        except CodecError:
            return
        assert not self.detects_corruption, f"{type(codec).__name__} missed flipped bits"

    @_SETTINGS
    @given(data=st.data())
    def test_random_garbage(self, data: st.DataObject) -> None:
        codec, chunk, _, encoded = self.encode_sample()
        garbage = data.draw(
            st.one_of(
                st.binary(max_size=64),
                st.binary(min_size=len(encoded), max_size=len(encoded)),
            ),
            label="garbage",
        )
        try:
            self.try_decode(codec, chunk, garbage)
        except CodecError:
            return
        if self.detects_corruption:
            # Accepted only if it is a valid encoding: re-encoding gives it back.
            assert self.reencoded(codec, chunk, garbage) == garbage

    def test_decode_from_threads(self) -> None:
        codec, chunk, arr, encoded = self.encode_sample()
        expected = self.decoded_bytes(codec, chunk, encoded)
        errors: list[BaseException] = []

        def work() -> None:
            try:
                for _ in range(20):
                    assert self.decoded_bytes(codec, chunk, encoded) == expected
            except BaseException as e:  # pragma: no cover - reported below
                errors.append(e)

        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors
        assert expected == _bytes_of(arr)

    def decoded_bytes(self, codec: Codec, chunk: ChunkSpec, encoded: bytes) -> bytes:
        raise NotImplementedError

    def reencoded(self, codec: Codec, chunk: ChunkSpec, encoded: bytes) -> bytes:
        raise NotImplementedError


class ArrayBytesCodecTests(_SerialisedTests):
    """Array → bytes codecs (``bytes``)."""

    def encode_sample(self) -> tuple[Codec, ChunkSpec, np.ndarray, bytes]:
        codec, chunk, arr = self.sample()
        assert isinstance(codec, ArrayBytesCodec)
        return codec, chunk, arr, _as_bytes(codec.encode(arr, chunk))

    def decoded_bytes(self, codec: Codec, chunk: ChunkSpec, encoded: bytes) -> bytes:
        assert isinstance(codec, ArrayBytesCodec)
        decoded = codec.decode(encoded, chunk)
        return _bytes_of(np.asarray(decoded).astype(chunk.dtype))

    def reencoded(self, codec: Codec, chunk: ChunkSpec, encoded: bytes) -> bytes:
        assert isinstance(codec, ArrayBytesCodec)
        return _as_bytes(codec.encode(codec.decode(encoded, chunk).astype(chunk.dtype), chunk))

    def try_decode(self, codec: Codec, chunk: ChunkSpec, data: bytes) -> None:
        assert isinstance(codec, ArrayBytesCodec)
        decoded = codec.decode(data, chunk)
        assert decoded.shape == chunk.shape
        assert decoded.dtype.newbyteorder("=") == chunk.dtype.newbyteorder("=")

    def check_round_trip(self, codec: Codec, chunk: ChunkSpec, arr: np.ndarray) -> None:
        assert isinstance(codec, ArrayBytesCodec)
        encoded = _as_bytes(codec.encode(arr, chunk))
        exact = codec.encoded_size(chunk)
        if exact is not None:
            assert len(encoded) == exact
        bound = codec.max_encoded_size(chunk)
        if bound is not None:
            assert len(encoded) <= bound
        for source in (encoded, bytearray(encoded), memoryview(encoded)):
            decoded = codec.decode(source, chunk)
            assert decoded.shape == chunk.shape
            assert _bytes_of(np.asarray(decoded).astype(chunk.dtype)) == _bytes_of(arr)


class BytesBytesCodecTests(_SerialisedTests):
    """Bytes → bytes codecs (compressors, checksums)."""

    def encode_sample(self) -> tuple[Codec, ChunkSpec, np.ndarray, bytes]:
        codec, chunk, arr = self.sample()
        assert isinstance(codec, BytesBytesCodec)
        return codec, chunk, arr, _as_bytes(codec.encode(_bytes_of(arr)))

    def decoded_bytes(self, codec: Codec, chunk: ChunkSpec, encoded: bytes) -> bytes:
        assert isinstance(codec, BytesBytesCodec)
        return _as_bytes(codec.decode(encoded, chunk.nbytes))

    def reencoded(self, codec: Codec, chunk: ChunkSpec, encoded: bytes) -> bytes:
        assert isinstance(codec, BytesBytesCodec)
        return _as_bytes(codec.encode(codec.decode(encoded, None)))

    def try_decode(self, codec: Codec, chunk: ChunkSpec, data: bytes) -> None:
        assert isinstance(codec, BytesBytesCodec)
        decoded = codec.decode(data, chunk.nbytes)
        assert memoryview(decoded).nbytes <= chunk.nbytes

    def check_round_trip(self, codec: Codec, chunk: ChunkSpec, arr: np.ndarray) -> None:
        assert isinstance(codec, BytesBytesCodec)
        raw = _bytes_of(arr)
        encoded = _as_bytes(codec.encode(raw))
        assert len(encoded) <= codec.max_encoded_size(len(raw))
        # Any buffer is accepted (and, for most codecs, encodes to the same bytes).
        contiguous = np.ascontiguousarray(arr)
        for source in (bytearray(raw), memoryview(raw), contiguous):
            again = _as_bytes(codec.encode(source))
            if self.deterministic:
                assert again == encoded
            assert _as_bytes(codec.decode(again, len(raw))) == raw
        for stored in (encoded, bytearray(encoded), memoryview(encoded)):
            assert _as_bytes(codec.decode(stored, len(raw))) == raw
        assert _as_bytes(codec.decode(np.frombuffer(encoded, np.uint8), None)) == raw
        if raw:
            with pytest.raises(CodecError):
                codec.decode(encoded, len(raw) - 1)

    def test_max_size_refused(self) -> None:
        for codec, chunk in self.cases():
            if not chunk.nbytes:
                continue
            assert isinstance(codec, BytesBytesCodec)
            raw = np.zeros(chunk.nbytes, np.uint8).tobytes()  # the most compressible input
            encoded = codec.encode(raw)
            for limit in (0, chunk.nbytes // 2, chunk.nbytes - 1):
                with pytest.raises(CodecError):
                    codec.decode(encoded, limit)
            assert _as_bytes(codec.decode(encoded, chunk.nbytes)) == raw

    def test_max_encoded_size_bound(self) -> None:
        rng = np.random.default_rng(7)
        for codec in {c for c, _ in self.cases()}:
            assert isinstance(codec, BytesBytesCodec)
            for n in (0, 1, 15, 255, 4096, 65536 + 7, 200_000, 1 << 20):
                noise = rng.integers(0, 256, n, dtype=np.uint8).tobytes()
                for raw in (noise, bytes(n)):
                    encoded = codec.encode(raw)
                    assert memoryview(encoded).nbytes <= codec.max_encoded_size(n), (codec, n)
            assert codec.max_encoded_size(10**6) >= 10**6

    def test_empty(self) -> None:
        for codec in {c for c, _ in self.cases()}:
            assert isinstance(codec, BytesBytesCodec)
            encoded = codec.encode(b"")
            assert _as_bytes(codec.decode(encoded, 0)) == b""
            assert _as_bytes(codec.decode(encoded, None)) == b""
