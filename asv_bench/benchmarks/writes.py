"""Full writes (encode + store) into a fresh temporary directory, chunked and sharded."""

from __future__ import annotations

import shutil
import tempfile

from .common import create, make_data


class FullWrite:
    """``a[...] = data``, overwriting every chunk of an existing array each time."""

    params = (("raw", "lz4", "zstd"), (False, True))
    param_names = ("codec", "sharded")

    tmp: str | None = None

    def setup(self, codec: str, sharded: bool) -> None:
        if codec != "lz4" and sharded:
            raise NotImplementedError  # asv skips it: sharding is measured with lz4 only
        self.tmp = tempfile.mkdtemp(prefix="zarrx-asv-")
        self.array = create(f"{self.tmp}/w.zarr", codec, sharded=sharded)
        self.data = make_data()
        self.array[...] = self.data  # warm: codecs loaded, chunks exist (steady overwrite)

    def teardown(self, codec: str, sharded: bool) -> None:
        if self.tmp is not None:  # asv calls teardown after a skipped setup too
            shutil.rmtree(self.tmp, ignore_errors=True)

    def time_full_write(self, codec: str, sharded: bool) -> None:
        self.array[...] = self.data
