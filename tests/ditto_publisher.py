"""TEST-ONLY: a minimal Ditto publisher over TCP lines, for the kit's own Ditto scenario tests.

Not the reference peer (that is ``reference_peer/ditto/``, another change): this
serves just the test publishers of bindings.md §3 (SPEC.md decision DITTO-i), on
both profiles, correctly, and uses the legal freedoms a target has, so the
scenarios are shown to pass under them: random subscriptionIds, its writes cut
into random chunks, ``complete`` right after the last item when the demand
allowed it, a ``failed`` answering a request on an unknown id (decision DITTO-e),
``failed`` with ``general:``-less protocol error codes, search results in Ditto's
default order (thingIds as strings), a made-up correlation-id on the ``created`` of a
subscribe that named none (decision DITTO-m).
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from rsio_tck.bindings.ditto import (
    SEARCH_PROTOCOL_ERROR,
    STREAMING_PROTOCOL_ERROR,
    ErrorInfo,
    LineDecoder,
    SearchCancel,
    SearchComplete,
    SearchCreated,
    SearchFailed,
    SearchNext,
    SearchRequest,
    SearchSubscribe,
    StreamingCancel,
    StreamingComplete,
    StreamingCreated,
    StreamingFailed,
    StreamingNext,
    StreamingRequest,
    SubscribeForPersistedEvents,
    encode_line,
)
from rsio_tck.errors import ProtocolViolation

UNBOUNDED = 2**63 - 1
_EQ = re.compile(r"eq\(attributes/tck,(\d+)\)")
_SIZE = re.compile(r"size\((-?\d+)\)")


@dataclass
class Sub:
    sid: str
    subscribe: Any
    items: list[Any] | None  # None: without end (tck/infinite)
    first: int = 0
    sent: int = 0
    demand: int = 0
    requested: bool = False
    end: ErrorInfo | None = None  # failed instead of complete
    refuse: ErrorInfo | None = None  # failed after the first request
    done: bool = False
    headers: dict[str, Any] = field(default_factory=dict)


def _source(msg: Any) -> tuple[list[Any] | None, int, ErrorInfo | None, ErrorInfo | None]:
    """(items or None, first revision, end error, refusal) for a subscribe."""
    if isinstance(msg, SearchSubscribe):
        text = msg.filter or ""
        match = _EQ.fullmatch(text)
        size_match = _SIZE.search(msg.options or "")
        size = int(size_match[1]) if size_match else 25
        # Not RQL (this publisher's rough test: brackets that do not balance), or a size out of range: refused.
        if text.count("(") != text.count(")") or text.count('"') % 2 or not 1 <= size <= 200:
            return [], 0, None, ErrorInfo(status=400, error="rql.expression.invalid", message="bad query")
        total = int(match[1]) if match and (msg.namespaces is None or "tck" in msg.namespaces) else 0
        ids = sorted(f"tck:thing-{i}" for i in range(total))  # Ditto's default sort(+thingId): strings
        things = [{"thingId": thing, "attributes": {"tck": total}} for thing in ids]
        return [things[i:i + size] for i in range(0, total, size)], 0, None, None
    target = msg.target
    first = msg.from_revision or 0
    last = msg.to_revision
    if target.namespace == "tck" and target.entity_name == "infinite":
        return None, first, None, None
    if target.namespace == "tck" and target.entity_name in ("range", "error") and first >= 0 \
            and (last is None or last >= 1):
        end = ErrorInfo(status=500, error="tck:publisher.failed", message="boom") \
            if target.entity_name == "error" else None
        return list(range(first, last + 1)) if last is not None else [], first, end, None  # no last: count 0
    return [], 0, None, ErrorInfo(status=404, error="things:thing.notfound", message="no such publisher")


# Faults the kit's own tests switch on to show the scenarios catch them: fault -> the rule it breaks.
FAULTS = {
    "extra-next": "DITTO-DEM-1",  # one next beyond the demand of every request
    "no-correlation-id": "DITTO-SUB-1",  # created without the subscribe's correlation-id
    "early-end": "DITTO-SUB-4",  # a refused subscribe fails right after created, before any request
    "demand-error-status": "DITTO-DEM-2",  # demand <= 0 answered with status 500
    "big-pages": "DITTO-SEARCH-6",  # search pages one item larger than size(n)
    "skip-revision": "DITTO-TCK-1",  # tck/range skips its second revision
}


class Publisher:
    def __init__(self, writer: asyncio.StreamWriter, rng: random.Random, faults: frozenset[str] = frozenset()) -> None:
        self.writer, self.rng, self.faults = writer, rng, faults
        self.subs: dict[str, Sub] = {}
        self.out = bytearray()

    def send(self, message: Any) -> None:
        self.out += encode_line(message)

    async def flush(self) -> None:
        data, self.out = bytes(self.out), bytearray()
        while data:
            cut = self.rng.randint(1, max(1, len(data)))
            self.writer.write(data[:cut])
            data = data[cut:]
            await self.writer.drain()

    def handle(self, msg: Any) -> None:
        if isinstance(msg, (SubscribeForPersistedEvents, SearchSubscribe)):
            sid = f"{self.rng.randrange(10**6)}-{len(self.subs)}"
            items, first, end, refuse = _source(msg)
            cid = msg.correlation_id if msg.correlation_id is not None else f"made-up-{sid}"
            headers = {"correlation-id": cid}
            if "big-pages" in self.faults and items:
                flat = [thing for page in items for thing in page]
                size = len(items[0]) + 1
                items = [flat[i:i + size] for i in range(0, len(flat), size)]
            if "skip-revision" in self.faults and items is not None and len(items) > 2:
                items = [items[0], *items[2:], items[-1] + 1]
            sub = Sub(sid, msg, items, first, end=end, refuse=refuse, headers=headers)
            self.subs[sid] = sub
            if isinstance(msg, SearchSubscribe):
                self.send(SearchCreated(headers=headers if "no-correlation-id" not in self.faults else {},
                                        subscription_id=sid))
            else:
                self.send(StreamingCreated(target=msg.target, subscription_id=sid,
                                           headers=headers if "no-correlation-id" not in self.faults else {}))
            if "early-end" in self.faults and refuse is not None:
                self._end(sub, refuse)
        elif isinstance(msg, (StreamingRequest, SearchRequest)):
            sub = self.subs.get(msg.subscription_id)
            if sub is None:
                self._failed_unknown(msg)
                return
            if sub.done:
                return
            sub.requested = True
            if msg.demand <= 0:
                code = SEARCH_PROTOCOL_ERROR if isinstance(msg, SearchRequest) else STREAMING_PROTOCOL_ERROR
                status = 500 if "demand-error-status" in self.faults else 400
                self._end(sub, ErrorInfo(status=status, error=code, message="demand must be positive (rule 3.9)"))
                return
            sub.demand = min(sub.demand + msg.demand + ("extra-next" in self.faults), UNBOUNDED)
            self._serve(sub)
        elif isinstance(msg, (StreamingCancel, SearchCancel)):
            sub = self.subs.get(msg.subscription_id)
            if sub is not None and not sub.done:
                sub.done = True
                if self.rng.random() < 0.5 and sub.demand > sub.sent and sub.items is None:
                    self._next(sub)  # one event in flight after the cancel, within demand (DITTO-CAN-1)

    def _failed_unknown(self, msg: Any) -> None:
        error = ErrorInfo(status=404, error="subscription.notfound", message="no such subscription")
        if isinstance(msg, SearchRequest):
            self.send(SearchFailed(subscription_id=msg.subscription_id, error=error))
        else:
            self.send(StreamingFailed(target=msg.target, subscription_id=msg.subscription_id, error=error))

    def _serve(self, sub: Sub) -> None:
        if sub.refuse is not None:
            self._end(sub, sub.refuse)
            return
        while sub.demand > 0 and (sub.items is None or sub.sent < len(sub.items)) and sub.sent < 10_000:
            self._next(sub)
        if sub.items is not None and sub.sent >= len(sub.items):
            self._end(sub, sub.end)

    def _next(self, sub: Sub) -> None:
        msg = sub.subscribe
        if sub.items is None:
            value: Any = sub.first + sub.sent
        else:
            value = sub.items[sub.sent]
        sub.sent += 1
        if sub.demand < UNBOUNDED:
            sub.demand -= 1
        if isinstance(msg, SearchSubscribe):
            self.send(SearchNext(subscription_id=sub.sid, items=tuple(value), headers=sub.headers))
        else:
            item = {"topic": f"tck/{msg.target.entity_name}/things/twin/events/modified", "path": "/attributes/counter",
                    "value": value, "revision": value}
            self.send(StreamingNext(target=msg.target, subscription_id=sub.sid, item=item, headers=sub.headers))

    def _end(self, sub: Sub, error: ErrorInfo | None) -> None:
        sub.done = True
        msg = sub.subscribe
        if isinstance(msg, SearchSubscribe):
            self.send(SearchComplete(subscription_id=sub.sid) if error is None
                      else SearchFailed(subscription_id=sub.sid, error=error))
        else:
            self.send(StreamingComplete(target=msg.target, subscription_id=sub.sid) if error is None
                      else StreamingFailed(target=msg.target, subscription_id=sub.sid, error=error))


async def _serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, seed: int,
                 faults: frozenset[str]) -> None:
    publisher = Publisher(writer, random.Random(seed), faults)
    decoder = LineDecoder()
    try:
        while True:
            data = await asyncio.wait_for(reader.read(65536), 30)
            if not data:
                break
            try:
                messages = decoder.feed(data)
            except ProtocolViolation:
                break
            for message in messages:
                publisher.handle(message)
            await publisher.flush()
    except (TimeoutError, ConnectionError):
        pass
    finally:
        writer.close()
        with contextlib.suppress(ConnectionError, OSError):
            await writer.wait_closed()


@contextlib.asynccontextmanager
async def running_publisher(seed: int = 17, faults: frozenset[str] = frozenset()) -> AsyncIterator[int]:
    """A loopback Ditto test publisher (with ``faults`` of ``FAULTS`` switched on); yields its port."""
    connections = iter(range(10**9))
    server = await asyncio.start_server(lambda r, w: _serve(r, w, seed + next(connections), faults), "127.0.0.1", 0)
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        server.close()
        await server.wait_closed()
