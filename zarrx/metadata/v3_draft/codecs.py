"""The draft's ``compressor`` (codec URIs) and zarr-python 2.18's ``attributes["filters"]``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from zarrx import registry
from zarrx.errors import MetadataError, UnknownCodecError
from zarrx.metadata.v3_draft.entry_point import _CODEC_URI, CODEC_URI_PREFIX

# -- codecs ----------------------------------------------------------------------------------

def compressor_from_json(value: Any, *, where: str) -> Any:
    """The codec of a ``compressor`` object, by URI through the registry, else numcodecs."""
    if not isinstance(value, Mapping) or not isinstance(value.get("codec"), str):
        raise MetadataError(
            f"{where}: compressor must be an object with a 'codec' URI, got {value!r}"
        )
    uri = value["codec"]
    config = value.get("configuration") or {}
    if not isinstance(config, Mapping):
        raise MetadataError(f"{where}: compressor configuration must be an object")
    try:
        cls = registry.codecs.find(uri)
        if cls is not None:
            return cls.from_config(dict(config))
        match = _CODEC_URI.match(uri)
        if match is None:
            raise UnknownCodecError(
                f"unknown codec {uri!r}: no installed package registers this URI "
                "(entry-point group 'zarrx.codecs')"
            )
        from zarrx.codecs.numcodecs_compat import numcodecs_codec

        try:
            return numcodecs_codec(match.group(1), dict(config))
        except MetadataError as e:
            raise UnknownCodecError(f"codec {uri!r}: {e}") from None
    except MetadataError as e:
        raise type(e)(f"{where}: {e}") from None


def codec_uri(codec: Any) -> str:
    """The draft URI of a codec object (its registered alias, or by numcodecs id)."""
    for alias in getattr(codec, "aliases", ()):
        if alias.startswith(CODEC_URI_PREFIX):
            return alias
    codec_id = getattr(codec, "codec_id", None)
    if codec_id:
        return f"{CODEC_URI_PREFIX}{codec_id}/1.0"
    raise MetadataError(f"codec {codec.name!r} has no Zarr v3.0 draft URI")


def compressor_to_json(codec: Any, itemsize: int) -> dict[str, Any]:
    """``{"codec": URI, "configuration": …}`` with numcodecs' configuration, as zarr-python
    2.18 writes and reads it."""
    from zarrx.codecs.numcodecs_compat import to_numcodecs_config

    config = {k: v for k, v in to_numcodecs_config(codec, itemsize).items() if k != "id"}
    return {"codec": codec_uri(codec), "configuration": config}


def _filters(attributes: Mapping[str, Any], *, where: str) -> tuple[Any, ...] | None:
    """zarr-python 2.18's numcodecs filters in ``attributes["filters"]`` (``None`` when that
    attribute is not a list of numcodecs configurations: then it is an ordinary attribute)."""
    value = attributes.get("filters")
    if not isinstance(value, list) or not value or not all(
        isinstance(f, dict) and isinstance(f.get("id"), str) for f in value
    ):
        return None
    from zarrx.codecs.numcodecs_compat import numcodecs_codec

    try:
        return tuple(numcodecs_codec(f["id"], f) for f in value)
    except MetadataError as e:
        raise type(e)(f"{where}: attributes['filters']: {e}") from None
