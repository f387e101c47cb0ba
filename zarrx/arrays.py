"""The ndarray-like :class:`Array`: NumPy basic indexing over chunked, encoded storage."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import numpy as np

from zarrx.abc.codec import ArrayArrayCodec, ArrayBytesCodec, BytesBytesCodec
from zarrx.abc.store import Store
from zarrx.config import array_settings
from zarrx.engine.chunks import ChunkStore
from zarrx.engine.read import read_selection
from zarrx.engine.write import write_selection
from zarrx.errors import CastingError, MetadataError, SelectionError, ShapeError
from zarrx.extensions import index_domain
from zarrx.info import Info, array_summary, initialised, stored_keys, stored_size
from zarrx.lazy import LazyIndexer
from zarrx.metadata.io import data_prefix
from zarrx.node import Node
from zarrx.selection.layout import Layout
from zarrx.selection.modes import block_transform, coordinate_transform, orthogonal_transform
from zarrx.selection.numpy_index import (
    ParsedIndex,
    Selected,
    basic_transform,
    numpy_transform,
    parse_index,
)
from zarrx.selection.transform import IndexTransform
from zarrx.selection.values import assigned_value


class Array(Node):
    """A Zarr array. Index it like a NumPy array; ``np.asarray(a)`` reads it whole."""

    def __init__(
        self, store: Store, path: str, metadata: Any, *, read_only: bool = False,
        config: Any = None,
    ) -> None:
        super().__init__(store, path, metadata, read_only=read_only)
        #: This array object's own settings (zarr-python's ``config=``: ``order``,
        #: ``write_empty_chunks``); the others come from :mod:`zarrx.config`.
        self._config = array_settings(config, where=f"array {self.name!r}")
        #: ``(metadata, its ChunkStore)``, built on the first read or write: listing a
        #: group of many arrays opens each without preparing what only I/O needs.
        self._chunks: tuple[Any, ChunkStore] | None = None

    @property
    def _chunk_store(self) -> ChunkStore:
        """The engine's view of the array for its current metadata. Threads using it
        first at once may each build one (equal, and each complete); one built for
        metadata replaced meanwhile (:meth:`_adopt`) is never returned."""
        metadata = self._metadata
        held = self._chunks
        if held is None or held[0] is not metadata:
            held = (metadata, ChunkStore(
                self._store, data_prefix(self._path, metadata), metadata, self.name,
                self._config.get("write_empty_chunks"),
            ))
            self._chunks = held
        return held[1]

    def with_config(self, config: Any) -> Array:
        """This array with other per-array settings (zarr-python's ``with_config``): the
        keys given replace this object's, the others are kept."""
        merged = {**self._config, **array_settings(config, where=f"array {self.name!r}")}
        return type(self)(self._store, self._path, self._metadata, read_only=self._read_only,
                          config=merged)

    # -- description ------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return _visible_shape(self._metadata)

    # -- extensions: index domain and write hooks -------------------------------------------
    @property
    def _domain(self) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
        """``(origin, visible shape)`` when an extension (e.g. an offset) changes indexing."""
        entries = getattr(self._metadata, "extensions", ())
        return index_domain(entries, self._metadata.shape) if entries else None

    @property
    def extensions(self) -> dict[str, Any]:
        """The node's ZEP 10 extension entries by name (plugin objects, or raw entries)."""
        return {e.name: e for e in getattr(self._metadata, "extensions", ())}

    def _layout(self, transform: IndexTransform) -> Layout:
        """The buffer layout of a selection of the visible array, in stored coordinates."""
        domain = self._domain
        return Layout(transform if domain is None else transform.translate(domain[0]))

    def _after_write(self, written: np.ndarray) -> None:
        entries = getattr(self._metadata, "extensions", ())
        if not entries or not written.size:
            return
        if _after_write(entries, written) != entries:  # (stored as they are now, merged)
            self._update_metadata(
                lambda meta: replace(meta, extensions=_after_write(meta.extensions, written))
            )

    @property
    def _data_type(self) -> Any:
        """The data type object (v3 arrays); its optional hooks shape what the API shows:
        ``present`` (results), ``absorb`` (assigned values), ``user_dtype``, ``present_fill``."""
        return getattr(self._metadata, "data_type", None)

    @property
    def dtype(self) -> np.dtype:
        """The dtype of what reads return (for nullable values: the underlying type's)."""
        return getattr(self._data_type, "user_dtype", self._metadata.dtype)

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
    def chunks(self) -> tuple[Any, ...]:
        """Shape of a chunk (of an inner chunk when sharded); on a grid of variable chunk
        sizes, per axis the sizes of its chunks inside the array (dask's ``chunks``)."""
        sharding = self._sharding()
        if sharding:
            return tuple(sharding.chunk_shape)
        return self._metadata.chunk_grid.chunk_sizes(self._metadata.shape)

    @property
    def shards(self) -> tuple[Any, ...] | None:
        """Shape of a shard (per axis the sizes of variable shards), or ``None`` when the
        array is not sharded."""
        if not self._sharding():
            return None
        return self._metadata.chunk_grid.chunk_sizes(self._metadata.shape)

    @property
    def cdata_shape(self) -> tuple[int, ...]:
        """Number of chunks along each axis (inner chunks when sharded, as zarr-python)."""
        if self._sharding() is None:
            return self._metadata.chunk_grid.grid_shape(self.shape)
        return tuple(-(-s // c) for s, c in zip(self.shape, self.chunks))

    @property
    def nchunks(self) -> int:
        return math.prod(self.cdata_shape)

    @property
    def fill_value(self) -> Any:
        present = getattr(self._data_type, "present_fill", None)
        fill = self._metadata.fill_value
        return fill if present is None else present(fill)

    @property
    def dimension_names(self) -> tuple[str | None, ...] | None:
        return self._metadata.dimension_names

    @property
    def codecs(self) -> tuple[Any, ...]:
        return self._metadata.codecs.codecs

    # -- codecs, as zarr-python names them ------------------------------------------------
    def _inner_codecs(self) -> tuple[Any, ...]:
        """The codecs applied to each chunk (inside the sharding codec when sharded)."""
        sharding = self._sharding()
        return tuple(sharding.codecs.codecs) if sharding else tuple(self.codecs)

    def _array_array(self) -> tuple[Any, ...]:
        return tuple(c for c in self._inner_codecs() if isinstance(c, ArrayArrayCodec))

    def _f_transpose(self) -> bool:
        """Whether the last array→array codec reverses the axes (``order="F"``)."""
        aa = self._array_array()
        return (
            self.ndim > 1 and bool(aa) and aa[-1].name == "transpose"
            and tuple(aa[-1].order) == tuple(range(self.ndim))[::-1]
        )

    @property
    def order(self) -> str:
        """``"F"`` when chunks are stored in Fortran order (v2's ``order``; in v3 a
        transpose codec reversing the axes, which zarrx adds for ``order="F"``)."""
        if self.zarr_format == 2:
            return str(self._metadata.order)
        return "F" if self._f_transpose() else "C"

    @property
    def filters(self) -> tuple[Any, ...]:
        """v2: the filters; v3: the array→array codecs (but the ``order="F"`` transpose)."""
        if self.zarr_format == 2:
            return tuple(self._metadata.filters)
        aa = self._array_array()
        return aa[:-1] if self._f_transpose() else aa

    @property
    def serializer(self) -> Any:
        """The array→bytes codec (``None`` in v2, which has none)."""
        if self.zarr_format == 2:
            return None
        return next(c for c in self._inner_codecs() if isinstance(c, ArrayBytesCodec))

    @property
    def compressors(self) -> tuple[Any, ...]:
        """v2: the compressor (or nothing); v3: the bytes→bytes codecs."""
        if self.zarr_format == 2:
            compressor = self._metadata.compressor
            return () if compressor is None else (compressor,)
        return tuple(c for c in self._inner_codecs() if isinstance(c, BytesBytesCodec))

    @property
    def compressor(self) -> Any:
        """The one compressor of a v2 array (zarr-python's older name)."""
        compressors = self.compressors
        if len(compressors) > 1:
            raise MetadataError(
                f"{self.name}: the array has {len(compressors)} compressors; use .compressors"
            )
        return compressors[0] if compressors else None

    # -- what is stored -----------------------------------------------------------------------
    @property
    def nchunks_initialized(self) -> int:
        """Chunks stored (one listing of the array's keys); when sharded, the chunks of
        the stored shards, as zarr-python counts them."""
        stored = initialised(self)
        if self._sharding() is None:
            return len(stored)
        grid, inner = self._metadata.chunk_grid, self.chunks
        return sum(math.prod(s // c for s, c in zip(grid.chunk_shape_at(coords), inner))
                   for coords, _ in stored)

    def nbytes_stored(self) -> int:
        """Bytes the array occupies in its store: documents and chunks."""
        return stored_size(self._store, stored_keys(self))

    @property
    def info(self) -> Info:
        """A summary that needs no store access (shape, chunks, codecs …)."""
        return Info(array_summary(self, stored=False))

    def info_complete(self) -> Info:
        """:attr:`info` plus what is stored: initialised chunks, bytes and ratio."""
        return Info(array_summary(self))

    def __repr__(self) -> str:
        return f"<zarrx.Array {self.name!r} shape={self.shape} dtype={self.dtype}>"

    def _repr_html_(self) -> str:
        from zarrx.display import array_html  # a notebook's display (zarrx/display.py)

        return array_html(self)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self) -> Iterator[Any]:
        for i in range(len(self)):
            yield self[i]

    # -- reading --------------------------------------------------------------------------
    def _read(self, selected: Selected, *, elements: bool = False) -> Any:
        """The selection as reads show it; ``elements``: as stored, without the data type's
        ``present`` (the records of nullable values, for ``fields=``)."""
        out = read_selection(self._chunk_store, self._layout(selected.transform))
        present = None if elements else getattr(self._data_type, "present", None)
        if present is not None:  # e.g. nullable values: a masked array
            out = present(out)
        return out[()] if selected.scalar else out

    def __getitem__(self, selection: Any) -> Any:
        """NumPy's ``x[selection]``, for every index NumPy accepts."""
        shape = self.shape
        selected = basic_transform(shape, selection)  # integers and slices, quickly
        if selected is None:
            selected = numpy_transform(shape, selection, self.name)
        return self._read(selected)

    def _select(self, selected: Selected, out: Any, fields: Any) -> Any:
        """The read selection, then zarr-python's ``fields`` (of a structured dtype) and
        ``out`` (a NumPy array of the selection's shape to read into). ``out`` follows the
        rule of a NumPy ufunc's ``out=``: values are cast to its dtype when the cast is
        ``"same_kind"`` (float64 into float32, int64 into int8), and refused otherwise
        (float into int, a number into bool), before anything is written into it."""
        result = self._read(selected, elements=fields is not None)
        if fields is not None:  # of a record type, or of the records of nullable values
            if self._metadata.dtype.names is None:
                raise SelectionError(f"{self.name}: fields={fields!r} needs a structured dtype")
            result = result[fields]
        if out is None:
            return result
        if not isinstance(out, np.ndarray) or out.shape != np.shape(result):
            raise ShapeError(
                f"{self.name}: out must be a NumPy array of shape {np.shape(result)}, "
                f"got {getattr(out, 'shape', type(out).__name__)}"
            )
        if not np.can_cast(np.asarray(result).dtype, out.dtype, casting="same_kind"):
            raise CastingError(
                f"array {self.name!r}: cannot read {np.asarray(result).dtype} values into out= of "
                f"dtype {out.dtype} (NumPy's 'same_kind' rule for out=, as in ufuncs); pass "
                f"out= of a dtype that holds them, or cast the result yourself"
            )
        np.copyto(out, result, casting="same_kind")
        return out

    def get_basic_selection(
        self, selection: Any = Ellipsis, *, out: Any = None, fields: Any = None
    ) -> Any:
        """Ints, slices, Ellipsis and None only (zarr-python's basic selection)."""
        selected = numpy_transform(self.shape, self._basic(selection), self.name)
        return self._select(selected, out, fields)

    def get_orthogonal_selection(
        self, selection: Any, *, out: Any = None, fields: Any = None
    ) -> Any:
        """Outer-product selection: ints, slices, int arrays and boolean masks per axis."""
        return self._select(orthogonal_transform(self.shape, selection, self.name), out, fields)

    def get_coordinate_selection(
        self, selection: Any, *, out: Any = None, fields: Any = None
    ) -> Any:
        """Points: integer arrays broadcast together (or one boolean mask)."""
        return self._select(coordinate_transform(self.shape, selection, self.name), out, fields)

    def get_mask_selection(self, mask: Any, *, out: Any = None, fields: Any = None) -> Any:
        """The elements where a boolean ``mask`` of the array's shape is true."""
        return self.get_coordinate_selection(self._boolean_mask(mask), out=out, fields=fields)

    def get_block_selection(self, selection: Any, *, out: Any = None, fields: Any = None) -> Any:
        """Whole chunks, indexed in units of chunks (``a.blocks[1, :2]``)."""
        selected = block_transform(self.shape, self.chunks, selection, self.name)
        return self._select(selected, out, fields)

    def _boolean_mask(self, mask: Any) -> np.ndarray:
        mask = np.asarray(mask)
        if mask.dtype != bool or mask.shape != self.shape:
            raise SelectionError(
                f"{self.name}: a mask selection takes a boolean array of shape {self.shape}, "
                f"got {mask.dtype} of shape {mask.shape}"
            )
        return mask

    def _basic(self, selection: Any) -> Any:
        items = selection if isinstance(selection, tuple) else (selection,)
        for item in items:
            if not (item is None or item is Ellipsis or isinstance(item, slice)
                    or (isinstance(item, int | np.integer)
                        and not isinstance(item, bool | np.bool_))):
                raise SelectionError(
                    f"{self.name}: basic selections take integers, slices, Ellipsis and None, "
                    f"not {item!r}; use a[...], oindex or vindex for index arrays"
                )
        return selection

    @property
    def lazy(self) -> LazyIndexer:
        """Declare a view without reading: ``a.lazy[10:, ::-2]`` (see :mod:`zarrx.lazy`)."""
        return LazyIndexer(self, IndexTransform.identity(self.shape))

    @property
    def oindex(self) -> _Indexer:
        """Orthogonal indexing: ``a.oindex[[0, 3], 1:5]``."""
        return _Indexer(self.get_orthogonal_selection, self.set_orthogonal_selection)

    @property
    def vindex(self) -> _Indexer:
        """Vectorized (point) indexing: ``a.vindex[[0, 1], [2, 3]]`` or ``a.vindex[mask]``."""
        return _Indexer(self.get_coordinate_selection, self.set_coordinate_selection)

    @property
    def blocks(self) -> _Indexer:
        """Chunk-grid indexing: ``a.blocks[0, 1]`` is the chunk at grid position (0, 1)."""
        return _Indexer(self.get_block_selection, self.set_block_selection)

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        if copy is False:
            raise ValueError(
                f"{self.name}: a zarrx Array is read from storage, so it cannot be converted "
                "to a NumPy array without a copy (copy=False)"
            )
        out = self._read(Selected(IndexTransform.identity(self.shape), "view"))
        out = np.ma.getdata(out)  # a masked read: its data, as np.asarray gives of one
        return out if dtype is None else out.astype(dtype, copy=False)

    # -- writing --------------------------------------------------------------------------
    def _cast(self, selected: Any, value: Any) -> np.ndarray:
        """``value`` as NumPy's ``__setitem__`` casts and broadcasts it for the selection
        (errors before any write)."""
        self._check_writable("write to")
        absorb = getattr(self._data_type, "absorb", None)
        if absorb is not None:  # e.g. masked arrays as nullable records
            value = absorb(value)
        return assigned_value(value, self._metadata.dtype, selected, self.name)

    def _write_cells(self, transform: IndexTransform, data: np.ndarray) -> None:
        """Write ``data`` (of the transform's shape and the array's dtype) into the cells
        ``transform`` names."""
        write_selection(self._chunk_store, self._layout(transform), data)
        self._after_write(data)

    def _write(self, selected: Selected | ParsedIndex, value: Any) -> None:
        data = self._cast(selected, value)
        if isinstance(selected, ParsedIndex):
            selected = selected.resolve()
        self._write_cells(selected.transform, data)

    def __setitem__(self, selection: Any, value: Any) -> None:
        """NumPy's ``x[selection] = value``: NumPy's casting, broadcasting, and the last
        of repeated indices wins."""
        self._write(parse_index(self.shape, selection, self.name), value)

    def set_basic_selection(self, selection: Any, value: Any) -> None:
        self._write(parse_index(self.shape, self._basic(selection), self.name), value)

    def set_orthogonal_selection(self, selection: Any, value: Any) -> None:
        self._write(orthogonal_transform(self.shape, selection, self.name), value)

    def set_block_selection(self, selection: Any, value: Any) -> None:
        self._write(block_transform(self.shape, self.chunks, selection, self.name), value)

    def set_coordinate_selection(self, selection: Any, value: Any) -> None:
        self._write(coordinate_transform(self.shape, selection, self.name), value)

    def set_mask_selection(self, mask: Any, value: Any) -> None:
        """Write ``value`` where a boolean ``mask`` of the array's shape is true."""
        self.set_coordinate_selection(self._boolean_mask(mask), value)

    # -- shape changes --------------------------------------------------------------------
    def resize(self, *shape: Any) -> None:
        """Change the shape. Chunks wholly outside the new shape are erased, and the part
        of a boundary chunk that falls outside is reset to the fill value, so growing the
        array again shows the fill value there, never stale data."""
        self._check_writable("resize")
        new = tuple(shape[0]) if len(shape) == 1 and not isinstance(shape[0], int) else shape
        new = self._checked_shape(tuple(int(s) for s in new), self.shape)
        old = self.shape
        grid = self._metadata.chunk_grid
        old_grid, new_grid = grid.grid_shape(old), grid.resized(new).grid_shape(new)
        # Reset the shrunk margin inside the chunks that survive (still in the old shape).
        kept = [min(o, grid.axis_boundary(a, n)) for a, (o, n) in enumerate(zip(old, new_grid))]
        for axis in range(self.ndim):
            if new[axis] < kept[axis]:
                margin = tuple(
                    slice(new[a], kept[a]) if a == axis else slice(0, kept[a])
                    for a in range(self.ndim)
                )
                self[margin] = self.fill_value
        doomed: list[str] = []  # chunks past the new grid, by the first axis they are past it on
        for axis in range(self.ndim):  # (never a walk over every chunk of a huge grid)
            ranges = [range(min(n, o)) if a < axis else range(n, o) if a == axis else range(o)
                      for a, (n, o) in enumerate(zip(new_grid, old_grid))]
            if len(ranges[axis]):
                doomed += map(self._chunk_store.key, itertools.product(*ranges))
        for key in doomed:
            self._store.erase(key)
        self._update_metadata(lambda meta: meta.with_shape(new))

    def _checked_shape(self, new: tuple[int, ...], old: tuple[int, ...]) -> tuple[int, ...]:
        """``new`` if the array may take that shape instead of ``old``."""
        if len(new) != len(old) or any(s < 0 for s in new):
            raise ShapeError(f"{self.name}: cannot resize {old} to {new}")
        if any(s > 2**63 - 1 for s in new):
            raise ShapeError(f"{self.name}: new shape {new} has a dimension longer than 2**63-1")
        return new

    def append(self, data: Any, axis: int = 0) -> tuple[int, ...]:
        """Grow along ``axis`` and write ``data`` into the new part; returns the new shape.

        The growth is one atomic update of the metadata, from the shape the store holds
        when it is written: concurrent appends (other processes, other machines) each
        reserve their own rows, and each writes its data there."""
        self._check_writable("append to")
        data = np.asarray(data)
        axis = axis % self.ndim if self.ndim else 0
        reserved: list[tuple[int, ...]] = []  # the shape this append made

        def grow(meta: Any) -> Any:
            shape = _visible_shape(meta)
            if data.ndim != len(shape) or any(
                d != s for a, (d, s) in enumerate(zip(data.shape, shape)) if a != axis
            ):
                raise ShapeError(
                    f"{self.name}: cannot append data of shape {data.shape} to an array of "
                    f"shape {shape} along axis {axis}"
                )
            grown = tuple(s + data.shape[axis] if a == axis else s for a, s in enumerate(shape))
            reserved[:] = [self._checked_shape(grown, shape)]
            return meta.with_shape(reserved[0])

        self._update_metadata(grow)
        end = reserved[0][axis]
        rows = slice(end - data.shape[axis], end)
        self[tuple(rows if a == axis else slice(None) for a in range(data.ndim))] = data
        return reserved[0]


class _Indexer:
    """``a.oindex`` / ``a.vindex`` / ``a.blocks``: square brackets for one selection mode."""

    def __init__(self, get: Any, set_: Any) -> None:
        self._get = get
        self._set = set_

    def __getitem__(self, selection: Any) -> Any:
        return self._get(selection)

    def __setitem__(self, selection: Any, value: Any) -> None:
        self._set(selection, value)


def _visible_shape(meta: Any) -> tuple[int, ...]:
    """The shape an array with metadata ``meta`` is indexed with (an extension may change
    its index domain)."""
    entries = getattr(meta, "extensions", ())
    domain = index_domain(entries, meta.shape) if entries else None
    return meta.shape if domain is None else domain[1]


def _after_write(entries: tuple[Any, ...], written: np.ndarray) -> tuple[Any, ...]:
    """The extension entries after ``written`` was written (statistics, ...)."""
    return tuple((getattr(e, "after_write", lambda _: None)(written) or e) for e in entries)
