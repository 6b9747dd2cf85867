"""A bounded least-recently-used memory, keyed by a node's encoding, for emitter and verifier."""

from __future__ import annotations

from collections import OrderedDict
from typing import Generic, TypeVar

import msgspec

Value = TypeVar("Value")


def node_key(node: msgspec.Struct) -> bytes | None:
    """The node's JSON encoding, or None when it holds something msgspec cannot encode.

    Not the node itself: `==` takes True for 1 and 1.0 for 1, which are written differently."""
    try:
        return msgspec.json.encode(node)
    except (TypeError, msgspec.EncodeError):
        return None


class Memo(Generic[Value]):
    """At most `limit` entries; the least recently used one goes first."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._items: OrderedDict[object, Value] = OrderedDict()

    def get(self, key: object) -> Value | None:
        value = self._items.get(key)
        if value is not None:
            self._items.move_to_end(key)
        return value

    def put(self, key: object, value: Value) -> None:
        self._items[key] = value
        if len(self._items) > self.limit:
            self._items.popitem(last=False)

    def clear(self) -> None:
        self._items.clear()

    def __len__(self) -> int:
        return len(self._items)
