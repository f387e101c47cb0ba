"""Any numcodecs codec as a zarrx codec: the ``numcodecs.<id>`` namespace and v2 chains.

- v3 names: ``numcodecs.<id>`` (as zarr-python 3 writes them, e.g. ``numcodecs.delta``);
  configuration = the numcodecs config without ``id``.
- v2: ``compressor`` and ``filters`` entries are numcodecs configs with an ``id``.
- Compressors (bytes in, bytes out) wrap as bytes→bytes codecs; filters (arrays in, arrays
  out, e.g. Delta, FixedScaleOffset, AsType, PackBits) as array→array codecs whose encoded
  spec is found by encoding one chunk of zeros, so shape or dtype changes are handled.
- Known incompatibilities: numcodecs decoders do not take an output bound, so the size is
  checked after decoding; prefer zarrx's own ``blosc``, ``zstd`` and ``gzip`` (used
  automatically for those ids).
- Refused: ``pickle`` (v3 ``numcodecs.pickle``), whose decoding unpickles stored bytes and
  so runs whatever code the data's writer chose; an :class:`~zarrx.errors.UnsafeCodecError`
  says so, at open and again at decode, unless the process opted in with
  ``zarrx.config.set(allow_pickle=True)``. numcodecs' other object codecs (``json2``,
  ``msgpack2``, ``vlen-*``) only parse their input.

>>> NumcodecsBytesCodec.from_id("zlib", {"level": 1}).to_dict()
{'name': 'numcodecs.zlib', 'configuration': {'level': 1}}
"""

from __future__ import annotations

import pickle
from collections.abc import Mapping
from typing import Any, ClassVar, Self

import numpy as np

from zarrx import imports
from zarrx.abc.codec import (
    ArrayArrayCodec,
    Buffer,
    BytesBytesCodec,
    ChunkSpec,
    NativeStep,
    ShuffledLayout,
)
from zarrx.config import get as setting
from zarrx.errors import CodecError, MetadataError, UnknownCodecError, UnsafeCodecError

#: numcodecs ids that transform arrays (the rest are treated as bytes→bytes).
ARRAY_FILTERS = frozenset({
    "delta", "fixedscaleoffset", "quantize", "astype", "packbits", "bitround", "categorize",
})

#: numcodecs ids whose decoding unpickles stored bytes.
UNPICKLING = frozenset({"pickle"})


def check_unpickling(name: str) -> None:
    """Refuse a codec that unpickles, unless the process opted in."""
    if not setting("allow_pickle"):
        raise UnsafeCodecError(
            f"codec {name!r} unpickles stored bytes, and unpickling runs whatever code the "
            "writer of the data chose, so it is refused. Only if you trust this data as much "
            "as your own code: zarrx.config.set(allow_pickle=True)"
        )


def get_numcodecs(codec_id: str, config: Mapping[str, Any]) -> Any:
    """The numcodecs codec object for ``codec_id`` and ``config``."""
    numcodecs = imports.import_module("numcodecs")
    try:
        with imports.lock:  # numcodecs' registry loads entry points on a miss, without a lock
            return numcodecs.get_codec({"id": codec_id, **config})
    except (ValueError, KeyError) as e:
        if str(e).startswith("codec not available"):
            raise UnknownCodecError(
                f"unknown numcodecs codec {codec_id!r}: neither numcodecs nor an installed "
                "package registers it"
            ) from None
        raise MetadataError(f"numcodecs codec {codec_id!r}: {e}") from None
    except TypeError as e:
        raise MetadataError(
            f"numcodecs codec {codec_id!r}: bad configuration {config!r}: {e}"
        ) from None


