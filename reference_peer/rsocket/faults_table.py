"""The RSocket faults: one per MUST rule of the catalogue that this peer (responder, or requester through
tck/subscribe) can break, each named for what it does and citing the rule (tck/rules.py, SPEC.md).

Three kinds: policy faults replace one decision of ``policy.Policy``; endpoint
faults replace ``make_endpoint`` and give the sans-IO endpoint a subclass that
overrides one of its automatic behaviours (SETUP, KEEPALIVE, LEASE, closing), so
the core itself has no switches; wire faults write raw bytes the codec would
never produce.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rsio_tck.bindings.rsocket.endpoint import Endpoint, EndpointState
from rsio_tck.bindings.rsocket.frames import (
    APPLICATION_ERROR,
    CONNECTION_ERROR,
    REJECTED_SETUP,
    Error,
    Ext,
    Keepalive,
    Lease,
    MetadataPush,
    Payload,
    RequestFnf,
    RequestN,
    RequestStream,
    Setup,
)
from rsio_tck.protocol.events import ProtocolError

from ..sources import End
from .faults import Base, Fault, fault
from .policy import Policy

if TYPE_CHECKING:
    from .flows import Echo, Flow, SubscribeBack
    from .session import Session


def _once(flow: Flow, mark: str) -> bool:
    """True the first time ``mark`` is asked for on ``flow``."""
    if mark in flow.marks:
        return False
    flow.marks.add(mark)
    return True


def _first(p: Policy, mark: str) -> bool:
    """True the first time ``mark`` is asked for on this connection."""
    if p.state.get(mark):
        return False
    p.state[mark] = True
    return True


def _endpoint_override(name: str, rule: str, description: str, method: str,
                       make: Callable[[Any], Callable[..., Any]]) -> Fault:
    """A fault that overrides endpoint method ``method``: ``make(parent_method)`` returns the override."""
    declared = fault(name, rule, description)

    @declared.on("make_endpoint")
    def _make(p: Policy, base: Base, s: Session, **options: Any) -> Endpoint:
        endpoint: Endpoint = base(s, **options)
        parent = type(endpoint)
        endpoint.__class__ = type(f"{parent.__name__}_{method}", (parent,), {method: make(getattr(parent, method))})
        return endpoint

    return declared


# -- connection establishment (RS-SETUP) ---------------------------------------------------------


def _accept_any_version(parent: Callable[..., None]) -> Callable[..., None]:
    def receive_first(self: Endpoint, frame: Any, events: list[Any]) -> None:
        if isinstance(frame, Setup):
            frame = Setup(**{**{f: getattr(frame, f) for f in frame.__dataclass_fields__},
                             "major_version": 0 if self.draft else 1, "minor_version": 0})
        parent(self, frame, events)
    return receive_first


_endpoint_override("setup-any-version", "RS-SETUP-6", "accepts a SETUP of any version", "_receive_first",
                   _accept_any_version)


def _no_setup_needed(parent: Callable[..., None]) -> Callable[..., None]:
    def receive_first(self: Endpoint, frame: Any, events: list[Any]) -> None:
        if isinstance(frame, Setup):
            parent(self, frame, events)
            return
        self.setup = Setup(keepalive_interval=30_000, max_lifetime=90_000, metadata_mime=b"", data_mime=b"")
        self.accepted = True
        self._receive_frame(frame, events)  # served as if a SETUP had come first
    return receive_first


_endpoint_override("setup-not-required", "RS-SETUP-9",
                   "serves a connection whose first frame is not SETUP instead of answering ERROR[INVALID_SETUP]",
                   "_receive_first", _no_setup_needed)

speaks_first = fault("setup-server-speaks-first", "RS-SETUP-10", "sends a KEEPALIVE before the client's first frame")


@speaks_first.on("on_connection_made")
def _speaks_first(p: Policy, base: Base, s: Session) -> None:
    base(s)
    s.send_raw(s.endpoint.encode(Keepalive(respond=not s.endpoint.draft, data=b"early")))


# -- keepalive (RS-KEEPALIVE) -----------------------------------------------------------------------


def _silent_keepalive(parent: Callable[..., None]) -> Callable[..., None]:
    def receive_keepalive(self: Endpoint, frame: Keepalive, events: list[Any]) -> None:
        events.append(frame)  # seen, never answered
    return receive_keepalive


_endpoint_override("keepalive-unanswered", "RS-KEEPALIVE-3", "never answers a KEEPALIVE", "_receive_keepalive",
                   _silent_keepalive)


def _keepalive_stream(parent: Callable[..., None]) -> Callable[..., None]:
    def receive_keepalive(self: Endpoint, frame: Keepalive, events: list[Any]) -> None:
        if frame.respond or self.draft:
            self.send(Keepalive(stream_id=1, respond=False, data=frame.data), check=False)
        events.append(frame)
    return receive_keepalive


_endpoint_override("keepalive-on-stream", "RS-KEEPALIVE-1", "answers a KEEPALIVE with a KEEPALIVE on stream 1",
                   "_receive_keepalive", _keepalive_stream)


# -- lease (RS-LEASE) ---------------------------------------------------------------------------------


def _no_lease(parent: Callable[..., None]) -> Callable[..., None]:
    def grant_lease(self: Endpoint, ttl_ms: int | None = None, requests: int | None = None) -> None:
        self._grants = True  # a lease of nothing, never sent: every request is rejected, and no LEASE goes out
        self._granted_left, self._granted_until, self._renew_at = 0, 0.0, float("inf")
    return grant_lease


never_granted = _endpoint_override("lease-never-granted", "RS-LEASE-3",
                                   "accepts a SETUP with L (and says so with a METADATA_PUSH) but never sends a LEASE",
                                   "grant_lease", _no_lease)


@never_granted.on("after_setup")
def _never_granted(p: Policy, base: Base, s: Session, setup: Setup) -> None:
    base(s, setup)
    s.send_unchecked(MetadataPush(metadata=b"accepted"))

unasked_lease = fault("lease-unasked", "RS-LEASE-2", "sends a LEASE on a connection whose SETUP did not ask for one")


@unasked_lease.on("after_setup")
def _unasked_lease(p: Policy, base: Base, s: Session, setup: Setup) -> None:
    base(s, setup)
    if not setup.lease:
        s.send_unchecked(Lease(ttl=60_000, number_of_requests=100))


def _lease_stream(parent: Callable[..., None]) -> Callable[..., None]:
    def grant_lease(self: Endpoint, ttl_ms: int | None = None, requests: int | None = None) -> None:
        self._grants = True
        self._granted_until = self._renew_at = float("inf")
        self._granted_left = 2**31 - 1
        self.send(Lease(stream_id=1, ttl=ttl_ms or self.lease_grant[0], number_of_requests=self.lease_grant[1]),
                  check=False)
    return grant_lease


_endpoint_override("lease-on-stream", "RS-LEASE-1", "sends its LEASE on stream 1", "grant_lease", _lease_stream)


def _lease_unenforced(parent: Callable[..., None]) -> Callable[..., None]:
    def receive_request(self: Endpoint, frame: Any, events: list[Any]) -> None:
        self._granted_left, self._granted_until = max(self._granted_left, 1), max(self._granted_until, self.now + 1)
        parent(self, frame, events)  # every request is served, lease or not
    return receive_request


_endpoint_override("lease-not-enforced", "RS-LEASE-5", "serves requests beyond the LEASE it granted",
                   "_receive_request", _lease_unenforced)

lease_ignored = fault("lease-ignored-as-requester", "RS-LEASE-4",
                      "tck/subscribe: sends its request without waiting for the client's LEASE")


@lease_ignored.on("when_leased")
def _lease_ignored(p: Policy, base: Base, s: Session, request: Callable[[], None]) -> None:
    request()  # sends are unchecked while a fault is on


# -- stream ids (RS-STREAMID), as requester through tck/subscribe ---------------------------------------


def _open_inner_on(sid_of: Callable[[Policy, Session, SubscribeBack], int], twice: bool = False) -> Callable[..., None]:
    def open_inner(p: Policy, base: Base, s: Session, back: SubscribeBack) -> None:
        sid = sid_of(p, s, back)
        back.inner = sid
        s.inbound[sid] = back
        frame = RequestStream(stream_id=sid, initial_request_n=back.initial_n(), data=back.spec.to.encode())
        s.send_unchecked(frame)
        if twice:
            s.send_unchecked(frame)
    return open_inner


odd_id = fault("streamid-odd", "RS-STREAMID-1", "tck/subscribe: opens its request on an odd stream id")
odd_id.on("open_inner")(_open_inner_on(lambda p, s, back: s.endpoint.new_stream_id() + 1))
skip_id = fault("streamid-skip", "RS-STREAMID-2", "tck/subscribe: its first request skips stream id 2")
skip_id.on("open_inner")(_open_inner_on(lambda p, s, back: s.endpoint.new_stream_id() + 2))
in_use = fault("streamid-in-use", "RS-STREAMID-4", "tck/subscribe: sends its REQUEST_STREAM twice on one stream id")
in_use.on("open_inner")(_open_inner_on(lambda p, s, back: s.endpoint.new_stream_id(), twice=True))
reuse = fault("streamid-reuse", "RS-STREAMID-3", "tck/subscribe: every inner request reuses stream id 2")
reuse.on("open_inner")(_open_inner_on(lambda p, s, back: 2))

# -- flow control (RS-FLOW) -------------------------------------------------------------------------------

zero_n = fault("flow-request-zero", "RS-FLOW-1", "tck/subscribe: opens its request with initial request N 0")


@zero_n.on("open_inner")
def _zero_n(p: Policy, base: Base, s: Session, back: SubscribeBack) -> None:
    sid = back.inner = s.endpoint.new_stream_id()
    s.inbound[sid] = back
    s.send_unchecked(RequestStream(stream_id=sid, initial_request_n=0, data=back.spec.to.encode()))


beyond = fault("flow-beyond-demand", "RS-FLOW-2", "sends one element more than the demand on each stream")


@beyond.on("sendable")
def _beyond(p: Policy, base: Base, s: Session, flow: Flow) -> int:
    credit: int = base(s, flow)
    if credit == 0 and flow.kind == "stream" and flow.sent and "beyond" not in flow.marks:
        return 1
    return credit


@beyond.on("emit")
def _beyond_emit(p: Policy, base: Base, s: Session, flow: Flow, data: bytes, complete: bool) -> None:
    if s.endpoint.credit(flow.sid) == 0:
        flow.marks.add("beyond")  # this is the element beyond the demand
    base(s, flow, data, complete)


def _remember_credit(parent: Callable[..., None]) -> Callable[..., None]:
    def receive_cancel(self: Endpoint, frame: Any, events: list[Any]) -> None:
        record = self.streams.get(frame.stream_id)
        self.__dict__.setdefault("credit_at_cancel", {})[frame.stream_id] = record.credit if record else 0
        parent(self, frame, events)
    return receive_cancel


ignore_cancel = _endpoint_override("flow-ignore-cancel", "RS-FLOW-2",
                                   "ignores CANCEL: sends what credit was left (at most 16) and one element more",
                                   "_receive_cancel", _remember_credit)


@ignore_cancel.on("on_cancel")
def _ignore_cancel(p: Policy, base: Base, s: Session, flow: Flow) -> None:
    left = s.endpoint.__dict__.get("credit_at_cancel", {}).get(flow.sid, 0)
    count = min(min(left, 16) + 1, flow.source.available())
    for data in flow.source.take(count):
        s.send_unchecked(Payload(stream_id=flow.sid, next=True, data=data))
    base(s, flow)


# -- stream sequences (RS-STREAM, RS-RR, RS-FNF, RS-CHANNEL) -------------------------------------------------

no_flags = fault("stream-payload-no-flags", "RS-STREAM-1", "ends a stream with a PAYLOAD that has neither N nor C")


@no_flags.on("finish")
def _no_flags(p: Policy, base: Base, s: Session, flow: Flow, end: End) -> None:
    if end.error is None:
        s.send_unchecked(Payload(stream_id=flow.sid))
    base(s, flow, end)


unrequested = fault("stream-unrequested", "RS-STREAM-2", "after completing a stream, sends a PAYLOAD on a stream never requested")


@unrequested.on("finish")
def _unrequested(p: Policy, base: Base, s: Session, flow: Flow, end: End) -> None:
    base(s, flow, end)
    s.send_unchecked(Payload(stream_id=flow.sid + 2000, next=True, complete=True, data=b"0"))


after_complete = fault("stream-next-after-complete", "RS-STREAM-3", "sends one more element after completing a stream")


@after_complete.on("finish")
def _after_complete(p: Policy, base: Base, s: Session, flow: Flow, end: End) -> None:
    base(s, flow, end)
    s.send_unchecked(Payload(stream_id=flow.sid, next=True, data=b"0"))


@after_complete.on("emit")
def _after_complete_nc(p: Policy, base: Base, s: Session, flow: Flow, data: bytes, complete: bool) -> None:
    base(s, flow, data, complete)
    if complete and flow.kind == "stream":
        s.send_unchecked(Payload(stream_id=flow.sid, next=True, data=b"0"))


two_responses = fault("rr-two-responses", "RS-RR-1", "answers a request-response twice")


@two_responses.on("emit")
def _two_responses(p: Policy, base: Base, s: Session, flow: Flow, data: bytes, complete: bool) -> None:
    base(s, flow, data, complete)
    if flow.kind == "response":
        s.send_unchecked(Payload(stream_id=flow.sid, next=True, complete=True, data=data))


fnf_answered = fault("fnf-answered", "RS-FNF-1", "answers a fire-and-forget with a PAYLOAD")


@fnf_answered.on("on_fnf")
def _fnf_answered(p: Policy, base: Base, s: Session, frame: RequestFnf) -> None:
    base(s, frame)
    s.send_unchecked(Payload(stream_id=frame.stream_id, next=True, complete=True, data=b"ok"))


no_grant = fault("channel-no-request-n", "RS-CHANNEL-3", "completes a tck/echo channel at once, never sending REQUEST_N")


@no_grant.on("open_channel")
def _no_grant(p: Policy, base: Base, s: Session, echo: Echo) -> None:
    s.inbound.pop(echo.flow.sid, None)
    s.end_flow(echo.flow, End())


# -- errors (RS-ERROR) ------------------------------------------------------------------------------------------

connection_code = fault("error-connection-code-on-stream", "RS-ERROR-1",
                        "rejects an unknown name with ERROR[CONNECTION_ERROR] on its stream")


@connection_code.on("reject")
def _connection_code(p: Policy, base: Base, s: Session, sid: int, reason: str) -> None:
    s.send_unchecked(Error(stream_id=sid, error_code=CONNECTION_ERROR, data=reason.encode()))


stream_code = fault("error-stream-code-on-zero", "RS-ERROR-2",
                    "rejects an unknown name with ERROR[APPLICATION_ERROR] on stream 0")


@stream_code.on("reject")
def _stream_code(p: Policy, base: Base, s: Session, sid: int, reason: str) -> None:
    s.send_unchecked(Error(stream_id=0, error_code=APPLICATION_ERROR, data=reason.encode()))


reserved_code = fault("error-reserved-code", "RS-ERROR-3", "rejects an unknown name with the RESERVED error code 0")


@reserved_code.on("reject")
def _reserved_code(p: Policy, base: Base, s: Session, sid: int, reason: str) -> None:
    s.send_unchecked(Error(stream_id=sid, error_code=0, data=reason.encode()))


def _talks_after_error(parent: Callable[..., None]) -> Callable[..., None]:
    def fail(self: Endpoint, violation: Any, events: list[Any]) -> None:
        parent(self, violation, events)
        self.send_raw(self.encode(Keepalive(respond=not self.draft, data=b"still here")))
    return fail


_endpoint_override("error-frames-after-connection-error", "RS-ERROR-5",
                   "sends a KEEPALIVE after its ERROR[CONNECTION_ERROR] on malformed input", "_fail",
                   _talks_after_error)

null_terminated = fault("error-null-terminated", "RS-ERROR-7", "ends the text of its stream ERRORs with a NUL byte")


@null_terminated.on("finish")
def _null_terminated(p: Policy, base: Base, s: Session, flow: Flow, end: End) -> None:
    if end.error is None:
        base(s, flow, end)
        return
    s.send_unchecked(Error(stream_id=flow.sid, error_code=APPLICATION_ERROR, data=end.error.encode() + b"\0"))
    s.forget_flow(flow)


# -- metadata push and framing (RS-PUSH, RS-FRAME, RS-FRAG) -----------------------------------------------------

push_stream = fault("push-on-stream", "RS-PUSH-1", "sends a METADATA_PUSH on stream 1 after accepting the SETUP")


@push_stream.on("after_setup")
def _push_stream(p: Policy, base: Base, s: Session, setup: Setup) -> None:
    base(s, setup)
    s.send_unchecked(MetadataPush(stream_id=1, metadata=b"push"))


def _raw_after_setup(name: str, rule: str, description: str, raw: Callable[[Session], bytes]) -> None:
    declared = fault(name, rule, description)

    @declared.on("after_setup")
    def _send(p: Policy, base: Base, s: Session, setup: Setup) -> None:
        base(s, setup)
        s.send_raw(raw(s))


def _frame(s: Session, body: bytes) -> bytes:
    """``body`` (header and all) with the profile's length prefix."""
    if s.endpoint.draft:
        return (len(body) + 4).to_bytes(4, "big") + body
    return len(body).to_bytes(3, "big") + body


