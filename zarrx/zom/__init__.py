"""Zarr Object Models (ZEP 6, seed 004): a hierarchy's structure as frozen data.

A ZOM describes a Zarr hierarchy without its data: groups with ``attributes`` and
``members``, arrays with their metadata and ``attributes``, for Zarr v3 or v2 (the 3.0
draft maps onto the v3 model). Use it to snapshot, compare, validate and create
hierarchies declaratively.

>>> import zarrx
>>> from zarrx.zom import ArraySpec, GroupSpec, diff
>>> spec = GroupSpec(attributes={"title": "demo"},
...                  members={"x": ArraySpec.new(shape=(4, 4), dtype="uint8", chunks=(2, 2))})
>>> group = spec.to_zarr(zarrx.storage.MemoryStore())
>>> GroupSpec.from_zarr(group) == spec
True
>>> [str(d) for d in diff(spec, spec.with_member("x", spec["x"].replace(shape=[4, 8])))]
['/x: shape (4, 4) != (4, 8)']
"""

from zarrx.zom import mapping, storage
from zarrx.zom.compare import MISSING, Difference, diff
from zarrx.zom.frozen import FrozenDict
from zarrx.zom.mapping import DIMENSIONS_ATTRIBUTE
from zarrx.zom.model import ArraySpec, GroupSpec, Operations, bind_operations, from_json
from zarrx.zom.schema import V2_ERRATA, json_schema, validate_json
from zarrx.zom.storage import from_zarr

# The model is plain data; what its methods do with stores, metadata and other specs is
# implemented in the modules above it, bound here (see zarrx.zom.model.Operations).
bind_operations(Operations(
    to_zarr=storage.to_zarr,
    from_zarr=storage.from_zarr,
    consolidated=storage.consolidated,
    node_spec=mapping.node_spec,
    array_spec=mapping.array_spec,
    to_v3=mapping.to_v3,
    to_v2=mapping.to_v2,
    diff=diff,
))

__all__ = [
    "DIMENSIONS_ATTRIBUTE",
    "MISSING",
    "V2_ERRATA",
    "ArraySpec",
    "Difference",
    "FrozenDict",
    "GroupSpec",
    "diff",
    "from_json",
    "from_zarr",
    "json_schema",
    "validate_json",
]
