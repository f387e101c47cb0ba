"""FsspecStore against a real S3 server: moto in server mode, on 127.0.0.1 only.

The server (``tests/stores/s3.py``) is started once per session and stopped at the end;
it records each request it serves, so the tests count real HTTP requests and can see
whether they overlapped. The same objects are also read over plain ``http://`` from the
same server.
"""

from __future__ import annotations

import json
import logging
import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import zarrx
from tests.stores.s3 import BUCKET, PUBLIC, S3Server
from zarrx import registry
from zarrx.abc.store import ByteRange
from zarrx.errors import InvalidKeyError, ReadOnlyError
from zarrx.stores.fsspec import FsspecStore
from zarrx.stores.url import store_from_url
from zarrx.testing.stores import StoreTests


def _url(*parts: str) -> str:
    return "s3://" + "/".join((BUCKET, *parts))


# -- the store contract ------------------------------------------------------------------


class TestS3Store(StoreTests):
    @pytest.fixture
    def store(self, s3: S3Server, where: str) -> FsspecStore:
        return FsspecStore.from_url(_url(where), storage_options=s3.options)


def test_s3_scheme_resolves_through_the_registry(s3: S3Server, where: str) -> None:
    assert registry.stores.get("s3") is FsspecStore
    store = store_from_url(_url(where), read_only=False, storage_options=s3.options)
    assert isinstance(store, FsspecStore)
    assert store.batched_reads
    assert store.path == f"{BUCKET}/{where}"
    store.set("k", b"v")
    assert store_from_url(_url(where), read_only=True, storage_options=s3.options).get("k") == b"v"


@pytest.mark.parametrize("scheme", ["s3", "s3a", "gs", "gcs", "http", "https"])
def test_schemes_are_registered(scheme: str) -> None:
    assert registry.stores.get(scheme) is FsspecStore


def test_list_dir_is_one_delimiter_listing(s3: S3Server, where: str) -> None:
    store = FsspecStore.from_url(_url(where), storage_options=s3.options)
    store.set_many([("g/zarr.json", b"{}"), ("g/a/zarr.json", b"{}"), ("g/a/c/0", b"0"),
                    ("g/b/zarr.json", b"{}")])
    with s3.recorder.watch() as requests:
        assert store.list_dir("g/") == (["g/zarr.json"], ["g/a/", "g/b/"])
    assert len(requests) == 1
    assert requests[0].method == "GET"
    assert "delimiter=%2F" in requests[0].query or "delimiter=/" in requests[0].query
    assert f"prefix={where}%2Fg%2F" in requests[0].query or f"prefix={where}/g/" in (
        requests[0].query)


def test_credentials_pass_through_storage_options(s3: S3Server, where: str) -> None:
    store = FsspecStore.from_url(_url(where), storage_options=s3.options)
    assert store.fs.key == "testing"
    assert store.fs.client_kwargs.get("endpoint_url", s3.endpoint) == s3.endpoint
    wrong = {  # nothing listens there: fail fast
        **s3.options,
        "endpoint_url": "http://127.0.0.1:9",
        "config_kwargs": {"connect_timeout": 1, "retries": {"max_attempts": 1}},
    }
    with pytest.raises(OSError, match="k"):
        FsspecStore.from_url(_url(where), storage_options=wrong).get("k")


def test_invalid_keys_send_no_request(s3: S3Server, where: str) -> None:
    store = FsspecStore.from_url(_url(where), storage_options=s3.options)
    with s3.recorder.watch() as requests:
        for key in ("../x", "/a", "a//b", ""):
            for operation, args in (
                (store.get, (key,)),
                (store.get_many, ([("fine", None), (key, None)],)),
                (store.set, (key, b"v")),
                (store.erase, (key,)),
            ):
                with pytest.raises(InvalidKeyError):
                    operation(*args)
        with pytest.raises(InvalidKeyError):
            store.get("fine", ByteRange(0, -1))
    assert requests == []


def test_read_only_sends_no_write(s3: S3Server, where: str) -> None:
    writer = FsspecStore.from_url(_url(where), storage_options=s3.options)
    writer.set("a/b", b"v")
    reader = FsspecStore.from_url(_url(where), read_only=True, storage_options=s3.options)
    with s3.recorder.watch() as requests:
        for operation in (
            lambda: reader.set("a/b", b"new"),
            lambda: reader.set_many([("x", b"new")]),
            lambda: reader.erase("a/b"),
            lambda: reader.erase_prefix(""),
        ):
            with pytest.raises(ReadOnlyError):
                operation()
    assert requests == []
    assert writer.get("a/b") == b"v"


