"""Ditto's ``ConnectionJudge``: one connection's messages, both sides, judged message by message.

Theory of operation (SPEC.md, Ditto decisions DITTO-a and DITTO-b).  A subscribe
(``subscribeForPersistedEvents`` or ``search/subscribe``) opens a subscription in
the contract's stream table (``rsio_tck.semantics.streams``) with no demand and
waits, SUBSCRIBING, for its ``created``: the publisher picks the
``subscriptionId``, and the judge binds it to the pending subscribe with the same
``correlation-id`` (the oldest subscribe without one when the created's matches no
pending subscribe: decision DITTO-m).  From then
on ``request``/``cancel``/``next``/``complete``/``failed`` name the subscription by
that id and go through the table (``created`` = onSubscribe, ``next`` = onNext:
one item, or one search page), whose rule IDs ``CONTRACT_RULES`` translates.
Ditto's own guarantees are judged beside the table: exactly one ``created`` per
subscribe (SUB-1), ids unique among live subscriptions (SUB-2), no event for an
unannounced id (SUB-3), no terminal before the first request (SUB-4), the event's
topic (SUB-6), what the subscriber may name (SUB-7, SUB-8), demand <= 0 answered
by the protocol error (DEM-2, decision DITTO-c), error objects (ERR-1), search page
sizes (SEARCH-6, decision DITTO-d).  With ``contract`` on, ``contract.py`` watches
the subscriptions that name a test publisher.  Nothing stops the judging; every
broken rule goes to ``found`` with the message's index.  The judge holds no clock.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ...binding import Found, Keep
from ...errors import ProtocolViolation, Side
from ...semantics.demand import UNBOUNDED
from ...semantics.signals import Signal
from ...semantics.streams import SignalArgs, StreamOptions, StreamRecord, StreamState, deliver_fast, step
from .codec import DEFAULT_LIMITS, DittoLimits, decode_message
from .contract import ContractWatch
from .messages import (
    ErrorInfo,
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
    Target,
)

OPTIONS = StreamOptions(on_subscribe_frame=True, reuse_ids=False, demand_ceiling=UNBOUNDED)

# The contract table's rule IDs as Ditto reports them (SPEC.md, decision DITTO-b).
CONTRACT_RULES: dict[str, str] = {
    "STR-1": "DITTO-SUB-1", "STR-2": "DITTO-TCK-5", "STR-3": "DITTO-SUB-5", "STR-4": "DITTO-SUB-3",
    "STR-5": "DITTO-SUB-4", "STR-6": "DITTO-CAN-1", "STR-7": "DITTO-SUB-9", "STR-8": "DITTO-SUB-8",
    "STR-9": "DITTO-SUB-9",
    "DEM-1": "DITTO-DEM-1", "DEM-2": "DITTO-DEM-4", "DEM-3": "DITTO-DEM-2", "DEM-4": "DITTO-DEM-2",
    "DEM-5": "DITTO-DEM-1", "DEM-6": "DITTO-DEM-3", "DEM-7": "DITTO-DEM-3",
    "ID-1": "DITTO-SUB-1", "ID-2": "DITTO-SUB-1", "ID-3": "DITTO-SUB-2", "ID-4": "DITTO-SUB-2",
    "PACK-3": "DITTO-DEM-1", "SPLIT-3": "DITTO-DEM-1",
    "TCK-1": "DITTO-TCK-1", "TCK-2": "DITTO-TCK-2", "TCK-5": "DITTO-TCK-3", "TCK-7": "DITTO-TCK-5",
}

# Decision DITTO-c: the codes of the subscription protocol error, with or without "general:".
PROTOCOL_ERROR_CODES = frozenset({
    "streaming.subscription.protocol.error", "thing-search:subscription.protocol.error",
    "subscription.protocol.error",
})
DEFAULT_PAGE_SIZE = 25  # things-search page, Subscribe: size default 25, max 200 (decision DITTO-d)
MAX_PAGE_SIZE = 200
_SIZE = re.compile(r"(?:^|[,(\s])size\(\s*(-?\d{1,12})\s*\)")

SUBSCRIBES = (SubscribeForPersistedEvents, SearchSubscribe)
REQUESTS = (StreamingRequest, SearchRequest)
CANCELS = (StreamingCancel, SearchCancel)
CREATED = (StreamingCreated, SearchCreated)
NEXTS = (StreamingNext, SearchNext)
COMPLETES = (StreamingComplete, SearchComplete)
FAILEDS = (StreamingFailed, SearchFailed)


def is_protocol_error(error: ErrorInfo) -> bool:
    code = error.error or ""
    return error.status == 400 and code.removeprefix("general:") in PROTOCOL_ERROR_CODES


def page_size(options: str | None) -> int | None:
    """The page size of search options (25 without size); None for a size Ditto would refuse."""
    match = _SIZE.search(options or "")
    if match is None:
        return DEFAULT_PAGE_SIZE
    size = int(match[1])
    return size if 1 <= size <= MAX_PAGE_SIZE else None


@dataclass(eq=False)
class Subscription:
    """One subscribe and what the judge knows of it."""

    handle: int  # the judge's own number for it (the contract table's Id)
    correlation_id: Any
    subscribe: SubscribeForPersistedEvents | SearchSubscribe
    record: StreamRecord
    sid: str | None = None
    owes_failed: bool = False  # a request with demand <= 0 arrived: failed with the protocol error is due
    saturated: bool = False  # the demand passed 2^63-1 (DITTO-DEM-4)
    cancelled: bool = False
    ended: bool = False  # complete or failed received
    watch: ContractWatch | None = None

    @property
    def search(self) -> bool:
        return isinstance(self.subscribe, SearchSubscribe)


class DittoModel:
    """The connection's subscriptions: pending (no created yet), live by subscriptionId, and ended."""

    def __init__(self) -> None:
        self.pending: list[Subscription] = []
        self.live: dict[str, Subscription] = {}
        self.ended: dict[str, Subscription] = {}
        self.unanswered: set[str] = set()  # ids the subscriber named while not live: one failed may answer
        self.subscriptions = 0
        self.closed: set[Side] = set()
        self.subscriber: Side | None = None  # the side that sent subscribes (the other plays Ditto)


