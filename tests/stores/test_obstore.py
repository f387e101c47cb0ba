"""ObstoreStore: the store contract on obstore's memory, local and S3 stores (S3 served by
the moto server of ``tests/stores/s3.py``, which records every request), round trips with
zarr-python's ``ObjectStore``, conditional updates, and many writers through obstore."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import numpy as np
import pytest
from obstore.store import LocalStore, MemoryStore, S3Store

import zarrx
from tests.stores.s3 import BUCKET, S3Server
from zarrx.abc.store import ByteRange
from zarrx.errors import InvalidKeyError, ReadOnlyError
from zarrx.stores.obstore import ObstoreStore
from zarrx.testing.stores import StoreTests


def s3_config(s3: S3Server) -> dict[str, Any]:
    """obstore's configuration reaching the moto server."""
    return {
        "endpoint": s3.endpoint,
        "access_key_id": "testing",
        "secret_access_key": "testing",
        "region": "us-east-1",
        "client_options": {"allow_http": True},
    }


def s3_store(s3: S3Server, where: str, **options: Any) -> ObstoreStore:
    return ObstoreStore(S3Store(BUCKET, prefix=where, **s3_config(s3)), **options)


# -- the store contract ------------------------------------------------------------------


class TestObstoreMemory(StoreTests):
    @pytest.fixture
    def store(self) -> ObstoreStore:
        return ObstoreStore(MemoryStore())


class TestObstoreLocal(StoreTests):
    @pytest.fixture
    def store(self, tmp_path: Path) -> ObstoreStore:
        return ObstoreStore(LocalStore(tmp_path / "root", mkdir=True))


class TestObstoreS3(StoreTests):
    @pytest.fixture
    def store(self, s3: S3Server, where: str) -> ObstoreStore:
        return s3_store(s3, where)


def test_atomic_updates_by_backend(tmp_path: Path, s3: S3Server, where: str) -> None:
    assert ObstoreStore(MemoryStore()).atomic_updates == "conditional"
    assert s3_store(s3, where).atomic_updates == "conditional"
    assert not s3_store(s3, where).conditional_erase
    local = ObstoreStore(LocalStore(tmp_path, mkdir=True))
    assert local.atomic_updates is None  # object_store's local store has no conditional update
    assert local.conditional_erase  # irrelevant there: erasing is a plain erase
    assert s3_store(s3, where, conditional_writes=False).atomic_updates is None
    with pytest.raises(ValueError, match="no conditional updates"):
        ObstoreStore(LocalStore(tmp_path), conditional_writes=True)
    with pytest.raises(TypeError, match="obstore store"):
        ObstoreStore({"not": "a store"})


# -- requests on S3 ----------------------------------------------------------------------


def test_ranges_are_single_requests(s3: S3Server, where: str) -> None:
    store = s3_store(s3, where)
    value = bytes(range(256)) * 4
    store.set("v", value)
    with s3.recorder.watch() as requests:
        assert store.get("v") == value
        assert store.get("v", ByteRange(10, 5)) == value[10:15]
        assert store.get("v", ByteRange(-16)) == value[-16:]
        assert store.get("v", ByteRange(-16, 4)) == value[-16:-12]
        assert store.get("absent") is None
    assert [(r.method, r.range, r.status) for r in requests] == [
        ("GET", None, 200),
        ("GET", "bytes=10-14", 206),
        ("GET", "bytes=-16", 206),
        ("GET", "bytes=-16", 206),
        ("GET", None, 404),
    ]


def test_close_ranges_of_a_value_are_one_request(s3: S3Server, where: str) -> None:
    store = s3_store(s3, where)
    value = bytes(range(256)) * 1024  # 256 KiB
    store.set("v", value)
    store.set("w", b"w" * 10)
    far = 200 * 1024
    requests_ = [("v", ByteRange(100, 50)), ("w", None), ("v", ByteRange(0, 10)),
                 ("v", ByteRange(160, 40)), ("v", ByteRange(far, 8)), ("v", ByteRange(-4))]
    with s3.recorder.watch(together=4) as requests:  # none answered until all 4 arrive
        got = store.get_many(requests_)
    assert got == [value[100:150], b"w" * 10, value[:10], value[160:200],
                   value[far : far + 8], value[-4:]]
    ranges = sorted((r.path.rsplit("/", 1)[1], r.range or "") for r in requests)
    assert ranges == [("v", "bytes=-4"), ("v", "bytes=0-199"),
                      ("v", f"bytes={far}-{far + 7}"), ("w", "")]


