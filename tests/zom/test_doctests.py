"""The examples in the docstrings of zarrx.zom and of the command's modules run."""

import doctest
import importlib

import pytest

MODULES = [
    "zarrx.zom", "zarrx.zom.model", "zarrx.zom.frozen", "zarrx.zom.schema",
    "zarrx.zom.compare", "zarrx.progress", "zarrx.cli.convert",
]


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0, f"{name} has no examples"
    assert result.failed == 0
