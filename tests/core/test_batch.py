"""zarrx._core.batch: what decode_place and encode_chunks check before they write anything
(a failed call leaves its output untouched), what they report, and the plain cases against
NumPy (the chains' differentials are in tests/codecs/test_native.py)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from zarrx._core.batch import decode_place, encode_chunks
from zarrx._core.steps import FUNCTIONS

CRC_DECODE, CRC_ENCODE, _ = FUNCTIONS["crc32c"]
NONE: tuple[list[int], list[int], list[int], list[int]] = ([], [], [], [])


def call(**changes: Any) -> Any:
    """decode_place of two 2 x 3 uint16 chunks (``bytes`` alone) into a 4 x 4 output,
    with ``changes`` to its arguments."""
    chunks = np.arange(12, dtype="<u2").reshape(2, 2, 3)
    args: dict[str, Any] = {
        "sources": [chunks.tobytes()], "which": [0, 0], "offsets": [0, 12], "sizes": [12, 12],
        "starts": [[0, 0], [0, 1]], "steps": [[1, 1], [1, 1]], "counts": [[2, 3], [2, 2]],
        "outs": [[0, 0], [2, 2]], "out": np.zeros((4, 4), "<u2"), "fill": b"\xff\xff",
        "chunk_shape": (2, 3), "swap": 0, "stream": False, "steps_": NONE,
    }
    args.update(changes)
    steps = args.pop("steps_")
    out = args["out"]
    before = out.copy()
    try:
        return decode_place(*args.values(), *steps)
    except (ValueError, TypeError):
        np.testing.assert_array_equal(out, before)  # nothing written
        raise


def test_places_and_swaps_as_numpy() -> None:
    out = np.zeros((4, 4), "<u2")
    assert call(out=out) is None
    expected = np.zeros((4, 4), "<u2")
    chunks = np.arange(12, dtype="<u2").reshape(2, 2, 3)
    expected[0:2, 0:3] = chunks[0]
    expected[2:4, 2:4] = chunks[1][:, 1:3]
    np.testing.assert_array_equal(out, expected)
    swapped = np.zeros((4, 4), "<u2")
    call(out=swapped, swap=2)
    np.testing.assert_array_equal(swapped, expected.byteswap())
    filled = np.zeros((4, 4), "<u2")
    call(out=filled, sizes=[12, -1])
    assert (filled[2:4, 2:4] == 0xFFFF).all()
    empty = np.zeros((4, 4), "<u2")
    call(out=empty, counts=[[0, 3], [2, 0]], sizes=[-5, 3])  # nothing selected: no check
    assert not empty.any()


@pytest.mark.parametrize(("changes", "message"), [
    ({"which": [0, 1]}, "names source 1 of 1"),
    ({"offsets": [0, 13]}, "outside source 0"),
    ({"offsets": [-1, 0]}, "outside source 0"),
    ({"starts": [[0, 0], [0, 2]]}, "outside its 3 elements"),
    ({"steps": [[1, 0], [1, 1]]}, "outside its 3 elements"),
    ({"steps": [[1, 3], [1, 1]]}, "outside its 3 elements"),
    ({"counts": [[3, 3], [2, 2]]}, "outside its 2 elements"),
    ({"counts": [[-1, 3], [2, 2]]}, "negative count"),
    ({"outs": [[0, 2], [2, 2]]}, "outside out's 4"),
    ({"outs": [[0, 0], [-1, 2]]}, "outside out's 4"),
    ({"fill": b"\0"}, "fill has 1 bytes"),
    ({"swap": 4}, "swap"),
    ({"chunk_shape": (2, 3, 1)}, "dimensions"),
    ({"chunk_shape": (2, 0)}, "positive"),
    ({"out": np.zeros((4, 0), "<u2")}, "outside out's 0"),
    ({"steps_": ([CRC_DECODE], [0], [0], [11])}, "first step must decode to the image's 12"),
    ({"steps_": ([0], [0], [0], [12])}, "has no function"),
    ({"steps_": ([1] * 9, [0] * 9, [0] * 9, [12] * 9)}, "at most 8 steps"),
    ({"steps_": ([1], [0], [0, 0], [12])}, "at most 8 steps"),
    ({"which": [[0, 0]]}, "shape"),
    ({"starts": [0, 0]}, "shape"),
    ({"which": [0.0, 0.0]}, "integer array"),
])
def test_refusals(changes: dict[str, Any], message: str) -> None:
    with pytest.raises((ValueError, TypeError), match=message):
        call(**changes)


def test_outputs_it_refuses() -> None:
    read_only = np.zeros((4, 4), "<u2")
    read_only.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        call(out=read_only)
    broadcast = np.lib.stride_tricks.as_strided(np.zeros(4, "<u2"), (4, 4), (0, 2),
                                                writeable=True)
    with pytest.raises(ValueError, match="broadcast"):
        call(out=broadcast)
    with pytest.raises(TypeError, match="Python objects"):
        call(out=np.zeros((4, 4), object))
    memory = np.zeros(100, np.uint8)
    with pytest.raises(ValueError, match="overlaps source 0"):
        call(sources=[memory[:60]], out=memory[40:72].view("<u2").reshape(4, 4))
    with pytest.raises(TypeError, match="source 0 must be a contiguous bytes-like"):
        call(sources=[np.zeros(40, np.uint8)[::2]])


def test_a_step_that_fails_is_reported() -> None:
    # crc32c as the step: the second chunk's checksum is wrong.
    chunks = np.arange(12, dtype="<u2").reshape(2, 2, 3)
    import google_crc32c

    frames = [c.tobytes() + google_crc32c.value(c.tobytes()).to_bytes(4, "little")
              for c in chunks]
    frames[1] = frames[1][:-1] + bytes([frames[1][-1] ^ 1])
    out = np.zeros((4, 4), "<u2")
    got = call(sources=[b"".join(frames)], sizes=[16, 16], offsets=[0, 16], out=out,
               steps_=([CRC_DECODE], [0], [0], [12]))
    assert got == (1, 0, -1)  # chunk 1, step 0, STEP_FAILED
    assert (out[0:2, 0:3] == chunks[0]).all()  # the chunk before it placed
    # A decoded size other than the image's: reported as step -1 with the size.
    got = call(sizes=[12, 10], steps_=NONE)
    assert got == (1, -1, 10)


def test_encode_chunks() -> None:
    base = np.arange(60, dtype="<u4").reshape(6, 10)
    chunks = [base[:3, :4], base[3:, ::-2][:, :4], np.ascontiguousarray(base[:3, :4])]
    u4 = np.dtype("<u4")
    made, stop, _, _ = encode_chunks(chunks, u4, (3, 4), 0, 0, [], [], [], [])
    assert stop == 3
    assert made == [np.ascontiguousarray(c).tobytes() for c in chunks]
    made, stop, _, _ = encode_chunks(chunks, u4, (3, 4), 4, 0, [], [], [], [])
    assert made == [np.ascontiguousarray(c).byteswap().tobytes() for c in chunks]
    made, stop, _, _ = encode_chunks(chunks, u4, (3, 4), 0, 0, [CRC_ENCODE], [0], [0], [52])
    assert all(m[:48] == np.ascontiguousarray(c).tobytes() for m, c in zip(made, chunks))
    failed = encode_chunks(chunks, u4, (3, 4), 0, 0, [CRC_ENCODE], [0], [0], [50])  # no room
    assert failed[1:] == (0, 0, -1)
    assert failed[0] == [None, None, None]
    assert encode_chunks([], u4, (3, 4), 0, 0, [], [], [], []) == ([], 0, -1, 0)
    # Chunks of another shape or dtype, or no arrays at all, are left to the caller.
    others = [chunks[0], base[:2, :4], chunks[0].astype(">u4"), b"x" * 48, chunks[0][None]]
    made, stop, _, _ = encode_chunks(others, u4, (3, 4), 0, 0, [], [], [], [])
    assert stop == 5
    assert made == [made[0], None, None, None, None]
    with pytest.raises(ValueError, match="swap"):
        encode_chunks(chunks, u4, (3, 4), 3, 0, [], [], [], [])
    with pytest.raises(ValueError, match="shuffle block"):
        encode_chunks(chunks, u4, (3, 4), 0, 6, [CRC_ENCODE], [0], [0], [52])
    with pytest.raises(ValueError, match="shuffle block"):
        encode_chunks(chunks, u4, (3, 4), 0, 8, [], [], [], [])
    with pytest.raises(ValueError, match="cannot be encoded"):
        encode_chunks(chunks, u4, (3, 0), 0, 0, [], [], [], [])
    with pytest.raises(TypeError, match="Python objects"):
        encode_chunks([np.zeros(3, object)], object, (3,), 0, 0, [], [], [], [])
