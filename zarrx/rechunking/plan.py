"""How a rechunk is cut into tasks so that memory stays within ``max_mem``.

A task reads one *slab* (a box of the array), holds it in memory, and writes it. The
memory a task needs is modelled as

    task(slab) = (1.125 + cast) * slab_bytes + min(slab_bytes, E * W(object_bytes))

(the slab itself and an eighth more for what the allocator keeps, the cast copy when the
dtype changes, and the encoded objects on their way to the store: at most
``W`` = :func:`zarrx.engine.update.in_flight_bytes` per engine thread, never more than
the slab), and every decoding or encoding thread of the engine may hold
``2 * (source read unit + target chunk)`` bytes at once (a chunk decoded into a scratch
buffer, its compressed bytes). With ``P`` tasks at once and ``E`` engine threads:

    peak = P * task(slab) + (P + E) * 2 * (source unit + target chunk) <= max_mem

(A full read's peak is 1.06 times its output, and a rechunk of one slab of 256 MiB measured
1.11 times the slab; the model leaves that margin.)

``P`` starts at ``threads`` and is lowered until a one-object slab fits, then ``E``
(the engine's threads, shared by the tasks); if even one task of one target object does
not fit, :class:`~zarrx.errors.RechunkError` says so before anything is written.

Two plans (after rechunker's read / intermediate / write chunks):

- **direct**: slabs are boxes of whole target objects (shards, or chunks), grown from one
  object, axis by axis, to lower the *read amplification* — how many times each source
  chunk is decoded, because slabs that cut a source chunk each decode it — as far as the
  budget allows. When the best slab decodes the source at most twice, it is the plan —
  with fewer tasks (more memory each) if that is what it takes: two decodes of the
  source cost less than the second encode and write of two stages.
- **intermediate** (two stages), when no slab within the budget gets there (the worst
  case: source chunks ``(1, N, N)``, target chunks ``(N, 1, 1)``): stage 1 reads slabs
  of whole source chunks and writes them into a scratch array whose chunks ``C`` divide
  both the stage-1 slabs and the stage-2 slabs; stage 2 reads slabs of whole target
  objects (made of whole scratch chunks) and writes the target. Each source chunk and
  each scratch chunk is then read once. ``C`` is chosen, axis by axis, as large as the
  budget of both stages allows.

The plan is plain data (:meth:`Plan.to_json`): a resumed rechunk uses the recorded one.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

import numpy as np

from zarrx.engine.update import in_flight_bytes
from zarrx.errors import RechunkError
from zarrx.rechunking.parse import format_mem

Shape = tuple[int, ...]
Region = tuple[slice, ...]

#: Slabs are grown (without raising the read amplification) to about this size, so a
#: rechunk of small chunks is not a storm of tiny tasks.
COMFORT_BYTES = 8 << 20
#: The read amplification above which the two-stage plan is preferred.
MAX_AMPLIFICATION = 2.0


@dataclass(frozen=True)
class Geometry:
    """What the plan needs to know of the two arrays."""

    shape: Shape
    itemsize: int  # bytes per element in memory (an estimate for variable-length types)
    source_edges: tuple[tuple[int, ...], ...]  # per axis: boundaries of the source read units
    target_object: Shape  # a target shard (or chunk when not sharded)
    target_chunk: Shape  # a target (inner) chunk
    cast: bool = False  # the dtype changes: a cast copy of each slab
    engine: int = 1  # the engine's threads (writes in flight are per thread)

    @property
    def source_regular(self) -> Shape | None:
        """The source read unit's shape when the grid is regular (else ``None``)."""
        out = []
        for edges, n in zip(self.source_edges, self.shape):
            steps = np.diff(np.asarray(edges))
            if len(steps) == 0:
                out.append(max(n, 1))
                continue
            if len(steps) > 1 and np.any(steps[:-1] != steps[0]):
                return None
            out.append(int(steps[0]))
        return tuple(out)

    def unit_bytes(self) -> int:
        biggest = [int(np.diff(np.asarray(e)).max()) if len(e) > 1 else 1
                   for e in self.source_edges]
        return math.prod(biggest) * self.itemsize

    def chunk_bytes(self) -> int:
        return math.prod(self.target_chunk) * self.itemsize

    def transients(self, tasks: int, engine_threads: int) -> int:
        return (tasks + engine_threads) * 2 * (self.unit_bytes() + self.chunk_bytes())

    def task_bytes(self, slab: Sequence[int]) -> int:
        nbytes = math.prod(slab) * self.itemsize
        writing = self.engine * in_flight_bytes(math.prod(self.target_object) * self.itemsize)
        return (nbytes * (9 if not self.cast else 17)) // 8 + min(nbytes, writing)


