"""``vlen-utf8`` and ``vlen-bytes``: variable-length elements as length-prefixed items.

- Spec: https://github.com/zarr-developers/zarr-extensions/tree/main/codecs/vlen-utf8
- v3 names: ``vlen-utf8``, ``vlen-bytes``; v2 ids (as ``filters`` of ``|O`` arrays): the same.
- Layout (numcodecs): uint32 LE item count, then per item a uint32 LE length and its bytes,
  in C order. Encoding and decoding run in numcodecs' Cython.

>>> import numpy as np
>>> from zarrx.abc.codec import ChunkSpec
>>> codec = VlenUtf8Codec()
>>> spec = ChunkSpec((2,), np.dtypes.StringDType(), "")
>>> codec.decode(codec.encode(np.array(["ab", "é"], dtype=spec.dtype), spec), spec).tolist()
['ab', 'é']
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Self

import numpy as np

from zarrx.abc.codec import ArrayBytesCodec, Buffer, ChunkSpec
from zarrx.errors import CodecError, MetadataError


class _Vlen(ArrayBytesCodec):
    numcodecs_name: ClassVar[str]

    @classmethod
    def from_config(cls, configuration: Mapping[str, Any]) -> Self:
        if set(configuration) - {"id"}:
            raise MetadataError(f"codec {cls.name!r} takes no configuration, got {configuration}")
        return cls()

    def to_config(self) -> dict[str, Any]:
        return {}

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "configuration": {}}

    def _codec(self) -> Any:
        from zarrx.codecs.numcodecs_compat import import_numcodecs

        return getattr(import_numcodecs(), self.numcodecs_name)()

    def encode(self, chunk: np.ndarray, spec: ChunkSpec) -> Buffer:
        return self._codec().encode(np.ascontiguousarray(chunk).astype(object).reshape(-1))

    def decode(self, data: Buffer, spec: ChunkSpec) -> np.ndarray:
        n = int(np.prod(spec.shape))
        view = memoryview(data).cast("B")
        if len(view) < 4 or int.from_bytes(view[:4], "little") != n:
            raise CodecError(f"codec {self.name!r}: the chunk does not hold {n} items")
        try:
            items = self._codec().decode(view)
        except Exception as e:  # numcodecs raises ValueError/RuntimeError on bad input
            raise CodecError(f"codec {self.name!r}: corrupt or truncated chunk: {e}") from None
        return np.asarray(items, dtype=spec.dtype).reshape(spec.shape)


class VlenUtf8Codec(_Vlen):
    """Variable-length UTF-8 strings."""

    name: ClassVar[str] = "vlen-utf8"
    numcodecs_name: ClassVar[str] = "VLenUTF8"


class VlenBytesCodec(_Vlen):
    """Variable-length byte strings."""

    name: ClassVar[str] = "vlen-bytes"
    numcodecs_name: ClassVar[str] = "VLenBytes"
