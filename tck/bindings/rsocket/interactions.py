"""RSocket streams mapped onto the contract's stream table (``rsio_tck.semantics.streams``).

Theory of operation (SPEC.md, RSocket decisions RS-i and RS-l): every stream a
request opens has a record in the contract's table for the responder's direction
(the requester subscribes): REQUEST_STREAM and REQUEST_CHANNEL subscribe with the
initial N and open ACTIVE at once (``StreamOptions.on_subscribe_frame=False``),
REQUEST_RESPONSE subscribes with demand 1, REQUEST_FNF with demand 0 and ends at
once.  A channel has a second record for the requester's direction (the responder
subscribes, with no credits: the REQUEST_CHANNEL's own data is the first message).
REQUEST_N = request and CANCEL = cancel on the direction their sender subscribes to;
PAYLOAD(N) = onNext, PAYLOAD(C) = onComplete, N|C both; ERROR on a stream = onError
(and, on a channel, cancel of the other direction).  Stream ids are never reused
(``StreamOptions.reuse_ids=False``) until their requester has used the max id.

The table raises its own rule IDs (RS-IO's); ``contract_rule`` translates each to the
RSocket rule, with the stream's interaction model and direction as context, so an
RSocket finding never cites an RS-IO rule.  Findings go to the connection model's
``found`` list, like every other RSocket finding.
"""

from __future__ import annotations

from enum import Enum
from typing import NamedTuple, Protocol

from ...errors import ProtocolViolation, Side
from ...semantics.demand import UNBOUNDED
from ...semantics.signals import Signal
from ...semantics.streams import SignalArgs, StreamOptions, StreamRecord, StreamState, Transition, Verdict, step
from .frames import (
    REJECTED,
    Cancel,
    Error,
    IgnoredFrame,
    Payload,
    RequestChannel,
    RequestFnf,
    RequestN,
    RequestResponse,
    RequestStream,
    RequestSubscription,
)
from .model import ConnectionModel, max_stream_id

Request = RequestStream | RequestChannel | RequestResponse | RequestFnf | RequestSubscription
REQUEST_TYPES = (RequestStream, RequestChannel, RequestResponse, RequestFnf, RequestSubscription)
REQUEST_NAMES = frozenset(t.wire_name for t in REQUEST_TYPES)

# RSocket's wire: no onSubscribe frame, ids never reused, demand saturating at 2^63-1 (RS-e).  A requester
# that has used the max id may wrap (RS-a): its reused id then opens a fresh stream, never asking the table.
OPTIONS = StreamOptions(on_subscribe_frame=False, reuse_ids=False, demand_ceiling=UNBOUNDED)

LIVE = frozenset({StreamState.ACTIVE, StreamState.PART, StreamState.SUBSCRIBING, StreamState.RESUBSCRIBING})
_ACTIVE = StreamState.ACTIVE


def live(rec: StreamRecord | None) -> bool:
    """A direction that may still carry PAYLOADs (ACTIVE first: the one state of nearly every live stream)."""
    return rec is not None and (rec.state is _ACTIVE or rec.state in LIVE)


# The contract table's rule IDs, as RSocket reports them (SPEC.md, decision RS-i).
CONTRACT_RULES: dict[str, str] = {
    "STR-1": "RS-STREAM-2", "STR-2": "RS-UNEXPECTED-1", "STR-3": "RS-STREAM-3", "STR-4": "RS-STREAM-2",
    "STR-5": "RS-STREAM-3", "STR-6": "RS-FLOW-2", "STR-7": "RS-UNEXPECTED-1", "STR-8": "RS-UNEXPECTED-1",
    "STR-9": "RS-STREAMID-1",
    "DEM-1": "RS-FLOW-2", "DEM-2": "RS-FLOW-2", "DEM-3": "RS-FLOW-3", "DEM-4": "RS-FLOW-3", "DEM-5": "RS-FLOW-2",
    "DEM-6": "RS-FLOW-1", "DEM-7": "RS-FLOW-1",
    "ID-1": "RS-STREAMID-4", "ID-2": "RS-UNEXPECTED-1", "ID-3": "RS-STREAMID-3", "ID-4": "RS-STREAMID-3",
    "SPLIT-1": "RS-FRAG-1", "SPLIT-2": "RS-FRAG-1", "SPLIT-3": "RS-FLOW-2", "SPLIT-4": "RS-FRAG-1",
    "SPLIT-5": "RS-LIMIT-1", "SPLIT-6": "RS-FRAG-1",
    "PACK-1": "RS-FRAG-1", "PACK-2": "RS-FRAG-1", "PACK-3": "RS-FLOW-2", "PACK-4": "RS-FRAG-1", "PACK-5": "RS-FRAG-1",
    # The test publishers (not the stream table, but cited by binding-neutral contract scenarios).
    "TCK-1": "RS-TCK-1", "TCK-2": "RS-TCK-2", "TCK-4": "RS-TCK-4", "TCK-5": "RS-TCK-3", "TCK-7": "RS-TCK-5",
    "TCK-8": "RS-TCK-1",
}


