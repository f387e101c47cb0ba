"""The examples in the headers of the data type, grid and codec modules of nullable values,
complex types and the rectilinear grid run (STYLE.md practice 15)."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = {
    "zarrx.data_types.complex": ("Spec: http", "v3 names:", "v2 dtype, draft URI: none"),
    "zarrx.data_types.optional": ("Spec:", "v3 names:", "v2 id, draft URI: none"),
    "zarrx.data_types.named": (),
    "zarrx.codecs.optional": ("Spec: http", "v3 name:", "v2 id:", "Draft URI:",
                              "Known incompatibilities"),
    "zarrx.chunk_grids.rectilinear": ("Spec: http", "v3 name:", "v2 id, draft URI: none"),
}


@pytest.mark.parametrize("name", sorted(MODULES))
def test_module_header_example_runs(name: str) -> None:
    module = importlib.import_module(name)
    doc = module.__doc__ or ""
    for needed in MODULES[name]:
        assert needed in doc, f"{name} header lacks {needed!r}"
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 2
    assert result.failed == 0
