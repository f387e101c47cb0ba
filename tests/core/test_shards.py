"""``place_chunks``: a shard's uncompressed inner chunks put into an output region in one
call, against a NumPy model of the same placement, on random shard layouts (missing inner
chunks, inner chunks in any order, the index's bytes before or after them, regions cut by
the array's end, strided and reversed outputs, every element size, byte swapping); and
its refusals, each made before a byte of the output is written."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zarrx._core.shards import place_chunks

EMPTY = 2**64 - 1
#: Element sizes and the byte-swap units that may go with them.
SWAPS = {1: [0], 2: [0, 2], 4: [0, 4, 2], 8: [0, 8, 4], 16: [0, 16, 8]}


def _model(shard: bytes, index: np.ndarray, chunk: tuple[int, ...], itemsize: int,
           fill: bytes, swap: int, start: tuple[int, ...], step: tuple[int, ...],
           shape: tuple[int, ...]) -> np.ndarray:
    """What ``place_chunks`` must produce: the shard's elements (built inner chunk by
    inner chunk, missing ones filled), selected ``start[d] + k * step[d]``."""
    dt = np.dtype(f"V{itemsize}")
    grid = index.shape[:-1]
    image = np.empty(tuple(g * c for g, c in zip(grid, chunk)), dt)
    for at in np.ndindex(*grid):
        region = tuple(slice(a * c, (a + 1) * c) for a, c in zip(at, chunk))
        offset, nbytes = (int(v) for v in index[at])
        if offset == EMPTY:
            image[region] = np.frombuffer(fill, dt)[0]
            continue
        raw = np.frombuffer(shard, np.uint8, nbytes, offset)
        if swap:  # reverse each swap-byte unit
            raw = raw.reshape(-1, swap)[:, ::-1].reshape(-1)
        image[region] = raw.copy().view(dt).reshape(chunk)
    return image[tuple(slice(o, o + (n - 1) * s + 1, s) for o, s, n in zip(start, step, shape))]


@st.composite
def layouts(draw: Any) -> dict[str, Any]:
    ndim = draw(st.integers(1, 3))
    chunk = tuple(draw(st.lists(st.integers(1, 4), min_size=ndim, max_size=ndim)))
    grid = tuple(draw(st.lists(st.integers(1, 3), min_size=ndim, max_size=ndim)))
    # the selection: a region from the origin (the whole shard, or cut by the array's
    # end), or any strided run per axis
    if draw(st.booleans()):
        start, step = (0,) * ndim, (1,) * ndim
        shape = tuple(draw(st.integers((g - 1) * c + 1, g * c)) for g, c in zip(grid, chunk))
    else:
        start = tuple(draw(st.integers(0, g * c - 1)) for g, c in zip(grid, chunk))
        step = tuple(draw(st.integers(1, 5)) for _ in range(ndim))
        shape = tuple(draw(st.integers(1, (g * c - 1 - o) // s + 1))
                      for g, c, o, s in zip(grid, chunk, start, step))
    itemsize = draw(st.sampled_from(sorted(SWAPS)))
    swap = draw(st.sampled_from(SWAPS[itemsize]))
    n = int(np.prod(grid))
    missing = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    order = draw(st.permutations(range(n)))  # where each inner chunk sits in the shard
    lead = draw(st.sampled_from([0, 20]))  # bytes before the inner chunks (an index at the start)
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    nbytes = int(np.prod(chunk)) * itemsize
    index = np.full((*grid, 2), EMPTY, np.uint64)
    parts = [rng.integers(0, 256, lead, dtype=np.uint8).tobytes()]
    offset = lead
    for k in order:
        if missing[k]:
            continue
        index[np.unravel_index(k, grid)] = (offset, nbytes)
        parts.append(rng.integers(0, 256, nbytes, dtype=np.uint8).tobytes())
        offset += nbytes
    parts.append(b"\x07" * 20)  # bytes after them (an index at the end)
    view = draw(st.sampled_from(["plain", "strided", "reversed", "transposed"]))
    fill = rng.integers(0, 256, itemsize, dtype=np.uint8).tobytes()
    return {"shard": b"".join(parts), "index": index, "chunk": chunk, "shape": shape,
            "start": start, "step": step,
                "itemsize": itemsize, "swap": swap, "fill": fill, "view": view}


def _destination(shape: tuple[int, ...], itemsize: int, view: str) -> tuple[np.ndarray,
                                                                             np.ndarray]:
    """A destination of ``shape`` laid out as ``view`` says, and the array around it."""
    dt = np.dtype(f"V{itemsize}")
    if view == "strided":
        base = np.zeros(tuple(2 * s for s in shape), dt)
        return base, base[tuple(slice(None, None, 2) for _ in shape)]
    if view == "reversed":
        base = np.zeros(shape, dt)
        return base, base[tuple(slice(None, None, -1) for _ in shape)]
    if view == "transposed":
        base = np.zeros(shape[::-1], dt)
        return base, base.T
    base = np.zeros(shape, dt)
    return base, base


@settings(max_examples=300, deadline=None)
@given(layouts())
def test_place_chunks_matches_the_model(case: dict[str, Any]) -> None:
    _, dst = _destination(case["shape"], case["itemsize"], case["view"])
    place_chunks(case["shard"], case["index"], case["chunk"], dst, case["fill"], case["swap"],
                 case["start"], case["step"])
    expected = _model(case["shard"], case["index"], case["chunk"], case["itemsize"],
                      case["fill"], case["swap"], case["start"], case["step"], case["shape"])
    assert dst.tobytes() == expected.tobytes()


def test_a_large_region_is_placed_without_the_gil_and_matches() -> None:
    """Above the size where the GIL is released: float64 inner chunks, big endian."""
    data = np.arange(64 * 48, dtype=">f8").reshape(64, 48)
    chunks = [data[i:i + 8, j:j + 6] for i in range(0, 64, 8) for j in range(0, 48, 6)]
    shard = b"".join(np.ascontiguousarray(c).tobytes() for c in chunks)
    index = np.array([(k * 8 * 6 * 8, 8 * 6 * 8) for k in range(len(chunks))],
                     np.uint64).reshape(8, 8, 2)
    index[3, 5] = (EMPTY, EMPTY)
    out = np.empty((64, 48), "<f8")
    place_chunks(shard, index, (8, 6), out, np.float64(-1).tobytes(), 8)
    expected = data.astype("<f8")
    expected[24:32, 30:36] = -1
    np.testing.assert_array_equal(out, expected)


def _simple() -> tuple[bytes, np.ndarray, np.ndarray]:
    shard = bytes(range(16))  # inner chunks of 2 x 2 bytes
    index = np.array([[[0, 4], [4, 4]], [[8, 4], [EMPTY, EMPTY]]], np.uint64)
    return shard, index, np.zeros((4, 4), np.uint8)


@pytest.mark.parametrize(("change", "error", "match"), [
    ({"index": np.array([[[0, 4], [4, 3]], [[8, 4], [EMPTY, EMPTY]]], np.uint64)},
     ValueError, r"inner chunk \(0, 1\) \(offset 4, 3 bytes\) is not 4 bytes"),
    ({"index": np.array([[[0, 4], [4, 4]], [[14, 4], [EMPTY, EMPTY]]], np.uint64)},
     ValueError, r"inner chunk \(1, 0\)"),
    ({"index": np.array([[[0, 4], [4, 4]], [[2**64 - 2, 4], [EMPTY, EMPTY]]], np.uint64)},
     ValueError, r"inner chunk \(1, 0\)"),
    ({"index": np.array([[[0, 4], [4, 4]], [[0, EMPTY], [EMPTY, EMPTY]]], np.uint64)},
     ValueError, r"inner chunk \(1, 0\)"),
    ({"index": np.zeros((2, 2, 2), np.int64)}, ValueError, "native uint64"),
    ({"index": np.zeros((2, 2, 2), ">u8")}, ValueError, "native uint64"),
    ({"index": np.zeros((2, 2), np.uint64)}, ValueError, "native uint64"),
    ({"index": np.zeros((1, 2, 2), np.uint64)}, ValueError, "leaves the shard"),
    ({"start": (1, 0)}, ValueError, "leaves the shard"),
    ({"step": (1, 2)}, ValueError, "leaves the shard"),
    ({"step": (1, 0)}, ValueError, "step"),
    ({"start": (-1, 0)}, ValueError, "start"),
    ({"start": (0,)}, ValueError, "start"),
    ({"chunk_shape": (2,)}, ValueError, "chunk_shape"),
    ({"chunk_shape": (2, 0)}, ValueError, "chunk_shape"),
    ({"chunk_shape": (2, 2.0)}, TypeError, "integer"),
    ({"value": b"\0\0"}, ValueError, "value has 2 bytes"),
    ({"value": 3}, TypeError, "value must be bytes-like"),
    ({"shard": "text"}, TypeError, "shard must be bytes-like"),
    ({"swap": 2}, ValueError, "swap 2"),
    ({"swap": 3}, ValueError, "swap 3"),
    ({"dst": np.zeros((), np.uint8)}, ValueError, "dimensions"),
    ({"dst": np.broadcast_to(np.zeros(4, np.uint8), (4, 4))}, ValueError, "read-only"),
    ({"dst": np.zeros((4, 4), object)}, TypeError, "Python objects"),
])
def test_bad_arguments_are_refused_before_writing(change: dict[str, Any], error: type,
                                                   match: str) -> None:
    shard, index, dst = _simple()
    args: dict[str, Any] = {"shard": shard, "index": index, "chunk_shape": (2, 2), "dst": dst,
                                "value": b"\x05", "swap": 0}
    args.update(change)
    before = np.array(args["dst"], copy=True)
    with pytest.raises(error, match=match):
        place_chunks(args["shard"], args["index"], args["chunk_shape"], args["dst"],
                     args["value"], args["swap"], args.get("start"), args.get("step"))
    if args["dst"].dtype != object:
        np.testing.assert_array_equal(args["dst"], before)


def test_a_broadcast_destination_is_refused() -> None:
    shard, index, _ = _simple()
    dst = np.lib.stride_tricks.as_strided(np.zeros(4, np.uint8), (4, 4), (0, 1))
    with pytest.raises(ValueError, match="broadcast"):
        place_chunks(shard, index, (2, 2), dst, b"\0", 0)


def test_a_destination_overlapping_the_shard_is_refused() -> None:
    memory = np.zeros(64, np.uint8)
    memory[:16] = np.arange(16)
    index = np.array([[[0, 4], [4, 4]], [[8, 4], [12, 4]]], np.uint64)
    with pytest.raises(ValueError, match="overlaps"):
        place_chunks(memory[:16], index, (2, 2), memory[12:28].reshape(4, 4), b"\0", 0)
    place_chunks(memory[:16], index, (2, 2), memory[16:32].reshape(4, 4), b"\0", 0)
    assert memory[16:32].tolist() == [0, 1, 4, 5, 2, 3, 6, 7, 8, 9, 12, 13, 10, 11, 14, 15]


def test_an_empty_destination_writes_nothing() -> None:
    shard, index, _ = _simple()
    place_chunks(shard, index, (2, 2), np.zeros((0, 4), np.uint8), b"\0", 0)
