"""The ndarray-like :class:`Array`: NumPy basic indexing over chunked, encoded storage."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np

from zarrx.abc.store import Store
from zarrx.engine.chunks import ChunkStore
from zarrx.engine.plan import plan_basic
from zarrx.engine.read import read_into
from zarrx.engine.write import write_from
from zarrx.metadata.io import data_prefix
from zarrx.node import Node
from zarrx.selection.normalize import BasicSelection, normalize_basic


class Array(Node):
    """A Zarr array. Index it like a NumPy array; ``np.asarray(a)`` reads it whole."""

    def __init__(self, store: Store, path: str, metadata: Any, *, read_only: bool = False) -> None:
        super().__init__(store, path, metadata, read_only=read_only)
        self._chunk_store = ChunkStore(store, data_prefix(path, metadata), metadata, self.name)

    def _write_metadata(self, metadata: Any) -> None:
        super()._write_metadata(metadata)
        self._chunk_store = ChunkStore(
            self._store, data_prefix(self._path, metadata), metadata, self.name
        )

    # -- description ------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return self._metadata.shape

    @property
    def dtype(self) -> np.dtype:
        return self._metadata.dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        """Bytes of the array's data when decoded (not what is stored)."""
        return self.size * self.dtype.itemsize

    def _sharding(self) -> Any:
        codecs = self._metadata.codecs.codecs
        return codecs[0] if len(codecs) == 1 and codecs[0].name == "sharding_indexed" else None

    @property
    def chunks(self) -> tuple[int, ...]:
        """Shape of a chunk (of an inner chunk when sharded)."""
        sharding = self._sharding()
        return sharding.chunk_shape if sharding else self._metadata.chunk_grid.chunk_shape

    @property
    def shards(self) -> tuple[int, ...] | None:
        """Shape of a shard, or ``None`` when the array is not sharded."""
        return self._metadata.chunk_grid.chunk_shape if self._sharding() else None

    @property
    def cdata_shape(self) -> tuple[int, ...]:
        """Number of chunks along each axis."""
        return self._metadata.chunk_grid.grid_shape(self.shape)

    @property
    def nchunks(self) -> int:
        return math.prod(self.cdata_shape)

    @property
    def fill_value(self) -> Any:
        return self._metadata.fill_value

    @property
    def dimension_names(self) -> tuple[str | None, ...] | None:
        return self._metadata.dimension_names

    @property
    def codecs(self) -> tuple[Any, ...]:
        return self._metadata.codecs.codecs

    @property
    def info(self) -> ArrayInfo:
        return ArrayInfo(self)

    def __repr__(self) -> str:
        return f"<zarrx.Array {self.name!r} shape={self.shape} dtype={self.dtype}>"

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self) -> Iterator[Any]:
        for i in range(len(self)):
            yield self[i]

    # -- reading --------------------------------------------------------------------------
    def _read_basic(self, sel: BasicSelection) -> np.ndarray:
        out = np.empty(sel.counts, dtype=self.dtype)
        read_into(self._chunk_store, plan_basic(self._metadata.chunk_grid, self.shape, sel), out)
        return out

    def get_basic_selection(self, selection: Any = Ellipsis) -> Any:
        sel = normalize_basic(selection, self.shape)
        return sel.result(self._read_basic(sel))

    def __getitem__(self, selection: Any) -> Any:
        return self.get_basic_selection(selection)

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        if copy is False:
            raise ValueError(
                f"{self.name}: a zarrx Array is read from storage, so it cannot be converted "
                "to a NumPy array without a copy (copy=False)"
            )
        out = self._read_basic(normalize_basic(Ellipsis, self.shape))
        return out if dtype is None else out.astype(dtype, copy=False)

    # -- writing --------------------------------------------------------------------------
    def set_basic_selection(self, selection: Any, value: Any) -> None:
        self._check_writable("write to")
        sel = normalize_basic(selection, self.shape)
        data = np.asarray(value)
        if data.dtype != self.dtype:
            data = data.astype(self.dtype)
        buffer = sel.to_buffer(data)
        write_from(
            self._chunk_store, plan_basic(self._metadata.chunk_grid, self.shape, sel), buffer
        )

    def __setitem__(self, selection: Any, value: Any) -> None:
        self.set_basic_selection(selection, value)


class ArrayInfo:
    """A printable summary of an array (``a.info``)."""

    def __init__(self, array: Array) -> None:
        self._array = array

    def as_dict(self) -> dict[str, Any]:
        a = self._array
        return {
            "Name": a.name,
            "Type": "Array",
            "Zarr format": a.zarr_format,
            "Data type": str(a.dtype),
            "Fill value": a.fill_value,
            "Shape": a.shape,
            "Chunk shape": a.chunks,
            "Chunks": a.nchunks,
            "Codecs": [c.to_dict() for c in a.codecs],
            "Read-only": a.read_only,
            "Store": repr(a.store),
            "No. bytes": f"{a.nbytes} ({_human(a.nbytes)})",
        }

    def __repr__(self) -> str:
        rows = self.as_dict()
        width = max(map(len, rows))
        return "\n".join(f"{k:<{width}} : {v}" for k, v in rows.items())


def _human(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.1f} {unit}" if unit != "B" else f"{int(n)} B"
        n /= 1024
    return f"{n} B"
