"""The ``rectilinear`` chunk grid: its metadata, its per-axis answers against a brute-force
reference, and every NumPy index form on arrays that use it (with and without shards)
against NumPy."""

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zarrx
from zarrx import registry
from zarrx.chunk_grids.rectilinear import RectilinearChunkGrid
from zarrx.chunk_grids.regular import RegularChunkGrid
from zarrx.errors import MetadataError
from zarrx.storage import MemoryStore
from zarrx.testing.selections import numpy_indices, orthogonal_indices, outer_selection


def grid(*shapes):
    return RectilinearChunkGrid.from_config({"kind": "inline", "chunk_shapes": list(shapes)})


def test_registered_without_a_plugin():
    assert registry.chunk_grids.get("rectilinear") is RectilinearChunkGrid


def test_the_spec_example_expands_as_the_spec_says():
    g = grid(4, [1, 2, 3], [[4, 2]], [[1, 3], 3], [4, 4, 4])
    assert g.chunk_sizes((6,) * 5) == ((4, 2), (1, 2, 3), (4, 2), (1, 1, 1, 3), (4, 2))
    assert g.grid_shape((6,) * 5) == (2, 3, 2, 4, 2)  # the overflow chunk (8..12) is no chunk
    assert g.chunk_shape_at((1, 2, 1, 3, 1)) == (4, 3, 4, 3, 4)  # stored whole
    g.validate((6,) * 5, "a")
    assert g.to_dict()["configuration"]["chunk_shapes"] == [4, [1, 2, 3], [[4, 2]],
                                                            [[1, 3], 3], [4, 4, 4]]


def test_runs_are_never_expanded():
    g = grid([[1, 10**15], 7], 3)
    assert g.grid_shape((10**15 + 7, 4)) == (10**15 + 1, 2)
    assert g.chunk_shape_at((10**15, 0)) == (7, 3)
    chunk, offset = g.axis_locate(0, np.array([0, 10**15 - 1, 10**15 + 6]))
    assert chunk.tolist() == [0, 10**15 - 1, 10**15]
    assert offset.tolist() == [0, 0, 6]


def test_written_as_runs_like_zarr_python():
    assert RectilinearChunkGrid.from_sizes([[10, 10, 10, 5]]).to_dict()["configuration"][
        "chunk_shapes"] == [[[10, 3], 5]]
    assert RectilinearChunkGrid.from_sizes([[1, 2, 3]]).to_dict()["configuration"][
        "chunk_shapes"] == [[1, 2, 3]]
    assert RectilinearChunkGrid.from_sizes([[2, 2, 2, 5], 4]).to_dict()["configuration"] == {
        "kind": "inline", "chunk_shapes": [[[2, 3], 5], 4]}


@pytest.mark.parametrize(("config", "message"), [
    ({"chunk_shapes": [[1, 2]]}, "kind"),
    ({"kind": "external", "chunk_shapes": [[1, 2]]}, "kind"),
    ({"kind": "inline"}, "chunk_shapes must be a list"),
    ({"kind": "inline", "chunk_shapes": [[]]}, "non-empty list"),
    ({"kind": "inline", "chunk_shapes": [0]}, "positive"),
    ({"kind": "inline", "chunk_shapes": [[2, True]]}, "positive"),
    ({"kind": "inline", "chunk_shapes": [[[2, 0]]]}, "run count"),
    ({"kind": "inline", "chunk_shapes": [[[2, 3, 4]]]}, "[length, count]"),
    ({"kind": "inline", "chunk_shapes": [[1.5]]}, "positive integer"),
    ({"kind": "inline", "chunk_shapes": [[[2**62, 4]]]}, "overflow"),
    ({"kind": "inline", "chunk_shapes": [[2]], "extra": 1}, "unknown"),
])
def test_bad_configurations_are_refused(config, message):
    with pytest.raises(MetadataError, match=message):
        RectilinearChunkGrid.from_config(config)


