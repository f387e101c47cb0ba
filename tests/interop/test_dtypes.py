"""Every core data type, both directions, with a non-zero fill and chunks never written.

tensorstore's ``zarr3`` driver supports every core data type of the v3 spec (bool, the
integers, float16/32/64, complex64/128) and every fill value encoding tested here, so no
data type is left out for it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.interop._peers import (
    DIRECTION_IDS,
    DIRECTIONS,
    DTYPES,
    Layout,
    check_roundtrip,
    make_data,
    region_for,
)

#: A fill value that is not zero and not a value the data is likely to hold whole chunks of.
NONZERO_FILL = {
    "bool": True,
    "int8": -7, "int16": -300, "int32": -70000, "int64": -(2**40),
    "uint8": 200, "uint16": 60000, "uint32": 2**31 + 5, "uint64": 2**64 - 2,
    "float16": -2.5, "float32": 1.25e30, "float64": -1e300,
    "complex64": 1.5 - 2j, "complex128": -0.25 + 1e200j,
}


@pytest.mark.parametrize(("writer", "reader"), DIRECTIONS, ids=DIRECTION_IDS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("endian", ["little", "big"])
def test_full_write(endian: str, writer: str, reader: str, dtype: str, path: Path) -> None:
    layout = Layout(dtype=dtype, shape=(13, 17), chunks=(4, 5),
                    serializer={"name": "bytes", "configuration": {"endian": endian}})
    check_roundtrip(writer, reader, path, layout)


@pytest.mark.parametrize(("writer", "reader"), DIRECTIONS, ids=DIRECTION_IDS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_partial_write_nonzero_fill(writer: str, reader: str, dtype: str, path: Path) -> None:
    layout = Layout(dtype=dtype, shape=(5, 7, 9), chunks=(2, 3, 4), fill_value=NONZERO_FILL[dtype])
    expected = check_roundtrip(writer, reader, path, layout, region=region_for(layout))
    assert (expected == layout.fill).any()
    assert (expected != layout.fill).any()


@pytest.mark.parametrize(("writer", "reader"), DIRECTIONS, ids=DIRECTION_IDS)
@pytest.mark.parametrize("dtype", ["bool", "int8", "uint32", "float16", "float64", "complex64"])
def test_fortran_ordered_input(writer: str, reader: str, dtype: str, path: Path) -> None:
    """NumPy input in F memory order (and a non-contiguous view) is written as its values."""
    layout = Layout(dtype=dtype, shape=(13, 17), chunks=(4, 5))
    data = np.asfortranarray(make_data(dtype, layout.shape, seed=3))
    assert not data.flags.c_contiguous
    check_roundtrip(writer, reader, path, layout, data)
    strided = make_data(dtype, (26, 34), seed=4)[::2, ::-2]
    check_roundtrip(writer, reader, path.with_name("strided"), layout, strided)


#: Shapes beyond the usual: 0-d, 1-d, a size-0 axis, rank 5 with unit axes, one chunk.
SHAPES = {
    "0d": ((), ()),
    "1d": ((30,), (7,)),
    "zero-size": ((0, 5), (2, 2)),
    "rank5": ((3, 1, 4, 1, 5), (2, 1, 3, 1, 2)),
    "one-chunk": ((6, 4), (6, 4)),
    "chunk-larger-than-array": ((3, 5), (8, 8)),
    "many-chunks": ((97, 131), (8, 9)),
}


@pytest.mark.parametrize(("writer", "reader"), DIRECTIONS, ids=DIRECTION_IDS)
@pytest.mark.parametrize("dtype", ["bool", "int16", "float32", "complex128"])
@pytest.mark.parametrize("shape", SHAPES)
def test_shapes(shape: str, dtype: str, writer: str, reader: str, path: Path) -> None:
    array_shape, chunks = SHAPES[shape]
    layout = Layout(dtype=dtype, shape=array_shape, chunks=chunks, fill_value=1)
    data = make_data(dtype, array_shape) if array_shape else np.asarray(make_data(dtype, (1,))[0])
    check_roundtrip(writer, reader, path, layout, data)
