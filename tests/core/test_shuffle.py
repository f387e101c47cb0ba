"""zarrx._core.shuffle: the fused layout + byte shuffle against NumPy (hypothesis)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zarrx._core.shuffle import _use_sse2, shuffle_strided


def shuffled_image(chunk: np.ndarray, blocksize: int, swap: int) -> np.ndarray:
    """The oracle: the C-order image (units reversed), each block transposed as bytes."""
    t = chunk.dtype.itemsize
    image = np.ascontiguousarray(chunk).view(np.uint8).reshape(-1, t)
    if swap:
        image = image.reshape(-1, t // swap, swap)[:, :, ::-1].reshape(-1, t)
    per_block = blocksize // t
    return np.concatenate(
        [image[i : i + per_block].T.ravel() for i in range(0, len(image), per_block)]
        or [np.empty(0, np.uint8)]
    )


@st.composite
def strided_views(draw: st.DrawFn) -> np.ndarray:
    """A view of a bigger array: any itemsize 1-16, C or F order, steps (negative too)."""
    itemsize = draw(st.integers(1, 16))
    ndim = draw(st.integers(1, 4))
    shape = draw(st.lists(st.integers(1, 9), min_size=ndim, max_size=ndim))
    steps = draw(st.lists(st.sampled_from([1, 1, 2, -1, -3]), min_size=ndim, max_size=ndim))
    order = draw(st.sampled_from("CF"))
    base_shape = [n * abs(s) + 2 for n, s in zip(shape, steps)]
    seed = draw(st.integers(0, 2**16))
    raw = np.random.default_rng(seed).integers(
        0, 256, size=int(np.prod(base_shape)) * itemsize, dtype=np.uint8
    )
    base = raw.view(f"V{itemsize}").reshape(base_shape, order=order)
    index = tuple(slice(1, 1 + n * s, s) if s > 0 else slice(n * -s, 0, s)
                  for n, s in zip(shape, steps))
    view = base[index]
    assert view.shape == tuple(shape)
    return view


@settings(max_examples=300, deadline=None)
@given(strided_views(), st.integers(1, 40), st.sampled_from([0, 2, 4, 8, 16]),
       st.booleans())
def test_matches_numpy(chunk: np.ndarray, blocks: int, swap: int, sse2: bool) -> None:
    t = chunk.dtype.itemsize
    if swap and t % swap:
        swap = 0
    blocksize = t * blocks
    out = np.full(chunk.nbytes, 0xAB, dtype=np.uint8)
    try:
        _use_sse2(sse2)
        shuffle_strided(chunk, out, blocksize, swap)
    finally:
        _use_sse2(True)
    np.testing.assert_array_equal(out, shuffled_image(chunk, blocksize, swap))


@pytest.mark.parametrize("itemsize", [2, 4, 8, 16])
@pytest.mark.parametrize("sse2", [True, False])
def test_long_contiguous_rows(itemsize: int, sse2: bool) -> None:
    # Rows long enough for the 16-element vector loop, cut by block edges mid-row.
    rng = np.random.default_rng(itemsize)
    base = rng.integers(0, 256, size=(6, 301 * itemsize), dtype=np.uint8).view(f"V{itemsize}")
    chunk = base[1:5, 3:290]
    for blocks in (1, 16, 17, 100, 287, 4 * 287):
        out = np.empty(chunk.nbytes, dtype=np.uint8)
        try:
            _use_sse2(sse2)
            shuffle_strided(chunk, out, blocks * itemsize, 0)
        finally:
            _use_sse2(True)
        np.testing.assert_array_equal(out, shuffled_image(chunk, blocks * itemsize, 0))


def test_validation() -> None:
    a = np.arange(24, dtype="float32").reshape(4, 6)[:, ::2]
    out = np.empty(a.nbytes, dtype=np.uint8)
    with pytest.raises(ValueError, match="bytes"):
        shuffle_strided(a, np.empty(a.nbytes + 1, np.uint8), 8)
    with pytest.raises(ValueError, match="blocksize"):
        shuffle_strided(a, out, 6)
    with pytest.raises(ValueError, match="blocksize"):
        shuffle_strided(a, out, 0)
    with pytest.raises(ValueError, match="swap"):
        shuffle_strided(a, out, 8, 8)
    with pytest.raises(ValueError, match="swap"):
        shuffle_strided(a, out, 8, 3)
    with pytest.raises(ValueError, match="writable"):
        shuffle_strided(a, np.frombuffer(bytes(a.nbytes), np.uint8), 8)
    with pytest.raises(ValueError, match="writable"):
        shuffle_strided(a, np.empty(2 * a.nbytes, np.uint8)[::2], 8)
    with pytest.raises(TypeError, match="objects"):
        shuffle_strided(np.empty(3, object), np.empty(24, np.uint8), 8)
    memory = np.zeros(200, dtype=np.uint8)
    with pytest.raises(ValueError, match="overlap"):
        shuffle_strided(memory[40:].view("u4")[::2], memory[:80], 4)
    before = out.copy()
    with pytest.raises(ValueError, match="blocksize"):
        shuffle_strided(a, out, 5)
    np.testing.assert_array_equal(out, before)  # nothing written on a failed call
    shuffle_strided(a[:0], out[:0], 4)  # empty: a no-op
