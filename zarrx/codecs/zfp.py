"""The ``zfp`` codec: chunks compressed by the zfp library, without zfp's header.

- Spec: https://github.com/zarr-developers/zarr-extensions/tree/main/codecs/zfp
- v3 name: ``zfp`` (zarrs also reads ``zarrs.zfp``; numcodecs' ``zfpy``, with a header and
  integer modes, is another codec: ``numcodecs.zfpy`` in ``numcodecs_compat``)
- v2 id: none. Draft URI: none.
- Configuration: ``mode`` and its parameters: ``reversible``; ``fixed_accuracy``
  (``tolerance``); ``fixed_rate`` (``rate``); ``fixed_precision`` (``precision``); ``expert``
  (``minbits``, ``maxbits``, ``maxprec``, ``minexp``).
- Data types: ``int32``, ``uint32``, ``int64``, ``uint64``, ``float32``, ``float64`` and,
  promoted to zfp's 32-bit integers, ``int8``, ``uint8``, ``int16``, ``uint16`` (``int N``:
  ``v << (31 - N)``; ``uint N``: ``(v - 2**(N-1)) << (31 - N)``; back with an arithmetic
  shift, clamped). ``fixed_accuracy`` takes floats only.
- Layout: a chunk of shape ``[nw, nz, ny, nx]`` (1 to 4 axes; a 0-d chunk is ``[1]``) is a
  zfp field with ``nx`` varying fastest; the stream is zfp's bit stream from the first
  block, with no header (the configuration holds what a header would).
- The library: zfp's C API in the ``libzfp`` that the ``zfpy`` package ships (``pip install
  'zarrx[zfp]'``; a :class:`~zarrx.errors.MissingCodecError` names it), called through
  ``ctypes``, which releases the GIL for each call. Decoding copies the stored stream into a
  zeroed buffer of zfp's largest size for the chunk, so a truncated stream is read as
  zeros, never past its end.
- Known incompatibilities (zarrs' choices, followed so both read each other's data):
  ``fixed_rate`` sets the rate for 3-dimensional blocks whatever the chunk's dimensions
  (``zfp_stream_set_rate(..., dims=3, align=0)``); ``uint32``/``uint64`` are clamped to the
  signed range instead of the spec's offset promotion.

Configuration example::

    >>> import numpy as np
    >>> from zarrx.abc.codec import ChunkSpec
    >>> codec = ZfpCodec.from_config({"mode": "fixed_accuracy", "tolerance": 0.05})
    >>> codec.to_dict()
    {'name': 'zfp', 'configuration': {'mode': 'fixed_accuracy', 'tolerance': 0.05}}
    >>> spec = ChunkSpec((4, 4), np.dtype("float32"), np.float32(0))
    >>> values = np.linspace(0, 1, 16, dtype="float32").reshape(4, 4)
    >>> bool(np.abs(codec.decode(codec.encode(values, spec), spec) - values).max() <= 0.05)
    True
"""

from __future__ import annotations

import dataclasses
import functools
import glob
import os
from collections.abc import Mapping
from typing import Any, ClassVar, Self

import numpy as np

from zarrx import imports
from zarrx.abc.codec import ArrayBytesCodec, Buffer, ChunkSpec
from zarrx.codecs.bytes import as_byte_view
from zarrx.errors import CodecError, MetadataError, MissingCodecError

#: mode → its parameters, with their Python types
MODES: dict[str, dict[str, type]] = {
    "reversible": {},
    "fixed_accuracy": {"tolerance": float},
    "fixed_rate": {"rate": float},
    "fixed_precision": {"precision": int},
    "expert": {"minbits": int, "maxbits": int, "maxprec": int, "minexp": int},
}
#: zfp_type values of zfp.h
_INT32, _INT64, _FLOAT, _DOUBLE = 1, 2, 3, 4
#: dtype → (zfp_type, NumPy type zfp works in, shift of the promotion, offset)
_NATIVE = {"i4": (_INT32, "i4"), "i8": (_INT64, "i8"), "f4": (_FLOAT, "f4"),
           "f8": (_DOUBLE, "f8"), "u4": (_INT32, "i4"), "u8": (_INT64, "i8")}