def _header(s: Session, frame_type: int, flags: int, stream_id: int) -> bytes:
    if s.endpoint.draft:
        return bytes((0, flags & 0xFF)) + frame_type.to_bytes(2, "big") + stream_id.to_bytes(8, "big")
    return stream_id.to_bytes(4, "big") + ((frame_type << 10) | flags).to_bytes(2, "big")


_raw_after_setup("frame-push-without-m", "RS-FRAME-9", "sends a METADATA_PUSH without the M flag after the SETUP",
                 lambda s: _frame(s, _header(s, 0x0C, 0, 0) + b"push"))
_raw_after_setup("frame-unknown-type", "RS-FRAME-4", "sends a frame of type 0x30 without the I flag after the SETUP",
                 lambda s: _frame(s, _header(s, 0x30, 0, 0)))
_raw_after_setup("frame-short", "RS-FRAME-1", "sends a frame shorter than a frame header after the SETUP",
                 lambda s: _frame(s, b"\0\0"))
_raw_after_setup("frame-trailing-bytes", "RS-FRAME-7", "sends a REQUEST_N with two bytes after its last field",
                 lambda s: _frame(s, _header(s, 0x08, 0, 2) + (1).to_bytes(4 if not s.endpoint.draft else 8, "big")
                                  + b"\0\0"))