def test_ranges_are_single_requests(s3: S3Server, where: str) -> None:
    store = FsspecStore.from_url(_url(where), storage_options=s3.options)
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


def test_other_clients_writes_are_listed(s3: S3Server, where: str) -> None:
    import s3fs

    store = FsspecStore.from_url(_url(where), storage_options=s3.options)
    store.set("a/zarr.json", b"{}")
    assert store.list_dir("") == ([], ["a/"])
    other = s3fs.S3FileSystem(skip_instance_cache=True, **s3.options)
    other.pipe_file(f"{BUCKET}/{where}/b/zarr.json", b"{}")
    other.pipe_file(f"{BUCKET}/{where}/c", b"c")
    assert store.list_dir("") == (["c"], ["a/", "b/"])
    assert store.list() == ["a/zarr.json", "b/zarr.json", "c"]
    other.rm_file(f"{BUCKET}/{where}/c")
    assert store.list_dir("") == ([], ["a/", "b/"])


def test_erase_prefix_spares_keys_with_glob_characters(s3: S3Server, where: str) -> None:
    store = FsspecStore.from_url(_url(where), storage_options=s3.options)
    for key in ("a*/x", "a*/y", "ab/x", "a[b]/x", "a?/x"):
        store.set(key, b"v")
    store.erase_prefix("a*/")
    store.erase("a?")
    assert store.list() == ["a?/x", "a[b]/x", "ab/x"]


def test_pickle(s3: S3Server, where: str) -> None:
    store = FsspecStore.from_url(_url(where), storage_options=s3.options)
    store.set("k", b"v")
    again = pickle.loads(pickle.dumps(store))
    assert again == store
    assert again.get("k") == b"v"
    assert again.get_many([("k", ByteRange(-1))]) == [b"v"]


# -- arrays on S3 ------------------------------------------------------------------------


@pytest.mark.parametrize("zarr_format", [3, 2])
def test_array_round_trip(s3: S3Server, where: str, zarr_format: int) -> None:
    url = _url(where, "a.zarr")
    data = np.arange(37 * 29, dtype="<f8").reshape(37, 29) / 7
    a = zarrx.create_array(url, shape=data.shape, dtype=data.dtype, chunks=(10, 8),
                           zarr_format=zarr_format, storage_options=s3.options)
    a[...] = data
    a[3:5, 2] = -1.0
    data[3:5, 2] = -1.0
    b = zarrx.open_array(url, mode="r", storage_options=s3.options)
    assert isinstance(b.store, FsspecStore)
    assert b.read_only
    np.testing.assert_array_equal(b[...], data)
    np.testing.assert_array_equal(b[::3, -5:], data[::3, -5:])
    np.testing.assert_array_equal(b.oindex[[0, 36], [1, 28]], data[np.ix_([0, 36], [1, 28])])
    with pytest.raises(ReadOnlyError):
        b[0, 0] = 1.0
    keys = FsspecStore.from_url(url, storage_options=s3.options).list()
    assert len([k for k in keys if k.startswith("c/") or k[0].isdigit()]) == 4 * 4


def test_sharded_array_round_trip_read_by_zarr_python(s3: S3Server, where: str) -> None:
    import zarr

    url = _url(where, "s.zarr")
    data = np.random.default_rng(1).integers(0, 1000, (64, 48), dtype="<i4")
    a = zarrx.create_array(url, shape=data.shape, dtype=data.dtype, chunks=(8, 8),
                           shards=(32, 24), storage_options=s3.options)
    a[...] = data
    np.testing.assert_array_equal(zarrx.open_array(url, storage_options=s3.options)[...], data)
    peer = zarr.open_array(url, mode="r", storage_options=s3.options)
    np.testing.assert_array_equal(peer[...], data)


def _hierarchy(url: str, s3: S3Server) -> dict[str, np.ndarray]:
    g = zarrx.create_group(url, attributes={"title": "t"}, storage_options=s3.options)
    arrays = {}
    for i, name in enumerate(["x", "y", "sub/z"]):
        data = np.arange(20, dtype="i2") * (i + 1)
        g.create_array(name, shape=(20,), dtype="i2", chunks=(20,))[...] = data
        arrays[name] = data
    zarrx.consolidate_metadata(url, storage_options=s3.options)
    return arrays