class _Numcodecs:
    """What both wrappers share: an id, a config and the numcodecs object."""

    codec_id: str = ""
    name: ClassVar[str] = "numcodecs"

    def __init__(self, codec_id: str, config: Mapping[str, Any]) -> None:
        self.codec_id = codec_id
        self.config = {k: v for k, v in dict(config).items() if k != "id"}
        self.name = f"numcodecs.{codec_id}"  # type: ignore[misc]
        self.unpickles = codec_id in UNPICKLING
        if self.unpickles:
            check_unpickling(self.name)
        self.codec = get_numcodecs(codec_id, self.config)

    def _decode(self, data: Any) -> Any:
        """numcodecs' decode; for an unpickling codec (opted into, and checked again now:
        the setting may have changed since the array was opened), the unpickling itself,
        as numcodecs' own may refuse by a switch of its own."""
        if self.unpickles:
            check_unpickling(self.name)
            return pickle.loads(data)
        return self.codec.decode(data)

    @classmethod
    def from_id(cls, codec_id: str, config: Mapping[str, Any]) -> Self:
        return cls(codec_id, config)

    @classmethod
    def from_config(cls, configuration: Mapping[str, Any]) -> Self:
        raise MetadataError(
            "a numcodecs codec needs its id: use the name 'numcodecs.<id>' in metadata"
        )

    def to_config(self) -> dict[str, Any]:
        return dict(self.config)

    def to_dict(self) -> dict[str, Any]:
        # zarr-python requires the key for numcodecs.* codecs, even when empty.
        return {"name": self.name, "configuration": self.to_config()}

    def to_v2(self) -> dict[str, Any]:
        return {"id": self.codec_id, **self.config}


class NumcodecsBytesCodec(_Numcodecs, BytesBytesCodec):
    """A numcodecs compressor or checksum as a bytes→bytes codec."""

    def encode(self, data: Buffer) -> Buffer:
        try:
            return self.codec.encode(data)
        except Exception as e:
            raise CodecError(f"{self.name}: encoding failed: {e}") from None

    def decode(self, data: Buffer, max_size: int | None) -> Buffer:
        try:
            out = self._decode(data)
        except UnsafeCodecError:
            raise
        except Exception as e:  # numcodecs raises many types for corrupt input
            raise CodecError(f"{self.name}: corrupt or truncated data: {e}") from None
        n = memoryview(out).nbytes
        if max_size is not None and n > max_size:
            raise CodecError(f"{self.name}: decoded {n} bytes, at most {max_size} expected")
        return out

    def max_encoded_size(self, n: int) -> int:
        # Generous: compressors may expand incompressible input slightly.
        return n + n // 8 + 1024


