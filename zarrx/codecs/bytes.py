r"""The ``bytes`` codec: an array serialised as its raw elements, in a stated byte order.

- Spec: https://zarr-specs.readthedocs.io/en/latest/v3/codecs/bytes/index.html
- v3 name: ``bytes`` (alias ``endian``, its name in the 2022 drafts of the v3 spec)
- v2 id: none (Zarr v2 keeps the byte order in ``dtype``)
- Draft URI: none (the 2020 draft keeps the byte order in the data type)
- Known incompatibilities: zarr-python 3 refuses a multi-byte data type without
  ``endian``; zarrx fills ``"little"`` in :meth:`BytesCodec.evolve`. Like zarr-python,
  ``evolve`` drops ``endian`` for data types without a byte order (``bool``, ``int8``,
  ``uint8``, ``S``/``V`` bytes), so those arrays write ``{"name": "bytes"}``.

Decoding returns a zero-copy view in the *stored* byte order (``'>f8'`` for big endian);
the engine's kernel swaps bytes while it assembles the output.

Configuration example::

    >>> import numpy as np
    >>> from zarrx.abc.codec import ChunkSpec
    >>> codec = BytesCodec.from_config({"endian": "big"})
    >>> codec.to_dict()
    {'name': 'bytes', 'configuration': {'endian': 'big'}}
    >>> spec = ChunkSpec((2,), np.dtype("uint16"), np.uint16(0))
    >>> bytes(codec.encode(np.array([1, 2], dtype="uint16"), spec))
    b'\x00\x01\x00\x02'
    >>> codec.decode(b"\x00\x01\x00\x02", spec)
    array([1, 2], dtype='>u2')
    >>> BytesCodec.from_config({}).evolve(spec).to_dict()
    {'name': 'bytes', 'configuration': {'endian': 'little'}}
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, ClassVar, Literal, Self

import numpy as np

from zarrx.abc.codec import ArrayBytesCodec, Buffer, ChunkSpec
from zarrx.data_types.core import has_byte_order
from zarrx.errors import CodecError, MetadataError

_ENDIANS = ("little", "big")
_FIELDS = frozenset({"endian"})


def as_byte_view(data: Buffer, codec: str) -> memoryview:
    """A flat byte view of any C-contiguous buffer, without copying; else CodecError.

    Shared by the bytes→bytes codecs, which accept bytes, bytearray, memoryview and arrays.
    """
    try:
        view = memoryview(data)
    except TypeError as e:
        raise CodecError(f"codec {codec!r}: cannot read a {type(data).__name__} as bytes") from e
    if view.format == "B" and view.ndim == 1 and view.c_contiguous:
        return view
    if not view.c_contiguous:
        raise CodecError(f"codec {codec!r}: the input buffer is not contiguous")
    try:
        return view.cast("B")
    except TypeError:  # formats memoryview cannot cast; numpy reads them as plain bytes
        return memoryview(np.frombuffer(view, dtype=np.uint8))  # type: ignore[arg-type]


def _native_fields(dtype: np.dtype) -> bool:
    """Whether every field of a record (nested ones too) is in the machine's order."""
    if dtype.fields is not None:
        return all(_native_fields(dtype.fields[n][0]) for n in dtype.names or ())
    return dtype.byteorder in "=|"


