"""RS-IO's sans-IO endpoint for either role: bytes in, events out (``binding.endpoint``).

Theory of operation (after h11 and wsproto): the I/O layer hands received
bytes to ``receive_data`` and gets events back; it calls ``send`` with frames
and writes whatever ``data_to_send`` returns.  No sockets, no clocks.  The
binding-neutral ``rsio_tck.protocol.Connection`` is a thin shell over this.

Every frame in either direction goes through the same ``ConnectionModel`` the
monitor uses, so the endpoint knows the protocol exactly as the judge does.
What the peer sends wrong surfaces as a ``ProtocolError`` event, with a
``goodbye`` naming the rule already queued, and the endpoint stops accepting
input (the receive boundary).  What the local application sends wrong raises
``ProtocolViolation`` at ``send`` unless the send is deliberately unchecked
(the reference peer's faults).  The endpoint also does what rsio-v0 makes
automatic: it acknowledges a goodbye, joins split elements within the
reassembly limit (cancelling a subscription whose element outgrows it), and
drops frames for subscriptions it cancelled.  Frames the protocol says to
ignore (a request or cancel for an Id that is unknown, cancelled or ended;
frames of an Id's previous subscription) come out as ``Ignored`` with the rule
that says so, for the application to log; they change nothing.
"""

from __future__ import annotations

from ...catalogue import PROTOCOL_ERRORS, RULES, Level
from ...errors import ProtocolViolation, Side
from ...protocol.events import ConnectionClosed, ConnectionState, Event, Ignored, ProtocolError, ReassemblyLimit
from ...semantics.signals import Signal
from ...semantics.streams import SignalArgs, StreamState, Verdict
from .mapping import STREAM_SIGNALS, apply_frame
from .model import ConnectionModel
from .split import ReassemblyLimitExceeded, SplitAssembler
from .wire import DEFAULT_LIMITS, Frame, Limits, get_codec
from .wire.frames import (
    Cancel,
    ClientHello,
    Goodbye,
    OnComplete,
    OnError,
    OnNext,
    OnNextLastPart,
    OnNextPart,
    OnSubscribe,
    ServerHello,
)
from .wire.runs import expand

_DROP_STATES = (StreamState.CANCELLED, StreamState.RESUBSCRIBING)


