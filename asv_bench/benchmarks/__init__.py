"""asv suites for zarrx: reads, writes, slicing, sharding, point reads, hierarchy, import.

Sizes are small (8 MiB arrays) so ``asv run --python=same --quick`` finishes in minutes;
``bench/compare.py`` is the side-by-side run at full size against the peers.
"""
