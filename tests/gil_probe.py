"""A probe for whether a call releases the GIL, for the tests of kernels and codecs."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable


def ticks_during(work: Callable[[], object], switch_interval: float = 5.0) -> int:
    """How often another Python thread ran while ``work()`` did.

    The switch interval is set far above the call's duration, so a call that holds the
    GIL lets the counter thread tick at most at its edges; one that releases it lets the
    counter (which yields through ``time.sleep(0)``) tick along. No timing is asserted.
    """
    counter = [0]
    stop = threading.Event()

    def count() -> None:
        while not stop.is_set():
            counter[0] += 1
            time.sleep(0)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(switch_interval)
    thread = threading.Thread(target=count, daemon=True)
    thread.start()
    try:
        while counter[0] == 0:
            time.sleep(0.001)
        before = counter[0]
        work()
        return counter[0] - before
    finally:
        stop.set()
        thread.join()
        sys.setswitchinterval(interval)