_PROMOTED = {"i1": (23, 0), "u1": (23, 0x80), "i2": (15, 0), "u2": (15, 0x8000)}


@functools.cache
def _library() -> Any:
    """zfp's C library, from the zfpy package (its wheels ship ``libzfp``), typed."""
    import ctypes
    import ctypes.util

    try:
        zfpy = imports.import_module("zfpy")
    except ImportError:
        raise MissingCodecError(
            "codec 'zfp' needs the zfp library of the package 'zfpy', which is not "
            "installed: pip install 'zarrx[zfp]'"
        ) from None
    module = zfpy.__file__ or ""
    here = os.path.dirname(module)
    candidates = sorted(glob.glob(os.path.join(here, "zfpy.libs", "libzfp*"))
                        + glob.glob(os.path.join(here, ".dylibs", "libzfp*")))
    found = ctypes.util.find_library("zfp")
    for path in [*candidates, module, *([found] if found else [])]:
        try:
            lib = ctypes.CDLL(path)
            lib.zfp_compress  # noqa: B018 - the symbol must be there
            break
        except (OSError, AttributeError):
            continue
    else:
        raise MissingCodecError(
            "codec 'zfp': the installed zfpy exposes no zfp library to call; reinstall "
            "it: pip install 'zarrx[zfp]'"
        )
    p, size, uint, dbl = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_uint, ctypes.c_double
    types = {
        "zfp_stream_open": (p, [p]), "zfp_stream_close": (None, [p]),
        "zfp_stream_set_bit_stream": (None, [p, p]), "zfp_stream_rewind": (None, [p]),
        "zfp_stream_set_reversible": (None, [p]),
        "zfp_stream_set_accuracy": (dbl, [p, dbl]),
        "zfp_stream_set_precision": (uint, [p, uint]),
        "zfp_stream_set_rate": (dbl, [p, dbl, ctypes.c_int, uint, ctypes.c_int]),
        "zfp_stream_set_params": (ctypes.c_int, [p, uint, uint, uint, ctypes.c_int]),
        "zfp_stream_maximum_size": (size, [p, p]),
        "zfp_field_1d": (p, [p, ctypes.c_int, size]),
        "zfp_field_2d": (p, [p, ctypes.c_int, size, size]),
        "zfp_field_3d": (p, [p, ctypes.c_int, size, size, size]),
        "zfp_field_4d": (p, [p, ctypes.c_int, size, size, size, size]),
        "zfp_field_free": (None, [p]),
        "zfp_compress": (size, [p, p]), "zfp_decompress": (size, [p, p]),
        "stream_open": (p, [p, size]), "stream_close": (None, [p]),
    }
    for name, (restype, argtypes) in types.items():
        function = getattr(lib, name)
        function.restype, function.argtypes = restype, argtypes
    return lib