class Kind(Enum):
    STREAM = "request-stream"
    RESPONSE = "request-response"
    FNF = "fire-and-forget"
    CHANNEL = "request-channel"
    SUBSCRIPTION = "request-subscription"  # the draft's REQUEST_SUB


KIND_OF: dict[type, Kind] = {
    RequestStream: Kind.STREAM, RequestResponse: Kind.RESPONSE, RequestFnf: Kind.FNF,
    RequestChannel: Kind.CHANNEL, RequestSubscription: Kind.SUBSCRIPTION,
}
_PLAIN_KINDS = (Kind.STREAM, Kind.CHANNEL, Kind.SUBSCRIPTION)


def contract_rule(rule: str, kind: Kind | None = None, inbound: bool = False) -> str:
    """The RSocket rule for a contract rule ID, in the context of a stream's kind and direction."""
    translated = CONTRACT_RULES.get(rule, rule)
    if translated == "RS-STREAM-3":
        if inbound:
            return "RS-CHANNEL-2"
        if kind is Kind.RESPONSE:
            return "RS-RR-1"
        if kind is Kind.FNF:
            return "RS-FNF-1"
    if translated == "RS-FLOW-2" and inbound:
        return "RS-CHANNEL-1"
    return translated


class RStream:
    """One RSocket stream: who requested it, its kind, and one contract record per direction."""

    __slots__ = ("kind", "requester", "out", "inbound", "zero_owed", "lease_reject", "lease_crossed", "request_n_sent",
                 "watched", "plain", "watched_plain")

    def __init__(self, kind: Kind, requester: Side) -> None:
        self.kind = kind
        self.requester = requester
        self.out = StreamRecord(OPTIONS.demand_ceiling)  # the responder's direction: the requester subscribes
        self.inbound: StreamRecord | None = None  # a channel's requester direction: the responder subscribes
        self.zero_owed: Side | None = None  # who owes an ERROR after a request N of 0 (RS-FLOW-3)
        self.lease_reject = False  # the request broke the lease: the responder owes ERROR[REJECTED] (RS-LEASE-5)
        # The responder sent a LEASE after the request was seen and before answering it: the two may have
        # crossed in flight (it granted before the request reached it), so serving it is legal too.
        self.lease_crossed = False
        self.request_n_sent = False  # the responder granted credits on this channel (RS-CHANNEL-3)
        self.watched = False  # its request named a test publisher: the contract judge sees its frames
        self.plain = False  # a responder's PAYLOAD(N) may take the judge's fast path
        # A watched request-stream with nothing owed: a responder's PAYLOAD(N) may take the judge's fast path
        # when the contract judge finds its data is the publisher's next element (``ContractJudge.due``).
        self.watched_plain = False

    def refresh(self) -> None:
        settled = self.zero_owed is None and not self.lease_reject
        self.plain = settled and self.kind in _PLAIN_KINDS and not self.watched
        self.watched_plain = settled and self.watched and self.kind is Kind.STREAM

    def in_use(self) -> bool:
        return self.out.state in LIVE or (self.inbound is not None and self.inbound.state in LIVE)


