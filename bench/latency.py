"""High-latency benchmark: zarrx, zarr-python 3 and tensorstore reading the same S3 data
through a proxy that adds a fixed delay to every request, with the requests counted.

    python bench/latency.py [--delay 0.02] [--rounds 3] [--libs ...] [--workloads ...]

How it is built:

- **The server.** moto's S3 server on 127.0.0.1 holds the data. The stores are written once
  by zarrx straight to moto (not through the proxy); every library then reads them through
  the proxy, so all read identical bytes.
- **The proxy.** A small threaded HTTP proxy on 127.0.0.1 (in this process) sleeps ``delay``
  seconds on each request before forwarding it to moto — an object store's round trip —
  and counts the requests by kind: ``get`` (a whole object), ``range`` (a ranged GET),
  ``list`` (a listing), ``head``. The delay is per request: what overlaps is hidden. moto
  spends milliseconds of CPU on each request (Python, on a shared 2-core machine), which
  would swamp the delay and turn every workload into a count of requests; as the data does
  not change during the run, the proxy answers a read it has forwarded before (same method,
  path and query, and ``Range``) from memory, after the same delay. The warm-up round
  fills it; a real object store's latency does not grow with its load either.
- **The clients.** ``zarrx-fsspec`` (``s3://`` URL: ``FsspecStore``), ``zarrx-obstore``
  (``ObstoreStore(obstore.store.S3Store(...))``), ``zarr-fsspec`` (zarr-python 3's
  ``FsspecStore``), ``zarr-obstore`` (zarr-python's ``ObjectStore``), ``tensorstore`` (its own
  S3 kvstore driver, ``endpoint`` set to the proxy). Each library's defaults (concurrency,
  format detection), as a user would call it. Every run opens its store anew (no cache is
  carried from one run to the next) and includes opening the nodes.
- **The workloads.** ``list``: open a hierarchy of 10 groups of 100 arrays (1 000 arrays,
  no consolidated metadata) and visit every member's metadata; ``consolidated``: the same
  with consolidated metadata (tensorstore has none: not run); ``full``: read all of a
  2048x2048 float32 array of 128x128 chunks (256 chunks, zstd); ``region``: read
  [768:1280, 768:1280] of a 2048x2048 float32 array in 1024x1024 shards of 64x64 inner
  chunks (16 inner chunks in each of the 4 shards); ``points``: 1 000 random points of that
  sharded array (``vindex``); ``point``: 100 single points of a 2048x2048 float32 array of
  256x256 blosc-lz4 chunks, one ``a[i, j]`` after the other (a small read: the fewer
  requests each costs, the better).
- **One process per client**, started once; runs go round-robin over the clients (the
  order rotates each round) after one untimed warm-up round; medians of the rounds. Each
  run's result is checked against the others' (a count or a checksum).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np

BUCKET = "latency"
KEY, SECRET = "testing", "testing"
CLIENTS = ("zarrx-fsspec", "zarrx-obstore", "zarr-fsspec", "zarr-obstore", "tensorstore")
WORKLOADS = ("list", "consolidated", "full", "region", "points", "point")
GROUPS, ARRAYS = 10, 100
SHAPE = (2048, 2048)
REGION = (slice(768, 1280), slice(768, 1280))


def points() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(42)
    return rng.integers(0, SHAPE[0], 1000), rng.integers(0, SHAPE[1], 1000)


def single_points() -> list[tuple[int, int]]:
    rng = np.random.default_rng(7)
    return [(int(i), int(j)) for i, j in rng.integers(0, SHAPE[0], (100, 2))]


def data() -> np.ndarray:
    y, x = np.mgrid[: SHAPE[0], : SHAPE[1]].astype("f4")
    noise = np.random.default_rng(0).normal(scale=0.01, size=SHAPE).astype("f4")
    return np.sin(x / 97) * np.cos(y / 61) + noise


# -- the proxy ----------------------------------------------------------------------------

_HOP = {"connection", "keep-alive", "transfer-encoding", "proxy-connection", "te", "upgrade"}


class Proxy(ThreadingHTTPServer):
    """Forwards every request to ``target`` after ``delay`` seconds; counts them."""

    daemon_threads = True
    request_queue_size = 1024  # clients open dozens of connections at once

    def __init__(self, target: tuple[str, int], delay: float) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.target = target
        self.delay = delay
        self.counts: Counter[str] = Counter()
        self.lock = threading.Lock()
        #: Answers to reads, by method, path and query, and Range: the data does not change
        #: during the run, so a read asked before is answered from memory (after the delay).
        self.answers: dict[tuple[str, str, str | None], tuple[int, Any, bytes]] = {}

    def take_counts(self) -> Counter[str]:
        with self.lock:
            counts, self.counts = self.counts, Counter()
        return counts


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: Proxy

    def _forward(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        kind = self.command.lower()
        if kind == "get":
            query = self.path.partition("?")[2]
            if "list-type" in query or "delimiter" in query or "prefix=" in query:
                kind = "list"
            elif self.headers.get("Range"):
                kind = "range"
        with self.server.lock:
            self.server.counts[kind] += 1
        time.sleep(self.server.delay)  # the round trip of an object store
        asked = (self.command, self.path, self.headers.get("Range"))
        answer = self.server.answers.get(asked) if self.command in ("GET", "HEAD") else None
        if answer is None:
            answer = self._upstream(body)
            if self.command in ("GET", "HEAD") and answer[0] in (200, 206, 404):
                self.server.answers[asked] = answer
        status, headers, payload = answer
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)

    def _upstream(self, body: bytes | None) -> tuple[int, list[tuple[str, str]], bytes]:
        connection = getattr(self, "_connection", None)
        if connection is None:
            connection = self._connection = http.client.HTTPConnection(*self.server.target)
        headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP}
        connection.request(self.command, self.path, body=body, headers=headers)
        response = connection.getresponse()
        payload = response.read()
        kept = [(name, value) for name, value in response.getheaders()
                if name.lower() not in _HOP and name.lower() != "content-length"]
        return response.status, kept, payload

    do_GET = do_HEAD = do_PUT = do_POST = do_DELETE = _forward

    def log_message(self, *args: Any) -> None:
        pass


# -- writing the data (once, straight to moto) ----------------------------------------------


def write_data(endpoint: str) -> None:
    import zarrx

    options = {"endpoint_url": endpoint, "key": KEY, "secret": SECRET}
    for name, consolidated in (("h.zarr", False), ("hc.zarr", True)):
        url = f"s3://{BUCKET}/{name}"
        root = zarrx.create_group(url, storage_options=options)
        for g in range(GROUPS):
            group = root.create_group(f"g{g}")
            for i in range(ARRAYS):
                group.create_array(f"a{i}", shape=(100 + i,), dtype="i4", chunks=(100,))
        if consolidated:
            zarrx.consolidate_metadata(url, storage_options=options)
    values = data()
    full = zarrx.create_array(f"s3://{BUCKET}/full.zarr", shape=SHAPE, dtype="f4",
                              chunks=(128, 128), compressors={"name": "zstd"},
                              storage_options=options)
    full[...] = values
    sharded = zarrx.create_array(f"s3://{BUCKET}/sharded.zarr", shape=SHAPE, dtype="f4",
                                 chunks=(64, 64), shards=(1024, 1024),
                                 compressors={"name": "zstd"}, storage_options=options)
    sharded[...] = values
    blosc = zarrx.create_array(f"s3://{BUCKET}/blosc.zarr", shape=SHAPE, dtype="f4",
                               chunks=(256, 256),
                               compressors={"name": "blosc", "configuration": {
                                   "cname": "lz4", "clevel": 5, "shuffle": "shuffle"}},
                               storage_options=options)
    blosc[...] = values


# -- the clients (in worker processes) ------------------------------------------------------


class Client:
    """One library with one back end: opens a prefix of the bucket as that library does."""

    def __init__(self, name: str, endpoint: str) -> None:
        self.name = name
        self.endpoint = endpoint
        self.library = name.split("-")[0]

    def store(self, prefix: str) -> Any:
        if self.name.endswith("fsspec"):
            options = {"endpoint_url": self.endpoint, "key": KEY, "secret": SECRET,
                       "skip_instance_cache": True}
            if self.library == "zarrx":
                from zarrx.storage import FsspecStore

                return FsspecStore.from_url(f"s3://{BUCKET}/{prefix}", read_only=True,
                                            storage_options=options)
            from zarr.storage import FsspecStore as ZarrFsspecStore

            return ZarrFsspecStore.from_url(f"s3://{BUCKET}/{prefix}", read_only=True,
                                            storage_options=options)
        from obstore.store import S3Store

        s3 = S3Store(BUCKET, prefix=prefix, endpoint=self.endpoint, access_key_id=KEY,
                     secret_access_key=SECRET, region="us-east-1",
                     client_options={"allow_http": True})
        if self.library == "zarrx":
            from zarrx.storage import ObstoreStore

            return ObstoreStore(s3, read_only=True)
        from zarr.storage import ObjectStore

        return ObjectStore(s3, read_only=True)

    def kvstore(self, prefix: str) -> dict[str, Any]:
        return {"driver": "s3", "bucket": BUCKET, "path": prefix, "endpoint": self.endpoint,
                "aws_region": "us-east-1", "aws_credentials": {"type": "environment"}}

    # -- workloads: each returns a check value, equal across clients ---------------------
    def run(self, workload: str) -> Any:
        if self.library == "tensorstore":
            return getattr(self, f"_ts_{workload}")()
        module = __import__(self.library)
        if workload in ("list", "consolidated"):
            store = self.store("h.zarr" if workload == "list" else "hc.zarr")
            if workload == "consolidated":
                root = module.open_consolidated(store, mode="r")
            elif self.library == "zarr":
                root = module.open_group(store, mode="r", use_consolidated=False)
            else:
                root = module.open_group(store, mode="r")
            members = root.members(max_depth=None)
            return sorted((name, getattr(node, "shape", None)) for name, node in members)
        name = {"full": "full.zarr", "point": "blosc.zarr"}.get(workload, "sharded.zarr")
        a = module.open_array(self.store(name), mode="r")
        if workload == "point":
            return _digest(np.array([a[i, j] for i, j in single_points()], dtype="f4"))
        if workload == "full":
            return _digest(a[...])
        if workload == "region":
            return _digest(a[REGION])
        return _digest(a.vindex[points()])

    def _ts_open(self, prefix: str, context: Any) -> Any:
        import tensorstore as ts

        return ts.open({"driver": "zarr3", "kvstore": self.kvstore(prefix)}, context=context,
                       read=True)

    def _ts_list(self) -> Any:
        import tensorstore as ts

        context = ts.Context()
        kv = ts.KvStore.open(self.kvstore("h.zarr/"), context=context).result()
        paths = sorted(k.decode()[: -len("zarr.json")] for k in kv.list().result()
                       if k.endswith(b"zarr.json"))
        docs = [kv.read(f"{p}zarr.json") for p in paths]  # every document at once
        nodes = [json.loads(doc.result().value) for doc in docs]
        arrays = [p for p, node in zip(paths, nodes) if node["node_type"] == "array"]
        opened = [self._ts_open(f"h.zarr/{p}", context) for p in arrays]
        shapes = dict(zip(arrays, (tuple(f.result().shape) for f in opened)))
        return sorted((p.rstrip("/"), shapes.get(p)) for p in paths if p)

    def _ts_array(self, name: str) -> Any:
        import tensorstore as ts

        return self._ts_open(f"{name}/", ts.Context()).result()

    def _ts_full(self) -> Any:
        return _digest(self._ts_array("full.zarr").read().result())

    def _ts_region(self) -> Any:
        return _digest(self._ts_array("sharded.zarr")[REGION].read().result())

    def _ts_points(self) -> Any:
        return _digest(self._ts_array("sharded.zarr").vindex[points()].read().result())

    def _ts_point(self) -> Any:
        a = self._ts_array("blosc.zarr")
        return _digest(np.array([a[i, j].read().result() for i, j in single_points()],
                                dtype="f4"))


def _digest(values: np.ndarray) -> list[Any]:
    values = np.ascontiguousarray(values, dtype="<f4")
    return [list(values.shape), zlib.crc32(values.tobytes())]


def worker(name: str, endpoint: str) -> None:
    os.environ.update(AWS_ACCESS_KEY_ID=KEY, AWS_SECRET_ACCESS_KEY=SECRET,
                      AWS_EC2_METADATA_DISABLED="true")
    client = Client(name, endpoint)
    print("ready", flush=True)
    for line in sys.stdin:
        workload = line.strip()
        start = time.perf_counter()
        try:
            check = client.run(workload)
            answer = {"seconds": time.perf_counter() - start,
                      "check": zlib.crc32(json.dumps(check).encode())}
        except Exception as error:  # reported, and the table says so
            answer = {"error": f"{type(error).__name__}: {error}"[:300]}
        print(json.dumps(answer), flush=True)


# -- the parent -------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--delay", type=float, default=0.02, help="seconds added per request")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--libs", nargs="+", default=list(CLIENTS), choices=CLIENTS)
    parser.add_argument("--workloads", nargs="+", default=list(WORKLOADS), choices=WORKLOADS)
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--endpoint", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.endpoint)
        return
    os.environ.update(NO_PROXY="127.0.0.1", AWS_EC2_METADATA_DISABLED="true")
    import logging

    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    import s3fs

    s3fs.S3FileSystem(endpoint_url=f"http://{host}:{port}", key=KEY, secret=SECRET).mkdir(BUCKET)
    started = time.perf_counter()
    write_data(f"http://{host}:{port}")
    print(f"data written in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    proxy = Proxy((host, port), args.delay)
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    endpoint = f"http://127.0.0.1:{proxy.server_address[1]}"
    workers = {}
    for name in args.libs:
        log = open(os.path.join(tempfile.gettempdir(), f"latency-{name}.log"), "w")  # noqa: SIM115
        workers[name] = subprocess.Popen(
            [sys.executable, __file__, "--worker", name, "--endpoint", endpoint],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True)
        assert workers[name].stdout.readline().strip() == "ready"
    results: dict[tuple[str, str], list[dict[str, Any]]] = {}
    try:
        for round_ in range(args.rounds + 1):  # round 0: warm-up, not kept
            order = args.libs[round_ % len(args.libs):] + args.libs[: round_ % len(args.libs)]
            for workload in args.workloads:
                for name in order:
                    if name == "tensorstore" and workload == "consolidated":
                        continue
                    proxy.take_counts()
                    process = workers[name]
                    process.stdin.write(workload + "\n")
                    process.stdin.flush()
                    answer = json.loads(process.stdout.readline())
                    answer["requests"] = dict(proxy.take_counts())
                    if round_:
                        results.setdefault((workload, name), []).append(answer)
            print(f"round {round_} done", file=sys.stderr)
    finally:
        for process in workers.values():
            process.stdin.close()
            process.wait()
        proxy.shutdown()
        server.stop()
    report(results, args)


def report(results: dict[tuple[str, str], list[dict[str, Any]]], args: Any) -> None:
    print(f"\ndelay {args.delay * 1000:.0f} ms per request, median of {args.rounds} rounds\n")
    print("| workload | " + " | ".join(args.libs) + " |")
    print("| --- |" + " ---: |" * len(args.libs))
    for workload in args.workloads:
        cells = []
        checks = set()
        for name in args.libs:
            runs = results.get((workload, name))
            if not runs:
                cells.append("n/a")
                continue
            if any("error" in r for r in runs):
                cells.append("error: " + next(r["error"] for r in runs if "error" in r))
                continue
            checks.add(runs[0]["check"])
            seconds = statistics.median(r["seconds"] for r in runs)
            requests = [sum(r["requests"].values()) for r in runs]
            kinds = runs[-1]["requests"]
            detail = ", ".join(f"{k} {v}" for k, v in sorted(kinds.items()))
            count = str(requests[0]) if len(set(requests)) == 1 else (
                f"{min(requests)}-{max(requests)}")
            cells.append(f"{seconds:.3f} s, {count} req ({detail})")
        agree = "" if len(checks) <= 1 else " **results differ**"
        print(f"| {workload}{agree} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
