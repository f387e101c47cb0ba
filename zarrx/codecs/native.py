"""Batches of chunks through the kernels: many chunks decoded and placed, or laid out and
encoded, in one call without the GIL (:mod:`zarrx._core.batch`).

A prepared chain gets a :class:`BatchDecoder` (:attr:`PreparedChain.batch_decoder`) and a
:class:`BatchEncoder` (behind :meth:`PreparedChain.encode_many`) when its chunks are images
of fixed-size elements (the array→bytes codec declares
:meth:`~zarrx.abc.codec.ArrayBytesCodec.image_dtype`; no array→array codec) and each of
its bytes→bytes codecs has a :meth:`~zarrx.abc.codec.BytesBytesCodec.native_step` for that
direction: ``bytes`` alone, or with ``blosc``, ``zstd``, ``gzip`` and ``crc32c`` in any
order, or a plugin's codec that gives its own step. Anything else (variable-length or
object elements, records whose fields change byte order, array→array codecs, sharding,
images of 2 GiB or more, 0-d chunks) is decoded and encoded chunk by chunk.

The kernels' results are the general path's, byte for byte (tested against it): where a
kernel stops at a chunk it cannot decode or encode, that chunk goes through the general
path, which raises the error it always raised (a :class:`~zarrx.errors.CodecError`,
carrying the chunk's position in the batch as ``error.chunk``) or makes what the kernel
could not, and the batch goes on after it.

>>> import numpy as np
>>> from zarrx.codecs.pipeline import CodecPipeline
>>> from zarrx.testing.codecs import spec
>>> chain = CodecPipeline.from_json([{"name": "bytes"}, {"name": "zstd"}], where="doc"
...                                 ).prepare(spec((2, 2), "uint8"))
>>> frames = chain.encode_many([np.full((2, 2), i, "uint8") for i in range(3)])
>>> out = np.zeros((2, 6), "uint8")
>>> chain.batch_decoder.place(frames, [0, 1, 2], [0, 0, 0], [len(f) for f in frames],
...                           [[0, 0]] * 3, [[1, 1]] * 3, [[2, 2]] * 3,
...                           [[0, 0], [0, 2], [0, 4]], out, b"\\0")
>>> out
array([[0, 0, 1, 1, 2, 2],
       [0, 0, 1, 1, 2, 2]], dtype=uint8)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from zarrx._core.batch import decode_place, encode_chunks
from zarrx.abc.codec import ArrayArrayCodec, ArrayBytesCodec, BytesBytesCodec, ChunkSpec, NativeStep
from zarrx.errors import CodecError
from zarrx.runtime.elements import Elements, swap_unit
from zarrx.runtime.place import Decoder, place_selection, streams


class PreparedChain(Decoder, Protocol):
    """What the batches need of a prepared chain
    (:class:`zarrx.codecs.pipeline.PreparedChain`, which builds them)."""

    @property
    def spec(self) -> ChunkSpec: ...
    @property
    def array_array(self) -> tuple[tuple[ArrayArrayCodec, ChunkSpec], ...]: ...
    @property
    def array_bytes(self) -> ArrayBytesCodec: ...
    @property
    def bytes_spec(self) -> ChunkSpec: ...
    @property
    def bytes_bytes(self) -> tuple[tuple[BytesBytesCodec, int | None], ...]: ...

    def encode_general(self, chunk: np.ndarray) -> Any: ...


#: The kernels take chunks whose images, and every step's output, are below this.
MAX_BYTES = 2**31 - 1
#: At most this many steps (bytes→bytes codecs) in a chain, and dimensions in a chunk.
MAX_STEPS = 8
MAX_DIMS = 32
#: An encoding call makes results of at most this many bytes of room in all (each result
#: is made as large as its chunk may encode to, then shrunk): a longer run is cut.
RUN_ROOM = 32 * 2**20


def image_swap(chain: PreparedChain) -> tuple[np.dtype, int] | None:
    """The stored image's dtype and the byte-swap unit between it and the chain's native
    dtype, when the chain's chunks are images the kernels can move; else ``None``."""
    if (chain.array_array or len(chain.bytes_bytes) > MAX_STEPS
            or not 1 <= len(chain.bytes_spec.shape) <= MAX_DIMS):
        return None
    image = chain.array_bytes.image_dtype(chain.bytes_spec)
    dtype = chain.spec.dtype
    if image is None or image.hasobject or Elements.of(dtype, chain.spec.fill_value).variable:
        return None
    if not 0 < chain.bytes_spec.nbytes < MAX_BYTES or image.itemsize != dtype.itemsize:
        return None
    if image == dtype:
        return image, 0
    if image.fields is None and image.newbyteorder("=") == dtype:
        return image, swap_unit(image)
    return None  # (records whose fields change byte order: NumPy converts them)


