"""Coalescing a batch of reads: the ranges of one value that lie close together are read
as one request, and each caller gets its own part back.

On a store where each request costs a round trip (S3 answers in tens of milliseconds,
whatever the size), reading the inner chunks of a shard that a region covers — usually
neighbours in the shard — as one ranged GET instead of one each saves requests and time.
Ranges are merged when the gap between them is at most ``gap`` bytes (those bytes are read
and dropped) and the merged request stays within ``max_size``. Identical requests are
read once. Suffix ranges and whole values are read as asked.

>>> fetches, answer = coalesced([("k", ByteRange(0, 4)), ("k", ByteRange(6, 2)),
...                              ("j", None), ("k", ByteRange(0, 4))], gap=2)
>>> fetches
[('j', None), ('k', ByteRange(start=0, length=8))]
>>> answer([b"j", b"01234567"])
[b'0123', b'67', b'j', b'0123']
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from zarrx.abc.store import ByteRange

Request = tuple[str, ByteRange | None]
#: The gap the high-latency stores merge across: reading 64 KiB more costs far less than a
#: round trip (S3 streams megabytes in the ~20 ms of one).
COALESCE_GAP = 64 * 1024
#: What an object store (S3, GCS, HTTP) streams in the time of one more request: a round
#: trip of ~20 ms at ~200 MB/s (:attr:`zarrx.abc.store.Store.read_latency_bytes`).
LATENCY_BYTES = 4 * 2**20
#: The most bytes one merged request reads: bigger reads run as separate requests, in
#: parallel.
MAX_SIZE = 16 * 2**20


def coalesced(
    requests: Sequence[Request], gap: int, max_size: int = MAX_SIZE
) -> tuple[list[Request], Callable[[Sequence[bytes | None]], list[bytes | None]]]:
    """The requests to make for ``requests``, and a function turning their answers (in
    the same order) into the answers of ``requests``."""
    fetches: list[Request] = []
    index: dict[Request, int] = {}
    # each request: (its fetch, offset in the fetched value or None for all of it, length)
    parts: list[tuple[int, int | None, int]] = [(-1, None, 0)] * len(requests)
    bounded: dict[str, list[tuple[int, int, int]]] = {}  # key -> (start, stop, request)
    for i, (key, byte_range) in enumerate(requests):
        if byte_range is not None and byte_range.start >= 0 and byte_range.length:
            start = byte_range.start
            bounded.setdefault(key, []).append((start, start + byte_range.length, i))
            continue
        request = (key, byte_range)
        if request not in index:
            index[request] = len(fetches)
            fetches.append(request)
        parts[i] = (index[request], None, 0)
    for key, spans in bounded.items():
        for group in _groups(sorted(spans), gap, max_size):
            first, stop = group[0][0], max(span[1] for span in group)
            for start, end, i in group:
                parts[i] = (len(fetches), start - first, end - start)
            fetches.append((key, ByteRange(first, stop - first)))

    def answer(values: Sequence[bytes | None]) -> list[bytes | None]:
        out: list[bytes | None] = []
        for fetch, offset, length in parts:
            value = values[fetch]
            if value is None or offset is None or (offset == 0 and length == len(value)):
                out.append(value)
            else:
                out.append(value[offset : offset + length])
        return out

    return fetches, answer


def _groups(
    spans: list[tuple[int, int, int]], gap: int, max_size: int
) -> list[list[tuple[int, int, int]]]:
    """Sorted ``(start, stop, request)`` spans in runs read as one request each."""
    groups: list[list[tuple[int, int, int]]] = []
    stop = 0
    for span in spans:
        if groups and span[0] - stop <= gap and max(span[1], stop) - groups[-1][0][0] <= max_size:
            groups[-1].append(span)
            stop = max(stop, span[1])
        else:
            groups.append([span])
            stop = span[1]
    return groups
