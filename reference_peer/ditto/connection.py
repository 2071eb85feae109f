"""One connection of the Ditto reference peer, sans-IO: bytes in, bytes out, no socket, no clock.

Theory of operation.  ``receive_data`` cuts the byte stream into lines (one
Ditto Protocol message per line: the TCP framing, and what the WebSocket
framing hook makes of each text message), bounded by ``max_line`` before
buffering.  Each line decodes with the kit's own codec (a JSON envelope, or one
of the WebSocket binding's plain-text control messages, answered ``…:ACK``);
then the subscriber's commands drive the subscriptions:

- subscribe (streaming or search): a fresh ``subscriptionId`` (the freedoms' style,
  never one still live: DITTO-SUB-2) and ``created`` with the subscribe's
  correlation-id (DITTO-SUB-1), always, even for an unknown publisher, whose
  ``failed`` then waits for the first request;
- request: demand adds up, saturating at 2^63-1 (DITTO-DEM-4); demand <= 0
  is answered ``failed`` with the protocol error code (DITTO-DEM-2);
- cancel: the subscription stops (a few events within demand may still go, a freedom).

``pump(budget)`` produces: round-robin over the subscriptions with demand,
a fair share each, at most ``budget`` events, never more ``next`` than the demand (DITTO-DEM-1),
and no ``complete``/``failed`` before the first request (DITTO-SUB-4).  The
asyncio shell (``shell.py``) calls it until it says there is nothing more to do,
draining the transport between rounds, so a subscriber that does not read
stops production.

Every decision a fault may want to get wrong is a ``Policy`` hook (``policy.py``).
Malformed input is answered with a Ditto error envelope (status 400) and the
connection stays; only a line over the limit (it cannot be skipped safely
without reading it whole) or more than twice ``max_subscriptions`` live
subscriptions (over the limit, each gets ``created`` and then fails) ends the
connection.
Nothing the remote sends raises out of the session.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from rsio_tck.bindings.ditto import (
    ControlMessage,
    Decoded,
    Envelope,
    SearchCancel,
    SearchRequest,
    SearchSubscribe,
    StreamingCancel,
    StreamingRequest,
    SubscribeForPersistedEvents,
    Target,
    decode_websocket_text,
    encode_message,
    parse_topic,
)
from rsio_tck.bindings.ditto.codec import DittoLimits
from rsio_tck.errors import ProtocolViolation
from rsio_tck.semantics.demand import UNBOUNDED

from . import publishers
from .freedoms import Freedoms
from .policy import Policy

MAX_DEMAND = UNBOUNDED
# Ditto's topic for an error that concerns no entity it could name (its gateway's error pages show it).
ERROR_TOPIC = parse_topic("unknown/unknown/things/twin/errors")


@dataclass(slots=True, eq=False)
class Subscription:
    """One subscription the remote opened on this connection."""

    sid: str
    profile: str  # "streaming" or "search"
    target: Target
    correlation_id: Any
    source: publishers.Source
    demand: int = 0
    requested: bool = False  # a request has arrived (a terminal may go out)
    cancelled: bool = False
    done: bool = False  # complete or failed sent, or stopped
    sent: int = 0  # next events sent
    after_cancel: int = 0  # events still allowed after the cancel (a freedom)
    request_cid: Any = None  # the correlation-id of the latest request
    created_cid: Any = None  # a subscribe without a correlation-id: the one its created carries (a freedom)
    held: int = 0  # events queued late, not yet written: nothing more of this subscription goes out before them
    pending_end: publishers.End | None = None  # the end waits for a later pump (another write: a freedom)
    pending_since: int = 0  # the pump that deferred it
    marks: set[str] = field(default_factory=set)  # what a fault already did here


class DittoConnection:
    def __init__(self, *, policy: Policy, freedoms: Freedoms, limits: DittoLimits | None = None,
                 max_subscriptions: int = 256) -> None:
        self.policy = policy
        self.freedoms = freedoms
        self.limits = limits or DittoLimits()
        self.max_subscriptions = max_subscriptions
        self.subscriptions: dict[str, Subscription] = {}  # live ones, by subscriptionId
        self.announced: set[str] = set()  # every id ever announced on this connection
        self.out = bytearray()
        self.late = bytearray()  # events held back, written ``late_delay`` s later by the shell (a freedom)
        self.late_delay = 0.0
        self.late_subs: list[Subscription] = []  # whose events ``late`` holds, one entry per event
        self.closing: str | None = None  # set: flush what is queued, then close the transport
        self._line = bytearray()
        self._count = 0  # subscribes received
        self._pumps = 0

    # -- input -------------------------------------------------------------------------------

    def receive_data(self, data: bytes) -> None:
        if self.closing is not None:
            return
        start = 0
        while True:
            end = data.find(b"\n", start)
            stop = len(data) if end < 0 else end
            if len(self._line) + stop - start > self.limits.max_message:
                self.error_envelope(None, 413, "tck:message.too.large",
                                    f"a line of more than {self.limits.max_message} bytes; closing")
                self.closing = "the remote sent a line over the limit"
                return
            if end < 0:
                self._line += data[start:]
                return
            line = bytes(self._line) + data[start:end] if self._line else data[start:end]
            self._line.clear()
            start = end + 1
            self.receive_line(line)
            if self.closing is not None:
                return

    def receive_eof(self) -> None:
        if self._line.strip():
            self.error_envelope(None, 400, "tck:line.truncated", "the stream ended inside a line")
        self._line.clear()
        self.closing = self.closing or "the remote closed its side"

    def receive_line(self, line: bytes) -> None:
        if not line.strip():
            return  # blank lines between messages: whitespace, nothing to answer
        try:
            text = line.decode("utf-8").rstrip("\r")
            message = decode_websocket_text(text, self.limits)
        except UnicodeDecodeError as exc:
            self.error_envelope(None, 400, "json.invalid", f"the message is not UTF-8 (byte {exc.start})")
            return
        except ProtocolViolation as violation:
            self.error_envelope(_correlation_id(line), 400, "json.invalid" if violation.rule in (
                "DITTO-ENV-1", "DITTO-ENV-2") else "ditto-protocol:message.invalid",
                f"{violation.rule}: {violation.message}")
            return
        self.receive(message)

    def receive(self, message: Decoded | ControlMessage) -> None:
        if isinstance(message, ControlMessage):
            self.policy.on_control(self, message)
        elif isinstance(message, (SubscribeForPersistedEvents, SearchSubscribe)):
            self.subscribe(message)
        elif isinstance(message, (StreamingRequest, SearchRequest)):
            sub = self._live(message.subscription_id, message.topic.criterion)
            if sub is not None:
                sub.request_cid = message.correlation_id
                self.policy.on_request(self, sub, message.demand)
        elif isinstance(message, (StreamingCancel, SearchCancel)):
            sub = self._live(message.subscription_id, message.topic.criterion)
            if sub is not None and not sub.cancelled:
                self.policy.on_cancel(self, sub)
        else:
            what = str(message.topic)
            cid = message.correlation_id
            why = ("the reference peer is the publisher: it takes subscribe, request and cancel"
                   if not isinstance(message, Envelope) else
                   "the reference peer serves streaming subscriptions and search only")
            self.error_envelope(cid, 400, "tck:signal.unsupported", f"{what}: {why}")

    def _live(self, sid: str, profile: str) -> Subscription | None:
        """The live subscription ``sid`` of ``profile``; a request or cancel naming another is ignored
        (answering it would be an event for an id not announced: DITTO-SUB-3)."""
        sub = self.subscriptions.get(sid)
        return sub if sub is not None and sub.profile == profile and not sub.done else None

    def subscribe(self, message: SubscribeForPersistedEvents | SearchSubscribe) -> None:
        self._count += 1
        if len(self.subscriptions) >= 2 * self.max_subscriptions:  # subscribes that never even request: stop
            self.error_envelope(message.correlation_id, 429, "tck:too.many.subscriptions",
                                f"more than {2 * self.max_subscriptions} subscriptions waiting; closing")
            self.closing = "the remote opened too many subscriptions"
            return
        if len(self.subscriptions) >= self.max_subscriptions:
            source: publishers.Source = publishers.Failing(publishers.failure(
                429, "tck:too.many.subscriptions", f"more than {self.max_subscriptions} live subscriptions"))
        elif isinstance(message, SearchSubscribe):
            source = publishers.search(message, self.freedoms.page_size)
        else:
            source = publishers.streaming(message)
        sub = Subscription(sid="", profile=message.topic.criterion, target=message.target,
                           correlation_id=message.correlation_id, source=source)
        if sub.correlation_id is None:
            sub.created_cid = self.freedoms.created_correlation_id()
        sub.sid = self.policy.subscription_id(self, sub)
        self.subscriptions[sub.sid] = sub
        self.announced.add(sub.sid)
        self.policy.created(self, sub)

    # -- output ------------------------------------------------------------------------------

    def fresh_id(self, sub: Subscription | None = None) -> str:
        """An id for ``sub``'s created, as the freedoms choose (``Freedoms.id_choice``); never a live one."""
        choice = self.freedoms.id_choice
        if choice == "mirror" and sub is not None and isinstance(sub.correlation_id, str) \
                and sub.correlation_id and sub.correlation_id not in self.subscriptions:
            return sub.correlation_id
        if choice in ("lowest", "mirror"):
            number = 0
            while str(number) in self.subscriptions:
                number += 1
            return str(number)
        if choice == "random":
            while True:
                sid = "".join(self.freedoms.rng.choice("abcdefghijklmnopqrstuvwxyz0123456789_-") for _ in range(12))
                if sid not in self.subscriptions:
                    return sid
        while True:
            sid = self.freedoms.subscription_id()
            if sid not in self.announced:  # never one announced before on this connection
                return sid

    def send(self, message: Decoded) -> None:
        if self.closing is None:  # once closing, nothing more: what is queued is the last
            self.out += self.policy.encode(self, message)

    def send_late(self, sub: Subscription, message: Decoded, delay: float) -> None:
        """Queue ``message`` of ``sub`` to go out ``delay`` seconds from now (the shell's clock); until it has,
        ``sub`` sends nothing more, so its events keep their order."""
        if self.closing is None:
            self.late += self.policy.encode(self, message)
            self.late_delay = max(self.late_delay, delay)
            self.late_subs.append(sub)
            sub.held += 1

    def late_to_send(self) -> tuple[float, bytes, list[Subscription]] | None:
        """(delay, bytes, their subscriptions) of the events queued late since the last call, or None."""
        if not self.late:
            return None
        data, delay, subs = bytes(self.late), self.late_delay, self.late_subs
        self.late.clear()
        self.late_delay, self.late_subs = 0.0, []
        return delay, data, subs

    def released(self, subs: list[Subscription]) -> None:
        """The shell wrote the late events of ``subs``: they may go on."""
        for sub in subs:
            sub.held -= 1

    def send_raw(self, data: bytes) -> None:
        if self.closing is None:
            self.out += data

    def send_control(self, text: str) -> None:
        self.send_raw(text.encode("utf-8") + b"\n")

    def error_envelope(self, correlation_id: Any, status: int, code: str, message: str) -> None:
        headers = {"correlation-id": correlation_id} if isinstance(correlation_id, str) else {}
        self.send(Envelope(topic=ERROR_TOPIC, headers=headers, path="/",
                           value={"status": status, "error": code, "message": message}, status=status))

    def data_to_send(self) -> bytes:
        data = bytes(self.out)
        self.out.clear()
        return data

    def forget(self, sub: Subscription) -> None:
        sub.done = True
        if self.subscriptions.get(sub.sid) is sub:
            del self.subscriptions[sub.sid]

    # -- production ------------------------------------------------------------------------

    def ready(self) -> Iterator[Subscription]:
        return (sub for sub in list(self.subscriptions.values()) if not sub.done)

    def has_work(self) -> bool:
        if self.closing is not None:
            return False
        return any(not sub.held and (self.policy.sendable(self, sub) > 0 and sub.source.available() > 0
                                     or self._may_end(sub)) for sub in self.ready())

    def _may_end(self, sub: Subscription) -> bool:
        if sub.pending_end is not None:
            return True
        return sub.requested and not sub.cancelled and sub.source.available() == 0 and sub.source.end() is not None

    def pump(self, budget: int) -> bool:
        """Send at most ``budget`` events, each subscription a fair share per round (oldest first), so an
        unbounded one cannot starve the others; whether more could go out at once."""
        self._pumps += 1
        while budget > 0 and self.closing is None:
            ready = list(self.ready())
            share = max(1, budget // max(1, len(ready)))
            progressed = False
            for sub in ready:
                if budget <= 0:
                    break
                sent = self.step(sub, self.freedoms.batch(min(share, budget)))
                budget -= sent
                progressed = progressed or sent > 0
            if not progressed:
                break
        return self.has_work()

    def step(self, sub: Subscription, most: int) -> int:
        """Up to ``most`` events of ``sub``; the number of messages sent."""
        policy, source = self.policy, sub.source
        if sub.held:
            return 0  # events of it are still held back: nothing may overtake them
        if sub.pending_end is not None:
            if sub.pending_since == self._pumps:
                return 0
            pending, sub.pending_end = sub.pending_end, None
            policy.finish(self, sub, pending)
            return 1
        n = min(policy.sendable(self, sub), source.available(), most)
        items = source.take(n) if n > 0 else []
        for item in items:
            if sub.done:
                return len(items)
            policy.emit(self, sub, item)
        if sub.done or sub.cancelled and sub.after_cancel <= 0:
            if sub.cancelled and not sub.done:
                self.forget(sub)
            return len(items)
        if sub.held:
            return len(items)  # the end follows the events held back, in a later round
        end = source.end() if source.available() == 0 else None
        if end is not None and sub.requested:
            # Another write for the complete: after the last item (a freedom), or for a result with no item at all.
            later = not policy.complete_together(self, sub) if items else sub.sent == 0 and self.freedoms.empty_later
            if later:
                sub.pending_end, sub.pending_since = end, self._pumps  # a later pump: another write
                return len(items)
            policy.finish(self, sub, end)
            return len(items) + 1
        return len(items)


def _correlation_id(line: bytes) -> Any:
    """The correlation-id of a message the codec rejected, when its JSON still shows one."""
    try:
        obj = json.loads(line)
        headers = obj.get("headers") if isinstance(obj, dict) else None
        return headers.get("correlation-id") if isinstance(headers, dict) else None
    except (ValueError, RecursionError):
        return None


__all__ = ["MAX_DEMAND", "DittoConnection", "Subscription", "encode_message"]
