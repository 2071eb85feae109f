"""A sans-IO RSocket endpoint for either role and both wire profiles: bytes in, frames and events out.

Theory of operation (after h11 and wsproto).  The I/O shell hands received
bytes to ``receive_data`` and gets events back: whole frames (fragments
reassembled) and the events of ``rsio_tck.protocol.events``; it calls ``send``
with frames and writes whatever ``data_to_send`` returns.  There are no
sockets and no clocks: the shell tells the endpoint the time with ``tick(now)``
(and ``receive_data(..., now=)``), and ``next_deadline()`` says when it next
needs telling.

What the endpoint does on its own, because the spec makes it automatic:
- SETUP.  A client queues its SETUP on construction (``setup=None`` leaves it to
  the application).  A server takes the first frame: a SETUP of a version it
  speaks is accepted (and answered with LEASE when it asks for leases); another
  version gets ERROR[UNSUPPORTED_SETUP], bad parameters ERROR[INVALID_SETUP], a
  resume request ERROR[REJECTED_SETUP], RESUME ERROR[REJECTED_RESUME], and
  anything else first ERROR[INVALID_SETUP]; each closes the connection.
- KEEPALIVE, lifetime and LEASE are what time drives: ``endpoint_timers.py``.
- KEEPALIVE.  A KEEPALIVE with R is answered with one without R echoing its
  data (the draft has no R: its server answers every KEEPALIVE); a client sends
  its own every interval of its SETUP as ``tick`` passes.
- Stream ids: ``new_stream_id()`` gives this role's next id (client odd, server
  even, increasing, never reused): after the highest it handed out and the highest
  the judge saw it send a request on.
- Fragmentation: with ``mtu`` set, ``send`` cuts fragmentable frames so that no
  frame is longer than ``mtu``; received fragments are joined by the judge's
  reassembler for the remote's direction (``RSocketJudge.judge_each``), the one
  reassembler of that direction.
- LEASE: a responder that granted a lease answers requests beyond it with
  ERROR[REJECTED]; a requester's ``may_request`` says whether its lease allows one
  more request, and a checked ``send`` refuses a request beyond it.
- The unexpected (Protocol.md, Handling the Unexpected) comes out as ``Ignored``
  with the reason; malformed input as ``ProtocolError`` with ERROR[CONNECTION_ERROR]
  on stream 0 queued, after which the endpoint accepts no more input.

Streams are not tracked here: every frame either way goes through the binding's
own judge (the monitor's), whose ``Interactions`` know which streams are open, who
requested each and which side may still send PAYLOADs on it; ``stream``,
``sending``, ``receiving`` and ``open_stream_ids`` read them there, and ``credit``
the demand the remote granted.  The endpoint keeps only its own decisions: the
remote's requests it refused (beyond the lease, on an id the remote may not
open), which the judge still counts as opened.  The judge takes a batch of the
remote's frames first and this side's answers to them after (as the monitor
sees them cross); each frame is handled with its stream as the judge had it just
before the frame.  Once the connection is closed (or failed) the rest of the batch
is neither read nor judged, as in a later read: a request behind the frame that
closed it opens no stream.  So ``send(frame)`` holds this side to exactly the rules
the kit judges: a ProtocolViolation naming the rule, and nothing queued.  The
judge has seen the refused frame, as with RS-IO's ``Connection``: a refused send
is a bug of the application, and the endpoint is not to be used further.
``send(frame, check=False)`` and ``send_raw`` let the reference peer's faults
break rules on purpose.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ...catalogue import RULES, Level
from ...errors import ProtocolViolation, Side
from ...protocol.events import ConnectionClosed, ConnectionState, Event, Ignored, ProtocolError
from .codec import RSocketLimits
from .endpoint_state import (
    FRAGMENT_OVERHEAD,
    REQUESTS,
    RULE,
    SETUP_CODES,
    EndpointState,
    SetupRejected,
    default_setup,
    stream_error,
)
from .endpoint_streams import EndpointStreams, element_run_end
from .endpoint_timers import EndpointTimers
from .fragments import fragment
from .frames import (
    CONNECTION_CLOSE,
    CONNECTION_ERROR,
    FRAGMENTABLE,
    INVALID_SETUP,
    REJECTED,
    REJECTED_RESUME,
    REJECTED_SETUP,
    STREAM_ID_MAX,
    UNSUPPORTED_SETUP,
    Cancel,
    Error,
    Frame,
    IgnoredFrame,
    Keepalive,
    Lease,
    MetadataPush,
    Payload,
    RequestFnf,
    RequestN,
    Resume,
    Setup,
    SetupError,
)
from .interactions import Kind, StreamView
from .judge import RSocketJudge
from .profiles import get_profile


def _unheeded(violation: ProtocolViolation, index: int | None, frame: Any) -> None:
    """The remote's findings are the judge's to keep; the endpoint answers what it reads itself."""


class Endpoint(EndpointStreams, EndpointTimers):
    def __init__(self, role: Side, profile: str = "rsocket-1.0", limits: RSocketLimits | None = None, *,
                 setup: Setup | None | bool = True, mtu: int | None = None, length_prefix: bool = True,
                 lease_grant: tuple[int, int] = (60_000, 1000), enforce_lifetime: bool = False,
                 now: float = 0.0) -> None:
        self.role = role
        self.profile = profile
        self.draft = profile == "reactivesocket-draft"
        chosen = get_profile(profile)
        self.limits = limits
        self._encoder = chosen.encoder(limits, length_prefix=length_prefix)
        self._decoder = chosen.decoder(limits, length_prefix=length_prefix)
        # The kit's judge, fed every frame either way: a checked send is judged as the monitor would judge it.
        self._judge = RSocketJudge(profile, limits, contract=False)
        self._judged = 0  # frames judged, both directions
        if mtu is not None and mtu <= FRAGMENT_OVERHEAD:
            raise ValueError(f"mtu {mtu} leaves no room for payload (at least {FRAGMENT_OVERHEAD + 1})")
        self.mtu = mtu
        self.lease_grant = lease_grant  # (ttl ms, requests) this side grants when the remote honours leases
        self.enforce_lifetime = enforce_lifetime
        self.state = ConnectionState.OPEN
        self.error: ProtocolViolation | None = None
        self.setup: Setup | None = None  # the connection's SETUP, once sent (client) or accepted (server)
        self.accepted = False  # the server accepted the SETUP (a client infers it: Connection Establishment)
        # The remote's requests this side refused (its policy: the judge counts them as opened, with findings).
        self._refused: set[int] = set()
        # While a batch of the remote's frames is handled: this side's answers, sent once the judge has the batch,
        # and the stream of the frame at hand as the judge had it before the frame.
        self._held: list[Callable[[], None]] | None = None
        self._before: StreamView | None = None
        # The highest id ``new_stream_id`` handed out (0: none): ids handed out and not yet sent are the
        # endpoint's to know; the ids sent are the judge's (``Party.last_stream_id``).
        self._handed_out = 0
        self._out: list[bytes] = []
        self.now = now
        self._last_received = now
        self._next_keepalive: float | None = None
        # LEASE: what either side granted, what is left of it and when it expires are the judge's
        # (``ConnectionModel``: the requester's party); the endpoint keeps only its policy as a responder.
        self._renew_at = 0.0
        self._grants = False  # we are a responder that sends LEASEs
        self.enforces_lease = True  # requests beyond the lease we granted are refused (a fault may not)
        if role is Side.CLIENT and setup is not None and setup is not False:
            self.send(default_setup(profile) if setup is True else setup)

    # -- sending --------------------------------------------------------------------------

    def new_stream_id(self) -> int:
        """This role's next stream id: odd for a client, even for a server, increasing, never reused."""
        sent = self._judge.model.parties[self.role].last_stream_id  # the highest this side sent a request on
        taken = max(sent, self._handed_out)
        sid = taken + 2 if taken else 1 if self.role is Side.CLIENT else 2
        if sid > STREAM_ID_MAX:
            raise ProtocolViolation(rule=RULE["id-exhausted"], side=self.role,
                                    message=f"{self.role} has used every stream id; a new connection is needed")
        self._handed_out = sid
        return sid

    def send(self, frame: Frame | IgnoredFrame, *, check: bool = True, fragment_size: int | None = None) -> None:
        """Queue ``frame``; ``check`` holds this side to its rules.

        A fragmentable frame is cut into fragments of at most ``fragment_size``
        bytes of metadata + data (default: what the MTU leaves), never more than the MTU allows.
        """
        if self._held is not None:  # an answer to the remote's batch: judged after the batch
            self._held.append(lambda: Endpoint._send_now(self, frame, check, fragment_size))
            return
        self._send_now(frame, check, fragment_size)

    def _send_now(self, frame: Frame | IgnoredFrame, check: bool, fragment_size: int | None) -> None:
        if isinstance(frame, IgnoredFrame):
            self._judge_frames(self.role, [frame])
            self._out.append(self._encoder.encode(frame))
            return
        size = self.mtu - FRAGMENT_OVERHEAD if self.mtu is not None else None
        if fragment_size is not None:
            size = fragment_size if size is None else min(size, fragment_size)
        pieces: list[Any] = [frame]
        if size is not None and isinstance(frame, FRAGMENTABLE) and (not self.draft or isinstance(frame, Payload)):
            pieces = fragment(frame, size)  # type: ignore[arg-type]
        broken = [v for v in self._judge_frames(self.role, pieces) if v.side is self.role]
        if check and broken:
            raise ProtocolViolation(rule=broken[0].rule, side=self.role,
                                    message=f"{self.role} would send {frame.wire_name}: {broken[0].message}")
        self._account_sent(frame)
        for piece in pieces:
            self._out.append(self._encoder.encode(piece))
        if isinstance(frame, Setup) and frame.lease and self.role is Side.CLIENT:
            self.grant_lease()  # the client-side responder grants the server-side requester (Sequences with LEASE)

    def send_raw(self, data: bytes, *, standing_for: Frame | None = None) -> None:
        """Bytes that bypass codec and checks (faults, malformed-input tests).

        ``standing_for`` is the frame the bytes carry as far as the streams go (a fault's broken
        encoding of an element, say): the judge takes it as sent, unchecked, so the credit it keeps
        counts the element, as the remote does."""
        if self._held is not None:
            self._held.append(lambda: Endpoint.send_raw(self, data, standing_for=standing_for))
            return
        if standing_for is not None:
            self._judge_frames(self.role, [standing_for])
            self._account_sent(standing_for)
        self._out.append(data)

    def encode(self, frame: Any) -> bytes:
        """``frame`` as this endpoint's wire writes it, without queueing it."""
        return self._encoder.encode(frame)

    def data_to_send(self) -> bytes:
        out = b"".join(self._out)
        self._out.clear()
        return out

    def _judge_frames(self, sender: Side, frames: list[Any]) -> list[ProtocolViolation]:
        """Apply ``frames`` to the judge; the MUST rules they broke (not those found by time passing)."""
        found: list[ProtocolViolation] = []

        def record(violation: ProtocolViolation, index: int | None, frame: Any) -> None:
            if frame is not None and RULES[violation.rule].level is Level.MUST:
                found.append(violation)

        self._judged = self._judge.judge(sender, frames, self.now, self._judged, record)
        return found

    def _account_sent(self, frame: Frame) -> None:
        """What sending ``frame`` changes in this side's view of the connection."""
        sid = frame.stream_id
        if isinstance(frame, Setup):
            self.setup = frame
            interval = self._keepalive_seconds(frame)
            self._next_keepalive = self.now + interval if interval > 0 else None  # (0 is illegal: none sent)
            return
        if isinstance(frame, Error) and sid == 0:
            self._close_state(frame.error_code)
            return
        if isinstance(frame, REQUESTS):
            self._refused.discard(sid)  # this side's own stream now (after a wrap, say)
        elif sid != 0:
            self._closed_if_idle(sid)

    def _close_state(self, code: int) -> None:
        if code == CONNECTION_CLOSE and self.open_stream_ids():
            self.state = ConnectionState.CLOSING
        else:
            self.state = ConnectionState.CLOSED

    # -- receiving ------------------------------------------------------------------------

    def receive_data(self, data: bytes, now: float | None = None) -> list[Event]:
        if now is not None:
            self.now = now
        if self.error is not None or self.state is ConnectionState.CLOSED:
            return []
        self._last_received = self.now
        events: list[Event] = []
        wire_error: ProtocolViolation | None = None
        frames: list[Any]
        try:
            frames = self._decoder.feed(data)
        except ProtocolViolation as violation:
            frames, wire_error = list(self._decoder.salvaged), violation.with_side(self.role.peer)
        # The judge takes the whole batch (its reassembler joins the fragments) before this side's answers to it,
        # which are held meanwhile; each frame is handled with its stream as the judge had it before the frame.
        # A run of plain elements on one receiving stream is judged at once: an element changes no stream's
        # lifecycle, so each of them had the stream as the run's first had it (``element_run_end``).
        judge, remote, judged, stopped = self._judge, self.role.peer, 0, False
        held: list[Callable[[], None]] = []
        self._held = held
        try:
            while judged < len(frames) and not stopped:
                first = frames[judged]
                self._before = before = self.stream(first.stream_id)
                end = element_run_end(frames, judged, before)
                batch = frames[judged:end]
                self._judged, wholes = judge.judge_each(remote, batch, self.now, self._judged, _unheeded)
                judged = end
                for frame, whole in zip(batch, wholes, strict=True):
                    self._receive_decoded(frame, whole, events)
                    if self.state is ConnectionState.CLOSING and frame.stream_id != 0:
                        self._closed_if_idle(frame.stream_id)
                    if self.error is not None or self.state is ConnectionState.CLOSED:
                        stopped = True
                        break
            if not stopped:  # once closed (or failed), this side reads nothing more: what follows in the read is
                # unread, as it would be in a later read, and opens no stream in the judge it reads its streams from
                self._judged, _ = judge.judge_each(remote, frames[judged:], self.now, self._judged, _unheeded)
                if wire_error is not None:
                    judge.wire_error(remote, wire_error)
        finally:
            self._held, self._before = None, None
            for answer in held:
                answer()
        if wire_error is not None and not stopped:
            self._fail(wire_error, events)
        return events

    def receive_eof(self) -> list[Event]:
        events: list[Event] = []
        if self.error is None and self.state is not ConnectionState.CLOSED:
            try:
                self._decoder.eof()
            except ProtocolViolation as violation:
                self._fail(violation.with_side(self.role.peer), events)
        orderly = self.state is not ConnectionState.OPEN and self.error is None
        self.state = ConnectionState.CLOSED
        events.append(ConnectionClosed(orderly=orderly, reason=str(self.error) if self.error else
                                       "transport closed" + ("" if orderly else " without ERROR on stream 0")))
        return events

    def _fail(self, violation: ProtocolViolation, events: list[Event]) -> None:
        """The remote broke the connection: ERROR on stream 0 (INVALID_SETUP before a SETUP), then closed."""
        self.error = violation
        if self.state is not ConnectionState.CLOSED:
            message = violation.message.encode()[:1024]
            if self.role is Side.SERVER and self.setup is None:
                code = UNSUPPORTED_SETUP if violation.rule == "RS-DRAFT-1" else INVALID_SETUP
                self._send_setup_error(code, message)
            else:
                self.send(Error(stream_id=0, error_code=CONNECTION_ERROR, data=message), check=False)
        self.state = ConnectionState.CLOSED
        events.append(ProtocolError(violation=violation))

    def _send_setup_error(self, code: int, message: bytes) -> None:
        if self.draft:  # the draft's SETUP_ERROR, with its own codes
            draft_code = {UNSUPPORTED_SETUP: 0x0010, REJECTED_SETUP: 0x0100}.get(code, 0x0001)
            self.send(SetupError(error_code=draft_code, data=message), check=False)
        else:
            self.send(Error(stream_id=0, error_code=code, data=message), check=False)

    def _ignore(self, frame: Any, why: str, events: list[Event], rule: str = RULE["ignored"]) -> None:
        events.append(Ignored(frame=frame, rule=rule, why=why))

    def _receive_decoded(self, decoded: Any, whole: Any, events: list[Event]) -> None:
        """One decoded frame, with what the judge's reassembly made of it (``judge_each``)."""
        if isinstance(decoded, IgnoredFrame):
            self._ignore(decoded, decoded.reason, events, decoded.rule)
            return
        if isinstance(whole, ProtocolViolation):
            self._fail(whole, events)  # a broken fragment chain
            return
        if whole is None:
            return  # a fragment chain in progress
        self._receive_frame(whole, events)

    def _receive_frame(self, frame: Any, events: list[Event]) -> None:
        """One whole frame from the remote."""
        if self.role is Side.SERVER and self.setup is None:
            self._receive_first(frame, events)
            return
        if isinstance(frame, (Lease, Payload, *REQUESTS)):
            self.accepted = True  # a client infers acceptance from these (Connection Establishment)
        handler = self._RECEIVERS.get(type(frame))
        if handler is not None:
            getattr(self, handler)(frame, events)  # by name: a subclass may override one receiver
        elif isinstance(frame, REQUESTS):
            self._receive_request(frame, events)
        else:
            self._ignore(frame, f"{frame.wire_name} is not expected by a {self.role}", events)

    def _receive_first(self, frame: Any, events: list[Event]) -> None:
        """The server's first frame: SETUP (accepted or rejected), or a connection that cannot start."""
        if isinstance(frame, Resume):
            self._reject_setup(frame, REJECTED_RESUME, "this server does not resume sessions", events)
            return
        if not isinstance(frame, Setup) or frame.stream_id != 0:
            what = f"{frame.wire_name} on stream {frame.stream_id}"
            violation = ProtocolViolation(rule=RULE["setup-first"], side=Side.CLIENT,
                                          message=f"client's first frame is {what}, not SETUP on stream 0")
            self._fail(violation, events)
            return
        version = (0, 0) if self.draft else (1, 0)
        if (frame.major_version, frame.minor_version) != version and (self.draft or frame.major_version != 1):
            self._reject_setup(frame, UNSUPPORTED_SETUP, f"version {frame.major_version}.{frame.minor_version} "
                               f"is not supported; this server speaks {version[0]}.{version[1]}", events)
        elif frame.keepalive_interval < 1 or frame.max_lifetime < 1:
            self._reject_setup(frame, INVALID_SETUP, "keepalive interval and max lifetime must be > 0", events)
        elif frame.resume_token is not None:
            self._reject_setup(frame, REJECTED_SETUP, "this server does not resume sessions", events)
        else:
            self.setup = frame
            self.accepted = True
            events.append(frame)
            if frame.lease:
                self.grant_lease()

    def _reject_setup(self, frame: Any, code: int, reason: str, events: list[Event]) -> None:
        self._send_setup_error(code, reason.encode())
        self.state = ConnectionState.CLOSED
        events.append(SetupRejected(setup=frame, error_code=code, reason=reason))

    def _receive_setup(self, frame: Setup, events: list[Event]) -> None:
        why = "a client ignores SETUP" if self.role is Side.CLIENT else "a server ignores a SETUP after accepting one"
        self._ignore(frame, why, events)

    def _receive_error(self, frame: Error, events: list[Event]) -> None:
        if frame.stream_id == 0:
            if frame.error_code in SETUP_CODES and (self.role is Side.SERVER or self.accepted):
                self._ignore(frame, "a setup error after the connection was established", events)
                return
            self._close_state(frame.error_code)
            events.append(frame)
            return
        if self._before is None:
            self._ignore(frame, f"ERROR on unknown stream {frame.stream_id}", events)
            return
        events.append(frame)

    def _receive_setup_error(self, frame: SetupError, events: list[Event]) -> None:
        if self.role is Side.SERVER or self.accepted:
            self._ignore(frame, "a setup error after the connection was established", events)
            return
        self.state = ConnectionState.CLOSED
        events.append(frame)

    def _receive_request(self, frame: Any, events: list[Event]) -> None:
        sid = frame.stream_id
        if self._before is not None:
            self._ignore(frame, f"{frame.wire_name} on stream {sid}, which is in use", events)
            return
        if sid == 0 or sid % 2 == (1 if self.role is Side.CLIENT else 0):
            self._refused.add(sid)
            self._ignore(frame, f"{frame.wire_name} on stream {sid}, not an id the remote may open", events)
            return
        if self._grants:
            if self._beyond_lease(sid):
                self._refused.add(sid)
                answered = not isinstance(frame, RequestFnf) and not self.draft  # the draft ignores it (seed 001)
                if answered:
                    self.send(Error(stream_id=sid, error_code=REJECTED, data=b"request beyond the lease"), check=False)
                why = "ERROR[REJECTED] sent" if answered else "ignored"
                self._ignore(frame, f"request beyond the lease granted: {why}", events, RULE["lease"])
                return
            left = self._judge.model.parties[self.role.peer].lease_left  # after this request (judged first)
            if left is not None and left <= self.lease_grant[1] // 2:
                self._renew_at = self.now  # renewed at the next tick: a burst beyond the grant is still rejected
        self._refused.discard(sid)
        events.append(frame)

    def _receive_request_n(self, frame: RequestN, events: list[Event]) -> None:
        if self._before is None or not self._before.sending:
            self._ignore(frame, f"REQUEST_N on stream {frame.stream_id}, which does not send", events)
            return
        events.append(frame)  # request N = 0 is the application's to answer (bindings.md §2)

    def _receive_cancel(self, frame: Cancel, events: list[Event]) -> None:
        if self._before is None or not self._before.sending:
            self._ignore(frame, f"CANCEL on stream {frame.stream_id}, which does not send", events)
            return
        events.append(frame)

    def _receive_payload(self, frame: Payload, events: list[Event]) -> None:
        before = self._before
        if before is None or not before.receiving:
            self._ignore(frame, f"PAYLOAD on stream {frame.stream_id}, which is not receiving", events)
            return
        if before.kind is Kind.RESPONSE and not frame.complete:
            frame = replace(frame, complete=True)  # Handling the Unexpected: a request-response PAYLOAD completes
        events.append(frame)

    def _receive_metadata_push(self, frame: MetadataPush, events: list[Event]) -> None:
        if frame.stream_id != 0:
            self._ignore(frame, f"METADATA_PUSH on stream {frame.stream_id}", events)
            return
        events.append(frame)

    _RECEIVERS: dict[type, str] = {
        Setup: "_receive_setup",
        SetupError: "_receive_setup_error",
        Keepalive: "_receive_keepalive",
        Lease: "_receive_lease",
        Error: "_receive_error",
        RequestN: "_receive_request_n",
        Cancel: "_receive_cancel",
        Payload: "_receive_payload",
        MetadataPush: "_receive_metadata_push",
    }


__all__ = ["Endpoint", "EndpointState", "SetupRejected", "StreamView", "default_setup", "stream_error"]
