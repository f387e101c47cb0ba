"""Import time: ``import zarrx`` must stay cheap (no entry-point scan, no codec imports)."""

from __future__ import annotations


def timeraw_import_zarrx() -> str:
    """asv runs the returned code in a fresh interpreter each time."""
    return "import zarrx"


def timeraw_import_and_open() -> tuple[str, str]:
    """Import plus the first array open, which loads the registry lazily."""
    setup = (
        "import tempfile, numpy, zarrx\n"
        "p = tempfile.mkdtemp() + '/a.zarr'\n"
        "zarrx.create_array(p, shape=(10,), dtype='float32', chunks=(5,))\n"
    )
    # setup runs in the same fresh process: re-import cost is excluded, lazy loads are not.
    return "zarrx.open_array(p)", setup
