"""What a scenario connection's inboxes hold: ``Event``s, under the keys steps wait on.

A binding's scenario adapter turns each frame into ``(key, Event)`` pairs; ``KitSession`` sorts them
into one inbox per key, and the steps take them from there.  The keys are the connection itself
(``CONN``: hellos, goodbye, close), the target's own subscribes (``SUBSCRIBES``), and one per
subscription, ``("kit", n)`` for the kit's and ``("target", n)`` for the target's, as the adapter names them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

Key = tuple[str, int | None]
CONN: Key = ("conn", None)
SUBSCRIBES: Key = ("sub", None)


@dataclass(slots=True)
class Event:
    kind: str  # wire name; "onNext" for every delivered element; "close" for end of stream
    fields: dict[str, Any]
    index: int  # frame index in the connection (both directions)
    via: str = ""  # onNext, onNextPacked or split, for elements
    size: int = 0  # element bytes held (what the inbox's byte cap counts)
    frame: str = ""  # the wire name of the frame that carried it, where it differs from ``kind``

    @property
    def left(self) -> int:
        """The events this entry stands for in an inbox: one (an ``ElementBatch``, the elements it still holds)."""
        return 1


@dataclass(slots=True)
class ElementBatch(Event):
    """Several elements for one subscriber in one inbox entry: a frame that carries many (RS-IO's
    ``onNextPacked``), whose thousands of elements would otherwise cost an ``Event`` each.

    It stands for ``len(items) - at`` onNext events, in order: ``Inbox.pop`` hands them out one by one
    (``element_event``) and ``Inbox.take_elements`` takes them in bulk, so no step sees the difference.
    ``fields``/``size`` describe what is left (the next element; its bytes all told).  Element ``i``
    came in frame ``index + i * step`` (``step`` 0: one frame carried them all)."""

    items: list[bytes] = field(default_factory=list)
    at: int = 0
    step: int = 0

    @classmethod
    def of(cls, subscriber: int, items: list[bytes], index: int, via: str, step: int = 0) -> ElementBatch:
        return cls("onNext", {"subscriber": subscriber, "element": items[0]}, index, via, sum(map(len, items)),
                   "", items, 0, step)

    @property
    def left(self) -> int:
        return len(self.items) - self.at

    def element_event(self) -> Event:
        """Take the next element as an ``Event`` of its own (the caller accounts for its size)."""
        item = self.items[self.at]
        event = Event("onNext", {"subscriber": self.fields["subscriber"], "element": item},
                      self.index + self.at * self.step, self.via, len(item))
        self.take(1)
        return event

    def take(self, count: int) -> tuple[int, int]:
        """Take up to ``count`` elements at once: (how many, their bytes)."""
        start = self.at
        end = min(len(self.items), start + count)
        taken_bytes = sum(map(len, self.items[start:end]))
        self.at = end
        self.size -= taken_bytes
        if end < len(self.items):
            self.fields = {"subscriber": self.fields["subscriber"], "element": self.items[end]}
        return end - start, taken_bytes
