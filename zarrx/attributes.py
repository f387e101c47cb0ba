"""User attributes of a node: a mapping whose every change is written through at once.

Every change is applied to the attributes as they are in the store when it is written, as
one atomic update of the node's document: setting or deleting some keys keeps the keys
other writers set meanwhile. Only :meth:`Attributes.put` replaces them all.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, MutableMapping
from typing import Any, Protocol

from zarrx.errors import MetadataError
from zarrx.metadata.json import dump_json


class _HasAttributes(Protocol):
    @property
    def metadata(self) -> Any: ...

    def _change_attributes(self, change: Callable[[dict[str, Any]], dict[str, Any]]) -> None: ...


class Attributes(MutableMapping[str, Any]):
    """``node.attrs``: reads come from the parsed metadata, writes rewrite the document."""

    def __init__(self, node: _HasAttributes) -> None:
        self._node = node

    def _current(self) -> dict[str, Any]:
        return self._node.metadata.attributes

    def __getitem__(self, key: str) -> Any:
        return self._current()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._current())

    def __len__(self) -> int:
        return len(self._current())

    def __setitem__(self, key: str, value: Any) -> None:
        self.update({key: value})

    def __delitem__(self, key: str) -> None:
        def drop(attrs: dict[str, Any]) -> dict[str, Any]:
            del attrs[key]  # KeyError when it is not there (now), as a dict says
            return attrs

        self._node._change_attributes(drop)

    def update(self, other: Any = (), /, **kwargs: Any) -> None:  # type: ignore[override]
        """Set several keys with one metadata write, keeping every other key."""
        changes = _checked(dict(other, **kwargs))
        self._node._change_attributes(lambda attrs: {**attrs, **changes})

    def put(self, attributes: Mapping[str, Any]) -> None:
        """Replace all attributes with ``attributes``."""
        new = _checked(dict(attributes))
        self._node._change_attributes(lambda attrs: dict(new))

    def asdict(self) -> dict[str, Any]:
        return dict(self._current())

    def __repr__(self) -> str:
        return f"Attributes({self._current()!r})"


def _checked(attrs: dict[str, Any]) -> dict[str, Any]:
    """``attrs``, once its names are strings and its values JSON."""
    for key in attrs:
        if not isinstance(key, str):
            raise MetadataError(f"attribute names must be strings, got {key!r}")
    try:
        dump_json(attrs)
    except (TypeError, ValueError) as e:
        raise MetadataError(f"attributes must be JSON-serialisable: {e}") from None
    return attrs
