"""Shared helpers of the ZOM tests: the seed's documents and hierarchies written by zarr-python."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
import zarr

from zarrx.storage import LocalStore

DATA = Path(__file__).parent / "data"


def seed_text(name: str) -> str:
    """One of seed 004's JSON documents, verbatim: v3_example, v2_example, v3_schema,
    v2_schema."""
    return (DATA / f"seed_004_{name}.json").read_text()


def seed_json(name: str):
    return json.loads(seed_text(name))


def zarr_python_hierarchy(root: Path, zarr_format: int, *, consolidate: bool = False) -> Path:
    """A small hierarchy written by zarr-python 3: attributes at every level, a nested
    group, a float array with NaN fill and a partly written int array."""
    g = zarr.create_group(store=str(root), zarr_format=zarr_format,
                          attributes={"title": "survey", "version": 2})
    a = g.create_array("temperature", shape=(10, 12), chunks=(4, 5), dtype="<f8",
                       fill_value=np.nan, attributes={"units": "K"})
    a[:4, :5] = 21.5
    sub = g.create_group("labels", attributes={"kind": ["mask"]})
    b = sub.create_array("mask", shape=(7,), chunks=(3,), dtype="uint8", fill_value=0)
    b[:] = [1, 0, 1, 1, 0, 0, 1]
    sub.create_group("empty")
    if consolidate:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # zarr-python: v3 consolidation is unofficial
            zarr.consolidate_metadata(str(root))
    return root


class CountingStore(LocalStore):
    """A LocalStore that records every read and listing."""

    def __init__(self, root, read_only=False):
        super().__init__(root, read_only=read_only)
        self.calls = []

    def get(self, key, byte_range=None):
        self.calls.append(("get", key))
        return super().get(key, byte_range)

    def get_many(self, requests):
        self.calls.append(("get_many", tuple(k for k, _ in requests)))
        return [LocalStore.get(self, k, r) for k, r in requests]

    def list_dir(self, prefix):
        self.calls.append(("list_dir", prefix))
        return super().list_dir(prefix)

    def list_prefix(self, prefix):
        self.calls.append(("list_prefix", prefix))
        return super().list_prefix(prefix)


@pytest.fixture(params=[2, 3], ids=["v2", "v3"])
def zarr_format(request):
    return request.param
