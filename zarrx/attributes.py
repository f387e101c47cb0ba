"""User attributes of a node: a mapping whose every change is written through at once."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, MutableMapping
from typing import Any, Protocol

from zarrx.errors import MetadataError
from zarrx.metadata.json import dump_json


class _HasAttributes(Protocol):
    @property
    def metadata(self) -> Any: ...

    def _replace_attributes(self, attributes: dict[str, Any]) -> None: ...


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
        attrs = dict(self._current())
        del attrs[key]
        self._node._replace_attributes(attrs)

    def update(self, other: Any = (), /, **kwargs: Any) -> None:
        """Apply several changes with one metadata write."""
        attrs = dict(self._current())
        attrs.update(dict(other) if isinstance(other, Mapping) else other, **kwargs)
        self.put(attrs)

    def put(self, attributes: Mapping[str, Any]) -> None:
        """Replace all attributes with ``attributes``."""
        attrs = dict(attributes)
        for key in attrs:
            if not isinstance(key, str):
                raise MetadataError(f"attribute names must be strings, got {key!r}")
        try:
            dump_json(attrs)
        except (TypeError, ValueError) as e:
            raise MetadataError(f"attributes must be JSON-serialisable: {e}") from None
        self._node._replace_attributes(attrs)

    def asdict(self) -> dict[str, Any]:
        return dict(self._current())

    def __repr__(self) -> str:
        return f"Attributes({self._current()!r})"
