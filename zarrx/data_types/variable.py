"""Variable-length data types: ``string`` (UTF-8 text) and ``variable_length_bytes``.

As zarr-python 3 names them for Zarr v3, stored with the ``vlen-utf8`` / ``vlen-bytes``
codecs. In memory, text is NumPy's ``StringDType`` (what zarr-python 3 returns) and bytes
are an object array of ``bytes``. Fill values: a JSON string (text) or base64 (bytes).

>>> StringDataType.from_json("string").fill_from_json("")
''
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from zarrx.data_types import fill
from zarrx.errors import UnknownDataTypeError

STRING = np.dtypes.StringDType()
OBJECT = np.dtype(object)


def variable_kind(dtype: Any) -> str | None:
    """``"text"`` or ``"bytes"`` when a user-given dtype means variable-length elements."""
    if dtype is str or (isinstance(dtype, str) and dtype in ("str", "string", "T")):
        return "text"
    if dtype is bytes or (isinstance(dtype, str) and dtype == "bytes"):
        return "bytes"
    if isinstance(dtype, np.dtype) and dtype.kind == "T":
        return "text"
    return None


def is_variable_length(dtype: np.dtype) -> bool:
    """Elements of ``dtype`` are not fixed-size bytes (object or NumPy ``StringDType``)."""
    return dtype.hasobject or dtype.kind == "T"


@dataclass(frozen=True)
class StringDataType:
    """UTF-8 strings of any length."""

    name: str = "string"
    dtype: np.dtype = STRING

    @classmethod
    def from_json(cls, value: Any) -> StringDataType:
        if value != "string":
            raise UnknownDataTypeError(f"expected the data type 'string', got {value!r}")
        return cls()

    def to_json(self) -> str:
        return self.name

    @property
    def kind(self) -> str:
        return "T"

    def default_fill(self) -> str:
        return ""

    def fill_from_json(self, value: Any) -> Any:
        return fill.parse(fill.V3, self.dtype, value, where="data type string")

    def fill_to_json(self, value: Any) -> Any:
        return fill.encode(fill.V3, self.dtype, value)

    def coerce_fill(self, value: Any) -> str:
        return "" if value is None else self.fill_from_json(str(value))


@dataclass(frozen=True)
class BytesDataType:
    """Byte strings of any length."""

    name: str = "variable_length_bytes"
    dtype: np.dtype = OBJECT

    @classmethod
    def from_json(cls, value: Any) -> BytesDataType:
        if value not in ("variable_length_bytes", "bytes"):
            raise UnknownDataTypeError(f"expected variable_length_bytes, got {value!r}")
        return cls()

    def to_json(self) -> str:
        return self.name

    @property
    def kind(self) -> str:
        return "O"

    def default_fill(self) -> bytes:
        return b""

    def fill_from_json(self, value: Any) -> Any:
        return fill.parse(fill.V3, self.dtype, value, where="variable-length bytes")

    def fill_to_json(self, value: Any) -> Any:
        return fill.encode(fill.V3, self.dtype, value)

    def coerce_fill(self, value: Any) -> bytes:
        return b"" if value is None else bytes(value)
