"""Any numcodecs codec as a zarrx codec: the ``numcodecs.<id>`` namespace and v2 chains.

- Spec: https://github.com/zarr-developers/zarr-extensions/tree/main/codecs (the
  ``numcodecs.*`` entries); the numcodecs documentation for each codec's configuration.
- v3 name: ``numcodecs.<id>`` (as zarr-python 3 writes them, e.g. ``numcodecs.delta``);
  configuration = the numcodecs config without ``id``. Every id numcodecs ships is registered
  in ``pyproject.toml`` (entry points to the :class:`Numcodec` objects below); a
  ``numcodecs.<id>`` that another package registers with numcodecs is found through
  numcodecs' own registry and treated as bytes→bytes.
- v2 id: the numcodecs id itself: ``compressor`` and ``filters`` entries are numcodecs
  configs with an ``id``.
- Draft URI: ``https://purl.org/zarr/spec/codec/<id>/<version>`` as zarr-python 2.18 writes
  a compressor (``zarrx/metadata/v3_draft/codecs.py``).
- Roles, from what each codec does (as zarr-python 3.4 places them): filters that take and
  give arrays (:data:`ARRAY_FILTERS`: delta, fixedscaleoffset, quantize, astype, packbits,
  bitround, categorize) are array→array codecs; codecs that compress typed arrays into
  bytes (:data:`SERIALIZERS`: pcodec, zfpy) are array→bytes codecs, the ``serializer`` of a
  v3 array (the ``compressor`` of a v2 array); every other codec is bytes→bytes.
- Filters keep the chunk's shape (numcodecs' delta and fixedscaleoffset return it
  flattened; it is put back), except packbits (a header byte, then 8 elements a byte).
  Their encoded data type is what they produce, except bitround, whose integer view of the
  rounded floats is viewed back as those floats. Defaults zarr-python 3.4 fills from the
  array's data type are filled alike: ``dtype`` of quantize and fixedscaleoffset,
  ``decode_dtype`` of astype, ``elementsize`` of shuffle.
- Optional packages: ``numcodecs.pcodec`` needs ``pcodec`` (``pip install 'zarrx[pcodec]'``),
  ``numcodecs.zfpy`` needs ``zfpy`` (``pip install 'zarrx[zfp]'``); without them a
  :class:`~zarrx.errors.MissingCodecError` names the extra.
- Known incompatibilities: numcodecs decoders do not take an output bound, so the size is
  checked after decoding; zarrx's own ``blosc``, ``zstd`` and ``gzip`` serve those ids, and
  its ``crc32c`` the v3 ``numcodecs.crc32c`` (:class:`KeepName` writes them back under the
  name they were read with).
- Refused: ``pickle`` (v3 ``numcodecs.pickle``), whose decoding unpickles stored bytes and
  so runs whatever code the data's writer chose; an :class:`~zarrx.errors.UnsafeCodecError`
  says so, at open and again at decode, unless the process opted in with
  ``zarrx.config.set(allow_pickle=True)``. numcodecs' other object codecs (``json2``,
  ``msgpack2``, ``vlen-*``) only parse their input.

>>> NumcodecsBytesCodec.from_id("zlib", {"level": 1}).to_dict()
{'name': 'numcodecs.zlib', 'configuration': {'level': 1}}
>>> type(numcodecs_delta.from_config({"dtype": "<i4"})).__name__
'NumcodecsArrayCodec'
"""

from __future__ import annotations

import pickle
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Self

import numpy as np

from zarrx import imports
from zarrx.abc.codec import (
    ArrayArrayCodec,
    ArrayBytesCodec,
    Buffer,
    BytesBytesCodec,
    ChunkSpec,
    NativeStep,
    ShuffledLayout,
)
from zarrx.config import get as setting
from zarrx.errors import (
    CodecError,
    MetadataError,
    MissingCodecError,
    UnknownCodecError,
    UnsafeCodecError,
)