def test_list_dir_is_one_delimiter_listing(s3: S3Server, where: str) -> None:
    store = s3_store(s3, where)
    store.set_many([("g/zarr.json", b"{}"), ("g/a/zarr.json", b"{}"), ("g/a/c/0", b"0"),
                    ("g/b/zarr.json", b"{}")])
    with s3.recorder.watch() as requests:
        assert store.list_dir("g/") == (["g/zarr.json"], ["g/a/", "g/b/"])
    assert len(requests) == 1
    assert "delimiter=%2F" in requests[0].query
    assert f"prefix={where}%2Fg%2F" in requests[0].query


def test_invalid_keys_and_read_only_send_no_request(s3: S3Server, where: str) -> None:
    store = s3_store(s3, where)
    store.set("a/b", b"v")
    reader = store.with_read_only(True)
    with s3.recorder.watch() as requests:
        for key in ("../x", "/a", "a//b", ""):
            for operation, args in ((store.get, (key,)), (store.set, (key, b"v")),
                                    (store.get_many, ([("fine", None), (key, None)],)),
                                    (store.erase, (key,)), (store.get_with_version, (key,))):
                with pytest.raises(InvalidKeyError, match="invalid store key"):
                    operation(*args)
        for operation in (lambda: reader.set("a/b", b"new"), lambda: reader.erase("a/b"),
                          lambda: reader.erase_prefix(""), lambda: reader.set_if("a/b", b"", None),
                          lambda: reader.set_many([("x", b"new")])):
            with pytest.raises(ReadOnlyError):
                operation()
    assert requests == []
    assert reader.get("a/b") == b"v"


def test_updates_are_conditional_puts(s3: S3Server, where: str) -> None:
    store = s3_store(s3, where)
    with s3.recorder.watch() as requests:
        store.atomic_update("k", lambda old: b"1")  # absent: If-None-Match
        store.atomic_update("k", lambda old: old + b"2")  # If-Match: its ETag
    assert [(r.method, r.status, (r.condition or "").split(":")[0]) for r in requests] == [
        ("GET", 404, ""), ("PUT", 200, "If-None-Match"),
        ("GET", 200, ""), ("PUT", 200, "If-Match")]
    assert requests[1].condition == "If-None-Match: *"
    assert store.get("k") == b"12"
    other = s3_store(s3, where)
    stale = store.get_with_version("k")
    other.set("k", b"theirs")
    assert not store.set_if("k", b"mine", stale.version)  # 412: kept theirs
    assert store.get("k") == b"theirs"
    with pytest.raises(TypeError, match="conditional delete"):
        store.set_if("k", None, store.get_with_version("k").version)
    assert store.get("k") == b"theirs"


def test_an_update_leaving_a_chunk_all_fill_writes_it(s3: S3Server, where: str) -> None:
    """obstore cannot erase on condition, so the engine writes the chunk instead."""
    a = zarrx.create_array(s3_store(s3, where), shape=(8,), dtype="i2", chunks=(4,),
                           fill_value=0)
    a[:] = np.arange(1, 9)
    a[0:2] = 0
    a[2:4] = 0  # chunk 0 is now all fill value, by a partial (atomic) update
    a[4:8] = 0  # chunk 1 by a whole write: erased as usual
    np.testing.assert_array_equal(a[...], np.zeros(8, "i2"))
    assert a.store.exists("c/0")
    assert not a.store.exists("c/1")


def test_pickle(s3: S3Server, where: str) -> None:
    store = s3_store(s3, where)
    store.set("k", b"v")
    again = pickle.loads(pickle.dumps(store))
    assert again.get_many([("k", ByteRange(-1))]) == [b"v"]
    assert again.atomic_updates == "conditional"


def test_from_url(s3: S3Server, where: str) -> None:
    store = ObstoreStore.from_url(f"s3://{BUCKET}/{where}", read_only=True,
                                  storage_options={**s3_config(s3), "max_concurrency": 3})
    assert store.read_only
    assert store.max_concurrency == 3
    s3_store(s3, where).set("x/y", b"z")
    assert store.get("x/y") == b"z"


