"""First use from many threads at once, in fresh interpreters: nothing of zarrx or of the
codec libraries it imports on demand has been imported before the threads start, and
they all open and read arrays of different codecs at the same instant (a barrier).
Repeated in many fresh processes: a race in a first import shows up in some of them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import zarrx
from tests.cli.conftest import ZARRX

PROCESSES = 20
DATA = np.arange(48 * 40, dtype="int32").reshape(48, 40)
ARRAYS = {
    "v3_zstd": {"compressors": {"name": "zstd", "configuration": {"level": 1}}},
    "v3_blosc": {"compressors": {"name": "blosc", "configuration": {
        "cname": "lz4", "clevel": 5, "shuffle": "shuffle"}}},
    "v3_gzip": {"compressors": {"name": "gzip", "configuration": {"level": 1}}},
    "v3_crc32c": {"compressors": {"name": "crc32c"}},
    "v3_sharded": {"shards": (24, 20)},
    "v2_zlib": {"zarr_format": 2, "compressors": {"id": "zlib", "level": 1}},
    "v2_lz4": {"zarr_format": 2, "compressors": {"id": "lz4"}},
    "v2_bz2": {"zarr_format": 2, "compressors": {"id": "bz2"}},
}

#: One fresh interpreter: only the standard library and NumPy are imported before the
#: threads meet at the barrier; each then imports zarrx's pieces through its first calls.
#: How each script ends: its threads started together, joined, their failures reported.
RUN_THREADS = """
for t in threads:
    t.start()
for t in threads:
    t.join()
print("\\n".join(failures))
sys.exit(1 if failures else 0)
"""

FIRST_USE = """
import sys, threading
import numpy as np

root, names = sys.argv[1], sys.argv[2:]
expected = np.arange(48 * 40, dtype="int32").reshape(48, 40)
barrier = threading.Barrier(len(names))
failures = []

def first_use(name):
    barrier.wait()
    try:
        import zarrx
        got = zarrx.open_array(f"{root}/{name}", mode="r")[...]
        if not np.array_equal(got, expected):
            failures.append(f"{name}: wrong values")
    except BaseException as e:
        failures.append(f"{name}: {type(e).__name__}: {e}")

threads = [threading.Thread(target=first_use, args=(name,)) for name in names]
"""


@pytest.fixture(scope="module")
def arrays(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("codecs")
    for name, options in ARRAYS.items():
        # One store each: a hierarchy holds nodes of one format, and there are v2 ones.
        a = zarrx.create_array(str(root / name), shape=DATA.shape, dtype=DATA.dtype,
                               chunks=(12, 10), **options)
        a[...] = DATA
    return root


def test_eight_threads_first_open_and_read_in_fresh_processes(arrays: Path) -> None:
    failed = []
    for i in range(PROCESSES):
        run = subprocess.run([sys.executable, "-c", FIRST_USE + RUN_THREADS, str(arrays), *ARRAYS],
                             capture_output=True, text=True, check=False)
        if run.returncode != 0:
            failed.append(f"process {i}: {run.stdout}{run.stderr}")
    assert failed == [], f"{len(failed)} of {PROCESSES} processes failed:\n" + "\n".join(failed)


LISTING_PROCESSES = 8
LAYOUTS = [
    {"dtype": "float32", "chunks": (4, 5), "compressors": {"name": "zstd"}},
    {"dtype": "int16", "chunks": (3, 3), "compressors": {"name": "gzip"}},
    {"dtype": "uint8", "chunks": (2, 5), "shards": (4, 10)},
]

#: One fresh interpreter: eight threads list one group of many arrays (three layouts, a
#: subgroup, two members that cannot be opened) at the same instant, as the first thing
#: zarrx does there; each checks every member and reads an array of each layout.
FIRST_LISTING = """
import sys, threading, warnings
import numpy as np

root, n = sys.argv[1], int(sys.argv[2])
layouts = [("float32", (4, 5)), ("int16", (3, 3)), ("uint8", (2, 5))]
warnings.filterwarnings("ignore", message=".*skipped member")  # checked in the test
barrier = threading.Barrier(8)
failures = []

def first_listing(t):
    barrier.wait()
    try:
        import zarrx
        group = zarrx.open_group(root, mode="r")
        members = dict(group.members())
        names = sorted(f"m{i:03d}" for i in range(n)) + ["sub"]
        if sorted(members) != names:
            failures.append(f"thread {t}: members {sorted(members)}")
            return
        for i in range(n):
            a = members[f"m{i:03d}"]
            dtype, chunks = layouts[i % 3]
            if (str(a.dtype), a.chunks, a.attrs["index"], a.shape) != (dtype, chunks, i, (8, 10)):
                failures.append(f"thread {t}: m{i:03d} is {a.dtype} {a.chunks} {a.attrs.asdict()}")
        for i in range(3):
            got = members[f"m{(t + i) % n:03d}"][...]
            if not np.array_equal(got, np.full((8, 10), (t + i) % n, dtype=got.dtype)):
                failures.append(f"thread {t}: wrong values in m{(t + i) % n:03d}")
        for name, error in (("bad", "UnknownCodecError"), ("broken", "MetadataError")):
            try:
                group[name]
                failures.append(f"thread {t}: {name} opened")
            except Exception as e:
                if type(e).__name__ != error or name not in str(e):
                    failures.append(f"thread {t}: {name}: {type(e).__name__}: {e}")
    except BaseException as e:
        failures.append(f"thread {t}: {type(e).__name__}: {e}")

