"""The ``optional`` data type: values of another data type that may be missing (null).

- Spec: the open zarr-extensions proposal (pull request 33: ``data-types/optional`` and
  ``codecs/optional``), as zarrs implements it. v3 names: ``optional`` (the proposal's, and
  what zarrs' committed test data holds) and ``zarrs.optional`` (what zarrs writes today);
  both are read, an array is written back in the spelling it was read in, and zarrx
  creates ``optional``. v2 id, draft URI: none.
- ``{"name": "optional", "configuration": {"name": "uint8", "configuration": {}}}``: the
  configuration is the underlying data type (any fixed-size one, ``optional`` itself
  included); ``configuration`` is always written, as zarrs requires it.
- Fill value: ``null`` (missing) or a one-element list holding the underlying type's fill
  value (``[42]``); nested types apply this again (``[null]`` is "present, but the inner
  value is missing").
- Stored by the ``optional`` codec (:mod:`zarrx.codecs.optional`): a mask chain and a
  chain of the present values only.
- In memory (what the engine moves): records ``[("value", T), ("valid", bool)]``, zarrs'
  element layout; a missing element holds zeros.
- In the API: reads give ``numpy.ma.MaskedArray`` of the underlying type (masked where
  missing; a missing 0-d selection is ``numpy.ma.masked``), ``Array.dtype`` is that type
  and ``Array.fill_value`` is ``numpy.ma.masked`` for a ``null`` fill. Writes take masked
  arrays (masked elements become missing), ``numpy.ma.masked`` or ``None`` (missing),
  plain values (present), or the records themselves. For nested types a read masks an
  element missing at any level; the records keep every level apart: read them with
  ``fields=`` (``a.get_basic_selection(..., fields="valid")`` is the mask of presence,
  ``fields=["value", "valid"]`` the records) and write them as they are.

>>> t = OptionalDataType.from_json({"name": "optional", "configuration": {"name": "uint8"}})
>>> t.dtype.descr, t.fill_to_json(t.fill_from_json([42])), t.fill_to_json(t.default_fill())
([('value', '|u1'), ('valid', '|b1')], [42], None)
>>> t.present(t.absorb(np.ma.masked_equal([1, 0, 3], 0)))
masked_array(data=[1, --, 3],
             mask=[False,  True, False],
       fill_value=np.uint64(999999),
            dtype=uint8)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from zarrx.data_types.struct import resolve
from zarrx.errors import FillValueError, MetadataError, UnknownDataTypeError

NAMES = ("optional", "zarrs.optional")


def element_dtype(inner: np.dtype) -> np.dtype:
    """The in-memory record of an optional value of ``inner``."""
    return np.dtype([("value", inner), ("valid", np.bool_)])


def is_element_dtype(dtype: np.dtype) -> bool:
    return dtype.names == ("value", "valid") and dtype.fields is not None and (
        dtype.fields["valid"][0] == np.bool_)


@dataclass(frozen=True)
class OptionalDataType:
    """Nullable values of ``inner`` (a data type object); ``dtype`` is the element record."""

    name: str  # "optional" or "zarrs.optional": the spelling written back
    inner: Any
    dtype: np.dtype = field(compare=False, repr=False)

    #: The metadata's ``fill_value`` may be ``null`` (missing).
    null_fill = True

    @classmethod
    def of(cls, inner: Any, name: str = "optional") -> OptionalDataType:
        if inner.dtype.hasobject or inner.dtype.kind == "T":
            raise UnknownDataTypeError(
                f"data type {name!r}: a variable-length underlying type "
                f"({inner.to_json()!r}) is not supported; use a fixed-size one"
            )
        return cls(name, inner, element_dtype(inner.dtype))

    @classmethod
    def from_json(cls, value: Any) -> OptionalDataType:
        name = value.get("name") if isinstance(value, Mapping) else value
        config = value.get("configuration") if isinstance(value, Mapping) else None
        if name not in NAMES or not isinstance(config, Mapping) or set(value) - {
            "name", "configuration"
        } or not isinstance(config.get("name"), str) or set(config) - {"name", "configuration"}:
            raise MetadataError(
                "an optional data type is {'name': 'optional', 'configuration': {'name': "
                f"<data type>, 'configuration': {{...}}}}}}, got {value!r}"
            )
        inner_config = config.get("configuration", {})
        if not isinstance(inner_config, Mapping):
            raise MetadataError(f"optional data type: configuration of {config['name']!r} "
                                f"must be an object, got {inner_config!r}")
        # a type without configuration is named by its string, as the core types must be
        inner = resolve(dict(config) if inner_config else config["name"])
        return cls.of(inner, name)

    def to_json(self) -> dict[str, Any]:
        inner = self.inner.to_json()
        if isinstance(inner, str):
            inner = {"name": inner, "configuration": {}}
        else:
            inner = {"name": inner["name"], "configuration": inner.get("configuration", {})}
        return {"name": self.name, "configuration": inner}

    @property
    def kind(self) -> str:
        return "optional"

    @property
    def user_dtype(self) -> np.dtype:
        """The dtype of what reads return (the underlying type's, at the innermost level)."""
        return getattr(self.inner, "user_dtype", self.inner.dtype)

    def default_serializer(self) -> dict[str, Any]:
        """The array→bytes codec new arrays get: the mask packed to bits, values as bytes."""
        data = getattr(self.inner, "default_serializer", lambda: {"name": "bytes"})()
        return {"name": "optional",
                "configuration": {"mask_codecs": [{"name": "packbits"}], "data_codecs": [data]}}

    # -- values ------------------------------------------------------------------------------
    def present(self, elements: np.ndarray) -> np.ma.MaskedArray:
        """Records → a masked array of the underlying values (missing at any level: masked)."""
        values = elements["value"]
        missing = ~elements["valid"]
        present = getattr(self.inner, "present", None)
        if present is not None:
            inner = present(values)
            values, missing = inner.data, missing | np.ma.getmaskarray(inner)
        return np.ma.MaskedArray(values, mask=missing)

    def present_fill(self, element: Any) -> Any:
        """The fill value as reads show it: ``numpy.ma.masked`` when missing."""
        element = np.asarray(element, dtype=self.dtype)
        if not element["valid"]:
            return np.ma.masked
        present_fill = getattr(self.inner, "present_fill", None)
        value = element["value"][()]
        return value if present_fill is None else present_fill(value)

    def absorb(self, value: Any) -> Any:
        """A value to assign, as records: masked elements, ``numpy.ma.masked`` and ``None``
        are missing, anything else present (cast to the underlying type as NumPy casts)."""
        if isinstance(value, np.ndarray | np.void) and value.dtype == self.dtype:
            return value
        if value is None or value is np.ma.masked:
            return np.zeros((), self.dtype)
        if not isinstance(value, np.ndarray) and np.ndim(value) and not isinstance(value, str):
            flat = list(np.asarray(value, dtype=object).reshape(-1))
            if any(v is None or v is np.ma.masked for v in flat):
                value = np.ma.masked_array(
                    [0 if v is None or v is np.ma.masked else v for v in flat],
                    mask=[v is None or v is np.ma.masked for v in flat],
                ).reshape(np.shape(value))
        missing = np.ma.getmaskarray(value) if isinstance(value, np.ma.MaskedArray) else None
        data = np.ma.getdata(value) if missing is not None else value
        inner_absorb = getattr(self.inner, "absorb", None)
        if inner_absorb is not None:
            data = inner_absorb(data)
        values = np.asarray(data) if isinstance(data, np.ndarray) else data
        out = np.empty(np.shape(values), self.dtype)
        out["value"] = values  # NumPy's casts and errors
        if missing is None:
            out["valid"] = True
        else:
            out["valid"] = ~missing
            out["value"][missing] = np.zeros((), self.inner.dtype)  # as a read shows them
        return out

    # -- fill values ---------------------------------------------------------------------------
    def default_fill(self) -> Any:
        """``null``: missing."""
        return np.zeros((), dtype=self.dtype)[()]

    def fill_from_json(self, value: Any) -> Any:
        out = np.zeros((), dtype=self.dtype)
        if value is None:
            return out[()]
        if not isinstance(value, list) or len(value) != 1:
            raise FillValueError(
                f"fill value {value!r} for data type {self.name}: expected null or a list of "
                "one fill value of the underlying type"
            )
        out["value"] = self.inner.fill_from_json(value[0])
        out["valid"] = True
        return out[()]

    def fill_to_json(self, value: Any) -> Any:
        element = np.asarray(value, dtype=self.dtype)
        if not element["valid"]:
            return None
        return [self.inner.fill_to_json(element["value"][()])]

    def coerce_fill(self, value: Any) -> Any:
        """A user-given fill value: ``None`` or ``numpy.ma.masked`` (missing), a value of
        the underlying type, or an element record."""
        if value is None or value is np.ma.masked:
            return self.default_fill()
        if isinstance(value, np.void | np.ndarray) and value.dtype == self.dtype:
            return np.asarray(value).reshape(())[()]
        out = np.zeros((), dtype=self.dtype)
        out["value"] = self.inner.coerce_fill(value)
        out["valid"] = True
        return out[()]
