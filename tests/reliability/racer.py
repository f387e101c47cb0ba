"""A writer process of the store race tests, run as ``python racer.py ROOT WRITER WRITERS
COUNT KEY...``: it stands for another machine writing a :class:`~zarrx.stores.local.
LocalStore` at ROOT. It prints ``ready``, waits for a line on stdin (the test releases
every writer at once), then writes COUNT versions of each KEY — the versions ``WRITER``,
``WRITER + WRITERS``, ... of :func:`zarrx.testing.rounds.version_value`, in turn by
``set``, ``set_parts`` and ``atomic_set_parts`` — and prints ``done``."""

from __future__ import annotations

import sys

from zarrx.stores.local import LocalStore
from zarrx.testing.rounds import version_value


def main(root: str, writer: int, writers: int, count: int, keys: list[str]) -> None:
    store = LocalStore(root)
    print("ready", flush=True)
    sys.stdin.readline()
    for i in range(count):
        version = writer + i * writers
        value = version_value(version)
        for key in keys:
            if i % 3 == 0:
                store.set(key, value)
            elif i % 3 == 1:
                store.set_parts(key, [value[:100], memoryview(value)[100:]])
            else:
                store.atomic_set_parts(key, [value])
    print("done", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5:])