@pytest.mark.parametrize("zarr_format", [3, None])
def test_consolidated_open_is_one_get(s3: S3Server, where: str, zarr_format: Any) -> None:
    """Opening a consolidated v3 hierarchy and visiting every member's metadata reads one
    document, once — also when the format is autodetected."""
    url = _url(where, "h.zarr")
    arrays = _hierarchy(url, s3)
    with s3.recorder.watch(delay=0.1) as requests:
        g = zarrx.open_consolidated(
            url, mode="r", zarr_format=zarr_format, storage_options=s3.options
        )
        members = dict(g.members(max_depth=None))
        shapes = {name: node.shape for name, node in members.items() if hasattr(node, "shape")}
        assert g.attrs["title"] == "t"
    assert shapes == {"x": (20,), "y": (20,), "sub/z": (20,)}
    root = f"/{BUCKET}/{where}/h.zarr/"
    assert [(r.method, r.path, r.status) for r in requests] == [
        ("GET", root + "zarr.json", 200)
    ]  # one GET, no listing, no probe, no chunk
    np.testing.assert_array_equal(members["sub/z"][...], arrays["sub/z"])


def test_inner_chunks_of_a_shard_are_coalesced_ranged_gets(s3: S3Server, where: str) -> None:
    url = _url(where, "shard.zarr")
    data = np.arange(1024 * 64, dtype="<u2").reshape(1024, 64)
    a = zarrx.create_array(url, shape=(1024, 64), dtype="u2", chunks=(8, 8), shards=(1024, 64),
                           compressors=None, storage_options=s3.options)
    a[...] = data
    b = zarrx.open_array(url, mode="r", storage_options=s3.options)
    # (A shard this small is read whole, in one GET, where a request costs more than its
    # bytes: read_latency_bytes. This test is about the index-then-ranges reads.)
    b.store.read_latency_bytes = 0

    with s3.recorder.watch() as requests:
        got = b[8:16, :]  # one row of 8 inner chunks, all in shard c/0/0
    np.testing.assert_array_equal(got, data[8:16, :])
    shard = f"/{BUCKET}/{where}/shard.zarr/c/0/0"
    assert all(r.path == shard and r.method == "GET" for r in requests)
    chunk_bytes = 8 * 8 * 2
    index_bytes = 128 * 8 * 16 + 4  # 1024 entries + crc32c, a suffix
    row = 8 * chunk_bytes  # the 8 neighbours of one row of the grid: one GET
    assert [(r.range, r.status) for r in requests] == [
        (f"bytes=-{index_bytes}", 206), (f"bytes={row}-{2 * row - 1}", 206)]

    def inner_chunk(environ: dict[str, Any]) -> bool:  # a range that is not the index
        return not environ.get("HTTP_RANGE", "bytes=-").startswith("bytes=-")

    # Inner chunks far apart (more than COALESCE_GAP) are separate GETs, sent at once: the
    # server answers neither until both have arrived.
    with s3.recorder.watch(together=2, gate=inner_chunk) as requests:
        got = b[::1016, :8]  # inner chunks (0, 0) and (127, 0): 127 KiB apart
    np.testing.assert_array_equal(got, data[::1016, :8])
    inner = requests[1:]
    assert sorted(r.range for r in inner) == [
        f"bytes=0-{chunk_bytes - 1}", f"bytes={127 * row}-{127 * row + chunk_bytes - 1}"]


def test_http_reads_a_consolidated_hierarchy(s3: S3Server, where: str) -> None:
    url = f"s3://{PUBLIC}/{where}/web.zarr"
    arrays = _hierarchy(url, s3)
    http_url = f"{s3.endpoint}/{PUBLIC}/{where}/web.zarr"
    g = zarrx.open_group(http_url, mode="r")
    store = g.store
    assert isinstance(store, FsspecStore)
    assert store.read_only
    assert not store.writeable
    assert not store.listable
    for name, data in arrays.items():
        np.testing.assert_array_equal(g[name][...], data)
    assert store.get("x/zarr.json", ByteRange(0, 1)) == b"{"
    assert store.get("absent") is None
    with pytest.raises(ReadOnlyError):
        store.set("x/zarr.json", b"{}")
    with pytest.raises(TypeError, match="listings"):
        store.list_dir("")
    writable = FsspecStore.from_url(http_url, read_only=False)
    assert writable.read_only  # read-only because the protocol is
    with pytest.raises(ReadOnlyError):
        zarrx.create_array(http_url + "/new", shape=(2,), dtype="i1")


