"""The configuration example at the top of each codec module runs (STYLE.md practice 15)."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["bytes", "transpose", "gzip", "zstd", "blosc", "crc32c", "packbits", "reshape",
           "bitround", "numcodecs_compat", "cast_value", "scale_offset", "zfp"]


@pytest.mark.parametrize("name", MODULES)
def test_module_header_example_runs(name: str) -> None:
    module = importlib.import_module(f"zarrx.codecs.{name}")
    doc = module.__doc__ or ""
    for needed in ("Spec: http", "v3 name:", "v2 id:", "Draft URI:", "Known incompatibilities"):
        assert needed in doc, f"zarrx.codecs.{name} header lacks {needed!r}"
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 2
    assert result.failed == 0