#: numcodecs ids that transform arrays into arrays.
ARRAY_FILTERS = frozenset({
    "delta", "fixedscaleoffset", "quantize", "astype", "packbits", "bitround", "categorize",
})

#: numcodecs ids that compress typed arrays into bytes (array→bytes codecs).
SERIALIZERS = frozenset({"pcodec", "zfpy"})

#: The zarrx extra that installs the package a numcodecs id needs.
EXTRAS = {"pcodec": "pcodec", "zfpy": "zfp"}

#: numcodecs ids whose decoding unpickles stored bytes.
UNPICKLING = frozenset({"pickle"})

#: numcodecs' defaults that zarr-python 3.4 fills from the array's data type:
#: id → (configuration key, what of the data type).
_FILLED = {"quantize": ("dtype", "str"), "fixedscaleoffset": ("dtype", "str"),
           "astype": ("decode_dtype", "str"), "shuffle": ("elementsize", "itemsize")}


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
            if codec_id in EXTRAS:
                raise MissingCodecError(
                    f"codec 'numcodecs.{codec_id}' needs the package {codec_id!r}, which is "
                    f"not installed (or numcodecs cannot load it): pip install "
                    f"'zarrx[{EXTRAS[codec_id]}]'"
                ) from None
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
    """What the wrappers share: an id, a config and the numcodecs object."""

    codec_id: str = ""
    name: ClassVar[str] = "numcodecs"

    def __init__(self, codec_id: str, config: Mapping[str, Any]) -> None:
        self.codec_id = codec_id
        self.config = {k: v for k, v in dict(config).items() if k != "id"}
        self.name = f"numcodecs.{codec_id}"  # type: ignore[misc]
        self.unpickles = codec_id in UNPICKLING
        if self.unpickles:
            check_unpickling(self.name)
        filled = _FILLED.get(codec_id)
        if filled is not None and self.config.get(filled[0]) is None:
            # Built by :meth:`evolve` once the data type is known (numcodecs' quantize and
            # astype cannot be built without it).
            self._codec: Any = None
        else:
            self._codec = get_numcodecs(codec_id, self.config)

    @property
    def codec(self) -> Any:
        """The numcodecs object (after :meth:`evolve` for a codec that needs the data type)."""
        if self._codec is None:
            key = _FILLED[self.codec_id][0]
            raise MetadataError(
                f"codec {self.name!r}: its configuration field {key!r} is filled from the "
                "array's data type, which this codec has not been given"
            )
        return self._codec

    def _decode(self, data: Any) -> Any:
        """numcodecs' decode; for an unpickling codec (opted into, and checked again now:
        the setting may have changed since the array was opened), the unpickling itself,
        as numcodecs' own may refuse by a switch of its own."""
        if self.unpickles:
            check_unpickling(self.name)
            return pickle.loads(data)
        return self.codec.decode(data)

    def evolve(self, spec: ChunkSpec) -> Self:
        """Fill the defaults zarr-python 3.4 fills from the data type (:data:`_FILLED`)."""
        filled = _FILLED.get(self.codec_id)
        if filled is None or self.config.get(filled[0]) is not None:
            return self
        key, what = filled
        value = spec.dtype.itemsize if what == "itemsize" else str(spec.dtype)
        return type(self)(self.codec_id, {**self.config, key: value})

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


def _size(shape: tuple[int, ...]) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


