"""A test client for the Ditto reference peer, and a small judge of the Ditto rules a publisher can break.

The client speaks TCP lines with the kit's own codec; every message either way
goes through ``RuleCheck``, which records the rule IDs of DITTO.md the peer
broke (``broken``).  ``barrier()`` sends a control message and waits for its
``:ACK``: the peer answers input in order, so everything it sent in answer to
earlier input has arrived by then.  Every wait is bounded (``WAIT``).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from rsio_tck.bindings.ditto import (
    SEARCH_PROTOCOL_ERROR,
    STREAMING_PROTOCOL_ERROR,
    ControlMessage,
    Decoded,
    Envelope,
    SearchRequest,
    SearchSubscribe,
    StreamingCancel,
    StreamingRequest,
    SubscribeForPersistedEvents,
    Target,
    decode_websocket_text,
    encode_line,
)
from rsio_tck.bindings.ditto.codec import DEFAULT_MAX_MESSAGE
from rsio_tck.errors import ProtocolViolation
from rsio_tck.reference_peer.ditto import PeerConfig, serve_connection

WAIT = 10.0
MAX = 2**63 - 1
PROTOCOL_CODES = {STREAMING_PROTOCOL_ERROR, SEARCH_PROTOCOL_ERROR, "general:" + STREAMING_PROTOCOL_ERROR,
                  "general:" + SEARCH_PROTOCOL_ERROR}


@contextlib.asynccontextmanager
async def running_peer(config: PeerConfig) -> AsyncIterator[int]:
    """The peer listening on a free loopback port for the duration of the block."""
    numbers = iter(range(1, 10_000))
    connections: set[asyncio.Task[Any]] = set()

    async def accepted(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        connections.add(task)
        with contextlib.suppress(asyncio.CancelledError):
            await serve_connection(reader, writer, config, next(numbers))

    server = await asyncio.start_server(accepted, "127.0.0.1", 0)
    try:
        async with server:
            yield server.sockets[0].getsockname()[1]
    finally:
        for task in connections:
            task.cancel()
        await asyncio.wait_for(asyncio.gather(*connections, return_exceptions=True), WAIT)


@dataclass
class Sub:
    """What the client knows of one subscription."""

    cid: str
    profile: str
    target: Target
    # ("range", (S, N)), ("infinite", S), ("error", (S, K)), ("search", (N, size)); a search filter other than the
    # collection's: ("empty", ...) when it is RQL (complete, no page), ("invalid", ...) when not (failed 4xx, no page)
    expect: tuple[str, Any]
    sid: str | None = None
    demand: int = 0
    requested: bool = False
    bad_demand: bool = False
    cancelled_at: int | None = None  # demand left when cancelled
    items: list[Any] = field(default_factory=list)  # streaming items or search pages
    end: Decoded | None = None


class RuleCheck:
    """The Ditto rules a publisher can break, judged on what the client sees (a test's judge, not the kit's)."""

    def __init__(self) -> None:
        self.broken: dict[str, str] = {}  # rule -> first explanation
        self.subs: list[Sub] = []
        self.by_sid: dict[str, Sub] = {}

    def bad(self, rule: str, why: str) -> None:
        self.broken.setdefault(rule, why)

    def created(self, sid: str, cid: Any) -> Sub | None:
        waiting = [s for s in self.subs if s.sid is None and s.cid == cid]
        # A subscribe without a correlation-id: its created carries none, or one the publisher made up (DITTO-m).
        waiting = waiting or [s for s in self.subs if s.sid is None and s.cid is None]
        if not waiting:
            self.bad("DITTO-SUB-1", f"created {sid} with correlation-id {cid!r} answers no subscribe waiting for one")
            return None
        live = [s for s in self.by_sid.values() if s.end is None and s.cancelled_at is None]
        if any(s.sid == sid for s in live):
            self.bad("DITTO-SUB-2", f"created {sid}: the id of a live subscription")
        sub = waiting[0]
        sub.sid = sid
        self.by_sid[sid] = sub
        return sub

    def event(self, message: Any) -> None:
        sid = message.subscription_id
        sub = self.by_sid.get(sid)
        action = message.topic.action
        if sub is None:
            self.bad("DITTO-SUB-3", f"{action} for {sid!r}, never announced")
            return
        if sub.end is not None:
            self.bad("DITTO-SUB-5", f"{action} for {sid} after its {sub.end.topic.action}")
            return
        t = message.topic
        if (t.criterion != sub.profile or (sub.profile == "streaming" and message.target != sub.target)):
            self.bad("DITTO-SUB-6", f"{t} does not address the subscription's {sub.target} ({sub.profile})")
        if action == "next":
            self._next(sub, message)
        else:
            if not sub.requested:
                self.bad("DITTO-SUB-4", f"{action} for {sid} before any request")
            sub.end = message
            self._end(sub, message)

    def _next(self, sub: Sub, message: Any) -> None:
        if sub.demand <= 0:
            rule = "DITTO-CAN-1" if sub.cancelled_at is not None else "DITTO-DEM-1"
            self.bad(rule, f"next for {sub.sid} beyond the demand")
        sub.demand -= 1
        if sub.profile == "search" and sub.expect[0] in ("empty", "invalid"):
            self.bad("DITTO-SEARCH-7", f"a page for a search whose filter is {sub.expect[0]}: no page was due")
        elif sub.profile == "search":
            page = message.items
            size = sub.expect[1][1]
            if not 0 < len(page) <= size:
                self.bad("DITTO-SEARCH-6", f"a page of {len(page)} things (size {size})")
            start = sum(map(len, sub.items))
            sub.items.append(page)
            things = [t.get("thingId") if isinstance(t, dict) else t for t in page]
            # Ditto's default order, sort(+thingId): the thingIds as strings (tck:thing-10 before tck:thing-2).
            due = sorted(f"tck:thing-{i}" for i in range(sub.expect[1][0]))[start:start + len(page)]
            if sub.expect[0] == "search" and things != due:
                self.bad("DITTO-TCK-4", f"things {things[:8]} where {due[:8]} were due, in order, each once")
        else:
            kind, spec = sub.expect
            first = spec[0] if isinstance(spec, tuple) else spec
            item = message.item
            revision = item.get("revision") if isinstance(item, dict) else None
            rule = {"range": "DITTO-TCK-1", "infinite": "DITTO-TCK-2", "error": "DITTO-TCK-3"}.get(kind)
            if rule and revision != first + len(sub.items):
                self.bad(rule, f"revision {revision} where {first + len(sub.items)} was due")
            sub.items.append(item)

    def _end(self, sub: Sub, message: Any) -> None:
        action, (kind, spec) = message.topic.action, sub.expect
        if action == "failed":
            error = message.error
            if not (isinstance(error.status, int) and 400 <= error.status <= 599 and isinstance(error.error, str)):
                self.bad("DITTO-ERR-1", f"failed with status {error.status!r}, code {error.error!r}")
            if sub.bad_demand and error.error not in PROTOCOL_CODES:
                self.bad("DITTO-DEM-2", f"demand <= 0 answered with error code {error.error!r}")
        if sub.bad_demand:
            if action != "failed":
                self.bad("DITTO-DEM-2", f"demand <= 0 answered with {action}")
            return
        count = len(sub.items)
        if kind == "empty" and action != "complete":
            self.bad("DITTO-SEARCH-7", f"a valid filter matching nothing ended with {action}, not complete")
        if kind == "invalid" and (action != "failed" or not isinstance(message.error.status, int)
                                  or not 400 <= message.error.status <= 499):
            self.bad("DITTO-SEARCH-7", f"a filter that is not RQL ended with {action}, not failed with a 4xx status")
        if kind == "range" and (action != "complete" or count != spec[1]):
            self.bad("DITTO-TCK-1", f"tck/range ended with {action} after {count} of {spec[1]} revisions")
        if kind == "infinite":
            self.bad("DITTO-TCK-2", f"tck/infinite ended with {action}")
        if kind == "error" and (action != "failed" or count != spec[1]):
            self.bad("DITTO-TCK-3", f"tck/error ended with {action} after {count} items, not failed after {spec[1]}")
        if kind == "search" and action == "complete":
            total = sum(map(len, sub.items))
            if total != spec[0] and sub.cancelled_at is None:
                self.bad("DITTO-TCK-4", f"search completed after {total} of {spec[0]} things")

    def finish(self) -> None:
        """At the end of a program: a bad demand that was never answered."""
        for sub in self.subs:
            if sub.bad_demand and sub.end is None and sub.cancelled_at is None:
                self.bad("DITTO-DEM-2", f"demand <= 0 on {sub.sid} got no failed")


class Client:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, max_line: int) -> None:
        self.reader, self.writer = reader, writer
        self.check = RuleCheck()
        self.max_line = max_line
        self.buffer = bytearray()
        self.received: list[Decoded | ControlMessage] = []
        self.errors: list[Envelope] = []
        self.closed = False
        self._count = 0
        self.acks_due = 0

    # -- sending -------------------------------------------------------------------------------------

    def send(self, message: Decoded) -> None:
        self.writer.write(encode_line(message))

    def send_raw(self, data: bytes) -> None:
        self.writer.write(data)

    def subscribe(self, name: str, first: int | None = 0, last: int | None = None, *, named: bool = True,
                  **expect: Any) -> Sub:
        """``named``: with a correlation-id (without one, the created may carry none or a made-up one)."""
        self._count += 1
        cid = f"c-{self._count}" if named else None
        target = Target(namespace="tck", entity_name=name)
        message = SubscribeForPersistedEvents(target=target, headers={"correlation-id": cid} if named else {},
                                              from_revision=first, to_revision=last)
        count = 0 if last is None else last - (first or 0) + 1  # without toHistoricalRevision: count 0
        kind = expect.get("kind", name)
        spec: Any = first if name == "infinite" else (first or 0, count)
        sub = Sub(cid=cid, profile="streaming", target=target, expect=(kind, spec))
        self.check.subs.append(sub)
        self.send(message)
        return sub

    def search(self, total: int, size: int | None = None, filter: str | None = None, kind: str = "search") -> Sub:
        """``kind``: what the filter is, "search" (the collection), "empty" (RQL matching nothing), "invalid"."""
        self._count += 1
        cid = f"q-{self._count}"
        options = None if size is None else f"size({size})"
        message = SearchSubscribe(headers={"correlation-id": cid}, filter=filter or f"eq(attributes/tck,{total})",
                                  options=options)
        sub = Sub(cid=cid, profile="search", target=message.target, expect=(kind, (total, size or 25)))
        self.check.subs.append(sub)
        self.send(message)
        return sub

    def request(self, sub: Sub, demand: int) -> None:
        self.send_raw(self.request_line(sub, demand))

    def request_line(self, sub: Sub, demand: int) -> bytes:
        """The request of ``demand`` for ``sub`` as a line (to write it in one write with other lines)."""
        assert sub.sid is not None, "request before created"
        sub.requested = True
        if demand <= 0:
            sub.bad_demand = True
        else:
            sub.demand = min(MAX, sub.demand + demand)
        cls: Any = SearchRequest if sub.profile == "search" else StreamingRequest
        extra = {} if sub.profile == "search" else {"target": sub.target}
        return encode_line(cls(subscription_id=sub.sid, demand=demand, headers={"correlation-id": f"r-{sub.sid}"},
                               **extra))

    def cancel(self, sub: Sub) -> None:
        self.send_raw(self.cancel_line(sub))

    def cancel_line(self, sub: Sub) -> bytes:
        """The cancel of ``sub`` as a line (to write it in one write with other lines)."""
        assert sub.sid is not None
        from rsio_tck.bindings.ditto import SearchCancel

        sub.cancelled_at = sub.demand
        if sub.profile == "search":
            return encode_line(SearchCancel(subscription_id=sub.sid))
        return encode_line(StreamingCancel(target=sub.target, subscription_id=sub.sid))

    # -- receiving -----------------------------------------------------------------------------------

    async def read_one(self) -> Decoded | ControlMessage | None:
        """The next message (None: the connection ended); every one goes through the rule check."""
        while True:
            end = self.buffer.find(b"\n")
            if end >= 0:
                line = bytes(self.buffer[:end])
                del self.buffer[: end + 1]
                message = self._decode(line)
                if message is not None:
                    return message
                continue
            if len(self.buffer) > self.max_line:
                self.check.bad("DITTO-LINE-1", f"a line of more than {self.max_line} bytes")
                return None
            data = await asyncio.wait_for(self.reader.read(1 << 20), WAIT)
            if not data:
                if self.buffer.strip():
                    self.check.bad("DITTO-LINE-2", "the stream ended inside a line")
                self.closed = True
                return None
            self.buffer += data

    def _decode(self, line: bytes) -> Decoded | ControlMessage | None:
        try:
            message = decode_websocket_text(line.decode("utf-8"), )
        except UnicodeDecodeError:
            self.check.bad("DITTO-ENV-1", "a line that is not UTF-8")
            return None
        except ProtocolViolation as violation:
            self.check.bad(violation.rule, violation.message)
            return None
        self.received.append(message)
        if isinstance(message, Envelope):
            self.errors.append(message)
        elif isinstance(message, ControlMessage):
            pass
        elif message.topic.action == "created":
            self.check.created(message.subscription_id, message.correlation_id)  # type: ignore[union-attr]
        elif message.topic.action in ("next", "complete", "failed"):
            self.check.event(message)
        return message

    async def until(self, done: Callable[[], bool]) -> bool:
        """Read until ``done()``; False when the connection ended first."""
        while not done():
            if await self.read_one() is None:
                return False
        return True

    def send_control(self, text: str) -> None:
        """A control message of the WebSocket binding; the peer acknowledges START-/STOP-SEND-*."""
        self.send_raw(text.encode() + b"\n")
        self.acks_due += text.startswith(("START-", "STOP-"))

    async def barrier(self) -> bool:
        """Everything the peer answered to earlier input has arrived (the ACK of a control message)."""
        self.send_control("START-SEND-EVENTS")
        due = self.acks_due
        return await self.until(lambda: sum(isinstance(m, ControlMessage) for m in self.received) >= due)

    async def opened(self, sub: Sub) -> bool:
        """Wait (with a barrier) for ``sub``'s created; False if none came (DITTO-SUB-1)."""
        if not await self.barrier():
            return False
        if sub.sid is None:
            self.check.bad("DITTO-SUB-1", f"no created for the subscribe with correlation-id {sub.cid}")
        return sub.sid is not None

    async def probe(self) -> bool:
        """A one-revision range, served to its end: the peer serves subscriptions round-robin, oldest first,
        so whatever it was producing for older subscriptions when the probe was served has arrived too."""
        probe = self.subscribe("range", 1, 1)
        if not await self.opened(probe):
            return False
        self.request(probe, 1)
        return await self.until(lambda: probe.end is not None)


@contextlib.asynccontextmanager
async def connected(port: int, max_line: int = DEFAULT_MAX_MESSAGE) -> AsyncIterator[Client]:
    reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port, limit=1 << 20), WAIT)
    client = Client(reader, writer, max_line)
    try:
        yield client
    finally:
        writer.close()
        with contextlib.suppress(ConnectionError, OSError, asyncio.TimeoutError):
            await asyncio.wait_for(writer.wait_closed(), WAIT)