def _number(value: Any, kind: type, field: str) -> Any:
    if isinstance(value, bool) or not isinstance(value, int | float) or (
        kind is int and not isinstance(value, int)
    ):
        raise MetadataError(
            f"codec 'zfp': configuration field {field!r} must be "
            f"{'an integer' if kind is int else 'a number'}, got {value!r}"
        )
    return value


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class ZfpCodec(ArrayBytesCodec):
    """zfp compression of a chunk's field, headerless."""

    name: ClassVar[str] = "zfp"

    mode: str
    parameters: tuple[tuple[str, Any], ...] = ()

    @classmethod
    def from_config(cls, configuration: Mapping[str, Any]) -> Self:
        if not isinstance(configuration, Mapping):
            raise MetadataError(
                f"codec 'zfp': configuration must be an object, got {configuration!r}"
            )
        mode = configuration.get("mode")
        if mode not in MODES:
            raise MetadataError(
                f"codec 'zfp': mode must be one of {sorted(MODES)}, got {mode!r}"
            )
        wanted = MODES[mode]
        given = set(configuration) - {"mode"}
        if given != set(wanted):
            raise MetadataError(
                f"codec 'zfp': mode {mode!r} takes the fields {sorted(wanted) or 'none'}, "
                f"got {sorted(given)}"
            )
        for field in ("precision", "minbits", "maxbits", "maxprec"):
            if field in configuration and _number(configuration[field], int, field) < 0:
                raise MetadataError(f"codec 'zfp': {field} must not be negative")
        return cls(mode, tuple((k, _number(configuration[k], t, k))
                               for k, t in wanted.items()))

    def to_config(self) -> dict[str, Any]:
        return {"mode": self.mode, **dict(self.parameters)}

    # -- the chunk as a zfp field ---------------------------------------------------------
    def _layout(self, dtype: np.dtype) -> tuple[int, np.dtype]:
        key = f"{dtype.kind}{dtype.itemsize}"
        if dtype.byteorder == ">" or (key not in _NATIVE and key not in _PROMOTED):
            raise MetadataError(
                f"codec 'zfp' cannot encode the data type {dtype}: it takes int8 to int64, "
                "uint8 to uint64, float32 and float64"
            )
        zfp_type, work = _NATIVE.get(key, (_INT32, "i4"))
        if self.mode == "fixed_accuracy" and zfp_type not in (_FLOAT, _DOUBLE):
            raise MetadataError("codec 'zfp': mode 'fixed_accuracy' takes float32 and "
                                "float64 only")
        return zfp_type, np.dtype(work)

    def validate(self, spec: ChunkSpec) -> None:
        self._layout(spec.dtype)
        if len(spec.shape) > 4:
            raise MetadataError(
                f"codec 'zfp' takes chunks of 1 to 4 dimensions, got {len(spec.shape)} "
                f"({spec.shape}); a 'reshape' codec before it can merge axes"
            )
        if self.mode == "expert":
            with self._stream(_FLOAT):  # zfp refuses bad parameters
                pass

    def _stream(self, zfp_type: int) -> Any:
        """A context: (library, zfp_stream*) set up for this mode."""
        import contextlib

        @contextlib.contextmanager
        def opened() -> Any:
            lib = _library()
            stream = lib.zfp_stream_open(None)
            try:
                p = dict(self.parameters)
                if self.mode == "reversible":
                    lib.zfp_stream_set_reversible(stream)
                elif self.mode == "fixed_accuracy":
                    lib.zfp_stream_set_accuracy(stream, float(p["tolerance"]))
                elif self.mode == "fixed_precision":
                    lib.zfp_stream_set_precision(stream, p["precision"])
                elif self.mode == "fixed_rate":  # zarrs' choice: 3-d blocks, not aligned
                    lib.zfp_stream_set_rate(stream, float(p["rate"]), zfp_type, 3, 0)
                elif not lib.zfp_stream_set_params(stream, p["minbits"], p["maxbits"],
                                                   p["maxprec"], p["minexp"]):
                    raise MetadataError(
                        f"codec 'zfp': zfp refuses the expert parameters {p}"
                    )
                yield lib, stream
            finally:
                lib.zfp_stream_close(stream)

        return opened()

    @staticmethod
    def _field(lib: Any, data: np.ndarray, zfp_type: int) -> Any:
        shape = data.shape or (1,)
        dims = [int(n) for n in reversed(shape)]  # nx (the fastest axis) first
        pointer = data.ctypes.data
        return getattr(lib, f"zfp_field_{len(dims)}d")(pointer, zfp_type, *dims)

    def _promote(self, chunk: np.ndarray, dtype: np.dtype, work: np.dtype) -> np.ndarray:
        key = f"{dtype.kind}{dtype.itemsize}"
        if key in _PROMOTED:
            shift, offset = _PROMOTED[key]
            return (chunk.astype(np.int32) - np.int32(offset)) << np.int32(shift)
        if dtype.kind == "u":
            top = np.iinfo(work).max
            return np.minimum(chunk, top).astype(work)
        return np.ascontiguousarray(chunk, dtype=work)

    def _demote(self, values: np.ndarray, dtype: np.dtype) -> np.ndarray:
        key = f"{dtype.kind}{dtype.itemsize}"
        if key in _PROMOTED:
            shift, offset = _PROMOTED[key]
            info = np.iinfo(dtype)
            return np.clip((values >> np.int32(shift)) + np.int32(offset), info.min,
                           info.max).astype(dtype)
        if dtype.kind == "u":
            return np.maximum(values, 0).astype(dtype)
        return values.view(dtype)

    def encoded_size(self, spec: ChunkSpec) -> int | None:
        return None

    def max_encoded_size(self, spec: ChunkSpec) -> int | None:
        zfp_type, work = self._layout(spec.dtype)
        empty = np.empty(spec.shape or (1,), work)
        with self._stream(zfp_type) as (lib, stream):
            field = self._field(lib, empty, zfp_type)
            try:
                return int(lib.zfp_stream_maximum_size(stream, field))
            finally:
                lib.zfp_field_free(field)

    # -- encode / decode -------------------------------------------------------------------
    def encode(self, chunk: np.ndarray, spec: ChunkSpec) -> Buffer:
        arr = np.asarray(chunk)
        if arr.shape != spec.shape:
            raise CodecError(
                f"codec 'zfp': chunk of shape {arr.shape} does not match the chunk shape "
                f"{spec.shape}"
            )
        zfp_type, work = self._layout(spec.dtype)
        data = np.ascontiguousarray(self._promote(np.asarray(arr, spec.dtype), spec.dtype,
                                                  work))
        with self._stream(zfp_type) as (lib, stream):
            field = self._field(lib, data, zfp_type)
            try:
                capacity = int(lib.zfp_stream_maximum_size(stream, field))
                out = np.zeros(-(-capacity // 8) + 1, np.uint64)
                bits = lib.stream_open(out.ctypes.data, out.nbytes)
                try:
                    lib.zfp_stream_set_bit_stream(stream, bits)
                    lib.zfp_stream_rewind(stream)
                    size = int(lib.zfp_compress(stream, field))
                finally:
                    lib.stream_close(bits)
            finally:
                lib.zfp_field_free(field)
        if size == 0:
            raise CodecError(f"codec 'zfp': zfp could not compress a chunk of {spec.dtype}")
        return out.view(np.uint8)[:size].copy()

    def decode(self, data: Buffer, spec: ChunkSpec) -> np.ndarray:
        stored = as_byte_view(data, self.name)
        zfp_type, work = self._layout(spec.dtype)
        values = np.empty(spec.shape or (1,), work)
        with self._stream(zfp_type) as (lib, stream):
            field = self._field(lib, values, zfp_type)
            try:
                capacity = int(lib.zfp_stream_maximum_size(stream, field))
                if stored.nbytes > capacity:
                    raise CodecError(
                        f"codec 'zfp': {stored.nbytes} stored bytes, more than the "
                        f"{capacity} zfp makes at most for a chunk of shape {spec.shape}"
                    )
                buffer = np.zeros(-(-capacity // 8) + 1, np.uint64)
                buffer.view(np.uint8)[:stored.nbytes] = np.frombuffer(stored, np.uint8)
                bits = lib.stream_open(buffer.ctypes.data, buffer.nbytes)
                try:
                    lib.zfp_stream_set_bit_stream(stream, bits)
                    lib.zfp_stream_rewind(stream)
                    read = int(lib.zfp_decompress(stream, field))
                finally:
                    lib.stream_close(bits)
            finally:
                lib.zfp_field_free(field)
        if read == 0:
            raise CodecError("codec 'zfp': zfp could not decode the chunk (corrupt data?)")
        return self._demote(values, spec.dtype).reshape(spec.shape)
