"""Data types a user names when creating an array that NumPy has no dtype for.

``create_array(dtype=...)`` takes NumPy dtypes (and ml_dtypes'), and also: a data type
object of :mod:`zarrx.data_types`, a v3 ``data_type`` object such as
``{"name": "optional", "configuration": {"name": "float32"}}``, or the name of a type
whose values NumPy cannot hold, such as ``"complex_float4_e2m1fn"``.

>>> named_data_type({"name": "optional", "configuration": {"name": "int16"}}).to_json()
{'name': 'optional', 'configuration': {'name': 'int16', 'configuration': {}}}
>>> named_data_type("complex_float16").dtype.names, named_data_type("float32")
(('real', 'imag'), None)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from zarrx.data_types.complex import NAMES as COMPLEX_NAMES
from zarrx.data_types.complex import ComplexDataType
from zarrx.data_types.optional import OptionalDataType
from zarrx.data_types.struct import resolve


def named_data_type(dtype: Any) -> Any | None:
    """The data type object ``dtype`` names, or ``None`` when it is for NumPy to read."""
    if hasattr(dtype, "fill_from_json") and hasattr(dtype, "to_json"):
        return dtype
    if isinstance(dtype, Mapping):
        return resolve(dict(dtype))
    if isinstance(dtype, str) and dtype in COMPLEX_NAMES:
        return ComplexDataType.from_json(dtype)
    return None


def needs_naming(data_type: Any) -> bool:
    """Whether an array of ``data_type`` is recreated from the data type object itself (its
    NumPy dtype alone would make another type: a record, or the underlying type)."""
    return isinstance(data_type, ComplexDataType | OptionalDataType)