class NumcodecsArrayCodec(_Numcodecs, ArrayArrayCodec):
    """A numcodecs filter as an array→array codec (dtype changes allowed)."""

    def resolve_spec(self, spec: ChunkSpec) -> ChunkSpec:
        """The encoded spec: the chunk's shape (packbits: its packed length) and the dtype
        the filter produces, found by encoding a few zeros (never a whole chunk, which the
        metadata may make arbitrarily large)."""
        n = _size(spec.shape)
        sample = self._encode(np.zeros(min(n, 8), dtype=spec.dtype), spec.dtype)
        if self.codec_id == "packbits":
            shape: tuple[int, ...] = (1 + -(-n // 8),)
        elif sample.size == min(n, 8):
            shape = spec.shape
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

    def _encode(self, chunk: np.ndarray, dtype: np.dtype) -> np.ndarray:
        # A copy: numcodecs filters may write into their input (bitround rounds in place).
        data = np.array(chunk, dtype=dtype, order="C", copy=True)
        codec = self.codec
        try:
            out = codec.encode(data)
        except Exception as e:
            raise CodecError(f"{self.name}: encoding failed: {e}") from None
        out = np.asarray(out) if isinstance(out, np.ndarray) else np.frombuffer(out, "u1")
        if self.codec_id == "bitround" and out.dtype.kind in "iu" and dtype.kind == "f":
            out = out.view(dtype)  # numcodecs returns the rounded floats' bits as integers
        return out

    def encode(self, chunk: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        out = self._encode(chunk, spec.dtype)
        if self.codec_id == "packbits":
            return out.reshape(-1)
        return out.reshape(spec.shape)

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
        return np.ascontiguousarray(arr).reshape(-1).view(spec.dtype).reshape(spec.shape)


class NumcodecsArrayBytesCodec(_Numcodecs, ArrayBytesCodec):
    """A numcodecs codec that compresses typed arrays (pcodec, zfpy) as an array→bytes
    codec: it sees the chunk's elements (in C order, native byte order) and their type."""

    def validate(self, spec: ChunkSpec) -> None:
        """Ask the codec to encode one element of the chunk's type and dimensions: pcodec
        and zfpy each take only some types (zfpy: 1 to 4 dimensions too)."""
        sample = np.zeros((1,) * max(len(spec.shape), 1), dtype=spec.dtype)
        try:
            self.codec.encode(sample)
        except Exception as e:
            raise MetadataError(
                f"{self.name} cannot encode chunks of {spec.dtype} with {len(spec.shape)} "
                f"dimensions: {e}"
            ) from None

    def encode(self, chunk: np.ndarray, spec: ChunkSpec) -> Buffer:
        arr = np.asarray(chunk)
        if arr.shape != spec.shape:
            raise CodecError(
                f"{self.name}: chunk of shape {arr.shape} does not match the chunk shape "
                f"{spec.shape}"
            )
        data = np.ascontiguousarray(arr, dtype=spec.dtype)
        if not spec.shape:
            data = data.reshape(1)  # zfpy takes 1 to 4 dimensions; a 0-d chunk is one value
        try:
            return self.codec.encode(data)
        except Exception as e:
            raise CodecError(f"{self.name}: encoding failed: {e}") from None

    def decode(self, data: Buffer, spec: ChunkSpec) -> np.ndarray:
        try:
            out = self._decode(bytes(data) if not isinstance(data, bytes) else data)
        except Exception as e:  # numcodecs raises many types for corrupt input
            raise CodecError(f"{self.name}: corrupt or truncated data: {e}") from None
        arr = np.asarray(out)
        if arr.dtype != spec.dtype or arr.size != _size(spec.shape):
            raise CodecError(
                f"{self.name}: decoded {arr.size} elements of {arr.dtype}, expected a chunk "
                f"of shape {spec.shape} and dtype {spec.dtype}"
            )
        return arr.reshape(spec.shape)


class KeepName(BytesBytesCodec):
    """zarrx's own codec serving a ``numcodecs.<id>`` entry (safe, GIL-free decoding),
    written back under the name and configuration it was read with."""

    def __init__(self, inner: BytesBytesCodec, name: str, config: Mapping[str, Any]) -> None:
        self.inner = inner
        self.name = name  # type: ignore[misc]
        self.config = dict(config)

    @classmethod
    def from_config(cls, configuration: Mapping[str, Any]) -> Self:
        raise MetadataError("KeepName is built by numcodecs_v3, not from metadata")

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


#: numcodecs ids zarrx's own codecs of the same name serve.
_OWN = ("blosc", "zstd", "gzip", "vlen-utf8", "vlen-bytes")


def numcodecs_codec(codec_id: str, config: Mapping[str, Any]) -> Any:
    """The zarrx codec for a numcodecs id (a v2 entry, or a numcodecs codec object's
    config): zarrx's own where it has one, else a wrapper in the codec's role."""
    from zarrx import registry

    config = {k: v for k, v in config.items() if k != "id"}
    if codec_id in _OWN:
        return registry.codecs.get(codec_id).from_config(config)
    if codec_id in ARRAY_FILTERS:
        return NumcodecsArrayCodec(codec_id, config)
    if codec_id in SERIALIZERS:
        return NumcodecsArrayBytesCodec(codec_id, config)
    return NumcodecsBytesCodec(codec_id, config)


def numcodecs_v3(codec_id: str, config: Mapping[str, Any]) -> Any:
    """The codec of a v3 ``numcodecs.<id>`` entry: :func:`numcodecs_codec`, with zarrx's
    own bytes→bytes codecs kept under the entry's name and configuration."""
    if not isinstance(config, Mapping):
        raise MetadataError(
            f"codec 'numcodecs.{codec_id}': configuration must be an object, got {config!r}"
        )
    if codec_id == "crc32c" and config.get("location", "end") == "end":
        from zarrx import registry

        # numcodecs' CRC32C appends the same 4 little-endian bytes as the core codec
        codec: Any = registry.codecs.get("crc32c").from_config({})
    else:
        codec = numcodecs_codec(codec_id, config)
    name = f"numcodecs.{codec_id}"
    if isinstance(codec, BytesBytesCodec) and codec.name != name:
        codec = KeepName(codec, name, {k: v for k, v in config.items() if k != "id"})
    return codec


@dataclass(frozen=True)
class Numcodec:
    """A ``numcodecs.<id>`` name as the codec registry resolves it (``pyproject.toml``'s
    entry points name these objects): builds the codec from its v3 configuration."""

    codec_id: str

    @property
    def name(self) -> str:
        return f"numcodecs.{self.codec_id}"

    def from_config(self, configuration: Mapping[str, Any]) -> Any:
        return numcodecs_v3(self.codec_id, configuration)


numcodecs_adler32 = Numcodec("adler32")
numcodecs_astype = Numcodec("astype")
numcodecs_bitround = Numcodec("bitround")
numcodecs_blosc = Numcodec("blosc")
numcodecs_bz2 = Numcodec("bz2")
numcodecs_categorize = Numcodec("categorize")
numcodecs_crc32 = Numcodec("crc32")
numcodecs_crc32c = Numcodec("crc32c")
numcodecs_delta = Numcodec("delta")
numcodecs_fixedscaleoffset = Numcodec("fixedscaleoffset")
numcodecs_fletcher32 = Numcodec("fletcher32")
numcodecs_gzip = Numcodec("gzip")
numcodecs_jenkins_lookup3 = Numcodec("jenkins_lookup3")
numcodecs_lz4 = Numcodec("lz4")
numcodecs_lzma = Numcodec("lzma")
numcodecs_packbits = Numcodec("packbits")
numcodecs_pcodec = Numcodec("pcodec")
numcodecs_quantize = Numcodec("quantize")
numcodecs_shuffle = Numcodec("shuffle")
numcodecs_zfpy = Numcodec("zfpy")
numcodecs_zlib = Numcodec("zlib")
numcodecs_zstd = Numcodec("zstd")


def to_numcodecs_config(codec: Any, itemsize: int) -> dict[str, Any]:
    """The v2 (numcodecs) form of a zarrx codec."""
    if isinstance(codec, _Numcodecs):
        return codec.to_v2()
    if isinstance(codec, KeepName):
        return {"id": codec.name.removeprefix("numcodecs."), **codec.config}
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