# -- interoperability with zarr-python's ObjectStore -------------------------------------


@pytest.mark.parametrize("shards", [None, (16, 12)])
def test_zarr_python_object_store_reads_what_zarrx_wrote_and_back(
    s3: S3Server, where: str, shards: Any
) -> None:
    import zarr
    from zarr.storage import ObjectStore

    data = np.random.default_rng(3).normal(size=(32, 24)).astype("<f4")
    a = zarrx.create_array(s3_store(s3, where), name="mine", shape=data.shape, dtype="f4",
                           chunks=(8, 6), shards=shards, attributes={"by": "zarrx"})
    a[...] = data
    a[3:5, 7] = -1
    data[3:5, 7] = -1
    theirs = ObjectStore(S3Store(BUCKET, prefix=where, **s3_config(s3)))
    peer = zarr.open_array(theirs, path="mine", mode="r")
    np.testing.assert_array_equal(peer[...], data)
    assert peer.attrs["by"] == "zarrx"

    b = zarr.create_array(theirs, name="theirs", shape=(10, 7), chunks=(4, 4), dtype="i8",
                          shards=None if shards is None else (8, 4), fill_value=-3)
    b[2:9, 1:] = np.arange(42).reshape(7, 6)
    got = zarrx.open_array(s3_store(s3, where), path="theirs", mode="r")
    np.testing.assert_array_equal(got[...], b[...])


def test_many_writers_through_obstore_lose_no_inner_chunk(
    s3: S3Server, where: str, tmp_path: Path
) -> None:
    from tests.reliability.writer import WRITERS, Writers, lost_inner_chunks, make_sharded

    a = make_sharded(s3_store(s3, where))
    url = f"s3://{BUCKET}/{where}"
    options = json.dumps(s3_config(s3))
    jobs = [["inner", url, str(w), str(WRITERS), "--obstore", options] for w in range(WRITERS)]
    writers = Writers(tmp_path, jobs, env={"NO_PROXY": "127.0.0.1"})
    writers.go()
    writers.finish()
    assert lost_inner_chunks(a) == []


# -- leaving the interpreter -------------------------------------------------------------


def test_exit_waits_for_obstore_threads_still_delivering_a_result() -> None:
    """obstore hands each result to zarrx's loop from a tokio thread; the caller can return
    and the interpreter begin to finalize while that thread is still in Python. The script
    holds that thread in Python until exit has begun, so the window is always open: the
    process must still exit cleanly (it died of SIGABRT here, after every write)."""
    script = """
import atexit, threading, time
import numpy as np
import zarrx
from obstore.store import MemoryStore
from zarrx.stores import aio
from zarrx.stores.obstore import ObstoreStore

store = ObstoreStore(MemoryStore())
a = zarrx.create_array(store, shape=(8,), dtype="i4", chunks=(4,))
a[...] = np.arange(8)
loop = aio.loop()
wake = loop._write_to_self
last, exiting = threading.Event(), threading.Event()
atexit.register(exiting.set)  # registered after zarrx's exit hook, so it runs before it

def linger():
    wake()
    python_threads = {t.ident for t in threading.enumerate()}
    if last.is_set() and threading.get_ident() not in python_threads:
        last.clear()  # obstore's thread, which has just handed over the last result
        while not exiting.is_set():
            time.sleep(0.001)
        end = time.monotonic() + 0.05
        while time.monotonic() < end:
            time.sleep(0)  # takes the GIL back again and again

loop._write_to_self = linger
last.set()
assert store.exists("c/0")  # one request: its result is handed over by one obstore thread
print("written", flush=True)
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            cwd=Path(__file__).parents[2], check=False, timeout=120)
    assert result.returncode == 0, (result.returncode, result.stderr)
    assert result.stdout == "written\n"


# -- obstore is optional -----------------------------------------------------------------


def test_without_obstore_urls_open_through_fsspec(s3: S3Server, where: str) -> None:
    url = f"s3://{BUCKET}/{where}/a.zarr"
    zarrx.create_array(url, shape=(3,), dtype="u1", chunks=(3,), storage_options=s3.options)[
        ...] = [1, 2, 3]
    script = f"""