def test_concurrency_is_bounded(s3: S3Server, where: str) -> None:
    options = {**s3.options, "max_concurrency": 2}
    store = FsspecStore.from_url(_url(where), storage_options=options)
    assert store.max_concurrency == 2
    for i in range(6):
        store.set(f"k{i}", bytes([i]))
    # The server holds each read until a second one has arrived: two at once happen, and
    # with a third in flight the count would show it.
    with s3.recorder.watch(together=2) as requests:
        assert store.get_many([(f"k{i}", None) for i in range(6)]) == [bytes([i]) for i in range(6)]
    assert len(requests) == 6
    assert s3.recorder.most_in_flight == 2  # never more than two at once, and two at once


def test_more_than_botocores_ten_connections_are_in_flight(s3: S3Server, where: str) -> None:
    store = FsspecStore.from_url(_url(where), storage_options=s3.options)
    assert store.fs.config_kwargs["max_pool_connections"] == 64
    mine = FsspecStore.from_url(_url(where), storage_options={
        **s3.options, "config_kwargs": {"max_pool_connections": 3}})
    assert mine.fs.config_kwargs["max_pool_connections"] == 3
    store.set_many([(f"k{i}", bytes([i])) for i in range(24)])
    # All 24 at once: the server answers none until all have arrived (botocore's default
    # pool of 10 connections would never get there).
    with s3.recorder.watch(together=24) as requests:
        assert store.get_many([(f"k{i}", None) for i in range(24)]) == [
            bytes([i]) for i in range(24)]
    assert len(requests) == 24


def test_synchronous_filesystems_are_wrapped(tmp_path: Path) -> None:
    from fsspec.implementations.local import LocalFileSystem

    store = FsspecStore(LocalFileSystem(auto_mkdir=True), str(tmp_path / "root"))
    store.set("a/b", b"0123456789")
    store.set_many([("a/c", b"c"), ("d", b"d")])
    assert (tmp_path / "root" / "a" / "b").read_bytes() == b"0123456789"
    assert store.get_many([("a/b", ByteRange(-3)), ("a/b", ByteRange(2, 2)), ("x", None)]) == [
        b"789", b"23", None]
    assert store.list() == ["a/b", "a/c", "d"]
    assert store.list_dir("") == (["d"], ["a/"])
    store.erase_prefix("a/")
    assert store.list() == ["d"]


# -- many writers: conditional writes --------------------------------------------------------


def test_s3_updates_are_conditional(s3: S3Server, where: str) -> None:
    store = FsspecStore.from_url(_url(where), storage_options=s3.options)
    assert store.atomic_updates == "conditional"
    assert store.supports_atomic_update
    with s3.recorder.watch() as requests:
        store.atomic_update("k", lambda old: b"1")  # absent: If-None-Match
        store.atomic_update("k", lambda old: old + b"2")  # If-Match: its ETag
    assert [(r.method, r.status) for r in requests] == [
        ("GET", 404), ("PUT", 200), ("GET", 200), ("PUT", 200)]
    assert store.get("k") == b"12"
    off = FsspecStore.from_url(_url(where), storage_options={**s3.options,
                                                             "conditional_writes": False})
    assert off.atomic_updates is None
    assert pickle.loads(pickle.dumps(store)).atomic_updates == "conditional"
    assert store.with_read_only(False).atomic_updates == "conditional"
    with pytest.raises(ValueError, match="conditional_writes"):
        FsspecStore.from_url("memory://x", storage_options={"conditional_writes": True})