def test_edges_must_cover_the_array_and_match_its_rank(tmp_path):
    with pytest.raises(MetadataError, match="cover 5 elements, the array has 6"):
        grid([2, 3]).validate((6,), "a")
    with pytest.raises(MetadataError, match="rank"):
        grid([2, 3]).validate((5, 5), "a")
    a = zarrx.create_array(str(tmp_path / "a"), shape=(5,), dtype="u1", chunks=[[2, 3]])
    doc = json.loads((tmp_path / "a" / "zarr.json").read_text())
    doc["shape"] = [6]
    (tmp_path / "a" / "zarr.json").write_text(json.dumps(doc))
    with pytest.raises(MetadataError, match=r"zarr.json.*cover 5"):
        zarrx.open_array(str(tmp_path / "a"))
    assert a.shape == (5,)


# -- the per-axis answers --------------------------------------------------------------------

def reference(sizes, start, step, count, dim_len):
    """Chunk by chunk, from every selected index (no cleverness to share bugs with)."""
    edges = np.cumsum([0, *sizes])
    rows = {}
    for k in range(count):
        i = start + k * step
        c = int(np.searchsorted(edges, i, side="right") - 1)
        rows.setdefault(c, []).append((k, i - edges[c]))
    out = []
    for c, hits in rows.items():
        held = min(sizes[c], dim_len - edges[c])
        out.append((c, hits[0][1], len(hits), hits[0][0], len(hits) == held))
    return out


@st.composite
def axis_cases(draw):
    sizes = draw(st.lists(st.integers(1, 6), min_size=1, max_size=8))
    dim_len = draw(st.integers(1, sum(sizes)))
    start = draw(st.integers(0, dim_len - 1))
    step = draw(st.integers(1, 9))
    count = draw(st.integers(0, (dim_len - 1 - start) // step + 1))
    return sizes, start, step, count, dim_len


@settings(max_examples=300, deadline=None)
@given(axis_cases())
def test_axis_slice_chunks_matches_the_reference(case):
    sizes, start, step, count, dim_len = case
    g = RectilinearChunkGrid.from_sizes([sizes])
    got = list(zip(*(v.tolist() for v in g.axis_slice_chunks(0, start, step, count, dim_len))))
    assert [(c, s, n, o, bool(f)) for c, s, n, o, f in got] == reference(
        sizes, start, step, count, dim_len)
    # the one-chunk fast path of axis_projections equals the general one
    fast = g.axis_projections(0, start, step, count, dim_len)
    general = super(RectilinearChunkGrid, g).axis_projections(0, start, step, count, dim_len)
    assert fast == general


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 7), axis_cases())
def test_an_integer_axis_answers_as_the_regular_grid(size, case):
    _, start, step, count, dim_len = case
    rect, regular = grid(size), RegularChunkGrid((size,))
    for got, want in zip(rect.axis_slice_chunks(0, start, step, count, dim_len),
                         regular.axis_slice_chunks(0, start, step, count, dim_len)):
        assert got.tolist() == want.tolist()
    assert rect.axis_projections(0, start, step, count, dim_len) == regular.axis_projections(
        0, start, step, count, dim_len)
    points = np.arange(dim_len)
    for got, want in zip(rect.axis_locate(0, points), regular.axis_locate(0, points)):
        assert got.tolist() == want.tolist()
    assert rect.grid_shape((dim_len,)) == regular.grid_shape((dim_len,))
    assert rect.axis_boundary(0, 3) == regular.axis_boundary(0, 3)


def test_out_of_bounds_slices_are_refused():
    with pytest.raises(ValueError, match="out of bounds"):
        grid([2, 3]).axis_slice_chunks(0, 4, 1, 2, 5)


# -- arrays against NumPy --------------------------------------------------------------------

