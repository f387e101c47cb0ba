"""A moto S3 server on 127.0.0.1 for the store tests (the ``s3`` fixture of conftest.py).

A WSGI middleware in front of it records every request it serves (method, path, ``Range``,
status, start and end times), so the tests count real HTTP requests and can see whether
they overlapped.
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
    """WSGI middleware: records each request; ``delay`` adds latency to data reads."""

    app: Any
    records: list[Request] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    delay: float = 0.0
    delay_listings: bool = False

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        start = time.perf_counter()
        statuses: list[str] = []

        def capture(status: str, headers: Any, exc_info: Any = None) -> Any:
            statuses.append(status)
            return start_response(status, headers, exc_info)

        is_read = environ["REQUEST_METHOD"] == "GET" and (
            self.delay_listings or not environ.get("QUERY_STRING"))
        if self.delay and is_read:
            time.sleep(self.delay)  # an object store's latency: visible only if overlapped
        try:
            return self.app(environ, capture)
        finally:
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
    def watch(self, delay: float = 0.0, listings: bool = False) -> Iterator[list[Request]]:
        """The requests served inside the block (with ``delay`` on each data read, and on
        each listing too with ``listings=True``)."""
        seen: list[Request] = []
        with self.lock:
            first = len(self.records)
        self.delay, self.delay_listings = delay, listings
        try:
            yield seen
        finally:
            self.delay, self.delay_listings = 0.0, False
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
