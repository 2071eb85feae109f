"""The streams this peer serves (``Flow``) and the ones it consumes (``Echo`` inbound, ``SubscribeBack``).

Theory of operation: a ``Flow`` is one outbound direction of a stream the
remote requested (request-stream, request-response, the responder half of a
request-channel).  The session calls ``step`` for each flow that may have
work; a step sends at most ``BATCH`` elements, as many as the remote's credit
(``policy.sendable``) and the source allow, and ends the flow when its source
has ended.  How an element becomes a PAYLOAD (``policy.emit``) and how a stream
ends (``policy.finish``) are policy hooks, so a fault changes exactly one.

A consumer (``Echo``, ``SubscribeBack``) receives the PAYLOADs of a stream this
peer reads: the requester half of a channel (``tck/echo`` echoes each one back
under its own demand) or a stream the peer requested of the kit
(``tck/subscribe``: each inner element becomes an element of the outer stream).
Both keep what they hold bounded: ``Echo`` grants the remote at most ``WINDOW``
payloads ahead; ``SubscribeBack`` holds back requests (``one``, ``batch:N``) while
reports wait, and fails the outer stream beyond ``max_pending_reports``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rsio_tck.bindings.rsocket.frames import REQUEST_N_MAX
from rsio_tck.testpubs import SubscribeBack as SubscribeSpec

from ..sources import COMPLETE, End, QueueSource, Source

if TYPE_CHECKING:
    from .connection import RSocketConnection

BATCH = 256  # elements of one stream per step
WINDOW = 16  # inbound payloads a channel echo grants ahead
LOW_WATER = 64  # tck/subscribe: reports waiting before one/batch requests are held back
TOP_UP = 2**30  # tck/subscribe all/cancel: re-grant this much each time as much has arrived


class Flow:
    __slots__ = ("sid", "kind", "name", "source", "part", "done", "sent", "marks")

    def __init__(self, sid: int, kind: str, name: str, source: Source, part: int | None = None) -> None:
        self.sid = sid
        self.kind = kind  # "stream", "response" or "channel"
        self.name = name
        self.source = source
        self.part = part  # tck/large?part=P: fragments carry at most P bytes
        self.done = False
        self.sent = 0  # elements sent
        self.marks: set[str] = set()  # what a fault already did to this flow


def step(s: RSocketConnection, flow: Flow) -> bool:
    """Send one bounded batch of ``flow``; whether it may have more to send right away."""
    policy, source = s.policy, flow.source
    if flow.done:
        return False
    most = 1 if flow.kind == "response" else BATCH
    n = min(policy.sendable(s, flow), source.available(), most)
    if n > 0:
        elements = source.take(n)
        end = source.end() if source.available() == 0 else None
        for index, data in enumerate(elements):
            if flow.done:
                return False
            last = index == len(elements) - 1
            together = flow.kind == "response" or (
                last and end is not None and end.error is None and policy.complete_together(s, flow))
            policy.emit(s, flow, data, together)
    if flow.done:
        return False
    end = source.end() if source.available() == 0 else None
    if end is not None:
        policy.finish(s, flow, end)
        return False
    return source.available() > 0 and policy.sendable(s, flow) > 0


class Consumer:
    """What receives the PAYLOADs of a stream this peer reads."""

    def on_next(self, data: bytes) -> None: ...

    def on_end(self, error: str | None) -> None: ...


class Echo(Consumer):
    """tck/echo: the channel's inbound payloads go back out as the outbound stream's elements."""

    def __init__(self, s: RSocketConnection, flow: Flow) -> None:
        self.session = s
        self.flow = flow
        self.queue: QueueSource = flow.source  # type: ignore[assignment]
        self.outstanding = 0  # inbound payloads granted and not yet received
        self.queue.on_taken = self.grant
        self.queue.on_stop = self.stop

    def grant(self) -> None:
        s = self.session
        room = WINDOW - self.outstanding - len(self.queue.items)
        if room >= WINDOW // 2 and self.queue.ended is None and s.open and not self.flow.done:
            self.outstanding += room
            s.policy.request_n(s, self.flow.sid, room)

    def on_next(self, data: bytes) -> None:
        self.outstanding = max(0, self.outstanding - 1)
        if not self.flow.done:
            self.queue.push(data)
            self.session.wake(self.flow)

    def on_end(self, error: str | None) -> None:
        if error is not None:
            self.session.stop_flow(self.flow)  # the stream is over both ways: nothing more is sent
            return
        self.queue.finish(COMPLETE)
        self.session.wake(self.flow)

    def stop(self) -> None:
        self.session.inbound.pop(self.flow.sid, None)


class SubscribeBack(Consumer):
    """tck/subscribe?to=NAME&request=S: request-stream NAME of the kit; its elements become the outer stream's."""

    def __init__(self, s: RSocketConnection, spec: SubscribeSpec, outer: Flow) -> None:
        self.session = s
        self.spec = spec
        self.outer = outer
        self.queue: QueueSource = outer.source  # type: ignore[assignment]
        self.inner: int | None = None  # the inner stream's id (even: this peer is the server)
        self.received = 0
        self.unrequested = 0  # one/batch: elements not yet answered by a REQUEST_N
        self.held = 0  # REQUEST_N held back while reports wait
        self.cancelled = False  # this peer cancelled the inner stream
        self.ended = False  # the inner stream is over for this peer
        self.queue.on_taken = self._taken
        self.queue.on_stop = self._outer_stopped

    def initial_n(self) -> int:
        kind, n = self.spec.request.kind, self.spec.request.n
        return {"one": 1, "batch": min(n, REQUEST_N_MAX)}.get(kind, REQUEST_N_MAX)

    def on_next(self, data: bytes) -> None:
        s = self.session
        if self.ended or self.outer.done:
            return
        self.queue.push(data)
        if len(self.queue.items) > s.config.max_pending_reports:
            self.cancel()
            s.end_flow(self.outer, End(error=f"more than {s.config.max_pending_reports} elements waiting for demand"))
            return
        s.wake(self.outer)
        self.received += 1
        kind, n = self.spec.request.kind, self.spec.request.n
        if kind == "cancel" and self.received >= n:
            self.cancel()
            self.on_end(None)
        elif kind in ("one", "batch"):
            window = 1 if kind == "one" else min(n, REQUEST_N_MAX)
            self.unrequested += 1
            if self.unrequested >= window:
                self.unrequested -= window
                self._request(window)
        elif self.received % TOP_UP == 0:
            self._request(TOP_UP)  # all, cancel: demand stays far from zero (bindings.md: 2^63-1 has no RSocket form)

    def on_end(self, error: str | None) -> None:
        if self.ended:
            return
        self.ended = True
        self.session.inbound.pop(self.inner or 0, None)
        self.queue.finish(End(error=error) if error is not None else COMPLETE)
        self.session.wake(self.outer)

    def _request(self, n: int) -> None:
        if not self.session.endpoint.receiving(self.inner or 0):
            return  # the element that used the demand up also completed the stream
        if len(self.queue.items) > LOW_WATER:
            self.held += n
        elif self.inner is not None and not self.ended and not self.cancelled:
            self.session.policy.request_n(self.session, self.inner, n)

    def _taken(self) -> None:
        if self.held and len(self.queue.items) <= LOW_WATER and self.inner is not None and not (
                self.ended or self.cancelled):
            held, self.held = self.held, 0
            self.session.policy.request_n(self.session, self.inner, held)

    def cancel(self) -> None:
        s = self.session
        if self.inner is not None and not self.ended and not self.cancelled and s.open:
            self.cancelled = True
            s.inbound.pop(self.inner, None)
            s.policy.cancel_inner(s, self)

    def _outer_stopped(self) -> None:
        self.cancel()  # the kit cancelled the outer stream, or the connection is going


__all__ = ["BATCH", "Consumer", "Echo", "Flow", "SubscribeBack", "step"]