def _steps(chain: PreparedChain, encode: bool) -> list[NativeStep] | None:
    found = []
    for codec, _ in chain.bytes_bytes:
        step = codec.native_step()
        if step is None or not (step.encode if encode else step.decode):
            return None
        found.append(step)
    return found


def batch_decoder(chain: PreparedChain) -> BatchDecoder | None:
    """The chain's :class:`BatchDecoder`, or ``None`` (see the module's docstring)."""
    image = image_swap(chain)
    steps = None if image is None else _steps(chain, encode=False)
    if image is None or steps is None:
        return None
    rooms = [size for _, size in chain.bytes_bytes]
    if any(r is None or r >= MAX_BYTES for r in rooms):
        return None
    return BatchDecoder(chain, steps, [r for r in rooms if r is not None], image[1])


def batch_encoder(chain: PreparedChain) -> BatchEncoder | None:
    """The chain's :class:`BatchEncoder`, or ``None`` (see the module's docstring)."""
    image = image_swap(chain)
    steps = None if image is None else _steps(chain, encode=True)
    if image is None or steps is None:
        return None
    rooms = []
    room = chain.bytes_spec.nbytes
    for codec, _ in chain.bytes_bytes:
        room = codec.max_encoded_size(room)
        rooms.append(room)
    if any(r >= MAX_BYTES for r in rooms):
        return None
    fused = None
    if chain.bytes_bytes:
        layout = chain.bytes_bytes[0][0].shuffled_layout(image[0].itemsize,
                                                         chain.bytes_spec.nbytes)
        if layout is not None and layout.step.encode:
            fused = (layout.blocksize, [layout.step, *steps[1:]])
    return BatchEncoder(chain, image[0], steps, rooms, fused)


def _columns(steps: Sequence[NativeStep], rooms: Sequence[int], encode: bool
             ) -> tuple[list[int], list[int], list[int], list[int]]:
    """The kernels' per-step arguments: functions, contexts, releases, rooms."""
    return ([s.encode if encode else s.decode for s in steps], [s.context for s in steps],
            [s.release for s in steps], list(rooms))


class BatchDecoder:
    """Decodes many stored chunks of one chain and places their selections in an output,
    in one kernel call (reentrant: any number of threads may call it at once)."""

    def __init__(self, chain: PreparedChain, steps: list[NativeStep], rooms: list[int],
                 swap: int) -> None:
        self._chain = chain
        self._dtype = chain.spec.dtype
        self._shape = chain.spec.shape
        self._swap = swap
        self._steps = steps  # (keeps their contexts alive)
        self._columns = _columns(steps, rooms, encode=False)
        self._elements = Elements.of(chain.spec.dtype, chain.spec.fill_value)

    def place(self, sources: Sequence[Any], which: Any, offsets: Any, sizes: Any, starts: Any,
              steps: Any, counts: Any, outs: Any, out: np.ndarray, fill: Any) -> None:
        """Decode chunk ``i`` — the bytes ``sources[which[i]][offsets[i]:offsets[i] +
        sizes[i]]``, absent (the fill value) when ``sizes[i] < 0`` — and write its
        elements ``starts[i, d] + k * steps[i, d]`` (``k < counts[i, d]``) on each axis
        ``d`` to ``out``'s ``outs[i, d] + k``, for every ``i``. ``which``, ``offsets`` and
        ``sizes`` are ``(n,)`` and the others ``(n, ndim)`` integer arrays; ``out`` (any
        strides) has the chain's dtype and overlaps no source; ``fill`` is the fill
        value's bytes in ``out``'s order. A chunk that cannot be decoded (corrupt,
        truncated, of another size, a checksum mismatch) raises the
        :class:`~zarrx.errors.CodecError` the general path raises, with ``error.chunk =
        i``; chunks before it are placed, those after it are not. Bad arguments raise
        ``ValueError`` or ``TypeError`` before anything is written."""
        if not isinstance(out, np.ndarray) or out.dtype != self._dtype:
            raise ValueError(f"BatchDecoder.place: out must be a {self._dtype} array, got "
                             f"{getattr(out, 'dtype', type(out).__name__)}")
        arrays = [np.asarray(a) for a in (which, offsets, sizes, starts, steps, counts, outs)]
        if not isinstance(sources, list):
            sources = list(sources)
        n = len(arrays[2])
        stream = streams(out)
        first = 0
        while first < n:
            which, offsets, sizes, starts, steps, counts, outs = (a[first:] for a in arrays)
            failed = decode_place(sources, which, offsets, sizes, starts, steps, counts, outs,
                                  out, fill, self._shape, self._swap, stream, *self._columns)
            if failed is None:
                return
            at = first + failed[0]
            self._place_one(at, sources, arrays, out)
            first = at + 1

    def _place_one(self, i: int, sources: Sequence[Any], arrays: list[np.ndarray],
                   out: np.ndarray) -> None:
        """Chunk ``i`` through the general path (the kernel stopped at it)."""
        which, offsets, sizes, starts, steps, counts, outs = (a[i].tolist() for a in arrays)
        data = memoryview(sources[which]).cast("B")[offsets:offsets + sizes]
        chunk_selection = tuple(slice(a, a + (c - 1) * b + 1, b)
                                for a, b, c in zip(starts, steps, counts))
        out_selection = tuple(slice(o, o + c) for o, c in zip(outs, counts))
        try:
            place_selection(self._chain, self._elements, chunk_selection, out_selection,
                            False, data, out)
        except CodecError as e:
            e.chunk = i
            raise


