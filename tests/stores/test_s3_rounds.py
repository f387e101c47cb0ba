"""Reads in rounds on S3 (moto), through fsspec and through obstore: each round of a
batch's readers sent at once, every round after the first with ``If-Match`` the ETag the
first answered with, and readers racing a writer that replaces the values: every round
of a read from one version, no error. Over plain HTTP (no versions used), each value is
read whole once."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.stores.s3 import BUCKET, PUBLIC, S3Server
from tests.stores.test_obstore import s3_store
from zarrx.abc.store import ByteRange, Store
from zarrx.stores.fsspec import FsspecStore
from zarrx.testing.rounds import Scripted, VersionReader, expected, version_value

KEYS = [f"k/{i}" for i in range(4)]


def _store(client: str, s3: S3Server, where: str) -> Store:
    if client == "fsspec":
        return FsspecStore.from_url(f"s3://{BUCKET}/{where}", storage_options=s3.options)
    return s3_store(s3, where)


@pytest.fixture(params=["fsspec", "obstore"])
def client(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_each_round_of_every_reader_is_sent_at_once(client: str, s3: S3Server,
                                                    where: str) -> None:
    """Four readers of three rounds: the GETs of one round meet at the server four at a
    time (a reader waiting for another's round would never let them), and every GET after
    a reader's first names its first answer's ETag."""
    store = _store(client, s3, where)
    for i, key in enumerate(KEYS):
        store.set(key, version_value(i))
    readers = [VersionReader() for _ in KEYS]
    with s3.recorder.watch(together=4) as seen:
        store.read_rounds(list(zip(KEYS, readers)))
    assert all(r.consistent() for r in readers)
    assert [r.version for r in readers] == [0, 1, 2, 3]
    gets = [r for r in seen if r.method == "GET"]
    assert len(gets) == 4 * (1 + 3 + 1)  # the head; middle, suffix, tail; a place
    for key in KEYS:
        mine = [r for r in gets if r.path.endswith(key)]
        assert mine[0].condition is None  # (the first GET of a key ends first)
        conditions = {r.condition for r in mine[1:]}
        assert len(conditions) == 1
        assert next(iter(conditions)).startswith("If-Match: ")


def test_a_reader_starts_again_when_the_value_is_replaced(client: str, s3: S3Server,
                                                          where: str) -> None:
    store = _store(client, s3, where)
    store.set("v", version_value(1))
    writer = _store(client, s3, where)  # another client: another machine
    reader = VersionReader(
        lambda r: writer.set("v", version_value(2)) if r == 1 and reader.restarts == 0 else None)
    with s3.recorder.watch() as seen:
        store.read_rounds([("v", reader)])
    assert reader.consistent()
    assert (reader.version, reader.restarts) == (2, 1)
    refused = [r for r in seen if r.method == "GET" and r.status == 412]
    assert refused  # the second round asked for the first version, which was gone


def test_reads_in_rounds_race_a_writer(client: str, s3: S3Server, where: str) -> None:
    """A writer (another client) replaces two keys 30 times while two keys are read in
    rounds again and again: every read comes from one version, none fails. (A reader
    starts again when its value changed between rounds, a bounded number of times: the
    writer pauses between versions, as a writer of one value on another machine would.)"""
    store = _store(client, s3, where)
    keys = KEYS[:2]
    for key in keys:
        store.set(key, version_value(0))
    writer = _store(client, s3, where)
    done = threading.Event()
    errors: list[BaseException] = []

    def write() -> None:
        try:
            for version in range(1, 31):
                for key in keys:
                    writer.set(key, version_value(version))
                time.sleep(0.05)
        except BaseException as error:
            errors.append(error)
        finally:
            done.set()

    thread = threading.Thread(target=write)
    thread.start()
    mixed: list[Any] = []
    versions: set[int | None] = set()
    try:
        while not done.is_set():
            readers = [VersionReader() for _ in keys]
            store.read_rounds(list(zip(keys, readers)))
            mixed += [r.words for r in readers if not r.consistent()]
            versions |= {r.version for r in readers}
    finally:
        thread.join(120)
    assert errors == []
    assert mixed == []
    assert len(versions) > 1


def test_empty_values_and_ranges_past_the_end(client: str, s3: S3Server, where: str) -> None:
    """S3 refuses a range past the end (416), and any range of an empty value: the answer
    is what ``get`` answers, from the same version."""
    store = _store(client, s3, where)
    store.set("empty", b"")
    store.set("v", b"0123456789")
    asked = [ByteRange(0, 4), ByteRange(-3), ByteRange(5), ByteRange(20, 2), ByteRange(0, 0)]
    for key in ("empty", "v"):
        reader = Scripted(lambda got: [] if len(got) == 2 else asked)
        store.read_rounds([(key, reader)])
        want = [store.get(key, r) for r in asked]
        assert reader.received == [want, want]


def test_over_http_rounds_are_held_to_the_etag(s3: S3Server, where: str) -> None:
    """The same objects read over plain HTTP: ranged GETs, every one after a key's first
    with ``If-Match``; a value replaced between rounds restarts its reader."""
    writer = FsspecStore.from_url(f"s3://{PUBLIC}/{where}", storage_options=s3.options)
    for i, key in enumerate(KEYS):
        writer.set(key, version_value(i))
    store = FsspecStore.from_url(f"{s3.endpoint}/{PUBLIC}/{where}")
    readers = [VersionReader() for _ in KEYS]
    with s3.recorder.watch() as seen:
        store.read_rounds(list(zip(KEYS, readers)))
    assert all(r.consistent() for r in readers)
    assert [r.version for r in readers] == [0, 1, 2, 3]
    gets = [r for r in seen if r.method == "GET"]
    assert len(gets) == 4 * 5
    assert all(r.range is not None for r in gets)
    assert sum(r.condition is None for r in gets) == 4  # each key's first
    replaced = VersionReader(
        lambda r: writer.set(KEYS[0], version_value(9)) if r == 1 and not replaced.restarts
        else None)
    store.read_rounds([(KEYS[0], replaced)])
    assert replaced.consistent()
    assert (replaced.version, replaced.restarts) == (9, 1)


@pytest.fixture
def plain_web(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A web server that knows neither ETags nor ranges (Python's own), serving a
    directory."""
    handler = partial(SimpleHTTPRequestHandler, directory=str(tmp_path))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", tmp_path
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_a_web_server_without_etags_is_read_whole(
        plain_web: tuple[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a strong ETag there is no version to hold the rounds to: each value is
    read whole, and every round answered from it."""
    monkeypatch.setattr(SimpleHTTPRequestHandler, "log_message", lambda *args: None)
    url, root = plain_web
    for i, key in enumerate(KEYS):
        (root / key).parent.mkdir(exist_ok=True)
        (root / key).write_bytes(version_value(i))
    store = FsspecStore.from_url(url)
    readers = [VersionReader() for _ in KEYS]
    store.read_rounds([*zip(KEYS, readers), ("k/absent", VersionReader())])
    assert all(r.consistent() for r in readers)
    assert [r.version for r in readers] == [0, 1, 2, 3]
    asked = [ByteRange(0, 4), ByteRange(-3), ByteRange(20, 2), ByteRange(1 << 20)]
    scripted = Scripted(lambda got: [] if got else asked)
    store.read_rounds([(KEYS[1], scripted)])
    value = version_value(1)
    assert scripted.received == [[expected(value, r.start, r.length) for r in asked]]
