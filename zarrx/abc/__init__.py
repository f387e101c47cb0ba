"""The contracts plugins implement. Plugins import only from here (and ``zarrx.errors``)."""

from zarrx.abc.codec import (
    ArrayArrayCodec,
    ArrayBytesCodec,
    BytesBytesCodec,
    ChunkSpec,
    Codec,
)
from zarrx.abc.store import ByteRange, Store

__all__ = [
    "ArrayArrayCodec",
    "ArrayBytesCodec",
    "ByteRange",
    "BytesBytesCodec",
    "ChunkSpec",
    "Codec",
    "Store",
]
