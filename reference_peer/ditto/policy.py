"""The behaviour hooks of a Ditto session, each doing what Ditto's pages and bindings.md §3 require.

Theory of operation, as in the RS-IO and RSocket peers: the session
(``connection.py``) is mechanism (lines, subscriptions, production); every
decision a deliberate fault may want to get wrong is a method here.  The
``faults`` module replaces methods on one ``Policy`` instance per connection;
a replacement gets the method it replaces as ``base`` and usually calls it,
so faults combine.  ``encode`` is a hook too: faults of the wire (a message
that is not JSON, a topic without a channel, ...) rewrite the bytes on the
way out, from outside the codec.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rsio_tck.bindings.ditto import (
    SEARCH_PROTOCOL_ERROR,
    STREAMING_PROTOCOL_ERROR,
    ControlMessage,
    Decoded,
    ErrorInfo,
    SearchComplete,
    SearchCreated,
    SearchFailed,
    SearchNext,
    StreamingComplete,
    StreamingCreated,
    StreamingFailed,
    StreamingNext,
    encode_line,
)
from rsio_tck.semantics.demand import UNBOUNDED, saturating_add

from .publishers import End

if TYPE_CHECKING:
    from .connection import DittoConnection, Subscription

MAX_DEMAND = UNBOUNDED
RULE_3_9 = "Reactive Streams rule 3.9"


# Events address what the subscribe addressed (DITTO-SUB-6): a search subscribe's topic is normally _/_, but
# the kit does not require the placeholder, so its events echo whatever the subscribe named.


def created(sub: Subscription, headers: dict[str, Any]) -> Decoded:
    if sub.profile == "search":
        return SearchCreated(target=sub.target, subscription_id=sub.sid, headers=headers)
    return StreamingCreated(target=sub.target, subscription_id=sub.sid, headers=headers)


def next_event(sub: Subscription, item: Any, headers: dict[str, Any]) -> Decoded:
    if sub.profile == "search":
        return SearchNext(target=sub.target, subscription_id=sub.sid, items=tuple(item), headers=headers)
    return StreamingNext(target=sub.target, subscription_id=sub.sid, item=item, headers=headers)


def complete(sub: Subscription, headers: dict[str, Any]) -> Decoded:
    if sub.profile == "search":
        return SearchComplete(target=sub.target, subscription_id=sub.sid, headers=headers)
    return StreamingComplete(target=sub.target, subscription_id=sub.sid, headers=headers)


def failed(sub: Subscription, error: ErrorInfo, headers: dict[str, Any]) -> Decoded:
    if sub.profile == "search":
        return SearchFailed(target=sub.target, subscription_id=sub.sid, error=error, headers=headers)
    return StreamingFailed(target=sub.target, subscription_id=sub.sid, error=error, headers=headers)


def protocol_error(sub: Subscription, demand: int) -> ErrorInfo:
    """The ``failed`` error for demand <= 0, as Ditto 3.8.0 writes it (DECISIONS.md 16)."""
    code = SEARCH_PROTOCOL_ERROR if sub.profile == "search" else STREAMING_PROTOCOL_ERROR
    return ErrorInfo(status=400, error=code, message=f"The demand must be positive, not {demand} ({RULE_3_9}).",
                     description="Request a positive number of items.")


class Policy:
    def __init__(self) -> None:
        self.state: dict[str, Any] = {}  # per-connection scratch for faults
        self.faults: tuple[str, ...] = ()

    # -- the wire ----------------------------------------------------------------------------

    def encode(self, s: DittoConnection, message: Decoded) -> bytes:
        return encode_line(message)

    def on_control(self, s: DittoConnection, message: ControlMessage) -> None:
        """The WebSocket binding's control messages: START/STOP-SEND-* are acknowledged (no event
        ever follows: the peer has no twin to change), JWT-TOKEN is taken silently."""
        if message.name.startswith(("START-", "STOP-")) and not message.name.endswith(":ACK"):
            s.send_control(f"{message.name}:ACK")

    # -- subscriptions ----------------------------------------------------------------------

    def subscription_id(self, s: DittoConnection, sub: Subscription) -> str:
        return s.fresh_id(sub)  # the freedoms' choice, never one still live (DITTO-SUB-2)

    def created(self, s: DittoConnection, sub: Subscription) -> None:
        """``created`` answers every subscribe, with its correlation-id (DITTO-SUB-1)."""
        s.send(created(sub, self.subscribe_headers(sub)))

    def subscribe_headers(self, sub: Subscription) -> dict[str, Any]:
        """The subscribe's correlation-id; for a subscribe without one, none or a made-up one (a freedom:
        decision DITTO-m)."""
        cid = sub.correlation_id if sub.correlation_id is not None else sub.created_cid
        return {"correlation-id": cid} if cid is not None else {}

    def event_headers(self, s: DittoConnection, sub: Subscription) -> dict[str, Any]:
        """An event's correlation-id: the latest request's (as Ditto does) or the subscribe's (a freedom)."""
        cid = sub.correlation_id if s.freedoms.subscribe_cid or sub.request_cid is None else sub.request_cid
        return {"correlation-id": cid} if cid is not None else {}

    def on_request(self, s: DittoConnection, sub: Subscription, demand: int) -> None:
        sub.requested = True
        if demand <= 0:
            self.on_bad_demand(s, sub, demand)
            return
        sub.demand = saturating_add(sub.demand, demand)  # cumulative, 2^63-1 is unbounded (DITTO-DEM-4)

    def on_bad_demand(self, s: DittoConnection, sub: Subscription, demand: int) -> None:
        """Demand <= 0: ``failed`` with the protocol error code (DITTO-DEM-2, rule 3.9)."""
        s.send(failed(sub, protocol_error(sub, demand), self.event_headers(s, sub)))
        s.forget(sub)

    def sendable(self, s: DittoConnection, sub: Subscription) -> int:
        """``next`` events that may go out now: the demand (DITTO-DEM-1); after a cancel, the freedom's few."""
        if sub.cancelled:
            return min(sub.demand, sub.after_cancel)
        return sub.demand

    def emit(self, s: DittoConnection, sub: Subscription, item: Any) -> None:
        delay = s.freedoms.late_delay(sub.cancelled, sub.demand == 1)
        if delay is not None:
            # Held back a moment (a freedom): the last item of a demand, or one in flight after the cancel.
            s.send_late(sub, next_event(sub, item, self.event_headers(s, sub)), delay)
        else:
            s.send(next_event(sub, item, self.event_headers(s, sub)))
        sub.demand -= 1
        sub.sent += 1
        if sub.cancelled:
            sub.after_cancel -= 1

    def complete_together(self, s: DittoConnection, sub: Subscription) -> bool:
        return s.freedoms.complete_together()

    def finish(self, s: DittoConnection, sub: Subscription, end: End) -> None:
        """``complete`` or ``failed``, only after the first request (the session sees to it: DITTO-SUB-4)."""
        headers = self.event_headers(s, sub)
        s.send(complete(sub, headers) if end.error is None else failed(sub, end.error, headers))
        s.forget(sub)

    def on_cancel(self, s: DittoConnection, sub: Subscription) -> None:
        sub.cancelled = True
        sub.after_cancel = s.freedoms.in_flight_after_cancel(min(sub.demand, sub.source.available()))
        if sub.after_cancel <= 0:
            s.forget(sub)