class RsioEndpoint:
    def __init__(
        self,
        role: Side,
        codec: str = "msgpack",
        limits: Limits | None = None,
        *,
        strict_peer: bool = True,
        tolerate: frozenset[str] = frozenset(),
    ) -> None:
        self.role = role
        self.peer = role.peer
        self.limits = limits or DEFAULT_LIMITS
        chosen = get_codec(codec)
        self.codec = chosen.name
        self._encoder = chosen.encoder(self.limits)
        self._decoder = chosen.decoder(self.limits)
        self.model = ConnectionModel()
        self.assembler = SplitAssembler(self.limits.max_reassembly)
        # Any MUST violation by the peer ends the connection, not only the
        # protocol errors rsio-v0 names: a reference implementation is strict.
        self.strict_peer = strict_peer
        # Rules whose violation by the peer is let through as if it were not one: only for
        # the reference peer's deliberate faults (e.g. accepting a duplicate subscribe, ID-2).
        self.tolerate = tolerate
        self.state = ConnectionState.OPEN
        self.error: ProtocolViolation | None = None
        self.goodbye_reason: str | None = None
        self._out: list[bytes] = []

    # -- sending ------------------------------------------------------------------------

    def send(self, frame: Frame, *, check: bool = True) -> None:
        """Queue ``frame``.  ``check=False`` sends even what breaks a rule (faults)."""
        if self.state is ConnectionState.CLOSED and check:
            raise ProtocolViolation(rule="BYE-1", side=self.role, message=f"{self.role} sent {frame.wire_name} after its goodbye")
        try:
            if check and isinstance(frame, OnNext) and self._encoder.element_size(frame.subscriber):
                size = self._encoder.element_size(frame.subscriber)
                if len(frame.element) != size:
                    raise ProtocolViolation(rule="PACK-1", side=self.role,
                                            message=f"onNext of {len(frame.element)} bytes on a stream of elementSize {size}")
            apply_frame(self.model, self.role, frame)
        except ProtocolViolation:
            self.model.warnings.clear()
            if check:
                raise
        self.model.warnings.clear()
        self._out.append(self._encoder.encode(frame))
        if isinstance(frame, Goodbye):
            self.state = ConnectionState.CLOSED if self.model.parties[self.role].goodbye_received else ConnectionState.CLOSING

    def send_elements(self, subscriber: int, elements: list[bytes]) -> None:
        """Queue many onNext frames for one variable-size stream at once (the hot path)."""
        if not elements:
            return
        self.model.stream(self.role, Signal.ON_NEXT, subscriber, SignalArgs(count=len(elements)))
        self._out.append(self._encoder.encode_elements(subscriber, elements))  # type: ignore[attr-defined]

    def send_raw(self, data: bytes) -> None:
        """Queue bytes that bypass codec and model: for malformed-input faults and tests."""
        self._out.append(data)

    def data_to_send(self) -> bytes:
        out = b"".join(self._out)
        self._out.clear()
        return out

    @property
    def pending_output(self) -> int:
        return sum(map(len, self._out))

    def outstanding(self, subscriber: int) -> int:
        """Demand the peer has given us (as publisher) for its subscription ``subscriber``."""
        rec = self.model.spaces[self.peer].get(subscriber)
        return rec.demand.outstanding if rec is not None else 0

    def subscription_state(self, subscriber: int, *, mine: bool) -> StreamState:
        rec = self.model.spaces[self.role if mine else self.peer].get(subscriber)
        return rec.state if rec is not None else StreamState.IDLE

    # -- receiving ------------------------------------------------------------------------

    def receive_data(self, data: bytes) -> list[Event]:
        if self.error is not None or self.state is ConnectionState.CLOSED:
            return []  # rsio-v0 §7: frames after a goodbye (ours or theirs) are ignored
        try:
            frames = self._decoder.feed(data)
        except ProtocolViolation as violation:
            # The frames before the bad bytes are taken as any others: whether they came
            # in the same read as the bad bytes or an earlier one must not matter.
            frames = expand(self._decoder.salvaged)
            wire_error: ProtocolViolation | None = self.model.wire_error(self.peer, violation)
        else:
            wire_error = None
        events: list[Event] = []
        for frame in frames:
            self._receive_frame(frame, events)
            if self.error is not None or self.state is ConnectionState.CLOSED:
                return events
        if wire_error is not None:
            self._fail(wire_error, events)
        return events

    def receive_eof(self) -> list[Event]:
        events: list[Event] = []
        if self.error is None and self.state is not ConnectionState.CLOSED:
            try:
                self._decoder.eof()
            except ProtocolViolation as violation:
                # A truncated frame is a protocol error like any other: goodbye naming it
                # (the peer's write side ended, ours has not), then ProtocolError.
                self._fail(self.model.wire_error(self.peer, violation), events)
        orderly = self.model.parties[self.peer].state.name == "CLOSING" and self.model.parties[self.role].state.name == "CLOSING"
        self.state = ConnectionState.CLOSED
        reason = self.goodbye_reason if self.goodbye_reason is not None else (
            str(self.error) if self.error else "transport closed without goodbye")
        events.append(ConnectionClosed(orderly=orderly, reason=reason))
        return events

    def _receive_frame(self, frame: Frame, events: list[Event]) -> None:
        model = self.model
        kind = type(frame)
        if kind is OnNext and model.deliver_fast(self.peer, frame.subscriber, 1):  # type: ignore[union-attr]
            # The table's fast path also takes elements in flight after our cancel; those are
            # judged like any other but dropped, not handed on (STR-8), as the general path below does.
            if model.spaces[self.role][frame.subscriber].state is StreamState.ACTIVE:  # type: ignore[union-attr]
                events.append(frame)
            return
        mapped = STREAM_SIGNALS.get(kind)
        before: StreamState | None = None  # state of our own subscription a publisher signal is for
        if mapped is not None and not mapped[0].from_subscriber:
            rec = model.spaces[self.role].get(frame.subscriber)  # type: ignore[union-attr]
            before = rec.state if rec is not None else StreamState.IDLE
        try:
            transition = apply_frame(model, self.peer, frame)
        except ProtocolViolation as violation:
            model.warnings.clear()
            if violation.rule not in self.tolerate and (
                violation.rule in PROTOCOL_ERRORS or (self.strict_peer and RULES[violation.rule].level is Level.MUST)
            ):
                self._fail(violation, events)
                return
            transition = None
        model.warnings.clear()
        if kind is Goodbye:
            self.goodbye_reason = frame.reason  # type: ignore[union-attr]
            events.append(frame)
            if self.state is ConnectionState.OPEN:
                self.send(Goodbye(reason="goodbye acknowledged"))
            self.state = ConnectionState.CLOSED
            return
        if kind is ClientHello or kind is ServerHello:
            if model.owed(self.role) == "HS-5":
                self.send(Goodbye(reason=f"unsupported protocol version {frame.version}; this party speaks 0"))  # type: ignore[union-attr]
                self.state = ConnectionState.CLOSED
            events.append(frame)
            return
        if transition is not None and transition.verdict is Verdict.IGNORED:
            events.append(Ignored(frame=frame, rule=transition.rule, why=transition.why))
            return
        if before in _DROP_STATES and not (
            kind is OnSubscribe and self.subscription_state(frame.subscriber, mine=True) is StreamState.ACTIVE  # type: ignore[union-attr]
        ):
            return  # a frame of a subscription we cancelled (ID-4, STR-8)
        if kind is OnNextPart or kind is OnNextLastPart:
            try:
                whole = self.assembler.add(frame.subscriber, frame.data, kind is OnNextLastPart)  # type: ignore[union-attr]
            except ReassemblyLimitExceeded as exceeded:
                self.send(Cancel(subscriber=exceeded.subscriber))
                events.append(ReassemblyLimit(subscriber=exceeded.subscriber, size=exceeded.size, limit=exceeded.limit))
                return
            if whole is not None:
                events.append(OnNext(subscriber=frame.subscriber, element=whole))  # type: ignore[union-attr]
            return
        if kind is OnError or kind is OnComplete:
            self.assembler.drop(frame.subscriber)  # type: ignore[union-attr]
        events.append(frame)

    def _fail(self, violation: ProtocolViolation, events: list[Event]) -> None:
        self.error = violation
        if self.state is ConnectionState.OPEN:
            self.send(Goodbye(reason=str(violation)), check=False)
        self.state = ConnectionState.CLOSED
        events.append(ProtocolError(violation=violation))