import sys
sys.modules["obstore"] = None  # as if it were not installed
import zarrx
from zarrx.stores.obstore import ObstoreStore
a = zarrx.open_array({url!r}, mode="r", storage_options={s3.options!r})
assert type(a.store).__name__ == "FsspecStore", a.store
assert a[...].tolist() == [1, 2, 3]
try:
    ObstoreStore(object())
except ImportError as error:
    print(error)
"""
    env = {**os.environ, "NO_PROXY": "127.0.0.1", "AWS_EC2_METADATA_DISABLED": "true"}
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            env=env, cwd=Path(__file__).parents[2], check=False)
    assert result.returncode == 0, result.stderr
    assert "pip install 'zarrx[obstore]'" in result.stdout


def test_public_names_and_module_example() -> None:
    import doctest
    import importlib

    from zarrx import storage

    assert storage.ObstoreStore is ObstoreStore
    assert "ObstoreStore" in storage.__all__
    result = doctest.testmod(importlib.import_module("zarrx.stores.obstore"))
    assert result.attempted > 0
    assert result.failed == 0


def test_a_hierarchy_is_listed_one_depth_at_a_time(s3: S3Server, where: str) -> None:
    store = s3_store(s3, where)
    root = zarrx.create_group(store)
    for g in range(3):
        group = root.create_group(f"g{g}")
        for i in range(4):
            group.create_array(f"a{i}", shape=(i + 1,), dtype="u1", chunks=(4,))
    def group_listing(environ: dict[str, Any]) -> bool:  # the listings of g0, g1, g2
        prefix = parse_qs(environ.get("QUERY_STRING", "")).get("prefix", [""])[0]
        return prefix.endswith(("/g0/", "/g1/", "/g2/"))

    # The three groups' listings are answered only once all three have arrived.
    with s3.recorder.watch(together=3, gate=group_listing) as requests:
        members = zarrx.open_group(store, mode="r").members(max_depth=None)
    assert [name for name, _ in members] == [
        name for g in range(3) for name in [f"g{g}", *(f"g{g}/a{i}" for i in range(4))]]
    assert [m.shape for name, m in members if "/" in name] == [(i + 1,) for _ in range(3)
                                                                for i in range(4)]
    listings = [r for r in requests if "list-type" in r.query]
    assert len(listings) == 4  # the root, then its three groups
    gets = [r for r in requests if r.method == "GET" and not r.query]
    assert len(gets) == 1 + 3 + 12  # the root, then each child's zarr.json once


def _unreachable() -> ObstoreStore:
    """An S3 store whose endpoint refuses connections at once (nothing listens there)."""
    from datetime import timedelta

    short = timedelta(milliseconds=50)
    return ObstoreStore(S3Store(
        BUCKET, endpoint="http://127.0.0.1:9", region="us-east-1", aws_access_key_id="k",
        aws_secret_access_key="s", client_options={"allow_http": True, "timeout": "5s"},
        retry_config={"max_retries": 0, "retry_timeout": short,
                      "backoff": {"init_backoff": short, "max_backoff": short, "base": 2}},
    ))


@pytest.mark.parametrize("call", ["get", "set", "list_dir", "open"])
def test_a_failing_request_is_one_line_with_the_original_kept(call: str) -> None:
    """obstore's message with its multi-line Rust debug dump becomes one line of a
    zarrx.errors.StoreError, naming the key, the store and the innermost cause."""
    from obstore.exceptions import BaseError

    store = _unreachable()
    with pytest.raises(zarrx.errors.StoreError) as e:
        {"get": lambda: store.get("a/zarr.json"),
         "set": lambda: store.set("a/zarr.json", b"{}"),
         "list_dir": lambda: store.list_dir("a/"),
         "open": lambda: zarrx.open_group(store, mode="r", path="a")}[call]()
    message = str(e.value)
    assert "\n" not in message
    assert "Debug source" not in message
    assert "(Connection refused)" in message
    assert "'a/" in message
    assert isinstance(e.value.__cause__, BaseError)
    assert "Debug source" in str(e.value.__cause__)  # (the original, whole)