@st.composite
def rectilinear_arrays(draw):
    """(shape, chunks, shards): per axis either an integer or edges covering the axis; when
    sharded, the variable sizes are the shards' and each a multiple of the inner chunk."""
    ndim = draw(st.integers(1, 3))
    sharded = draw(st.booleans())
    shape, chunks, shards = [], [], []
    for _ in range(ndim):
        inner = draw(st.integers(1, 3)) if sharded else 1
        edges = [inner * k for k in draw(st.lists(st.integers(1, 3), min_size=1, max_size=4))]
        n = draw(st.integers(max(sum(edges[:-1]) + 1, 1), sum(edges)))
        if draw(st.integers(0, 3)) == 0:
            edges = draw(st.integers(1, 4)) * inner  # an integer axis
            n = draw(st.integers(1, 9))
        shape.append(n)
        (shards if sharded else chunks).append(edges)
        if sharded:
            chunks.append(inner)
    return tuple(shape), chunks, (shards if sharded else None)


def make(shape, chunks, shards, data):
    a = zarrx.create_array(MemoryStore(), shape=shape, dtype="int32", chunks=chunks,
                           shards=shards, fill_value=-7)
    assert a.metadata.chunk_grid.name == "rectilinear" or all(
        isinstance(s, int) for s in (shards or chunks))
    a[...] = data
    return a


@settings(max_examples=80, deadline=None)
@given(rectilinear_arrays(), st.data())
def test_every_numpy_index_reads_and_writes_like_numpy(layout, draw):
    shape, chunks, shards = layout
    data = np.arange(int(np.prod(shape)), dtype="int32").reshape(shape)
    a = make(shape, chunks, shards, data)
    index = draw.draw(numpy_indices(shape, wild=False))
    try:
        want = data[index]
    except (IndexError, TypeError, ValueError) as e:  # NumPy refuses it: so does zarrx
        with pytest.raises(type(e)):
            a[index]
    else:
        np.testing.assert_array_equal(a[index], want)
        value = -np.arange(np.asarray(want).size, dtype="int32").reshape(np.shape(want))
        a[index] = value
        data[index] = value
        np.testing.assert_array_equal(a[...], data)
    outer = draw.draw(orthogonal_indices(shape))
    np.testing.assert_array_equal(a.oindex[outer], outer_selection(data, outer))
    points = tuple(np.array(draw.draw(st.lists(st.integers(0, n - 1), min_size=1,
                                               max_size=5))) for n in shape)
    width = min(len(p) for p in points)
    points = tuple(p[:width] for p in points)
    np.testing.assert_array_equal(a.vindex[points], data[points])
    mask = np.array(draw.draw(st.lists(st.booleans(), min_size=data.size,
                                       max_size=data.size))).reshape(shape)
    np.testing.assert_array_equal(a[mask], data[mask])
    a[mask] = 5
    data[mask] = 5
    np.testing.assert_array_equal(a[...], data)


