"""Codecs: one module per codec, and the pipeline that orders and prepares them.

The codec classes are here under zarr-python 3's names (``zarrx.codecs.BloscCodec``,
``ZstdCodec``, ``GzipCodec``, ``BytesCodec``, ``Crc32cCodec``, ``TransposeCodec``,
``ShardingCodec``, ``VLenUTF8Codec``, ``VLenBytesCodec``), with its keywords, so that
``import zarrx as zarr`` keeps ``zarr.codecs.BloscCodec(cname="lz4")`` working. Each is
imported on first use, not with ``zarrx`` (whose import loads no codec).

>>> import zarrx
>>> codec = zarrx.codecs.BloscCodec(cname="lz4", clevel=3)
>>> a = zarrx.create_array(zarrx.storage.MemoryStore(), shape=(100,), dtype="uint16",
...                        compressors=codec)
>>> a.compressors[0].to_dict()["configuration"]["shuffle"]
'shuffle'
"""

from __future__ import annotations

from typing import Any

#: Exported name → ``(module, class)``, loaded on first access.
_CLASSES = {
    "BloscCodec": ("zarrx.codecs.blosc", "BloscCodec"),
    "ZstdCodec": ("zarrx.codecs.zstd", "ZstdCodec"),
    "GzipCodec": ("zarrx.codecs.gzip", "GzipCodec"),
    "BytesCodec": ("zarrx.codecs.bytes", "BytesCodec"),
    "Crc32cCodec": ("zarrx.codecs.crc32c", "Crc32cCodec"),
    "TransposeCodec": ("zarrx.codecs.transpose", "TransposeCodec"),
    "ShardingCodec": ("zarrx.codecs.sharding", "ShardingCodec"),
    "VLenUTF8Codec": ("zarrx.codecs.vlen", "VlenUtf8Codec"),
    "VLenBytesCodec": ("zarrx.codecs.vlen", "VlenBytesCodec"),
    "PackBitsCodec": ("zarrx.codecs.packbits", "PackBitsCodec"),
}

__all__ = sorted(_CLASSES)


def __getattr__(name: str) -> Any:
    """A codec class, its module imported on first use (by one thread at a time)."""
    found = _CLASSES.get(name)
    if found is None:
        raise AttributeError(f"module 'zarrx.codecs' has no attribute {name!r}")
    from zarrx import imports

    return getattr(imports.import_module(found[0]), found[1])


def __dir__() -> list[str]:
    return sorted({*globals(), *_CLASSES})
