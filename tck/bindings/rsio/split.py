"""Reassembly of split elements on the subscribing side (rsio-v0 section 6)."""

from __future__ import annotations


class ReassemblyLimitExceeded(Exception):
    """The element being joined grew past the subscriber's reassembly limit (SPLIT-5)."""

    def __init__(self, subscriber: int, size: int, limit: int, *, together: bool = False) -> None:
        super().__init__(
            f"split element on subscriber {subscriber} reached {size} bytes, over the reassembly limit {limit}"
        )
        self.subscriber = subscriber
        self.size = size
        self.limit = limit
        self.together = together  # the elements in progress together passed ``total_limit``, not this one alone


class SplitAssembler:
    """Joins ``part* lastPart`` per subscription, within ``limit`` bytes per element.

    One element per subscription can be in progress (SPLIT-2 forbids another
    element of the same stream before the last part), so the state is one
    buffer per subscriber Id.  The order checks belong to the stream table;
    this class only joins and bounds.  ``total_limit`` (optional) also bounds the
    bytes held for all elements in progress together.  The RS-IO endpoint and the
    scenario adapter both join with this class.
    """

    __slots__ = ("limit", "total_limit", "_parts", "_sizes", "_total")

    def __init__(self, limit: int, total_limit: int | None = None) -> None:
        self.limit = limit
        self.total_limit = total_limit
        self._parts: dict[int, list[bytes]] = {}
        self._sizes: dict[int, int] = {}
        self._total = 0  # bytes held for all elements in progress

    def add(self, subscriber: int, data: bytes, last: bool) -> bytes | None:
        """Add a part; returns the whole element after its last part, else None."""
        size = self._sizes.get(subscriber, 0) + len(data)
        if size > self.limit:
            self.drop(subscriber)
            raise ReassemblyLimitExceeded(subscriber, size, self.limit)
        if self.total_limit is not None and self._total + len(data) > self.total_limit:
            self.drop(subscriber)
            raise ReassemblyLimitExceeded(subscriber, size, self.total_limit, together=True)
        if last:
            parts = self._parts.pop(subscriber, None)
            self._total -= self._sizes.pop(subscriber, 0)
            return data if parts is None else b"".join([*parts, data])
        self._parts.setdefault(subscriber, []).append(data)
        self._sizes[subscriber] = size
        self._total += len(data)
        return None

    def drop(self, subscriber: int) -> None:
        """Forget a partial element (onError cut it short, or the stream ended)."""
        self._parts.pop(subscriber, None)
        self._total -= self._sizes.pop(subscriber, 0)

    @property
    def held(self) -> int:
        """Bytes held for all elements in progress together."""
        return self._total

    def holds(self, subscriber: int) -> bool:
        """Whether an element of ``subscriber`` is in progress (one part or more, empty ones too)."""
        return subscriber in self._parts

    def in_progress(self, subscriber: int) -> int:
        """Bytes held for the subscriber's element in progress."""
        return self._sizes.get(subscriber, 0)