_raw_after_setup("frame-truncated-field", "RS-FRAME-6", "sends a REQUEST_N cut inside its request N",
                 lambda s: _frame(s, _header(s, 0x08, 0, 2) + b"\0\0"))
_raw_after_setup("frame-metadata-overrun", "RS-FRAME-5",
                 "sends a PAYLOAD whose metadata length runs past the end of the frame",
                 lambda s: _frame(s, _header(s, 0x0A, 0x100 | 0x20, 2) + b"\0\0\x10ab"))
_raw_after_setup("frame-ext-type-zero", "RS-FRAME-10", "sends an EXT frame with extended type 0 (I flag set)",
                 lambda s: s.endpoint.encode(Ext(stream_id=0, ignore=True, extended_type=0)))

reserved_bit = fault("frame-reserved-bit", "RS-FRAME-3", "sends a stream's first element with the stream id's reserved bit set")


@reserved_bit.on("emit")
def _reserved_bit(p: Policy, base: Base, s: Session, flow: Flow, data: bytes, complete: bool) -> None:
    if s.endpoint.draft or not _first(p, "reserved-bit"):
        base(s, flow, data, complete)
        return
    raw = bytearray(s.endpoint.encode(Payload(stream_id=flow.sid, next=True, complete=complete, data=data)))
    raw[3] |= 0x80  # after the 3-byte length: the stream id's high bit
    s.endpoint._account_sent(Payload(stream_id=flow.sid, next=True, complete=complete, data=data))
    s.send_raw(bytes(raw))
    flow.sent += 1
    if complete:
        s.forget_flow(flow)