class NumcodecsArrayCodec(_Numcodecs, ArrayArrayCodec):
    """A numcodecs filter as an array→array codec (flattening, dtype changes allowed)."""

    def resolve_spec(self, spec: ChunkSpec) -> ChunkSpec:
        """The encoded spec, found by encoding a few zeros (never a whole chunk, which the
        metadata may make arbitrarily large): filters keep one output per element, except
        PackBits (a header byte, then 8 elements a byte)."""
        n = 1
        for s in spec.shape:
            n *= s
        sample = self._encode(np.zeros(min(n, 8), dtype=spec.dtype))
        if self.codec_id == "packbits":
            shape: tuple[int, ...] = (1 + -(-n // 8),)
        elif sample.size == min(n, 8):
            shape = (n,)
        else:
            raise MetadataError(
                f"{self.name}: this filter changes the number of elements; it cannot be used"
            )
        return ChunkSpec(shape, sample.dtype, np.zeros((), dtype=sample.dtype)[()])

    def validate(self, spec: ChunkSpec) -> None:
        if self.codec_id == "packbits" and spec.dtype.kind != "b":
            raise MetadataError(
                f"{self.name}: numcodecs' packbits filter packs bool arrays only (it reads "
                f"any chunk as bools), got {spec.dtype}; for other types use the v3 "
                "'packbits' codec"
            )

    def _encode(self, chunk: np.ndarray) -> np.ndarray:
        try:
            out = self.codec.encode(np.ascontiguousarray(chunk))
        except Exception as e:
            raise CodecError(f"{self.name}: encoding failed: {e}") from None
        return np.asarray(out) if isinstance(out, np.ndarray) else np.frombuffer(out, "u1")

    def encode(self, chunk: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        return self._encode(chunk)

    def decode(self, chunk: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        try:
            out = self._decode(np.ascontiguousarray(chunk))
        except UnsafeCodecError:
            raise
        except Exception as e:
            raise CodecError(f"{self.name}: corrupt data: {e}") from None
        arr = np.frombuffer(out, dtype=np.uint8) if not isinstance(out, np.ndarray) else out
        if arr.nbytes != spec.nbytes:
            raise CodecError(
                f"{self.name}: decoded {arr.nbytes} bytes, expected {spec.nbytes}"
            )
        return arr.reshape(-1).view(spec.dtype).reshape(spec.shape)


class KeepName(BytesBytesCodec):
    """zarrx's own codec serving a ``numcodecs.<id>`` entry (safe, GIL-free decoding),
    written back under the name and configuration it was read with."""

    def __init__(self, inner: BytesBytesCodec, name: str, config: Mapping[str, Any]) -> None:
        self.inner = inner
        self.name = name  # type: ignore[misc]
        self.config = dict(config)

    @classmethod
    def from_config(cls, configuration: Mapping[str, Any]) -> Self:
        raise MetadataError("KeepName is built by codec_from_json, not from metadata")

    def to_config(self) -> dict[str, Any]:
        return dict(self.config)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "configuration": self.to_config()}

    def evolve(self, spec: ChunkSpec) -> Self:
        return type(self)(self.inner.evolve(spec), self.name, self.config)

    def validate(self, spec: ChunkSpec) -> None:
        self.inner.validate(spec)

    def encode(self, data: Buffer) -> Buffer:
        return self.inner.encode(data)

    def decode(self, data: Buffer, max_size: int | None) -> Buffer:
        return self.inner.decode(data, max_size)

    def max_encoded_size(self, n: int) -> int:
        return self.inner.max_encoded_size(n)

    # The inner codec's capabilities (its fast paths), under this name.
    def decode_into(self, data: Buffer, out: Buffer) -> None:
        self.inner.decode_into(data, out)

    def decode_span(self, data: Buffer, start: int, stop: int, out: Any) -> bool:
        return self.inner.decode_span(data, start, stop, out)

    def partial_kind(self) -> Any:
        return self.inner.partial_kind()

    def shuffled_layout(self, itemsize: int, nbytes: int) -> ShuffledLayout | None:
        return self.inner.shuffled_layout(itemsize, nbytes)

    def native_step(self) -> NativeStep | None:
        return self.inner.native_step()


def numcodecs_codec(codec_id: str, config: Mapping[str, Any]) -> Any:
    """The zarrx codec for a numcodecs id: zarrx's own where it has one, else a wrapper."""
    from zarrx import registry

    config = {k: v for k, v in config.items() if k != "id"}
    if codec_id in ("blosc", "zstd", "gzip", "vlen-utf8", "vlen-bytes"):
        return registry.codecs.get(codec_id).from_config(config)
    if codec_id in ARRAY_FILTERS:
        return NumcodecsArrayCodec(codec_id, config)
    return NumcodecsBytesCodec(codec_id, config)


def to_numcodecs_config(codec: Any, itemsize: int) -> dict[str, Any]:
    """The v2 (numcodecs) form of a zarrx codec."""
    if isinstance(codec, _Numcodecs):
        return codec.to_v2()
    config = codec.to_config()
    if codec.name == "blosc":
        shuffles = {"noshuffle": 0, "shuffle": 1, "bitshuffle": 2, None: -1}  # None: automatic
        shuffle = shuffles[config.get("shuffle")]
        return {"id": "blosc", "cname": config["cname"], "clevel": config["clevel"],
                "shuffle": shuffle, "blocksize": config.get("blocksize", 0)}
    if codec.name == "zstd":
        out = {"id": "zstd", "level": config.get("level", 0)}
        if config.get("checksum"):  # numcodecs leaves it out when false
            out["checksum"] = True
        return out
    if codec.name == "gzip":
        return {"id": "gzip", "level": config.get("level", 5)}
    if codec.name in ("crc32c", "vlen-utf8", "vlen-bytes"):
        return {"id": codec.name}
    raise MetadataError(f"codec {codec.name!r} has no Zarr v2 (numcodecs) form")