@dataclass(frozen=True)
class Plan:
    """How to rechunk: ``mode`` "direct" (slabs ``slab`` of whole target objects) or
    "intermediate" (stage 1: slabs ``read_slab`` of whole source units into a scratch
    array of chunks ``intermediate``; stage 2: slabs ``slab`` of the target), ``tasks``
    run at once, each needing ``task_bytes``, with ``engine_threads`` decoding and
    encoding; ``peak_bytes`` is the modelled peak."""

    mode: str
    shape: Shape
    slab: Shape
    tasks: int
    engine_threads: int
    task_bytes: int
    peak_bytes: int
    amplification: float
    read_slab: Shape | None = None
    intermediate: Shape | None = None

    def stages(self) -> list[tuple[str, Shape]]:
        """``(name, slab shape)`` of each stage, in order."""
        if self.mode == "intermediate":
            assert self.read_slab is not None
            return [("intermediate", self.read_slab), ("target", self.slab)]
        return [("target", self.slab)]

    def to_json(self) -> dict[str, object]:
        return {
            "mode": self.mode, "shape": list(self.shape), "slab": list(self.slab),
            "tasks": self.tasks, "engine_threads": self.engine_threads,
            "task_bytes": self.task_bytes, "peak_bytes": self.peak_bytes,
            "amplification": self.amplification,
            "read_slab": None if self.read_slab is None else list(self.read_slab),
            "intermediate": None if self.intermediate is None else list(self.intermediate),
        }

    @classmethod
    def from_json(cls, doc: dict[str, object]) -> Plan:
        def shape(v: object) -> Shape | None:
            return None if v is None else tuple(int(x) for x in v)  # type: ignore[attr-defined]

        return cls(
            mode=str(doc["mode"]), shape=shape(doc["shape"]) or (),
            slab=shape(doc["slab"]) or (), tasks=int(doc["tasks"]),  # type: ignore[call-overload]
            engine_threads=int(doc["engine_threads"]),  # type: ignore[call-overload]
            task_bytes=int(doc["task_bytes"]),  # type: ignore[call-overload]
            peak_bytes=int(doc["peak_bytes"]),  # type: ignore[call-overload]
            amplification=float(doc["amplification"]),  # type: ignore[arg-type]
            read_slab=shape(doc.get("read_slab")), intermediate=shape(doc.get("intermediate")),
        )


# -- read amplification ------------------------------------------------------------------------

def axis_amplification(edges: Sequence[int], n: int, step: int) -> float:
    """Elements of the source decoded along one axis per element of the array, when slabs
    of ``step`` cut it: each slab decodes the source units it overlaps, whole."""
    if n == 0:
        return 1.0
    e = np.asarray(edges, dtype=np.int64)
    starts = np.arange(0, n, step, dtype=np.int64)
    stops = np.minimum(starts + step, n)
    lo = e[np.searchsorted(e, starts, side="right") - 1]
    hi = e[np.minimum(np.searchsorted(e, stops, side="left"), len(e) - 1)]
    return float((hi - lo).sum()) / n


def amplification(geo: Geometry, slab: Sequence[int]) -> float:
    return math.prod(axis_amplification(e, n, s)
                     for e, n, s in zip(geo.source_edges, geo.shape, slab))