class DittoJudge:
    def __init__(self, profile: str = "streaming", limits: DittoLimits | None = None, *,
                 contract: bool = True, keep: Keep | None = None) -> None:
        self.profile = profile
        self.limits = limits if isinstance(limits, DittoLimits) else DEFAULT_LIMITS
        self.model = DittoModel()
        self.contract = contract
        self.keep = keep

    # -- the loop ---------------------------------------------------------------------------

    def judge(self, sender: Side, frames: Iterable[Any], t: float, index: int, found: Found) -> int:
        keep = self.keep
        for frame in frames:
            if keep is not None:
                keep(index, sender, t, frame)
            message = frame
            raw = getattr(frame, "raw_text", None)
            if raw is not None:  # a raw line the kit sends on purpose: judged as its receiver reads it
                try:
                    message = decode_message(raw, self.limits)
                except ProtocolViolation as exc:
                    found(_as(exc, sender), index, frame)
                    index += 1
                    continue
            for violation in self._apply(sender, message):
                found(violation, index, frame)
            index += 1
        return index

    held = 0  # a message is judged whole: the line decoder keeps the line in progress, the judge nothing

    def let_go(self, side: Side) -> None:
        """Nothing kept toward frames not yet whole (``held``): nothing to drop."""

    def wire_error(self, sender: Side, violation: ProtocolViolation) -> ProtocolViolation | None:
        return _as(violation, sender)

    def close(self, side: Side) -> list[ProtocolViolation]:
        model = self.model
        out: list[ProtocolViolation] = []
        if model.subscriber is not None and side is not model.subscriber and model.subscriber not in model.closed:
            # The publisher ended the connection while it still owed answers.
            for sub in model.pending:
                out.append(_v("DITTO-SUB-1", side, f"closed without the created owed to subscribe "
                              f"(correlation-id {sub.correlation_id!r})"))
            for sub in model.live.values():
                if sub.owes_failed and not sub.ended:
                    out.append(_v("DITTO-DEM-2", side, f"closed without the failed owed to subscription {sub.sid!r} "
                                  "after a request with demand <= 0"))
        model.closed.add(side)
        return out

    # -- one message ------------------------------------------------------------------------

    def _apply(self, sender: Side, msg: Any) -> list[ProtocolViolation]:
        if isinstance(msg, SUBSCRIBES):
            return self._subscribe(sender, msg)
        if isinstance(msg, REQUESTS + CANCELS):
            return self._command(sender, msg)
        if isinstance(msg, CREATED):
            return self._created(sender, msg)
        if isinstance(msg, NEXTS + COMPLETES + FAILEDS):
            return self._event(sender, msg)
        return []  # other topics (error responses, control messages): not the subscriptions' business

    def _subscribe(self, sender: Side, msg: SubscribeForPersistedEvents | SearchSubscribe) -> list[ProtocolViolation]:
        model = self.model
        model.subscriber = model.subscriber or sender
        model.subscriptions += 1
        sub = Subscription(model.subscriptions, msg.correlation_id, msg, StreamRecord(OPTIONS.demand_ceiling))
        step(sender, sub.handle, sub.record, Signal.SUBSCRIBE, SignalArgs(amount=0), _no_warn, OPTIONS)
        if self.contract:
            sub.watch = ContractWatch.of(msg)
        model.pending.append(sub)
        return []

    def _command(self, sender: Side, msg: Any) -> list[ProtocolViolation]:
        model = self.model
        sid = msg.subscription_id
        sub = model.live.get(sid)
        name = msg.action
        out: list[ProtocolViolation] = []
        if isinstance(msg, REQUESTS) and msg.demand <= 0:
            out.append(_v("DITTO-DEM-3", sender, f"request for {sid!r} with demand {msg.demand}: demand must be > 0"))
        if sub is None or sub.cancelled or sub.ended:
            gone = sub if sub is not None else model.ended.get(sid)
            if gone is not None and gone.cancelled:
                out.append(_v("DITTO-SUB-8", sender, f"{name} for subscription {sid!r} after its own cancel"))
            elif gone is not None:
                # After complete or failed: the command may have crossed the terminal event in flight, and
                # RS 3.6 makes it a no-op; the publisher owes nothing or one failed (decision DITTO-j).  A
                # cancel still counts as the subscriber's own: nothing may name the id after it.
                gone.cancelled = gone.cancelled or not isinstance(msg, REQUESTS)
            else:
                out.append(_v("DITTO-SUB-7", sender, f"{name} for subscription {sid!r}, which no created announced"))
            if sub is None:
                model.unanswered.add(sid)
                return out
        signal = Signal.REQUEST if isinstance(msg, REQUESTS) else Signal.CANCEL
        amount = msg.demand if isinstance(msg, REQUESTS) else 0
        if signal is Signal.REQUEST:
            if amount <= 0 and not (sub.cancelled or sub.ended):
                sub.owes_failed = True
            elif sub.record.demand.outstanding + amount > UNBOUNDED:
                sub.saturated = True
        else:
            sub.cancelled = True
        out += self._step(sender, sub, signal, SignalArgs(amount=amount))
        return out

    def _created(self, sender: Side, msg: StreamingCreated | SearchCreated) -> list[ProtocolViolation]:
        model = self.model
        cid = msg.correlation_id
        sid = msg.subscription_id
        sub = next((s for s in model.pending if s.correlation_id == cid), None)
        if sub is None:
            # A subscribe without a correlation-id still gets its created ("always responds with a created
            # event"), with no correlation-id or one the publisher made up (Ditto makes one up): decision DITTO-m.
            sub = next((s for s in model.pending if s.correlation_id is None), None)
        if sub is None:
            return [_v("DITTO-SUB-1", sender, f"created {sid!r} with correlation-id {cid!r} answers no pending "
                       "subscribe (a second created, or one nobody asked for)")]
        model.pending.remove(sub)
        out = self._topic(sender, sub, msg)
        old = model.live.get(sid)
        if old is not None and old.cancelled:
            # The subscriber cancelled it: the publisher may have read that cancel before it gave the id
            # again (SPEC.md decision DITTO-n); from here on the id names the new subscription.
            del model.live[sid]
            old.ended = True
        elif old is not None:
            out.append(_v("DITTO-SUB-2", sender, f"created announces {sid!r}, the id of a subscription still live"))
            return out
        model.ended.pop(sid, None)  # an id of an ended subscription may be given again
        model.unanswered.discard(sid)
        sub.sid = sid
        model.live[sid] = sub
        return out + self._step(sender, sub, Signal.ON_SUBSCRIBE, SignalArgs())

    def _event(self, sender: Side, msg: Any) -> list[ProtocolViolation]:
        model = self.model
        sid = msg.subscription_id
        sub = model.live.get(sid)
        if sub is None:
            if isinstance(msg, FAILEDS) and sid in model.unanswered:
                model.unanswered.discard(sid)  # answers the subscriber's request or cancel (decision DITTO-e)
                return []
            if sid in model.unanswered:
                return [_v("DITTO-SUB-9", sender, f"{msg.action} answering a request or cancel for {sid!r}, "
                           "which is not live (only one failed naming it may answer)")]
            if sid in model.ended:
                return [_v("DITTO-SUB-5", sender, f"{msg.action} for subscription {sid!r} after its complete or failed")]
            return [_v("DITTO-SUB-3", sender, f"{msg.action} for subscription {sid!r}, which no created announced")]
        out = self._topic(sender, sub, msg)
        if isinstance(msg, NEXTS):
            if isinstance(msg, SearchNext):
                out += self._page(sender, sub, msg)
            if not deliver_fast(sub.record, 1):  # the table's own fast path (ACTIVE, or crossing a cancel)
                out += self._step(sender, sub, Signal.ON_NEXT, SignalArgs(count=1))
            if sub.watch is not None and not sub.owes_failed:
                out += [_v(rule, sender, why) for rule, why in sub.watch.next(msg)]
            return out
        if not sub.record.requested:
            out.append(_v("DITTO-SUB-4", sender, f"{msg.action} for subscription {sid!r} before the first request"))
        if isinstance(msg, FAILEDS):
            out += self._failed(sender, sub, msg.error)
            # DITTO-DEM-2 is judged by _failed (status and code, not RS-IO's "3.9" text).
            out += self._step(sender, sub, Signal.ON_ERROR, SignalArgs(text="3.9"))
        else:
            out += self._step(sender, sub, Signal.ON_COMPLETE, SignalArgs())
        if sub.watch is not None and not sub.owes_failed and not sub.cancelled:
            error = msg.error if isinstance(msg, FAILEDS) else None
            out += [_v(rule, sender, why) for rule, why in sub.watch.end(error)]
        sub.ended = True
        del model.live[sid]
        model.ended[sid] = sub
        return out

    # -- checks -----------------------------------------------------------------------------

    def _step(self, sender: Side, sub: Subscription, signal: Signal, args: SignalArgs) -> list[ProtocolViolation]:
        state = sub.record.state
        try:
            step(sender, sub.handle, sub.record, signal, args, _no_warn, OPTIONS)
        except ProtocolViolation as exc:
            rule = CONTRACT_RULES.get(exc.rule, exc.rule)
            if rule == "DITTO-DEM-1" and state is StreamState.CANCELLED:
                rule = "DITTO-CAN-1"
            where = f"subscription {sub.sid!r}" if sub.sid is not None else f"subscribe {sub.correlation_id!r}"
            return [_v(rule, sender, f"{exc.message.split(': ', 1)[-1]} ({signal.value} on {where})")]
        return []

    def _topic(self, sender: Side, sub: Subscription, msg: Any) -> list[ProtocolViolation]:
        if sub.search != isinstance(msg, (SearchCreated, SearchNext, SearchComplete, SearchFailed)):
            return [_v("DITTO-SUB-6", sender, f"{msg.profile} {msg.action} for a {sub.subscribe.profile} subscription")]
        if sub.search:
            return []  # search topics are _/_ (or any placeholder; DECISIONS.md item 9)
        want: Target = sub.subscribe.target
        if msg.target != want:
            got = msg.target
            return [_v("DITTO-SUB-6", sender, f"{msg.action} addresses {got.namespace}/{got.entity_name}/{got.group}/"
                       f"{got.channel}, the subscription {want.namespace}/{want.entity_name}/{want.group}/{want.channel}")]
        return []

    def _page(self, sender: Side, sub: Subscription, msg: SearchNext) -> list[ProtocolViolation]:
        subscribe = sub.subscribe
        size = page_size(subscribe.options if isinstance(subscribe, SearchSubscribe) else None)
        items = len(msg.items)
        if items == 0:
            return [_v("DITTO-SEARCH-6", sender, f"an empty page for subscription {sub.sid!r}")]
        if size is not None and items > size:
            return [_v("DITTO-SEARCH-6", sender, f"a page of {items} items for subscription {sub.sid!r}, "
                       f"whose page size is {size}")]
        return []

    def _failed(self, sender: Side, sub: Subscription, error: ErrorInfo) -> list[ProtocolViolation]:
        out = []
        status = error.status
        if type(status) is not int or not 400 <= status <= 599 or not isinstance(error.error, str):
            out.append(_v("DITTO-ERR-1", sender, f"failed for {sub.sid!r} with status {status!r} and error code "
                          f"{error.error!r}: an HTTP error status (400..599) and a code are due"))
        if sub.owes_failed and not is_protocol_error(error):
            out.append(_v("DITTO-DEM-2", sender, f"failed for {sub.sid!r} after demand <= 0 is status {status!r}, "
                          f"code {error.error!r}, not 400 with the subscription protocol error"))
            sub.owes_failed = False  # reported here, not again by the table
        if sub.saturated and not sub.owes_failed and is_protocol_error(error):
            out.append(_v("DITTO-DEM-4", sender, f"failed with a protocol error for {sub.sid!r}, whose demand only "
                          "passed 2^63-1 (unbounded, not an error)"))
        return out


def _no_warn(rule: str, why: str) -> None:
    """The table's SHOULD warnings (DEM-6 for demand <= 0): Ditto judges that as DITTO-DEM-3 itself."""


def _v(rule: str, side: Side, why: str) -> ProtocolViolation:
    role = "subscriber" if rule in ("DITTO-SUB-7", "DITTO-SUB-8", "DITTO-DEM-3") else "publisher"
    return ProtocolViolation(rule=rule, side=side, message=f"{side} as {role}: {why}")


def _as(violation: ProtocolViolation, side: Side) -> ProtocolViolation:
    return ProtocolViolation(rule=violation.rule, side=side, message=f"{side}: {violation.message}",
                             offset=violation.offset, frame_index=violation.frame_index)
