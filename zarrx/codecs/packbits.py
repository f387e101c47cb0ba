r"""The ``packbits`` codec: elements packed to their bit width, with no byte per element.

- Spec: https://github.com/zarr-developers/zarr-extensions/tree/main/codecs/packbits
- v3 name: ``packbits``
- v2 id: none. numcodecs' ``packbits`` (v2 filter, v3 ``numcodecs.packbits``) is another
  codec, for bool only, served by numcodecs itself: it puts the first element in the *most*
  significant bit of a byte, where this codec puts it in the least.
- Draft URI: none.
- Data types: ``bool`` (1 bit), ``int2``/``uint2`` (2), ``int4``/``uint4``/``float4_e2m1fn``
  (4), ``float6_e2m3fn``/``float6_e3m2fn`` (6), and every other fixed-size integer or float
  as its ``8 * itemsize`` little-endian bits (complex: two components, the ``complex_*``
  records of :mod:`zarrx.data_types.complex` too).
- Format: each element gives its bits ``first_bit..last_bit`` (``k`` bits); element ``i``
  is bits ``[i*k, (i+1)*k)`` of a bit sequence whose bit ``j`` is bit ``j % 8`` (from the
  least significant) of byte ``j // 8``; the last byte is padded with zero bits; with
  ``padding_encoding`` ``"first_byte"`` / ``"last_byte"`` one more byte, before / after,
  holds the number of padding bits. A chunk of ``n`` elements takes ``ceil(n*k/8)`` bytes
  (+1). Decoding shifts the bits back to ``first_bit`` and sign-extends signed integers (a
  signed sub-byte element through its whole byte: ``-1`` is ``0xff``, as zarrs decodes it).
- Known incompatibilities: the spec's README names the options ``first_byte`` /
  ``last_byte`` / ``first_bit`` / ``last_bit``, its JSON schema ``start_byte`` / ``end_byte``
  / ``start_bit`` / ``end_bit``: zarrx reads both and writes the README's names. The README
  says ``first_byte`` makes it compatible with numcodecs' packbits: only the padding byte is
  (see the bit order above). tensorstore 0.1.86 refuses the codec.

Configuration example::

    >>> import numpy as np, ml_dtypes
    >>> from zarrx.abc.codec import ChunkSpec
    >>> codec = PackBitsCodec.from_config({"padding_encoding": "first_byte"})
    >>> codec.to_dict()
    {'name': 'packbits', 'configuration': {'padding_encoding': 'first_byte'}}
    >>> spec = ChunkSpec((3,), np.dtype(ml_dtypes.int4), None)
    >>> bytes(codec.encode(np.array([1, -2, 7], dtype=ml_dtypes.int4), spec))
    b'\x04\xe1\x07'
    >>> codec.decode(b"\x04\xe1\x07", spec).tolist()
    [1, -2, 7]
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, ClassVar, NamedTuple, Self

import numpy as np

from zarrx.abc.codec import ArrayBytesCodec, Buffer, ChunkSpec
from zarrx.codecs.bytes import as_byte_view
from zarrx.data_types.ml import INTEGERS, ml_name, traits
from zarrx.errors import CodecError, MetadataError

_PADDING = ("none", "first_byte", "last_byte")
#: The JSON schema's spellings, read as the README's.
_ALIASES = {"start_byte": "first_byte", "end_byte": "last_byte",
            "start_bit": "first_bit", "end_bit": "last_bit"}


class Layout(NamedTuple):
    """How one element splits into components of ``bits`` bits, held in ``unit`` integers."""

    bits: int  # N: bits per component
    components: int  # 2 for complex, else 1
    unit: np.dtype  # the unsigned integer holding one component
    signed: bool


def layout_of(dtype: np.dtype) -> Layout | None:
    """The packing layout of a data type, or ``None`` when packbits cannot carry it."""
    fields = dtype.fields
    if dtype.names == ("real", "imag") and fields and fields["real"][0] == fields["imag"][0]:
        part = layout_of(fields["real"][0])  # a complex_* record: two parts
        return None if part is None or part.components != 1 else part._replace(components=2)
    name = ml_name(dtype)
    if name is not None:
        if dtype.itemsize == 1:
            return Layout(traits(name).bits, 1, np.dtype("u1"), name in INTEGERS and
                          not name.startswith("u"))
        return Layout(8 * dtype.itemsize, 1, np.dtype(f"u{dtype.itemsize}"), False)
    if dtype.fields is not None or dtype.subdtype is not None:
        return None
    if dtype.kind == "b":
        return Layout(1, 1, np.dtype("u1"), False)
    if dtype.kind in "iuf" and dtype.itemsize in (1, 2, 4, 8):
        return Layout(8 * dtype.itemsize, 1, np.dtype(f"u{dtype.itemsize}"), dtype.kind == "i")
    if dtype.kind == "c" and dtype.itemsize in (8, 16):
        half = dtype.itemsize // 2
        return Layout(8 * half, 2, np.dtype(f"u{half}"), False)
    return None


def _bit_option(config: Mapping[str, Any], key: str) -> int | None:
    value = config.get(key)
    if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
        raise MetadataError(
            f"codec 'packbits': {key} must be a non-negative integer or null, got {value!r}"
        )
    return value


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class PackBitsCodec(ArrayBytesCodec):
    """Pack each element's ``first_bit..last_bit`` bits, least significant bit first."""

    name: ClassVar[str] = "packbits"

    padding_encoding: str = "none"
    first_bit: int | None = None
    last_bit: int | None = None

    def __post_init__(self) -> None:
        if self.padding_encoding not in _PADDING:
            raise MetadataError(
                f"codec 'packbits': padding_encoding must be one of {_PADDING}, "
                f"got {self.padding_encoding!r}"
            )
        if self.first_bit is not None and self.last_bit is not None and (
            self.last_bit < self.first_bit
        ):
            raise MetadataError(
                f"codec 'packbits': last_bit {self.last_bit} is less than first_bit "
                f"{self.first_bit}"
            )

    @classmethod
    def from_config(cls, configuration: Mapping[str, Any]) -> Self:
        if not isinstance(configuration, Mapping):
            raise MetadataError(
                f"codec 'packbits': configuration must be an object, got {configuration!r}"
            )
        config: dict[str, Any] = {}
        for key, value in configuration.items():
            canonical = _ALIASES.get(key, key)
            if canonical not in ("padding_encoding", "first_bit", "last_bit"):
                raise MetadataError(
                    f"codec 'packbits': unknown configuration field {key!r}; expected "
                    "padding_encoding, first_bit, last_bit"
                )
            if canonical in config:
                raise MetadataError(f"codec 'packbits': {canonical!r} is given twice")
            config[canonical] = value
        padding = config.get("padding_encoding", "none")
        padding = _ALIASES.get(padding, padding) if isinstance(padding, str) else padding
        return cls(padding, _bit_option(config, "first_bit"), _bit_option(config, "last_bit"))

    def to_config(self) -> dict[str, Any]:
        config: dict[str, Any] = {"padding_encoding": self.padding_encoding}
        if self.first_bit is not None:
            config["first_bit"] = self.first_bit
        if self.last_bit is not None:
            config["last_bit"] = self.last_bit
        return config

    # -- what a chunk packs to ----------------------------------------------------------
    def _plan(self, dtype: np.dtype) -> tuple[Layout, int, int]:
        """The layout and the bit range ``(first, last)`` for ``dtype``; MetadataError if
        the codec cannot encode it."""
        layout = layout_of(dtype)
        if layout is None:
            raise MetadataError(f"codec 'packbits' cannot encode the data type {dtype}")
        first = self.first_bit or 0
        last = layout.bits - 1 if self.last_bit is None else self.last_bit
        if last >= layout.bits or first > last:
            raise MetadataError(
                f"codec 'packbits': bits {first}..{last} are outside the {layout.bits} bits "
                f"of each component of {dtype}"
            )
        return layout, first, last

    def validate(self, spec: ChunkSpec) -> None:
        self._plan(spec.dtype)

    def _sizes(self, spec: ChunkSpec) -> tuple[int, int, int]:
        """``(k, packed bytes, padding bits)`` of a chunk."""
        layout, first, last = self._plan(spec.dtype)
        k = (last - first + 1) * layout.components
        n = 1
        for s in spec.shape:
            n *= s
        return k, -(-n * k // 8), -(n * k) % 8

    def encoded_size(self, spec: ChunkSpec) -> int:
        return self._sizes(spec)[1] + (self.padding_encoding != "none")

    # -- encode / decode -------------------------------------------------------------------
    def encode(self, chunk: np.ndarray, spec: ChunkSpec) -> Buffer:
        arr = np.asarray(chunk)
        if arr.shape != spec.shape:
            raise CodecError(
                f"codec 'packbits': chunk of shape {arr.shape} does not match {spec.shape}"
            )
        layout, first, last = self._plan(spec.dtype)
        padding = self._sizes(spec)[2]
        units = np.ascontiguousarray(arr, dtype=spec.dtype).reshape(-1).view(layout.unit)
        b = last - first + 1
        if b == 8 * layout.unit.itemsize:  # whole bytes: the little-endian bytes as they are
            packed = units.astype(layout.unit.newbyteorder("<")).view(np.uint8)
        else:
            values = (units >> layout.unit.type(first)) & layout.unit.type((1 << b) - 1)
            shifts = np.arange(b, dtype=layout.unit)
            bit_matrix = ((values[:, None] >> shifts) & 1).astype(np.uint8)
            packed = np.packbits(bit_matrix.reshape(-1), bitorder="little")
        header = np.array([padding], dtype=np.uint8)
        if self.padding_encoding == "first_byte":
            return np.concatenate([header, packed])
        if self.padding_encoding == "last_byte":
            return np.concatenate([packed, header])
        return packed

    def decode(self, data: Buffer, spec: ChunkSpec) -> np.ndarray:
        raw = np.frombuffer(as_byte_view(data, self.name), dtype=np.uint8)
        layout, first, last = self._plan(spec.dtype)
        _, nbytes, padding = self._sizes(spec)
        extra = self.padding_encoding != "none"
        if raw.size != nbytes + extra:
            raise CodecError(
                f"codec 'packbits': expected {nbytes + extra} bytes for {spec.shape} "
                f"{spec.dtype}, got {raw.size}"
            )
        if extra:
            stated = raw[0] if self.padding_encoding == "first_byte" else raw[-1]
            if stated != padding:
                raise CodecError(
                    f"codec 'packbits': the {self.padding_encoding} says {stated} padding "
                    f"bits, expected {padding}"
                )
            raw = raw[1:] if self.padding_encoding == "first_byte" else raw[:-1]
        b = last - first + 1
        count = raw.size * 8 - padding  # bits of all components
        if b == 8 * layout.unit.itemsize:
            units = raw.view(layout.unit.newbyteorder("<")).astype(layout.unit)
        else:
            bit_matrix = np.unpackbits(raw, count=count, bitorder="little").reshape(-1, b)
            weights = np.left_shift(np.ones(b, dtype=layout.unit), np.arange(b, dtype=layout.unit))
            values = (bit_matrix.astype(layout.unit) * weights).sum(axis=1, dtype=layout.unit)
            units = values << layout.unit.type(first)
            if layout.signed:  # sign-extend from last_bit through the whole unit
                width = 8 * layout.unit.itemsize
                high = np.iinfo(layout.unit).max ^ layout.unit.type((1 << (last + 1)) - 1)
                negative = ((units >> layout.unit.type(last)) & 1).astype(bool)
                units = np.where(negative, units | high, units) if last + 1 < width else units
        return units.view(spec.dtype).reshape(spec.shape)