@settings(max_examples=40, deadline=None)
@given(rectilinear_arrays(), st.data())
def test_blocks_are_the_chunks(layout, draw):
    shape, chunks, shards = layout
    data = np.arange(int(np.prod(shape)), dtype="int32").reshape(shape)
    a = make(shape, chunks, shards, data)
    sizes = [[c] * -(-n // c) if isinstance(c, int) else list(c)  # regular: one size
             for c, n in zip(a.chunks, shape)]
    block = tuple(draw.draw(st.integers(0, len(s) - 1)) for s in sizes)
    starts = [sum(s[:b]) for s, b in zip(sizes, block)]
    box = tuple(slice(o, min(o + s[b], n)) for o, s, b, n in zip(starts, sizes, block, shape))
    np.testing.assert_array_equal(a.blocks[block], data[box])


def test_chunks_are_stored_whole_and_keyed_by_grid_position(tmp_path):
    root = tmp_path / "r.zarr"
    a = zarrx.create_array(str(root), shape=(10, 10), dtype="u2",
                           chunks=[[2, 3, 5], [[4, 2], 2]], compressors=None, fill_value=3)
    data = np.arange(100, dtype="u2").reshape(10, 10)
    a[...] = data
    assert (root / "c" / "1" / "2").stat().st_size == 3 * 2 * 2
    assert (root / "c" / "2" / "0").stat().st_size == 5 * 4 * 2
    assert a.chunks == ((2, 3, 5), (4, 4, 2))
    assert a.cdata_shape == (3, 3)
    b = zarrx.open_array(str(root))
    np.testing.assert_array_equal(b[...], data)
    assert b.metadata.to_json()["chunk_grid"] == json.loads(
        (root / "zarr.json").read_text())["chunk_grid"]


def test_resize_and_append_grow_the_edges_as_zarr_python_does():
    a = zarrx.create_array(MemoryStore(), shape=(5, 4), dtype="i2", chunks=[[2, 3], 3],
                           fill_value=-1)
    data = np.arange(20, dtype="i2").reshape(5, 4)
    a[...] = data
    a.resize(9, 4)
    assert a.metadata.chunk_grid.to_dict()["configuration"]["chunk_shapes"] == [[2, 3, 4], 3]
    want = np.full((9, 4), -1, "i2")
    want[:5] = data
    np.testing.assert_array_equal(a[...], want)
    a.resize(3, 4)  # the rest of chunk 1 is reset: growing again shows the fill value
    a.resize(9, 4)
    want[3:] = -1
    np.testing.assert_array_equal(a[...], want)
    a.append(np.ones((2, 4), "i2"))
    assert a.chunks[0] == (2, 3, 4, 2)
    assert a.shape == (11, 4)
    np.testing.assert_array_equal(a[9:], 1)


def test_sharded_with_variable_shards(tmp_path):
    root = tmp_path / "s.zarr"
    a = zarrx.create_array(str(root), shape=(10, 9), dtype="i4", chunks=(2, 3),
                           shards=[[4, 6], [3, 6]])
    data = np.arange(90, dtype="i4").reshape(10, 9)
    a[...] = data
    doc = json.loads((root / "zarr.json").read_text())
    assert doc["chunk_grid"] == {"name": "rectilinear", "configuration": {
        "kind": "inline", "chunk_shapes": [[4, 6], [3, 6]]}}
    assert doc["codecs"][0]["configuration"]["chunk_shape"] == [2, 3]
    assert a.shards == ((4, 6), (3, 6))
    assert a.chunks == (2, 3)
    assert a.nchunks_initialized == 15
    np.testing.assert_array_equal(zarrx.open_array(str(root))[1:9:2, ::-3], data[1:9:2, ::-3])
    with pytest.raises(MetadataError, match="multiple of chunks"):
        zarrx.create_array(MemoryStore(), shape=(10,), dtype="i4", chunks=(2,), shards=[[4, 7]])
    with pytest.raises(MetadataError, match="shards= instead"):
        zarrx.create_array(MemoryStore(), shape=(10,), dtype="i4", chunks=[[4, 6]], shards=(10,))


@pytest.mark.parametrize("fmt", [2, "3-draft"])
def test_formats_with_one_chunk_shape_refuse_it(fmt):
    with pytest.raises(MetadataError, match="need zarr_format=3"):
        zarrx.create_array(MemoryStore(), shape=(4,), dtype="i2", chunks=[[1, 3]],
                           zarr_format=fmt)


def test_converted_chunk_by_chunk(tmp_path):
    from zarrx.cli.main import main

    a = zarrx.create_array(str(tmp_path / "src"), shape=(10, 9), dtype="i2",
                           chunks=[[2, 3, 5], [4, 5]], fill_value=3)
    a[1:] = np.arange(81, dtype="i2").reshape(9, 9)
    assert main(["convert", "--zarr-format", "3", str(tmp_path / "src"),
                 str(tmp_path / "dst")]) in (0, None)
    b = zarrx.open_array(str(tmp_path / "dst"))
    assert b.metadata.chunk_grid == a.metadata.chunk_grid
    np.testing.assert_array_equal(b[...], a[...])
