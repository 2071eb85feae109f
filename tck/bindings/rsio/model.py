"""The model of one connection: both parties, both Id spaces, every obligation.

Theory of operation: the same ``ConnectionModel`` serves as the conscience of an
endpoint (a ``rsio_tck.protocol.Connection`` applies what it sends and what it
receives) and as the judge of a monitor (which applies what both parties sent,
in the order it observed them).  A binding calls ``hello``, ``goodbye``,
``stream`` and ``close`` with the sending side; each raises ``ProtocolViolation``
for the first MUST rule the event breaks, after updating the state as far as
the event still makes sense, so judging can go on.  SHOULD deviations are
appended to ``warnings`` instead.  Obligations that only time can settle (an
answer that never came) are for scenarios; obligations that a close settles
(a goodbye that was owed) are checked by ``close``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...catalogue import GOODBYE_OBLIGATION, PROTOCOL_ERRORS
from ...errors import ProtocolViolation, Side
from ...semantics.signals import Signal
from ...semantics.streams import SignalArgs, StreamRecord, StreamState, Transition, deliver_fast, step
from .handshake import Move, PartyState, lookup

SUPPORTED_VERSIONS = frozenset({0})
_LIVE = (StreamState.SUBSCRIBING, StreamState.RESUBSCRIBING, StreamState.ACTIVE, StreamState.PART)


@dataclass(slots=True)
class Party:
    role: Side
    state: PartyState = PartyState.IDLE
    version: int | None = None
    extensions: tuple[int, ...] = ()
    goodbye_received: bool = False
    # The rule that obliges this party to send goodbye (BYE-2, ERR-1, HS-5), if any.
    owes_goodbye: str | None = None
    initiated_goodbye: bool = False
    closed: bool = False
    frames_sent: int = 0

    @property
    def may_stream(self) -> bool:
        return self.state is PartyState.OPEN or (
            self.state is PartyState.SAID and self.role is Side.CLIENT
        )


@dataclass(slots=True)
class ConnectionModel:
    supported_versions: frozenset[int] = SUPPORTED_VERSIONS
    parties: dict[Side, Party] = field(default_factory=lambda: {s: Party(s) for s in Side})
    # Subscriptions by subscribing side, then by that side's Id.
    spaces: dict[Side, dict[int, StreamRecord]] = field(default_factory=lambda: {s: {} for s in Side})
    warnings: list[ProtocolViolation] = field(default_factory=list)
    # Ids subscribed after the subscriber's own goodbye: answering them breaks BYE-6.
    _after_goodbye: dict[Side, set[int]] = field(default_factory=lambda: {s: set() for s in Side})

    # -- judging helpers -----------------------------------------------------------

    def _warn_for(self, side: Side):  # type: ignore[no-untyped-def]
        def warn(rule: str, message: str) -> None:
            self.warnings.append(ProtocolViolation(rule=rule, side=side, message=message))

        return warn

    def _raise(self, violation: ProtocolViolation) -> None:
        if violation.rule in PROTOCOL_ERRORS and violation.side is not None:
            peer = self.parties[violation.side.peer]
            if peer.owes_goodbye is None and peer.state is not PartyState.CLOSING:
                peer.owes_goodbye = GOODBYE_OBLIGATION.get(violation.rule, "ERR-1")
        raise violation

    def _move(self, sender: Side, move: Move, what: str) -> bool:
        """Apply a handshake move; False if the frame must not be applied further."""
        party = self.parties[sender]
        party.frames_sent += 1
        result = lookup(sender, party.state, move)
        if not result.ok:
            self._raise(ProtocolViolation(
                rule=result.rule, side=sender,
                message=f"{sender} sent {what} in state {party.state.name}: {result.why}",
            ))
        if result.next is not None:
            party.state = result.next
        return True

    def wire_error(self, sender: Side, violation: ProtocolViolation) -> ProtocolViolation:
        """The sender's bytes could not be decoded: a protocol error (ERR-1 for its peer)."""
        attributed = violation.with_side(sender)
        try:
            self._raise(attributed)
        except ProtocolViolation:
            pass
        return attributed

    # -- the events -----------------------------------------------------------------

    def hello(self, sender: Side, *, client_kind: bool, version: int, extensions: tuple[int, ...] = ()) -> None:
        right_kind = client_kind == (sender is Side.CLIENT)
        name = "clientHello" if client_kind else "serverHello"
        self._move(sender, Move.SEND_HELLO if right_kind else Move.SEND_WRONG_HELLO, name)
        party, peer = self.parties[sender], self.parties[sender.peer]
        party.version, party.extensions = version, tuple(extensions)
        heard = lookup(peer.role, peer.state, Move.RECV_HELLO)
        if heard.next is not None:
            peer.state = heard.next
        if version not in self.supported_versions and peer.owes_goodbye is None:
            peer.owes_goodbye = "HS-5"
        if (
            sender is Side.SERVER
            and peer.version is not None
            and peer.version in self.supported_versions
            and version != peer.version
        ):
            self._raise(ProtocolViolation(
                rule="HS-6", side=sender,
                message=f"server answered clientHello version {peer.version} with version {version}",
            ))

    def goodbye(self, sender: Side, reason: str) -> None:
        party, peer = self.parties[sender], self.parties[sender.peer]
        owed = party.owes_goodbye
        self._move(sender, Move.SEND_GOODBYE, "goodbye")
        party.initiated_goodbye = owed is None and not party.goodbye_received
        party.owes_goodbye = None
        peer.goodbye_received = True
        if peer.state is not PartyState.CLOSING and peer.owes_goodbye is None:
            peer.owes_goodbye = "BYE-2"
        # goodbye ends the sender's subscriptions as if it had cancelled them (BYE-5).
        for sid, rec in self.spaces[sender].items():
            if rec.state in _LIVE:
                step(sender, sid, rec, Signal.CANCEL, SignalArgs(), self._warn_for(sender))
        if owed in ("ERR-1", "EXT-3", "ID-2", "HS-5") and not reason.strip():
            self.warnings.append(ProtocolViolation(
                rule="ERR-2", side=sender, message=f"{sender} answered a protocol error with an empty goodbye reason",
            ))

    def stream(self, sender: Side, signal: Signal, sid: int, args: SignalArgs) -> Transition | None:
        """A stream frame; returns the transition it took (None if it was not applied)."""
        party = self.parties[sender]
        if party.state is PartyState.CLOSING and signal is Signal.SUBSCRIBE:
            self._after_goodbye[sender].add(sid)
        self._move(sender, Move.SEND_STREAM, signal.value)
        subscriber = sender if signal.from_subscriber else sender.peer
        space = self.spaces[subscriber]
        ignored = self._after_goodbye[subscriber]
        if signal is Signal.ON_SUBSCRIBE and sid in ignored:
            ignored.discard(sid)
            self._raise(ProtocolViolation(
                rule="BYE-6", side=sender,
                message=f"{sender} answered subscribe({sid}), which arrived after the peer's goodbye",
            ))
        rec = space.get(sid)
        if rec is None:
            rec = space[sid] = StreamRecord()
        try:
            return step(sender, sid, rec, signal, args, self._warn_for(sender))
        except ProtocolViolation as violation:
            self._raise(violation)
            raise  # unreachable: _raise always raises

    def deliver_fast(self, sender: Side, sid: int, count: int) -> bool:
        """``count`` elements from ``sender`` on ``sid`` by the stream table's fast path
        (``semantics.streams.deliver_fast``), when the sender may stream.

        True when it applied; False when the general path (``stream``) must judge
        the frame.  A test checks the two agree.
        """
        party = self.parties[sender]
        if party.state is not PartyState.OPEN or not deliver_fast(self.spaces[sender.peer].get(sid), count):
            return False
        party.frames_sent += 1
        return True

    def close(self, side: Side) -> list[ProtocolViolation]:
        """``side``'s transport ended; returns the obligations that the close broke."""
        party = self.parties[side]
        if party.closed:
            return []
        party.closed = True
        found: list[ProtocolViolation] = []
        if party.owes_goodbye is not None and party.state is not PartyState.CLOSING:
            why = {
                "BYE-2": "closed without answering the peer's goodbye",
                "ERR-1": "closed without goodbye after the peer's protocol error",
                "HS-5": "closed without goodbye after a hello of an unsupported version",
                "EXT-3": "closed without goodbye after an undeclared extension type",
                "ID-2": "closed without goodbye after a subscribe for an active Id",
            }[party.owes_goodbye]
            found.append(ProtocolViolation(rule=party.owes_goodbye, side=side, message=f"{side} {why}"))
        if party.initiated_goodbye and not party.goodbye_received:
            found.append(ProtocolViolation(
                rule="BYE-3", side=side, message=f"{side} closed before the peer acknowledged its goodbye",
            ))
        return found

    def owed(self, side: Side) -> str | None:
        """The rule by which ``side`` still owes a goodbye, if it does."""
        party = self.parties[side]
        return None if party.state is PartyState.CLOSING else party.owes_goodbye