class StreamView(NamedTuple):
    """One open stream as one side sees it, read from the judge's ``RStream`` when asked (``Interactions.view``);
    never kept: the stream's lifecycle has one owner, the judge.  A named tuple, not a frozen dataclass: the
    endpoint builds one per received frame, and a tuple is built at a third of the cost (``bench_endpoint``)."""

    stream_id: int
    kind: Kind
    local_requester: bool  # the side that asked requested the stream
    sending: bool  # that side may still send PAYLOADs on it
    receiving: bool  # its peer may still send PAYLOADs on it


class Contract(Protocol):
    """The test-publisher contract judge (``contract.py``), told about watched streams' frames."""

    def request(self, sid: int, st: RStream, data: bytes) -> None: ...

    def requester_frame(self, sid: int, frame: Payload | Error | None) -> None: ...

    def responder_payload(self, side: Side, sid: int, frame: Payload, complete: bool) -> None: ...

    def responder_error(self, side: Side, sid: int, frame: Error) -> None: ...


class Interactions:
    def __init__(self, model: ConnectionModel) -> None:
        self.model = model
        self.streams: dict[int, RStream] = {}
        self.contract: Contract | None = None
        self._pending_reject: set[int] = set()  # requests that broke the lease, until they are whole

    # -- what the streams are now (the RSocket endpoint reads its streams here) ---------

    def direction(self, sid: int, side: Side) -> StreamRecord | None:
        """The direction ``side`` publishes on (sends PAYLOADs on) of stream ``sid``, if it has one."""
        st = self.streams.get(sid)
        if st is None:
            return None
        return st.out if st.requester is not side else st.inbound

    def sends(self, sid: int, side: Side) -> bool:
        """Whether ``side`` may still send PAYLOADs on stream ``sid``: the direction it publishes on is live."""
        return live(self.direction(sid, side))

    def receives(self, sid: int, side: Side) -> bool:
        """Whether ``side``'s peer may still send PAYLOADs on stream ``sid``."""
        return live(self.direction(sid, side.peer))

    def view(self, sid: int, side: Side) -> StreamView | None:
        """Stream ``sid`` as ``side`` sees it, or None when neither side may send on it any more (or never could)."""
        st = self.streams.get(sid)
        if st is None:
            return None
        requested = st.requester is side
        out, inbound = live(st.out), live(st.inbound)
        if not out and not inbound:
            return None
        return StreamView(sid, st.kind, requested, inbound if requested else out, out if requested else inbound)

    def open_stream_ids(self) -> list[int]:
        """The streams on which either side may still send PAYLOADs."""
        return [sid for sid, st in self.streams.items() if st.in_use()]

    # -- the table -------------------------------------------------------------------

    def _step(self, sender: Side, sid: int, st: RStream | None, rec: StreamRecord, signal: Signal,
              args: SignalArgs, name: str, *, inbound: bool = False) -> Transition | None:
        kind = st.kind if st is not None else None
        role = "requester" if st is not None and st.requester is sender else "responder"
        where = f"{kind.value if kind else 'unknown'} stream {sid}"
        report = self.model.report

        def warn(rule: str, message: str) -> None:
            report(contract_rule(rule, kind, inbound), sender, f"{sender} as {role} sent {name} on {where}: {message}")

        state = rec.state
        try:
            return step(sender, sid, rec, signal, args, warn, OPTIONS)
        except ProtocolViolation as violation:
            why = violation.message.split(": ", 1)[-1]
            report(contract_rule(violation.rule, kind, inbound), sender,
                   f"{sender} as {role} sent {name} on {where} in state {state.name}: {why}")
            return None

    # -- requests ---------------------------------------------------------------------

    def request_start(self, sender: Side, frame: Request, t: float) -> None:
        """A request's first frame (the whole request, or its first fragment): ids and lease.

        On a resumed connection the ids go on from the previous one, so their order is not judged."""
        model, sid, name = self.model, frame.stream_id, frame.wire_name
        party = model.parties[sender]
        known = sid in self.streams
        if not model.draft:
            odd = sender is Side.CLIENT
            if sid == 0 or (sid % 2 == 1) != odd:
                model.report("RS-STREAMID-1", sender, f"{sender} sent {name} on stream {sid}: a {sender}'s stream "
                             f"ids are {'odd' if odd else 'even'} and never 0")
            elif not known and not party.wrapped and not model.parties[Side.CLIENT].resumed:
                expected = party.last_stream_id + 2 if party.last_stream_id else (1 if odd else 2)
                if sid != expected and not (party.ignored_stream_id == expected and sid == expected + 2):
                    model.report("RS-STREAMID-2", sender, f"{sender} sent {name} on stream {sid} where its next "
                                 f"stream id is {expected}")
        party.last_stream_id = max(party.last_stream_id, sid)
        if sid >= max_stream_id(sender):
            party.wrapped = True
        if model.lease_request(sender, sid, name, t):
            self._pending_reject.add(sid)

    def ignored_request(self, sender: Side, frame: IgnoredFrame) -> None:
        """A request the receiver must ignore (RS-IGNORE-2: its metadata length runs past it).  Whether it
        spent its stream id is not the spec's to say, so the sender's next request may take that id or the
        one after it (decision RS-r)."""
        sid, party = frame.stream_id, self.model.parties[sender]
        if frame.type_name in REQUEST_NAMES and sid > party.last_stream_id:
            party.ignored_stream_id = sid

    def request(self, sender: Side, frame: Request) -> None:
        """A whole request: opens its stream (RS-m: a fragmented one when its last fragment arrives)."""
        model, sid, name = self.model, frame.stream_id, frame.wire_name
        kind = KIND_OF[type(frame)]
        reject = sid in self._pending_reject
        self._pending_reject.discard(sid)
        existing = self.streams.get(sid)
        wrapped = model.parties[sender].wrapped
        if existing is not None:
            if existing.in_use():
                self._step(sender, sid, existing, existing.out if existing.out.state in LIVE else existing.inbound,  # type: ignore[arg-type]
                           Signal.SUBSCRIBE, SignalArgs(amount=1), name)
                model.ignorable(sender.peer, sid, "RS-UNEXPECTED-1")
                return
            if not wrapped:
                self._step(sender, sid, existing, existing.out, Signal.SUBSCRIBE, SignalArgs(amount=1), name)
            # Either way the id opens a fresh stream: what the responder does with it is not judged (RS-a).
        st = self.streams[sid] = RStream(kind, sender)
        st.lease_reject = reject
        n = 1 if kind is Kind.RESPONSE else 0 if kind is Kind.FNF else frame.initial_request_n  # type: ignore[union-attr]
        self._step(sender, sid, st, st.out, Signal.SUBSCRIBE, SignalArgs(amount=n), name)
        if kind is Kind.FNF:
            st.out.state = StreamState.DONE  # fire-and-forget ends as it opens
        elif n <= 0 and kind is not Kind.RESPONSE:
            model.report("RS-FLOW-1", sender, f"{sender} sent {name} on stream {sid} with initial request N {n}")
            st.zero_owed = sender.peer
        if kind is Kind.CHANNEL:
            st.inbound = StreamRecord(OPTIONS.demand_ceiling)
            self._step(sender.peer, sid, st, st.inbound, Signal.SUBSCRIBE, SignalArgs(amount=0), name, inbound=True)
            if frame.complete:  # type: ignore[union-attr]
                self._step(sender, sid, st, st.inbound, Signal.ON_COMPLETE, SignalArgs(), name, inbound=True)
        if self.contract is not None:
            self.contract.request(sid, st, frame.data)
        st.refresh()

    # -- stream frames ----------------------------------------------------------------

    def _direction(self, sender: Side, sid: int, st: RStream, name: str) -> tuple[StreamRecord, bool] | None:
        """The record ``sender``'s REQUEST_N or CANCEL acts on, and whether it is a channel's inbound one."""
        if st.requester is sender:
            return st.out, False
        if st.kind is Kind.CHANNEL:
            return st.inbound, True  # type: ignore[return-value]
        if st.kind is Kind.FNF:
            self.model.report("RS-FNF-1", sender, f"{sender} as responder sent {name} on fire-and-forget stream {sid}")
        return None  # a responder's REQUEST_N or CANCEL on a stream it does not subscribe to: ignored

    def request_n(self, sender: Side, frame: RequestN) -> None:
        sid, n = frame.stream_id, frame.request_n
        st = self.streams.get(sid)
        if st is None:
            self.model.ignorable(sender.peer, sid, "RS-UNEXPECTED-1")
            if n <= 0:
                self.model.report("RS-FLOW-1", sender, f"{sender} sent REQUEST_N {n} on unknown stream {sid}")
            return
        direction = self._direction(sender, sid, st, "REQUEST_N")
        if direction is None:
            return
        rec, inbound = direction
        if inbound:
            st.request_n_sent = True
        transition = self._step(sender, sid, st, rec, Signal.REQUEST, SignalArgs(amount=n), "REQUEST_N", inbound=inbound)
        if n <= 0:
            rec.owes_3_9 = None  # RSocket judges the reaction itself (RS-FLOW-3), with no "3.9" text
            if transition is None or transition.verdict is Verdict.IGNORED:
                self.model.report("RS-FLOW-1", sender, f"{sender} sent REQUEST_N {n} on stream {sid}")
            else:
                st.zero_owed = sender.peer
        st.refresh()

    def cancel(self, sender: Side, frame: Cancel) -> None:
        sid = frame.stream_id
        st = self.streams.get(sid)
        if st is None:
            self.model.ignorable(sender.peer, sid, "RS-UNEXPECTED-1")
            return
        direction = self._direction(sender, sid, st, "CANCEL")
        if direction is None:
            return
        rec, inbound = direction
        if inbound:
            self._channel_ends(sender, sid, st, "CANCEL")
        elif st.watched and self.contract is not None:
            self.contract.requester_frame(sid, None)
        self._step(sender, sid, st, rec, Signal.CANCEL, SignalArgs(), "CANCEL", inbound=inbound)
        st.refresh()

    def payload(self, sender: Side, frame: Payload) -> None:
        model, sid = self.model, frame.stream_id
        if not frame.next and not frame.complete:
            model.report("RS-STREAM-1", sender, f"{sender} sent PAYLOAD on stream {sid} with neither N nor C")
            return
        st = self.streams.get(sid)
        if st is None:
            model.ignorable(sender.peer, sid, "RS-UNEXPECTED-1")
            self._step(sender, sid, None, StreamRecord(), Signal.ON_NEXT if frame.next else Signal.ON_COMPLETE,
                       SignalArgs(), "PAYLOAD")
            return
        complete = frame.complete
        inbound = st.requester is sender
        if inbound:
            if st.kind is not Kind.CHANNEL:
                model.report("RS-STREAM-4", sender, f"{sender} as requester sent PAYLOAD on its own "
                             f"{st.kind.value} stream {sid}")
                return
            rec = st.inbound
        else:
            rec = st.out
            self._responder_speaks(sender, sid, st, "PAYLOAD", error_code=None)
            if st.kind is Kind.RESPONSE and frame.next and not complete and rec.state is StreamState.ACTIVE:
                model.report("RS-RR-2", sender, f"{sender} answered request-response stream {sid} with a PAYLOAD "
                             "without C")
                complete = True  # the receiver must assume C (Handling the Unexpected)
            if complete and st.kind is Kind.CHANNEL:
                self._channel_ends(sender, sid, st, "PAYLOAD with C")
        if st.zero_owed is sender:
            st.zero_owed = None
            model.report("RS-FLOW-3", sender, f"{sender} sent PAYLOAD on stream {sid} instead of an ERROR for "
                         "its peer's request N of 0")
        if frame.next:
            transition = self._step(sender, sid, st, rec, Signal.ON_NEXT, SignalArgs(count=1), "PAYLOAD",  # type: ignore[arg-type]
                                    inbound=inbound)
            if transition is None and rec.state is StreamState.DONE:  # type: ignore[union-attr]
                complete = False  # one finding for the frame: it came after the terminal signal
        if complete:
            self._step(sender, sid, st, rec, Signal.ON_COMPLETE, SignalArgs(), "PAYLOAD", inbound=inbound)  # type: ignore[arg-type]
        if st.watched and self.contract is not None:
            if inbound:
                self.contract.requester_frame(sid, frame)
            else:
                self.contract.responder_payload(sender, sid, frame, complete)
        st.refresh()

    def error(self, sender: Side, frame: Error) -> None:
        model, sid = self.model, frame.stream_id
        st = self.streams.get(sid)
        if st is None:
            rule = model.parties[sender].ignorable.get(sid)
            if rule is not None:
                model.report(rule, sender, f"{sender} answered a frame on stream {sid}, which it must ignore, "
                             "with ERROR")
            else:
                self._step(sender, sid, None, StreamRecord(), Signal.ON_ERROR, SignalArgs(), "ERROR")
            model.ignorable(sender.peer, sid, "RS-UNEXPECTED-1")
            return
        if (sid and st.requester is not sender and frame.error_code == REJECTED and st.in_use()
                and not model.parties[st.requester].wrapped):  # after the max id a REJECT is allowed (RS-q)
            rule = model.parties[sender].ignorable.pop(sid, None)
            if rule is not None:  # a request on this id, in use, is unanswered: the REJECTED answers it (RS-q)
                model.report(rule, sender, f"{sender} answered a request on stream {sid}, in use, which it must "
                             "ignore, with ERROR[REJECTED]; the stream it names goes on")
                return
        if st.watched and self.contract is not None:
            if st.requester is sender:
                self.contract.requester_frame(sid, frame)
            elif st.zero_owed is sender or (st.lease_reject and frame.error_code == REJECTED):
                # The ERROR that RS-FLOW-3 (after a request N of 0) or RS-LEASE-5 (beyond the lease) asks
                # for, not the publisher's own: the watch ends without judging it.
                self.contract.requester_frame(sid, None)
            else:
                self.contract.responder_error(sender, sid, frame)
        if st.requester is sender:
            if st.kind is Kind.CHANNEL:
                self._step(sender, sid, st, st.inbound, Signal.ON_ERROR, SignalArgs(), "ERROR", inbound=True)  # type: ignore[arg-type]
            self._step(sender, sid, st, st.out, Signal.CANCEL, SignalArgs(), "ERROR")  # ends the responder's direction
        else:
            self._responder_speaks(sender, sid, st, "ERROR", error_code=frame.error_code)
            if st.zero_owed is sender:
                st.zero_owed = None  # the reaction rule 3.9 asks for
            if st.kind is Kind.CHANNEL:
                self._channel_ends(sender, sid, st, "ERROR")
            self._step(sender, sid, st, st.out, Signal.ON_ERROR, SignalArgs(), "ERROR")
            if st.inbound is not None:
                self._step(sender, sid, st, st.inbound, Signal.CANCEL, SignalArgs(), "ERROR", inbound=True)
        st.refresh()

    def connection_error(self, sender: Side) -> None:
        """``sender`` sent ERROR[CONNECTION_ERROR] on stream 0: it answers every request N of 0 it owed."""
        for st in self.streams.values():
            if st.zero_owed is sender:
                st.zero_owed = None
                st.refresh()

    # -- obligations ------------------------------------------------------------------

    def lease_granted(self, sender: Side) -> None:
        """``sender`` sent a LEASE: the requests beyond the old lease it has not answered yet may have crossed
        this LEASE in flight (the judge sees one order of two directions), so it may serve them as well."""
        for st in self.streams.values():
            if st.lease_reject and st.requester is sender.peer:
                st.lease_crossed = True

    def _responder_speaks(self, sender: Side, sid: int, st: RStream, name: str, error_code: int | None) -> None:
        if st.lease_reject:
            st.lease_reject = False
            if st.lease_crossed:
                return
            if self.model.draft or error_code != REJECTED:
                self.model.report("RS-LEASE-5", sender, f"{sender} answered request {sid}, sent without a lease "
                                  f"left, with {name}" + ("" if self.model.draft else " instead of ERROR[REJECTED]"))

    def _channel_ends(self, sender: Side, sid: int, st: RStream, name: str) -> None:
        inbound = st.inbound
        if inbound is not None and inbound.state in LIVE and not st.request_n_sent:
            st.request_n_sent = True  # reported once
            self.model.report("RS-CHANNEL-3", sender, f"{sender} ended channel {sid} with {name} without ever "
                              "granting the requester credits with REQUEST_N")

    def close(self, side: Side) -> None:
        for sid, st in self.streams.items():
            if st.zero_owed is side:
                st.zero_owed = None
                st.refresh()
                self.model.report("RS-FLOW-3", side, f"{side} closed without an ERROR for the request N of 0 "
                                  f"on stream {sid}")