cut_short = fault("frame-transport-ends-inside", "RS-FRAME-8",
                  "ends the connection in the middle of a frame when a stream completes")


@cut_short.on("finish")
def _cut_short(p: Policy, base: Base, s: Session, flow: Flow, end: End) -> None:
    raw = s.endpoint.encode(Payload(stream_id=flow.sid, complete=True))
    s.send_raw(raw[: len(raw) - 3])
    s.forget_flow(flow)
    s.close("fault frame-transport-ends-inside")


broken_chain = fault("frag-interrupted", "RS-FRAG-1", "interrupts a fragmented element with a REQUEST_N on its stream")


@broken_chain.on("emit")
def _broken_chain(p: Policy, base: Base, s: Session, flow: Flow, data: bytes, complete: bool) -> None:
    size = max(1, len(data) // 2)
    if len(data) < 2 or not _once(flow, "broken-chain"):
        base(s, flow, data, complete)
        return
    s.send_raw(s.endpoint.encode(Payload(stream_id=flow.sid, follows=True, next=True, data=data[:size])))
    s.send_raw(s.endpoint.encode(RequestN(stream_id=flow.sid, request_n=1)))
    s.send_raw(s.endpoint.encode(Payload(stream_id=flow.sid, next=True, complete=complete, data=data[size:])))
    s.endpoint._account_sent(Payload(stream_id=flow.sid, next=True, complete=complete, data=data))
    flow.sent += 1
    if complete:
        s.forget_flow(flow)


metadata_late = fault("frag-metadata-after-data", "RS-FRAG-2",
                      "fragments an element so that a later fragment carries metadata after data")


@metadata_late.on("emit")
def _metadata_late(p: Policy, base: Base, s: Session, flow: Flow, data: bytes, complete: bool) -> None:
    if not _once(flow, "metadata-late"):
        base(s, flow, data, complete)
        return
    s.send_raw(s.endpoint.encode(Payload(stream_id=flow.sid, follows=True, next=True, data=data)))
    s.send_raw(s.endpoint.encode(Payload(stream_id=flow.sid, next=True, complete=complete, metadata=b"late")))
    s.endpoint._account_sent(Payload(stream_id=flow.sid, next=True, complete=complete, data=data))
    flow.sent += 1
    if complete:
        s.forget_flow(flow)


server_setup = fault("setup-from-server", "RS-SETUP-3", "sends a SETUP of its own after accepting the client's")


@server_setup.on("after_setup")
def _server_setup(p: Policy, base: Base, s: Session, setup: Setup) -> None:
    base(s, setup)
    s.send_unchecked(Setup(keepalive_interval=setup.keepalive_interval, max_lifetime=setup.max_lifetime,
                           major_version=setup.major_version, minor_version=setup.minor_version,
                           metadata_mime=b"application/octet-stream", data_mime=b"text/plain"))


late_setup_error = fault("error-setup-code-after-accept", "RS-ERROR-4",
                         "after its first response, sends ERROR[REJECTED_SETUP] on stream 0 and closes")


@late_setup_error.on("emit")
def _late_setup_error(p: Policy, base: Base, s: Session, flow: Flow, data: bytes, complete: bool) -> None:
    base(s, flow, data, complete)
    if complete and _first(p, "late-setup-error"):
        s.send_unchecked(Error(stream_id=0, error_code=REJECTED_SETUP, data=b"changed my mind"))
        s.close("fault error-setup-code-after-accept")


def _answer_unexpected(parent: Callable[..., None]) -> Callable[..., None]:
    def ignore(self: Endpoint, frame: Any, why: str, events: list[Any], rule: str = "RS-UNEXPECTED-1") -> None:
        if rule != "RS-UNEXPECTED-1" or isinstance(frame, Setup):
            parent(self, frame, why, events, rule)
            return
        self.send(Error(stream_id=0, error_code=CONNECTION_ERROR, data=f"unexpected: {why}".encode()), check=False)
        self.state = EndpointState.CLOSED
    return ignore


_endpoint_override("unexpected-answered", "RS-UNEXPECTED-1",
                   "answers a frame on an unknown stream with ERROR[CONNECTION_ERROR] instead of ignoring it",
                   "_ignore", _answer_unexpected)


def _answer_second_setup(parent: Callable[..., None]) -> Callable[..., None]:
    def receive_setup(self: Endpoint, frame: Setup, events: list[Any]) -> None:
        self.send(Error(stream_id=0, error_code=CONNECTION_ERROR, data=b"a second SETUP"), check=False)
        self.state = EndpointState.CLOSED
    return receive_setup


_endpoint_override("unexpected-second-setup-answered", "RS-UNEXPECTED-2",
                   "answers a second SETUP with ERROR[CONNECTION_ERROR] instead of ignoring it",
                   "_receive_setup", _answer_second_setup)


def _silent_close(parent: Callable[..., None]) -> Callable[..., None]:
    def fail(self: Endpoint, violation: Any, events: list[Any]) -> None:
        self.error = violation
        self.state = EndpointState.CLOSED  # closes without the ERROR[CONNECTION_ERROR]
        events.append(ProtocolError(violation=violation))
    return fail


_endpoint_override("error-silent-close", "RS-ERROR-8",
                   "closes on malformed input (an invalid metadata length) without sending ERROR[CONNECTION_ERROR]",
                   "_fail", _silent_close)