def test_s3_update_retries_when_another_writer_wins(
    s3: S3Server, where: str, caplog: pytest.LogCaptureFixture
) -> None:
    store = FsspecStore.from_url(_url(where), storage_options=s3.options)
    other = FsspecStore.from_url(_url(where), storage_options=s3.options)
    store.set("k", b"a")
    tries = []

    def update(old: bytes | None) -> bytes:
        tries.append(old)
        if len(tries) < 3:
            other.set("k", (old or b"") + b"x")  # another machine writes in between
        return (old or b"") + b"!"

    with caplog.at_level(logging.DEBUG, logger="zarrx"):
        assert store.atomic_update("k", update) == b"axx!"
    assert tries == [b"a", b"ax", b"axx"]
    assert store.get("k") == b"axx!"
    conflicts = [r for r in caplog.records if "another writer changed it first" in r.message]
    assert len(conflicts) == 2  # the retries are in the debug log
    with zarrx.config.set(update_attempts=2):
        tries.clear()
        with pytest.raises(zarrx.errors.UpdateConflictError, match="2 reads and writes"):
            store.atomic_update("k", lambda old: other.set("k", old + b"y") or old + b"z")


def test_s3_writers_in_other_processes_lose_no_inner_chunk(
    s3: S3Server, where: str, tmp_path: Path
) -> None:
    from tests.reliability.writer import WRITERS, Writers, lost_inner_chunks, make_sharded

    url = _url(where, "s.zarr")
    a = make_sharded(url, storage_options=s3.options)
    options = json.dumps(s3.options)
    env = {"NO_PROXY": "127.0.0.1", "AWS_EC2_METADATA_DISABLED": "true"}
    jobs = [["inner", url, str(w), str(WRITERS), "--options", options] for w in range(WRITERS)]
    writers = Writers(tmp_path, jobs, env=env)
    writers.go()
    writers.finish()
    assert lost_inner_chunks(a) == []


def test_s3_appends_and_attributes_from_other_processes_all_land(
    s3: S3Server, where: str, tmp_path: Path
) -> None:
    from tests.reliability.writer import WRITERS, Writers

    url = _url(where, "x.zarr")
    zarrx.create_array(url, shape=(0,), dtype="i8", chunks=(4,), storage_options=s3.options)
    options = json.dumps(s3.options)
    env = {"NO_PROXY": "127.0.0.1", "AWS_EC2_METADATA_DISABLED": "true"}
    count = 5
    jobs = [[job, url, str(w), str(count), "--options", options]
            for w in range(WRITERS) for job in ("append", "attrs")]
    writers = Writers(tmp_path, jobs, env=env)
    writers.go()
    writers.finish()
    a = zarrx.open_array(url, storage_options=s3.options)
    assert sorted(a[...]) == sorted(w * 1000 + i for w in range(WRITERS) for i in range(count))
    assert a.attrs.asdict() == {f"w{w}-{i}": i for w in range(WRITERS) for i in range(count)}


def test_public_names() -> None:
    from zarrx import storage

    assert storage.FsspecStore is FsspecStore
    assert "FsspecStore" in storage.__all__


def test_module_examples_run() -> None:
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module("zarrx.stores.fsspec"))
    assert result.attempted > 0
    assert result.failed == 0


def test_the_command_line_reaches_s3_through_storage_options(
    s3: S3Server, where: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--storage-options`` (JSON) carries the endpoint and credentials for the URLs of
    ``info``, ``tree``, ``spec``, ``validate`` and ``convert`` (both ways)."""
    from zarrx.cli.main import main

    url = _url(where, "data.zarr")
    g = zarrx.open_group(url, mode="w", storage_options=s3.options)
    g.create_array("x", shape=(6,), chunks=(3,), dtype="i2")[:] = np.arange(6)
    options = json.dumps(s3.options)
    assert main(["info", f"{url}/x", "--storage-options", options, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["shape"] == [6]
    assert main(["tree", url, "--storage-options", options]) == 0
    assert "x (6,) int16" in capsys.readouterr().out
    assert main(["spec", url, "--storage-options", options, "-o", str(tmp_path / "s.json")]) == 0
    assert main(["validate", url, "--spec", str(tmp_path / "s.json"),
                 "--storage-options", options]) == 0
    local = tmp_path / "copy.zarr"
    assert main(["convert", url, str(local), "--zarr-format", "2", "--no-progress",
                 "--storage-options", options]) == 0
    back = _url(where, "back.zarr")
    assert main(["convert", str(local), back, "--zarr-format", "3", "--no-progress",
                 "--dst-storage-options", options]) == 0
    capsys.readouterr()
    got = zarrx.open_array(f"{back}/x", mode="r", storage_options=s3.options)[...]
    np.testing.assert_array_equal(got, np.arange(6))