def _candidates(n: int, base: int, unit: int | None) -> list[int]:
    """Slab sizes along an axis: multiples of ``base`` (powers of two of it, of its lcm
    with the source unit, the unit rounded up) and the whole axis."""
    n = max(n, 1)
    out = {min(base, n), n}
    k = base
    while k < n:
        out.add(k)
        k *= 2
    if unit:
        lcm = base * unit // math.gcd(base, unit)
        k = lcm
        while k < n:
            out.add(k)
            k *= 2
        out.add(min(-(-unit // base) * base, n))
    return sorted(v for v in out if v <= n)


def _grow(geo: Geometry, start: Shape, bases: Shape, budget: int, units: Shape | None,
          score: bool) -> Shape:
    """Grow ``start`` along its axes, by multiples of ``bases``, while a task fits
    ``budget``: first to lower the read amplification (``score``), then up to
    :data:`COMFORT_BYTES` without raising it."""
    slab = list(start)
    options = [_candidates(n, b, None if units is None else units[a])
               for a, (n, b) in enumerate(zip(geo.shape, bases))]
    if score:
        while True:
            now = amplification(geo, slab)
            best: tuple[float, int, int] | None = None
            for a, cands in enumerate(options):
                for v in cands:
                    if v <= slab[a]:
                        continue
                    trial = [*slab[:a], v, *slab[a + 1:]]
                    if geo.task_bytes(trial) > budget:
                        break
                    amp = amplification(geo, trial)
                    if amp >= now - 1e-9:
                        continue
                    gain = math.log(now / amp) / math.log(v / slab[a])
                    if best is None or gain > best[0]:
                        best = (gain, a, v)
            if best is None:
                break
            slab[best[1]] = best[2]
    amp = amplification(geo, slab)
    for a in reversed(range(len(slab))):  # then fewer, larger tasks: last axes first
        while geo.task_bytes(slab) < min(budget, 2 * COMFORT_BYTES):
            bigger = min(slab[a] * 2, max(geo.shape[a], 1))
            if bigger == slab[a]:
                break
            trial = [*slab[:a], bigger, *slab[a + 1:]]
            if geo.task_bytes(trial) > budget or amplification(geo, trial) > amp + 1e-9:
                break
            slab = trial
    return tuple(slab)


def _divisors(n: int) -> list[int]:
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return sorted(set(small + [n // d for d in small]))


def _intermediate(geo: Geometry, budget: int) -> tuple[Shape, Shape, Shape] | None:
    """``(stage-1 slab, scratch chunks, stage-2 slab)`` for the two-stage plan, or
    ``None`` when the source grid is not regular or the stages do not fit."""
    units = geo.source_regular
    if units is None:
        return None
    options: list[list[tuple[int, int, int]]] = []  # per axis: (C, R, W)
    for n, s, t in zip(geo.shape, units, geo.target_object):
        n = max(n, 1)
        s, t = min(s, n), min(t, n)
        found = {(n, n, n)}
        for c in _divisors(s):
            found.add((c, s, min(t * c // math.gcd(t, c), n)))
        for c in _divisors(t):
            found.add((c, min(s * c // math.gcd(s, c), n), t))
        options.append(sorted(found))
    choice = [min(o, key=lambda x: (x[1] * x[2], -x[0])) for o in options]

    def fits(ch: list[tuple[int, int, int]]) -> bool:
        return (geo.task_bytes([c[1] for c in ch]) <= budget
                and geo.task_bytes([c[2] for c in ch]) <= budget)

    if not fits(choice):
        return None
    while True:
        best: tuple[float, int, tuple[int, int, int]] | None = None
        for a, axis in enumerate(options):
            c0, r0, w0 = choice[a]
            for c, r, w in axis:
                if c <= c0:
                    continue
                trial = [*choice[:a], (c, r, w), *choice[a + 1:]]
                if not fits(trial):
                    continue
                cost = math.log(max(r * w, 1) / max(r0 * w0, 1)) + 1e-3
                gain = math.log(c / c0) / cost
                if best is None or gain > best[0]:
                    best = (gain, a, (c, r, w))
        if best is None:
            break
        choice[best[1]] = best[2]
    chunks = tuple(c[0] for c in choice)
    read = _grow(geo, tuple(c[1] for c in choice), tuple(c[1] for c in choice), budget,
                 None, score=False)
    write = _grow(geo, tuple(c[2] for c in choice), tuple(c[2] for c in choice), budget,
                  None, score=False)
    return read, chunks, write


def make_plan(geo: Geometry, max_mem: int, threads: int, engine_threads: int) -> Plan:
    """The plan for ``geo`` within ``max_mem`` bytes (see the module's docstring): up to
    ``threads`` tasks at once and ``engine_threads`` decoding threads, lowered until one
    target object per task fits — and the tasks further, down to one, when fewer tasks
    with more memory each make a direct slab that decodes each source chunk at most
    twice; else the two stages, else the least amplified direct plan."""
    one = tuple(min(t, max(n, 1)) for t, n in zip(geo.target_object, geo.shape))
    tasks, engine = max(1, threads), max(1, engine_threads)

    def peak(n: int, e: int) -> int:
        return n * replace(geo, engine=e).task_bytes(one) + geo.transients(n, e)

    while tasks > 1 and peak(tasks, engine) > max_mem:
        tasks -= 1
    while engine > 1 and peak(tasks, engine) > max_mem:
        engine -= 1
    if peak(tasks, engine) > max_mem:
        raise RechunkError(
            f"max_mem {format_mem(max_mem)} is too small: one target object {one} and one "
            f"source chunk need about {format_mem(peak(1, 1))}; raise max_mem, or choose "
            "smaller target chunks or shards"
        )
    # A direct slab that decodes each source chunk at most twice, with as many tasks as
    # allow one (two decodes cost less than a second encode and write); else the two
    # stages with the most tasks; else the least amplified direct plan.
    first: Plan | None = None
    staged: Plan | None = None
    while True:
        plan = _plan_for(geo, one, max_mem, tasks, engine)
        if plan.amplification <= MAX_AMPLIFICATION:
            return plan
        first = first or plan
        staged = staged or _staged(geo, max_mem, tasks, engine)
        if tasks == 1:
            return staged or first  # bounded, if slow: source chunks decoded many times
        tasks -= 1


def _budget(geo: Geometry, max_mem: int, tasks: int, engine: int) -> int:
    return (max_mem - geo.transients(tasks, engine)) // tasks


def _plan_for(geo: Geometry, one: Shape, max_mem: int, tasks: int, engine: int) -> Plan:
    """The direct plan: slabs of whole target objects, grown within the budget."""
    geo = replace(geo, engine=engine)
    slab = _grow(geo, one, one, _budget(geo, max_mem, tasks, engine), geo.source_regular,
                 score=True)
    task = geo.task_bytes(slab)
    return Plan("direct", geo.shape, slab, tasks, engine, task,
                tasks * task + geo.transients(tasks, engine), amplification(geo, slab))


def _staged(geo: Geometry, max_mem: int, tasks: int, engine: int) -> Plan | None:
    """The two-stage plan, or ``None`` where it does not fit."""
    geo = replace(geo, engine=engine)
    found = _intermediate(geo, _budget(geo, max_mem, tasks, engine))
    if found is None:
        return None
    read, chunks, write = found
    task = max(geo.task_bytes(read), geo.task_bytes(write))
    return Plan("intermediate", geo.shape, write, tasks, engine, task,
                tasks * task + geo.transients(tasks, engine), 1.0,
                read_slab=read, intermediate=chunks)


def slabs(shape: Shape, slab: Shape) -> Iterator[tuple[int, Region]]:
    """``(number, region)`` of the slabs of shape ``slab`` tiling ``shape``, in C order."""
    grid = [max(1, -(-n // s)) if n else 0 for n, s in zip(shape, slab)]
    for number, coords in enumerate(np.ndindex(*grid)):
        yield number, tuple(slice(c * s, min((c + 1) * s, n))
                            for c, s, n in zip(coords, slab, shape))


def count(shape: Shape, slab: Shape) -> int:
    return math.prod(max(1, -(-n // s)) if n else 0 for n, s in zip(shape, slab))
