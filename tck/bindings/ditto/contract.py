"""The test publishers' contract on Ditto (bindings.md §3; SPEC.md, decisions DITTO-i, DITTO-k, DITTO-l).

``ContractWatch.of(subscribe)`` returns a watch for a subscribe that names a test
publisher (namespace ``tck`` on the streaming profile; the filter
``eq(attributes/tck,N)`` on search), else None.  The judge tells it each ``next``
and the end (``complete``, or ``failed`` with its error); each returns the
(rule, why) pairs it broke.  Streaming items are read by ``item_value``: a twin
event object with an integer ``revision``, or a bare integer.  Search items are
things whose ``thingId`` is ``tck:thing-i``, due in the order the subscribe's
``sort`` option asks for: without one, Ditto's default ``sort(+thingId)``, which
orders the thingIds as strings (``tck:thing-10`` before ``tck:thing-2``:
``thing_order``); under another sort the things may come in any order, each once.
Only the union of the pages counts: a page may hold fewer things than ``size(n)``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from .messages import ErrorInfo, SearchNext, SearchSubscribe, StreamingNext, SubscribeForPersistedEvents

_EQ_TCK = re.compile(r"\s*eq\(\s*attributes/tck\s*,\s*(\d{1,9})\s*\)\s*")
_SORT = re.compile(r"(?:^|[,\s])sort\(([^()]*)\)")
PUBLISHERS = ("range", "infinite", "error")
REVERSED_LIMIT = 1_000_000  # things of a sort(-thingId) collection the watch orders; beyond it, any order


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


def thing_order(total: int) -> Iterator[int]:
    """0 .. total-1 in the string order of their thingIds, Ditto's default ``sort(+thingId)``:
    0, 1, 10, 100, ..., 11, ..., 2, 20, ... (lazily: the collection may be large)."""
    if total <= 0:
        return
    yield 0
    last, cur = total - 1, 1
    for _ in range(last):
        yield cur
        if cur * 10 <= last:
            cur *= 10
        else:
            if cur >= last:
                cur //= 10
            cur += 1
            while cur % 10 == 0:
                cur //= 10


def thing_rank(index: int, total: int) -> int:
    """The position of ``tck:thing-index`` in the string order of the collection of ``total`` things."""
    text = str(index)
    if text == "0":
        return 0
    rank, last = 0, total - 1
    for length in range(1, len(str(last)) + 1):
        low = 0 if length == 1 else 10 ** (length - 1)
        high = min(10 ** length - 1, last)
        if high < low:
            continue
        if length <= len(text):  # a shorter thingId is smaller if its digits are, or if it is a prefix
            bound = int(text[:length])
            rank += max(0, min(high, bound - 1) - low + 1)
            rank += length < len(text) and low <= bound <= high
        else:  # a longer one is smaller only if its first digits are
            bound = int(text) * 10 ** (length - len(text))
            rank += max(0, min(high, bound - 1) - low + 1)
    return rank


def rql_malformed(text: str | None) -> str | None:
    """Why a search filter cannot be RQL whatever the grammar's details, or None: a string not closed, or
    parentheses that do not balance.  Deliberately this little: the kit holds no RQL grammar of its own
    (the pages link it), so the judge faults only what no reading of it accepts (decision DITTO-l)."""
    if not text or not text.strip():
        return None  # no filter: every thing (an empty one too, for all the kit knows)
    depth, quote, escaped = 0, "", False
    for ch in text:
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth < 0:
                return "a ')' closing nothing"
    if quote:
        return "a string not closed"
    return f"{depth} '(' not closed" if depth else None


def search_order(options: str | None) -> str:
    """How the subscribe's options sort the things: ``+`` (by thingId as strings: also Ditto's default),
    ``-`` (the reverse), or ``any`` (another property: every thing of the collection has the same ones)."""
    match = _SORT.search(options or "")
    if match is None:
        return "+"
    keys = [key.strip() for key in match[1].split(",") if key.strip()]
    if keys in (["+thingId"], ["thingId"]):
        return "+"
    if keys == ["-thingId"]:
        return "-"
    return "any"


@dataclass
class ContractWatch:
    kind: str  # range, infinite, error, unknown (streaming), search, invalid (a search filter that is not RQL)
    rule: str
    next_value: int  # streaming: the next revision due; search: things received so far
    last: int | None  # the last value due (None: without end); search: the number of things - 1
    order: Iterator[int] | None = None  # search: the thing indexes due, in order (None: any order)
    seen: set[int] = field(default_factory=set)  # search in any order: the things received

    @classmethod
    def of(cls, subscribe: SubscribeForPersistedEvents | SearchSubscribe) -> ContractWatch | None:
        if isinstance(subscribe, SearchSubscribe):
            malformed = rql_malformed(subscribe.filter)
            if malformed is not None:
                return cls("invalid", "DITTO-SEARCH-7", 0, None)
            match = _EQ_TCK.fullmatch(subscribe.filter or "")
            if match is None:
                return None
            total = int(match[1])
            if subscribe.namespaces is not None and "tck" not in subscribe.namespaces:
                total = 0
            sort = search_order(subscribe.options)
            order: Iterator[int] | None = thing_order(total)
            if sort == "-":
                order = iter(sorted(range(total), key=str, reverse=True)) if total <= REVERSED_LIMIT else None
            elif sort == "any":
                order = None
            return cls("search", "DITTO-TCK-4", 0, total - 1, order)
        target = subscribe.target
        if target.namespace != "tck":
            return None
        first = subscribe.from_revision if isinstance(subscribe.from_revision, int) else 0
        last = subscribe.to_revision if isinstance(subscribe.to_revision, int) else None
        if first < 0 or last is not None and last <= 0:
            return None  # relative to the latest revision (the schema): no range the kit can name (DITTO-k)
        name = target.entity_name
        if target.group != "things" or name not in PUBLISHERS:
            return cls("unknown", "DITTO-TCK-5", 0, None)
        rule = {"range": "DITTO-TCK-1", "infinite": "DITTO-TCK-2", "error": "DITTO-TCK-3"}[name]
        # Without toHistoricalRevision a range or error holds no item (the parameter default count 0: DITTO-k).
        return cls(name, rule, first, None if name == "infinite" else (last if last is not None else first - 1))

    def next(self, msg: StreamingNext | SearchNext) -> list[tuple[str, str]]:
        if self.kind == "unknown":
            return [(self.rule, "next on a subscribe that names no test publisher")]
        if self.kind == "invalid":
            return [(self.rule, "a page for a search whose filter is not RQL (failed with a 4xx status is due)")]
        if isinstance(msg, SearchNext):
            return self._page([thing_index(item) for item in msg.items])
        value = item_value(msg.item)
        due = self.next_value
        if self.last is not None and due > self.last:
            return [(self.rule, f"{self.kind}: an item after the last one due ({self.last})")]
        if value != due:
            return [(self.rule, f"{self.kind}: item {value!r} where {due} was due")]
        self.next_value += 1
        return []

    def _page(self, values: list[int | None]) -> list[tuple[str, str]]:
        total = (self.last if self.last is not None else -1) + 1
        for value in values:
            if self.next_value >= total:
                return [(self.rule, f"search: a thing after all {total} of the collection")]
            if self.order is not None:
                due = next(self.order)
                if value != due:
                    return [(self.rule, f"search: thing {_thing(value)} where tck:thing-{due} was due "
                                        "(the things come sorted by thingId as strings, Ditto's default order)")]
            elif value is None or not 0 <= value < total or value in self.seen:
                return [(self.rule, f"search: thing {_thing(value)} is not in the collection or came before")]
            else:
                self.seen.add(value)
            self.next_value += 1
        return []

    def end(self, error: ErrorInfo | None) -> list[tuple[str, str]]:
        if self.kind == "unknown":
            return [] if error is not None else [(self.rule, "complete on a subscribe that names no test publisher")]
        if self.kind == "infinite":
            return [(self.rule, f"tck/infinite ended ({'failed' if error else 'complete'})")]
        if self.kind == "invalid":
            if error is None:
                return [(self.rule, "complete for a search whose filter is not RQL (failed with a 4xx status is due)")]
            status = error.status
            return [] if type(status) is int and 400 <= status <= 499 else [
                (self.rule, f"failed with status {status!r} for a filter that is not RQL: the client's mistake, a 4xx")]
        if self.kind == "search":
            if error is not None:
                return []  # options the target may refuse (size outside 1..200, decision DITTO-d)
            total = (self.last if self.last is not None else -1) + 1
            return [] if self.next_value >= total else [
                (self.rule, f"search completed after {self.next_value} of its {total} things")]
        due = self.last is None or self.next_value > self.last
        if self.kind == "error":
            if error is None:
                return [(self.rule, "tck/error completed instead of failing")]
            return [] if due else [(self.rule, f"tck/error failed before item {self.last}")]
        if error is not None:
            return [(self.rule, f"{self.kind} failed ({error.status} {error.error})")]
        return [] if due else [(self.rule, f"{self.kind} completed before item {self.last}")]


def _thing(value: int | None) -> str:
    return f"tck:thing-{value}" if value is not None else "(no tck:thing-i thingId)"