def _fields_in_order(dtype: np.dtype, order: Any) -> np.dtype:
    if dtype.fields is not None:
        return np.dtype([(n, _fields_in_order(dtype.fields[n][0], order))
                         for n in dtype.names or ()])
    return dtype.newbyteorder(order) if dtype.byteorder != "|" else dtype


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class BytesCodec(ArrayBytesCodec):
    """Serialise an array as its elements in C order, little or big endian."""

    name: ClassVar[str] = "bytes"
    aliases: ClassVar[tuple[str, ...]] = ("endian",)

    #: ``"little"``, ``"big"``, or ``None`` (allowed only for data types without a byte order).
    endian: str | None = "little"

    def __post_init__(self) -> None:
        if self.endian is not None and (
            not isinstance(self.endian, str) or self.endian not in _ENDIANS
        ):
            raise MetadataError(
                f"codec 'bytes': configuration field 'endian' must be 'little' or 'big', "
                f"got {self.endian!r}"
            )

    @classmethod
    def from_config(cls, configuration: Mapping[str, Any]) -> Self:
        if not isinstance(configuration, Mapping):
            raise MetadataError(
                f"codec 'bytes': configuration must be an object, got {configuration!r}"
            )
        unknown = set(configuration) - _FIELDS
        if unknown:
            raise MetadataError(
                f"codec 'bytes': unknown configuration field(s) {sorted(unknown)!r}; "
                f"expected only 'endian'"
            )
        endian = configuration.get("endian")
        if "endian" in configuration and not isinstance(endian, str):
            raise MetadataError(
                f"codec 'bytes': configuration field 'endian' must be a string "
                f"('little' or 'big'), got {endian!r}"
            )
        return cls(endian=endian)

    def to_config(self) -> dict[str, Any]:
        return {} if self.endian is None else {"endian": self.endian}

    def evolve(self, spec: ChunkSpec) -> Self:
        if not has_byte_order(spec.dtype):
            return self if self.endian is None else dataclasses.replace(self, endian=None)
        if self.endian is None:
            return dataclasses.replace(self, endian="little")
        return self

    def validate(self, spec: ChunkSpec) -> None:
        dtype = spec.dtype
        if dtype.hasobject or dtype.kind == "T":
            raise MetadataError(
                f"codec 'bytes' cannot serialise the variable-length data type {dtype}; "
                "use a variable-length codec (e.g. 'vlen-utf8')"
            )
        if self.endian is None and has_byte_order(dtype):
            raise MetadataError(
                f"codec 'bytes': configuration field 'endian' is required for the "
                f"multi-byte data type {dtype}"
            )

    def stored_dtype(self, spec: ChunkSpec) -> np.dtype:
        """The dtype of the stored bytes: ``spec.dtype`` in this codec's byte order.
        Records in the machine's order (v3 ``struct``) have every field put in this
        codec's order; records with an explicit order per field (v2 structured dtypes,
        after the chain has put each field in its stored order) are stored as they are."""
        if self.endian is None or not has_byte_order(spec.dtype):
            return spec.dtype
        order: Literal["<", ">"] = "<" if self.endian == "little" else ">"
        if spec.dtype.fields:
            return _fields_in_order(spec.dtype, order) if _native_fields(spec.dtype) else (
                spec.dtype)
        return spec.dtype.newbyteorder(order)

    def image_dtype(self, spec: ChunkSpec) -> np.dtype:
        """The encoded bytes are the chunk's C-order image in :meth:`stored_dtype`."""
        return self.stored_dtype(spec)

    def encode(self, chunk: np.ndarray, spec: ChunkSpec) -> Buffer:
        arr = np.asarray(chunk)
        if arr.shape != spec.shape:
            raise CodecError(
                f"codec 'bytes': chunk of shape {arr.shape} does not match the chunk "
                f"shape {spec.shape}"
            )
        stored = self.stored_dtype(spec)
        if arr.dtype != stored:
            arr = arr.astype(stored, order="C")
        arr = np.ascontiguousarray(arr)
        return arr.reshape(-1).view(np.uint8)

    def decode(self, data: Buffer, spec: ChunkSpec) -> np.ndarray:
        try:
            nbytes = memoryview(data).nbytes
        except TypeError as e:
            raise CodecError(f"codec 'bytes': cannot read {type(data).__name__}: {e}") from e
        if nbytes != spec.nbytes:
            raise CodecError(
                f"codec 'bytes': expected {spec.nbytes} bytes for a chunk of shape "
                f"{spec.shape} and dtype {spec.dtype}, got {nbytes}"
            )
        try:
            arr = np.frombuffer(data, dtype=self.stored_dtype(spec))
        except (ValueError, TypeError) as e:
            raise CodecError(f"codec 'bytes': cannot view the data as an array: {e}") from e
        return arr.reshape(spec.shape)

    def encoded_size(self, spec: ChunkSpec) -> int:
        return spec.nbytes
