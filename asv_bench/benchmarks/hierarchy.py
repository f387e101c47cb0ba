"""Opening a group and listing its members: metadata parsing and store listing."""

from __future__ import annotations

import os

import zarrx

N_MEMBERS = 200


class Hierarchy:
    """A group holding many small arrays, as catalogues of variables do."""

    def setup_cache(self) -> str:
        path = os.path.abspath("tree.zarr")
        group = zarrx.open_group(path, mode="w")
        for i in range(N_MEMBERS):
            group.create_array(f"array_{i:04d}", shape=(100, 100), chunks=(10, 10),
                               dtype="float32", attributes={"index": i})
        return path

    def setup(self, path: str) -> None:
        zarrx.open_group(path, mode="r")["array_0000"]  # load the registry before timing

    def time_open_and_list(self, path: str) -> None:
        zarrx.open_group(path, mode="r").members()

    def time_open_member(self, path: str) -> None:
        zarrx.open_group(path, mode="r")["array_0100"]

    def track_member_count(self, path: str) -> int:
        return len(zarrx.open_group(path, mode="r").members())
