"""zarr-python 3's codec objects (``zarr.codecs.BloscCodec(cname="lz4")`` …) as zarrx
codecs, so a script's codec choices work unchanged after ``import zarrx as zarr``.

A zarr-python codec is read through its v3 JSON form (``to_dict()``), with two things its
JSON does not say:

- fields zarr-python leaves for the array's data type to fill (its ``_tunable_attrs``:
  blosc's ``typesize`` and ``shuffle`` when not given) are left to
  :meth:`~zarrx.abc.codec.Codec.evolve` here too, instead of the placeholders its JSON
  shows (``typesize`` 1, ``bitshuffle``);
- the codecs inside a ``ShardingCodec`` are read the same way, one by one.

zarr-python is not imported: an object is recognised by its class's module.
"""

from __future__ import annotations

from typing import Any

from zarrx.errors import MetadataError


def is_zarr_python_codec(value: Any) -> bool:
    """Whether ``value`` is a codec object of zarr-python (``zarr.codecs`` or a plugin
    subclassing ``zarr.abc.codec``)."""
    return hasattr(value, "to_dict") and any(
        (cls.__module__ or "").split(".")[0] == "zarr" for cls in type(value).__mro__
    )


def _plain(value: Any) -> Any:
    """Tuples (zarr-python's shapes and axis orders) as JSON lists, enums as their value."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return getattr(value, "value", value) if not isinstance(value, str | int | float) else value


def codec_json(codec: Any, *, where: str) -> dict[str, Any]:
    """The v3 JSON of a zarr-python codec object, tunable fields left out (``None``)."""
    try:
        doc = _plain(codec.to_dict())
    except Exception as e:  # a codec zarr-python itself cannot describe
        raise MetadataError(
            f"{where}: zarr-python codec {type(codec).__name__} has no JSON form: {e}"
        ) from e
    if not isinstance(doc, dict) or not isinstance(doc.get("name"), str):
        raise MetadataError(
            f"{where}: zarr-python codec {type(codec).__name__} gave {doc!r}, not a v3 codec"
        )
    configuration = dict(doc.get("configuration") or {})
    for name in getattr(codec, "_tunable_attrs", ()):
        if name in configuration:
            configuration[name] = None
    for name in ("codecs", "index_codecs"):  # a ShardingCodec's inner codecs, read alike
        inner = getattr(codec, name, None)
        if name in configuration and isinstance(inner, tuple | list):
            configuration[name] = [
                codec_json(c, where=where) if is_zarr_python_codec(c) else _plain(c)
                for c in inner
            ]
    return {"name": doc["name"], "configuration": configuration}
