"""The test publishers of bindings.md §3 as the Ditto peer serves them: a subscribe to a source of items.

Streaming (``tck/NAME/things/twin/streaming/subscribeForPersistedEvents``): an
item is a twin event whose ``revision`` (and ``value``) is the integer.

- ``tck/range``: revisions ``fromHistoricalRevision`` S .. ``toHistoricalRevision``
  T in order, then ``complete`` (T < S: none, then ``complete``);
- ``tck/infinite``: revisions S, S+1, ... without end (T is ignored);
- ``tck/error``: revisions S .. T (``after`` = T-S+1 items; none without T), then ``failed``.

S defaults to 0; without T a ``tck/range`` or ``tck/error`` holds no item (the
parameter default count 0: SPEC.md decision DITTO-k).  A negative S or a T <= 0
(relative to the latest revision in Ditto's schema, which a test publisher does not
have), any other entity, a policy, or timestamps without revisions: ``failed``
(400/404) after the first request (no terminal before it: DITTO-SUB-4).

Search (``_/_/things/twin/search/subscribe``): the filter ``eq(attributes/tck,N)``
selects the collection ``tck:thing-0`` .. ``tck:thing-(N-1)`` in Ditto's default
order ``sort(+thingId)``, which compares the thingIds as strings (``tck:thing-10``
before ``tck:thing-2``); ``sort(-thingId)`` reverses it; ``options`` ``size(n)``
(1..200, default 25) limits the page size (a page may hold fewer: a freedom);
``fields`` keeps only the named top-level fields; ``namespaces`` without ``tck``
selects none.  Demand counts pages; no page is empty.  Any other filter that is
RQL (``rql.py``) matches no thing: ``complete`` after the first request.  A filter
that is not RQL, or an option the peer does not take: ``failed`` (400) after the
first request.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from rsio_tck.bindings.ditto import ErrorInfo, SearchSubscribe, SubscribeForPersistedEvents
from rsio_tck.semantics.demand import UNBOUNDED

from . import rql

INFINITE = UNBOUNDED  # what ``available`` says for a publisher without end
DEFAULT_PAGE_SIZE = 25  # protocol-specification-things-search.md, Subscribe: size default 25, max 200
MAX_PAGE_SIZE = 200
MAX_COLLECTION = 10_000_000  # things one search may name (the kit's bound, not Ditto's)

_EQ_TCK = re.compile(r"\s*eq\(\s*attributes/tck\s*,\s*(\d{1,9})\s*\)\s*")
_SIZE = re.compile(r"size\(\s*(-?\d{1,9})\s*\)")
_SORT_BY_ID = re.compile(r"sort\(\s*([+-]?)thingId\s*\)")

NOT_FOUND = "things:thing.notfound"
BAD_QUERY = "thing-search:search.query.invalid"
BAD_RQL = "rql.expression.invalid"
BAD_OPTION = "thing-search:search.option.invalid"  # as Ditto 3.8.0 writes it (golden vector)
TEST_ERROR = "tck:publisher.failed"  # the error tck/error ends with


@dataclass(frozen=True, slots=True)
class End:
    """How a subscription ends: ``error`` None for ``complete``."""

    error: ErrorInfo | None = None


COMPLETE = End()


def failure(status: int, code: str, message: str) -> End:
    return End(ErrorInfo(status=status, error=code, message=message))


class Source:
    """The items (streaming) or pages (search) of one subscription, taken under demand."""

    def available(self) -> int:
        raise NotImplementedError

    def take(self, n: int) -> list[Any]:
        raise NotImplementedError

    def end(self) -> End | None:
        """How the subscription ends once nothing is available; None while more may come."""
        return None


class Failing(Source):
    """No item; the subscription fails (after the first request, as every terminal)."""

    def __init__(self, end: End) -> None:
        self.final = end

    def available(self) -> int:
        return 0

    def take(self, n: int) -> list[Any]:
        return []

    def end(self) -> End | None:
        return self.final


class Revisions(Source):
    """Twin events of revisions first, first+1, ... (``count`` None: without end), then ``final``."""

    def __init__(self, entity: str, first: int, count: int | None, final: End = COMPLETE) -> None:
        self.topic = f"tck/{entity}/things/twin/events/modified"
        self.next = first
        self.left = count
        self.final = final

    def available(self) -> int:
        return INFINITE if self.left is None else self.left

    def take(self, n: int) -> list[Any]:
        first = self.next
        self.next = first + n
        if self.left is not None:
            self.left -= n
        return [{"topic": self.topic, "path": "/attributes/counter", "value": r, "revision": r}
                for r in range(first, first + n)]

    def end(self) -> End | None:
        return self.final if self.left == 0 else None


def thing(index: int, total: int) -> dict[str, Any]:
    return {"thingId": f"tck:thing-{index}", "policyId": "tck:policy", "attributes": {"tck": total}}


def string_order(total: int) -> Iterator[int]:
    """0 .. total-1 in the string order of ``tck:thing-i`` (Ditto's default ``sort(+thingId)``): 0, then each
    number followed by every number its digits begin, depth first (1, 10, 100, ..., 11, ..., 2, 20, ...)."""
    if total <= 0:
        return

    def under(prefix: int) -> Iterator[int]:
        yield prefix
        for digit in range(10):
            number = prefix * 10 + digit
            if number >= total:
                return
            yield from under(number)

    yield 0
    for first in range(1, min(10, total)):
        yield from under(first)


def full_pages(size: int) -> int:
    return size


class Pages(Source):
    """The things tck:thing-0 .. tck:thing-(total-1) in pages of at most ``size`` (``page_size`` says how many
    each: the short-pages freedom), in ``order``; a page is one unit of demand."""

    def __init__(self, total: int, size: int, fields: tuple[str, ...] | None = None,
                 order: Iterator[int] | None = None, page_size: Callable[[int], int] = full_pages) -> None:
        self.total, self.size, self.fields = total, size, fields
        self.order = order if order is not None else string_order(total)
        self.page_size = page_size
        self.index = 0  # things taken
        self.back: list[int] = []  # things given back (a fault's), due first

    def available(self) -> int:
        return -(-(self.total - self.index) // self.size)

    def take(self, n: int) -> list[Any]:
        pages = []
        for _ in range(n):
            count = min(max(1, self.page_size(self.size)), self.size, self.total - self.index)
            things = [self.back.pop(0) if self.back else next(self.order) for _ in range(count)]
            pages.append(tuple(self._item(i) for i in things))
            self.index += count
        return pages

    def give_back(self, page: tuple[Any, ...]) -> None:
        """The things of ``page`` come again, first (a fault that sent them wrongly)."""
        self.back = [int(item["thingId"].rsplit("-", 1)[1]) for item in page] + self.back
        self.index -= len(page)

    def _item(self, index: int) -> dict[str, Any]:
        item = thing(index, self.total)
        return item if self.fields is None else {k: v for k, v in item.items() if k in self.fields}

    def end(self) -> End | None:
        return COMPLETE if self.index >= self.total else None


def streaming(subscribe: SubscribeForPersistedEvents) -> Source:
    """The source a streaming subscribe asks for."""
    target = subscribe.target
    if target.namespace != "tck" or target.group != "things":
        return Failing(failure(404, NOT_FOUND, f"no test publisher {target.namespace}:{target.entity_name} "
                                               f"({target.group}); the reference peer serves tck/range, "
                                               "tck/infinite and tck/error"))
    first = subscribe.from_revision if isinstance(subscribe.from_revision, int) else 0
    last = subscribe.to_revision if isinstance(subscribe.to_revision, int) else None
    if first < 0 or last is not None and last <= 0:
        return Failing(failure(400, "tck:revision.relative", "a revision relative to the latest one (negative, or a "
                                    "toHistoricalRevision of 0): a test publisher has no latest revision"))
    count = 0 if last is None else max(0, last - first + 1)  # without T: the parameter default, count 0
    name = target.entity_name
    if name == "infinite":
        return Revisions(name, first, None)
    if name == "range":
        return Revisions(name, first, count)
    if name == "error":
        return Revisions(name, first, count, failure(500, TEST_ERROR, "failed"))
    return Failing(failure(404, NOT_FOUND, f"no test publisher tck:{name}; the reference peer serves "
                                           "tck/range, tck/infinite and tck/error"))


def search(subscribe: SearchSubscribe, page_size: Callable[[int], int] = full_pages) -> Source:
    """The source a search subscribe asks for (``page_size``: how many things each page holds, at most size)."""
    text = subscribe.filter
    invalid = rql.check(text) if text is not None else None
    if invalid is not None:
        return Failing(failure(400, BAD_RQL, f"the filter {text!r} is not RQL: {invalid}"))
    match = _EQ_TCK.fullmatch(text or "")
    total = int(match[1]) if match is not None else 0  # any other valid filter matches no thing of the peer's
    if total > MAX_COLLECTION:
        return Failing(failure(400, BAD_QUERY, f"eq(attributes/tck,{total}): at most {MAX_COLLECTION} things"))
    size, descending = DEFAULT_PAGE_SIZE, False
    for option in _options(subscribe.options or ""):
        sized = _SIZE.fullmatch(option)
        by_id = _SORT_BY_ID.fullmatch(option)
        if sized is not None:
            size = int(sized[1])
            if not 1 <= size <= MAX_PAGE_SIZE:
                return Failing(failure(400, BAD_OPTION, f"size({size}): between 1 and {MAX_PAGE_SIZE}"))
        elif by_id is not None:
            descending = by_id[1] == "-"
        else:
            return Failing(failure(400, BAD_OPTION, f"option {option!r}: the reference peer takes size(n) "
                                                    "and sort(+thingId) or sort(-thingId)"))
    if subscribe.namespaces is not None and "tck" not in subscribe.namespaces:
        total = 0
    fields = None
    if subscribe.fields:
        fields = tuple(f.strip().split("/", 1)[0] for f in subscribe.fields.split(",") if f.strip())
    order = iter(sorted(range(total), key=lambda i: f"tck:thing-{i}", reverse=True)) if descending else None
    return Pages(total, size, fields, order, page_size)


def _options(text: str) -> list[str]:
    """Top-level comma-separated options (commas inside parentheses stay)."""
    out, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            out.append(text[start:i].strip())
            start = i + 1
    out.append(text[start:].strip())
    return [o for o in out if o]


__all__ = ["COMPLETE", "DEFAULT_PAGE_SIZE", "End", "Failing", "Pages", "Revisions", "Source", "failure", "search",
           "streaming", "string_order", "thing"]
