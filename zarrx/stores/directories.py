"""Empty directories left on a local file system by clients that think in objects.

obstore's ``LocalStore`` and zarr-python's ``LocalStore`` write ``a/b/c`` as a file in
directories they create, and leave those directories behind when the key is erased. An
empty directory is no key, but it would be listed as a prefix and keep its name from
becoming a key (a file cannot be made where a directory is). The stores that wrap them
remove what an erase left empty, as zarrx's own ``LocalStore`` does.
"""

from __future__ import annotations

import os
from collections.abc import Iterable


def prune_empty_directories(root: str, erased: Iterable[str]) -> None:
    """Remove the directories below ``root`` that erasing the keys ``erased`` left empty,
    from the deepest up; never ``root`` itself, never a directory that holds anything."""
    parents = {key.rpartition("/")[0] for key in erased if "/" in key}
    for directory in sorted(parents, key=lambda d: -d.count("/")):
        while directory:
            try:
                os.rmdir(os.path.join(root, directory))  # only ever succeeds when empty
            except OSError:
                break
            directory = directory.rpartition("/")[0]