threads = [threading.Thread(target=first_listing, args=(t,)) for t in range(8)]
"""


def test_eight_threads_first_list_a_group_of_many_arrays_in_fresh_processes(
    tmp_path: Path,
) -> None:
    """What listing caches (parsed layouts, codecs, data types) is made by whichever
    thread comes first: every thread gets every member whole, with its own attributes,
    and the errors of the members that cannot be opened."""
    n = 60
    group = zarrx.open_group(str(tmp_path), mode="w")
    for i in range(n):
        a = group.create_array(f"m{i:03d}", shape=(8, 10), attributes={"index": i},
                               **LAYOUTS[i % 3])  # type: ignore[arg-type]
        a[...] = i
    group.create_group("sub")
    doc = (tmp_path / "m000" / "zarr.json").read_text()
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "zarr.json").write_text(doc.replace('"zstd"', '"zstd-unknown"'))
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "zarr.json").write_text(doc[:-5])
    failed = []
    for i in range(LISTING_PROCESSES):
        run = subprocess.run(
            [sys.executable, "-c", FIRST_LISTING + RUN_THREADS, str(tmp_path), str(n)],
            capture_output=True, text=True, check=False)
        if run.returncode != 0:
            failed.append(f"process {i}: {run.stdout}{run.stderr}")
    assert failed == [], (
        f"{len(failed)} of {LISTING_PROCESSES} processes failed:\n" + "\n".join(failed)
    )


#: Sources for `zarrx convert`, one per format: one array per codec (and strings).
SOURCES = {
    2: {codec: {"compressors": {"id": codec}}
        for codec in ["zlib", "lz4", "bz2", "blosc", "zstd", "gzip", "lzma", "crc32c"]},
    3: {name: options for name, options in ARRAYS.items() if not name.startswith("v2")},
}


@pytest.mark.parametrize("source_format", [2, 3])
def test_convert_with_its_default_threads_in_fresh_processes(
    tmp_path: Path, source_format: int
) -> None:
    """The installed command with its default thread count, on a source whose arrays use
    different codecs: every run copies every value."""
    source = tmp_path / "source"
    for name, options in SOURCES[source_format].items():
        a = zarrx.create_array(str(source), name=name, shape=DATA.shape, dtype=DATA.dtype,
                               chunks=(6, 5), zarr_format=source_format, **options)
        a[...] = DATA
    strings = DATA.astype(str)
    zarrx.create_array(str(source), name="strings", shape=DATA.shape, dtype=str, chunks=(6, 5),
                       zarr_format=source_format)[...] = strings
    target_format = 5 - source_format
    if source_format == 3:  # Zarr v2 has no sharding: that array goes v3 to v3
        target_format = 3
    for i in range(5):
        target = tmp_path / f"copy{i}"
        run = subprocess.run([ZARRX, "convert", str(source), str(target),
                              "--zarr-format", str(target_format)],
                             capture_output=True, text=True, check=False)
        assert run.returncode == 0, f"run {i}: {run.stderr}"
        for name in SOURCES[source_format]:
            got = zarrx.open_array(str(target), path=name, mode="r")[...]
            np.testing.assert_array_equal(got, DATA, err_msg=f"run {i}: {name}")
        got = zarrx.open_array(str(target), path="strings", mode="r")[...]
        np.testing.assert_array_equal(got, strings, err_msg=f"run {i}: strings")


def test_a_registry_loads_each_name_once_for_threads_that_ask_at_once() -> None:
    """A fresh registry of the installed codecs, asked by 8 threads at the same instant:
    one entry-point table, one implementation per name, the same for every thread."""
    import threading

    from zarrx.errors import UnknownCodecError
    from zarrx.registry import Registry

    fresh: Registry = Registry("zarrx.codecs", "codec", UnknownCodecError)
    names = ["blosc", "zstd", "gzip", "crc32c", "sharding_indexed", "bytes", "transpose",
             "vlen-utf8"]
    barrier = threading.Barrier(8)
    found: list[dict[str, object]] = [{} for _ in range(8)]

    def look_up(i: int) -> None:
        barrier.wait()
        for name in names[i:] + names[:i]:  # each thread starts with another name
            found[i][name] = fresh.get(name)

    threads = [threading.Thread(target=look_up, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(f == found[0] for f in found)
    assert sorted(found[0]) == sorted(names)
    assert found[0]["blosc"].__name__ == "BloscCodec"


def test_a_pool_taken_before_the_thread_count_changes_still_runs_its_work() -> None:
    """One thread takes the chunk pool; another changes zarrx.config 'threads' and takes
    the new one: the first thread's submissions still run (the old pool is not shut down
    under it)."""
    from zarrx.runtime.executor import _get_pool

    taken = _get_pool(2)
    assert _get_pool(3) is not taken
    assert taken.submit(sum, [1, 2]).result() == 3
    assert _get_pool(3).submit(sum, [4]).result() == 4
