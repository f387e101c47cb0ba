"""``example.xor``: every byte XORed with a key (a toy: it hides nothing)."""

from collections.abc import Mapping
from typing import Any

import numpy as np

from zarrx.abc.codec import Buffer, BytesBytesCodec
from zarrx.errors import CodecError, MetadataError


class XorCodec(BytesBytesCodec):
    name = "example.xor"

    def __init__(self, key: int) -> None:
        self.key = key

    @classmethod
    def from_config(cls, configuration: Mapping[str, Any]) -> "XorCodec":
        key = configuration.get("key")
        if set(configuration) != {"key"} or not isinstance(key, int) or not 0 <= key < 256:
            raise MetadataError(f"example.xor: configuration must be {{'key': 0..255}}, "
                                f"got {dict(configuration)!r}")
        return cls(key)

    def to_config(self) -> dict[str, Any]:
        return {"key": self.key}

    def encode(self, data: Buffer) -> Buffer:
        return (np.frombuffer(data, dtype="u1") ^ self.key).tobytes()

    def decode(self, data: Buffer, max_size: int | None) -> Buffer:
        n = memoryview(data).nbytes
        if max_size is not None and n > max_size:
            raise CodecError(f"example.xor: {n} bytes where at most {max_size} fit")
        return self.encode(data)  # XOR is its own inverse

    def max_encoded_size(self, n: int) -> int:
        return n