class BatchEncoder:
    """Lays out and encodes many chunks of one chain in one kernel call (reentrant)."""

    def __init__(self, chain: PreparedChain, image: np.dtype, steps: list[NativeStep],
                 rooms: list[int], fused: tuple[int, list[NativeStep]] | None) -> None:
        self._chain = chain
        self._image = image
        self._shape = chain.bytes_spec.shape
        self._steps = steps  # (keeps their contexts alive)
        self._plain = _columns(steps, rooms, encode=True)
        self._fused = fused
        self._shuffled = None if fused is None else _columns(fused[1], rooms, encode=True)
        self._room = rooms[-1] if rooms else chain.bytes_spec.nbytes

    def encode(self, chunks: Sequence[np.ndarray]) -> list[Any]:
        """Each chunk (an array of the chain's chunk shape, any strides and byte order)
        encoded, as :meth:`PreparedChain.encode_general` encodes it alone (byte for byte;
        that path encodes the chunks the kernel does not: of another dtype than the
        first, or one it fails on)."""
        chunks = chunks if isinstance(chunks, list) else list(chunks)
        if not chunks:
            return []
        dtype = getattr(chunks[0], "dtype", None)
        swap = -1 if dtype is None else swap_between(dtype, self._image)
        out: list[Any] = [None] * len(chunks)
        if swap >= 0 and self._fused is not None and self._shuffled is not None:
            out = self._run(chunks, dtype, swap, self._fused[0], self._shuffled)
            left = [i for i, made in enumerate(out) if made is None]  # declined
            again = self._run([chunks[i] for i in left], dtype, swap, 0, self._plain)
            for i, made in zip(left, again):
                out[i] = made
        elif swap >= 0:
            out = self._run(chunks, dtype, swap, 0, self._plain)
        if None in out:
            out = [self._chain.encode_general(c) if made is None else made
                   for c, made in zip(chunks, out)]
        return out

    def _run(self, chunks: list[np.ndarray], dtype: Any, swap: int, shuffle: int,
             columns: tuple[list[int], ...]) -> list[Any]:
        """The kernel's results for ``chunks`` (``None``: left or declined), in calls of
        at most :data:`RUN_ROOM` bytes of results; a chunk it fails on is encoded by the
        general path (which raises its error)."""
        per_run = max(1, RUN_ROOM // max(self._room, 1))
        out: list[Any] = []
        at = 0
        while at < len(chunks):
            run = chunks[at:at + per_run] if at or len(chunks) > per_run else chunks
            made, stop, _, _ = encode_chunks(run, dtype, self._shape, swap, shuffle, *columns)
            if stop == len(run):
                out.extend(made)
                at += stop
                continue
            out.extend(made[:stop])
            out.append(self._chain.encode_general(run[stop]))
            at += stop + 1
        return out


def swap_between(dtype: np.dtype, image: np.dtype) -> int:
    """How elements of ``dtype`` become the stored ``image``'s: 0 as they are, the
    byte-swap unit when only the byte order differs (records only field by field: -1),
    -1 when they need a cast."""
    if dtype == image:
        return 0
    if dtype.fields is None and image.fields is None and dtype.newbyteorder() == image:
        return swap_unit(dtype) or swap_unit(image)
    return -1
