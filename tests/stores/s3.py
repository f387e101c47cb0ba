"""A moto S3 server on 127.0.0.1 for the store tests (the ``s3`` fixture of conftest.py).

A WSGI middleware in front of it records every request it serves (method, path, ``Range``,
status, the write condition) and how many are in flight at once, so the tests count real
HTTP requests; a barrier in the server holds chosen reads until enough have arrived, so a
test proves that requests overlap by their completing at all, not by comparing clocks.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest

BUCKET = "zarrx-test"
PUBLIC = "zarrx-public"  # anyone may read it over plain HTTP


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    query: str
    range: str | None
    status: int
    start: float
    end: float
    condition: str | None = None  # "If-Match: <etag>" or "If-None-Match: *" when sent


def _condition(environ: dict[str, Any]) -> str | None:
    for header, name in (("HTTP_IF_MATCH", "If-Match"), ("HTTP_IF_NONE_MATCH", "If-None-Match")):
        if header in environ:
            return f"{name}: {environ[header]}"
    return None


@dataclass
class Recorder:
    """WSGI middleware: records each request and counts how many are in flight at once.

    ``delay`` adds latency to data reads (and listings, with ``delay_listings``).
    ``barrier`` makes the reads ``gate`` selects wait for each other in groups of its size.
    """

    app: Any
    records: list[Request] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    delay: float = 0.0
    delay_listings: bool = False
    barrier: threading.Barrier | None = None
    gate: Any = None
    in_flight: int = 0
    most_in_flight: int = 0
    writes: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        start = time.perf_counter()
        statuses: list[str] = []

        def capture(status: str, headers: Any, exc_info: Any = None) -> Any:
            statuses.append(status)
            return start_response(status, headers, exc_info)

        is_get = environ["REQUEST_METHOD"] == "GET"
        is_read = is_get and (self.delay_listings or not environ.get("QUERY_STRING"))
        with self.lock:
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            if self.delay and is_read:
                time.sleep(self.delay)  # an object store's latency (nothing is timed)
            barrier = self.barrier
            if barrier is not None and is_get and self.gate(environ):
                barrier.wait(timeout=120)  # only a guard against a hang: fails if broken
            if environ["REQUEST_METHOD"] in ("PUT", "POST", "DELETE"):
                # moto checks a write's If-Match / If-None-Match and then stores the object,
                # as two steps another request can come between (its S3 server is threaded
                # Python); S3 does both as one. Writes one at a time keep S3's guarantee,
                # which the conditional updates under test rely on.
                with self.writes:
                    return list(self.app(environ, capture))
            return self.app(environ, capture)
        finally:
            with self.lock:
                self.in_flight -= 1
            request = Request(
                method=environ["REQUEST_METHOD"],
                path=environ.get("PATH_INFO", ""),
                query=environ.get("QUERY_STRING", ""),
                range=environ.get("HTTP_RANGE"),
                status=int(statuses[0].split()[0]) if statuses else 0,
                start=start,
                end=time.perf_counter(),
                condition=_condition(environ),
            )
            with self.lock:
                self.records.append(request)

    @contextmanager
    def watch(
        self, delay: float = 0.0, listings: bool = False, together: int = 0, gate: Any = None
    ) -> Iterator[list[Request]]:
        """The requests served inside the block: with ``delay`` on each data read (and on
        each listing too with ``listings=True``), and the GETs ``gate`` selects (default:
        data reads) meeting ``together`` at a time."""
        seen: list[Request] = []
        with self.lock:
            first = len(self.records)
            self.most_in_flight = self.in_flight
        self.delay, self.delay_listings = delay, listings
        self.gate = gate or (lambda environ: not environ.get("QUERY_STRING"))
        self.barrier = threading.Barrier(together) if together else None
        try:
            yield seen
        finally:
            self.delay, self.delay_listings = 0.0, False
            self.barrier = None
            with self.lock:
                seen.extend(self.records[first:])


@dataclass(frozen=True)
class S3Server:
    endpoint: str
    recorder: Recorder

    @property
    def options(self) -> dict[str, Any]:
        """storage_options reaching this server, as a user would pass them."""
        return {
            "endpoint_url": self.endpoint,
            "key": "testing",
            "secret": "testing",
            "config_kwargs": {"connect_timeout": 5, "read_timeout": 30},
        }


def serve() -> Iterator[S3Server]:
    """A moto S3 server on 127.0.0.1 with one bucket, for the whole session."""
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        assert host == "127.0.0.1"
        wsgi = server._server  # werkzeug's server: put the recorder in front of moto's app
        recorder = Recorder(wsgi.app)
        wsgi.app = recorder
        s3 = S3Server(f"http://127.0.0.1:{port}", recorder)
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("NO_PROXY", "127.0.0.1")
            patch.setenv("AWS_EC2_METADATA_DISABLED", "true")
            import s3fs

            fs = s3fs.S3FileSystem(skip_instance_cache=True, **s3.options)
            fs.mkdir(BUCKET)
            fs.mkdir(PUBLIC)
            anyone_reads = {
                "Version": "2012-10-17",
                "Statement": [{
                    "Effect": "Allow",
                    "Principal": "*",
                    "Action": ["s3:GetObject"],
                    "Resource": [f"arn:aws:s3:::{PUBLIC}/*"],
                }],
            }
            fs.call_s3("put_bucket_policy", Bucket=PUBLIC, Policy=json.dumps(anyone_reads))
            yield s3
    finally:
        server.stop()
