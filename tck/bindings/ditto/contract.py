"""The test publishers' contract on Ditto (bindings.md §3; SPEC.md, decision DITTO-i).

``ContractWatch.of(subscribe)`` returns a watch for a subscribe that names a test
publisher (namespace ``tck`` on the streaming profile; the filter
``eq(attributes/tck,N)`` on search), else None.  The judge tells it each ``next``
and the end (``complete``, or ``failed`` with its error); each returns the
(rule, why) pairs it broke.  Streaming items are read by ``item_value``: a twin
event object with an integer ``revision``, or a bare integer.  Search items are
things whose ``thingId`` is ``tck:thing-i``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .messages import ErrorInfo, SearchNext, SearchSubscribe, StreamingNext, SubscribeForPersistedEvents

_EQ_TCK = re.compile(r"\s*eq\(\s*attributes/tck\s*,\s*(\d{1,9})\s*\)\s*")
PUBLISHERS = ("range", "infinite", "error")


def item_value(item: Any) -> int | None:
    """The integer a streaming test publisher's item holds: its ``revision`` (or the item itself)."""
    if isinstance(item, dict):
        item = item.get("revision")
    return item if type(item) is int else None


def thing_index(item: Any) -> int | None:
    """``i`` of a search item ``{"thingId": "tck:thing-i", ...}``."""
    thing = item.get("thingId") if isinstance(item, dict) else None
    if isinstance(thing, str) and thing.startswith("tck:thing-") and thing[10:].isdigit():
        return int(thing[10:])
    return None


@dataclass
class ContractWatch:
    kind: str  # range, infinite, error, unknown (streaming), search
    rule: str
    next_value: int
    last: int | None  # the last value due (None: without end)

    @classmethod
    def of(cls, subscribe: SubscribeForPersistedEvents | SearchSubscribe) -> ContractWatch | None:
        if isinstance(subscribe, SearchSubscribe):
            match = _EQ_TCK.fullmatch(subscribe.filter or "")
            if match is None:
                return None
            total = int(match[1])
            if subscribe.namespaces is not None and "tck" not in subscribe.namespaces:
                total = 0
            return cls("search", "DITTO-TCK-4", 0, total - 1)
        target = subscribe.target
        if target.namespace != "tck":
            return None
        first = subscribe.from_revision if isinstance(subscribe.from_revision, int) else 0
        last = subscribe.to_revision if isinstance(subscribe.to_revision, int) else None
        name = target.entity_name
        if target.group != "things" or name not in PUBLISHERS or (name == "range" and last is None):
            return cls("unknown", "DITTO-TCK-5", 0, None)
        rule = {"range": "DITTO-TCK-1", "infinite": "DITTO-TCK-2", "error": "DITTO-TCK-3"}[name]
        return cls(name, rule, first, None if name == "infinite" else (last if last is not None else first - 1))

    def next(self, msg: StreamingNext | SearchNext) -> list[tuple[str, str]]:
        if self.kind == "unknown":
            return [(self.rule, "next on a subscribe that names no test publisher")]
        values = ([thing_index(item) for item in msg.items] if isinstance(msg, SearchNext)
                  else [item_value(msg.item)])
        for value in values:
            due = self.next_value
            if self.last is not None and due > self.last:
                return [(self.rule, f"{self.kind}: an item after the last one due ({self.last})")]
            if value != due:
                return [(self.rule, f"{self.kind}: item {value!r} where {due} was due")]
            self.next_value += 1
        return []

    def end(self, error: ErrorInfo | None) -> list[tuple[str, str]]:
        if self.kind == "unknown":
            return [] if error is not None else [(self.rule, "complete on a subscribe that names no test publisher")]
        if self.kind == "infinite":
            return [(self.rule, f"tck/infinite ended ({'failed' if error else 'complete'})")]
        if self.kind == "search" and error is not None:
            return []  # options the target may refuse (size outside 1..200, decision DITTO-d)
        due = self.last is None or self.next_value > self.last
        if self.kind == "error":
            if error is None:
                return [(self.rule, "tck/error completed instead of failing")]
            return [] if due else [(self.rule, f"tck/error failed before item {self.last}")]
        if error is not None:
            return [(self.rule, f"{self.kind} failed ({error.status} {error.error})")]
        return [] if due else [(self.rule, f"{self.kind} completed before item {self.last}")]
