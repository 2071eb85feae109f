"""RSocket faults of the connection: SETUP, KEEPALIVE, LEASE, errors, metadata push, the unexpected."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from rsio_tck.bindings.rsocket.endpoint import Endpoint, EndpointState
from rsio_tck.bindings.rsocket.frames import (
    APPLICATION_ERROR,
    CONNECTION_ERROR,
    REJECTED_SETUP,
    Error,
    Keepalive,
    Lease,
    MetadataPush,
    Payload,
    RequestResponse,
    Resume,
    ResumeOk,
    Setup,
)
from rsio_tck.errors import Side
from rsio_tck.protocol.events import ProtocolError

from ...sources import End
from ..policy import Policy
from .declare import Base, endpoint_override, endpoint_overrides, fault, first_on_connection

if TYPE_CHECKING:
    from ..connection import RSocketConnection
    from ..flows import Flow


# -- connection establishment (RS-SETUP) ---------------------------------------------------------


def _accept_any_version(parent: Callable[..., None]) -> Callable[..., None]:
    def receive_first(self: Endpoint, frame: Any, events: list[Any]) -> None:
        if isinstance(frame, Setup):
            frame = replace(frame, major_version=0 if self.draft else 1, minor_version=0)
        parent(self, frame, events)
    return receive_first


endpoint_override("setup-any-version", "RS-SETUP-6", "accepts a SETUP of any version", "_receive_first",
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


endpoint_override("setup-not-required", "RS-SETUP-9",
                   "serves a connection whose first frame is not SETUP instead of answering ERROR[INVALID_SETUP]",
                   "_receive_first", _no_setup_needed)

speaks_first = fault("setup-server-speaks-first", "RS-SETUP-10", "sends a KEEPALIVE before the client's first frame")


@speaks_first.on("on_connection_made")
def _speaks_first(p: Policy, base: Base, s: RSocketConnection) -> None:
    base(s)
    s.send_raw(s.endpoint.encode(Keepalive(respond=not s.endpoint.draft, data=b"early")))


# -- keepalive (RS-KEEPALIVE) -----------------------------------------------------------------------


def _silent_keepalive(parent: Callable[..., None]) -> Callable[..., None]:
    def receive_keepalive(self: Endpoint, frame: Keepalive, events: list[Any]) -> None:
        events.append(frame)  # seen, never answered
    return receive_keepalive


endpoint_override("keepalive-unanswered", "RS-KEEPALIVE-3", "never answers a KEEPALIVE", "_receive_keepalive",
                   _silent_keepalive)


def _keepalive_stream(parent: Callable[..., None]) -> Callable[..., None]:
    def receive_keepalive(self: Endpoint, frame: Keepalive, events: list[Any]) -> None:
        if frame.respond or self.draft:
            self.send(Keepalive(stream_id=1, respond=False, data=frame.data), check=False)
        events.append(frame)
    return receive_keepalive


endpoint_override("keepalive-on-stream", "RS-KEEPALIVE-1", "answers a KEEPALIVE with a KEEPALIVE on stream 1",
                   "_receive_keepalive", _keepalive_stream)


def _no_periodic_keepalive(parent: Callable[..., list[Any]]) -> Callable[..., list[Any]]:
    def tick(self: Endpoint, now: float) -> list[Any]:
        self._next_keepalive = None  # never due: the client stays silent while idle
        return parent(self, now)
    return tick


endpoint_override("client-keepalive-silent", "RS-KEEPALIVE-2",
                  "as client: never sends its periodic KEEPALIVE (caught by the keepalive client test case)", "tick",
                  _no_periodic_keepalive)


# -- lease (RS-LEASE) ---------------------------------------------------------------------------------


def _no_lease(parent: Callable[..., None]) -> Callable[..., None]:
    def grant_lease(self: Endpoint, ttl_ms: int | None = None, requests: int | None = None) -> None:
        self._grants = True  # a lease of nothing, never sent: every request is rejected, and no LEASE goes out
        self._renew_at = float("inf")
    return grant_lease


never_granted = endpoint_override("lease-never-granted", "RS-LEASE-3",
                                   "accepts a SETUP with L (and says so with a METADATA_PUSH) but never sends a LEASE",
                                   "grant_lease", _no_lease)


@never_granted.on("after_setup")
def _never_granted(p: Policy, base: Base, s: RSocketConnection, setup: Setup) -> None:
    base(s, setup)
    s.send_unchecked(MetadataPush(metadata=b"accepted"))

unasked_lease = fault("lease-unasked", "RS-LEASE-2", "sends a LEASE on a connection whose SETUP did not ask for one")


@unasked_lease.on("after_setup")
def _unasked_lease(p: Policy, base: Base, s: RSocketConnection, setup: Setup) -> None:
    base(s, setup)
    if not setup.lease:
        s.send_unchecked(Lease(ttl=60_000, number_of_requests=100))


def _lease_stream(parent: Callable[..., None]) -> Callable[..., None]:
    def grant_lease(self: Endpoint, ttl_ms: int | None = None, requests: int | None = None) -> None:
        self._grants, self.enforces_lease = True, False  # the remote may not see this LEASE: none is refused
        self._renew_at = float("inf")
        self.send(Lease(stream_id=1, ttl=ttl_ms or self.lease_grant[0], number_of_requests=self.lease_grant[1]),
                  check=False)
    return grant_lease


endpoint_override("lease-on-stream", "RS-LEASE-1", "sends its LEASE on stream 1", "grant_lease", _lease_stream)


def _lease_unenforced(parent: Callable[..., None]) -> Callable[..., None]:
    def receive_request(self: Endpoint, frame: Any, events: list[Any]) -> None:
        self.enforces_lease = False
        parent(self, frame, events)  # every request is served, lease or not
    return receive_request


endpoint_override("lease-not-enforced", "RS-LEASE-5", "serves requests beyond the LEASE it granted",
                   "_receive_request", _lease_unenforced)

lease_ignored = fault("lease-ignored-as-requester", "RS-LEASE-4",
                      "tck/subscribe: sends its request without waiting for the client's LEASE")


@lease_ignored.on("when_leased")
def _lease_ignored(p: Policy, base: Base, s: RSocketConnection, request: Callable[[], None]) -> None:
    request()  # sends are unchecked while a fault is on


# -- errors (RS-ERROR) ------------------------------------------------------------------------------------------

connection_code = fault("error-connection-code-on-stream", "RS-ERROR-1",
                        "rejects an unknown name with ERROR[CONNECTION_ERROR] on its stream")


@connection_code.on("reject")
def _connection_code(p: Policy, base: Base, s: RSocketConnection, sid: int, reason: str) -> None:
    s.send_unchecked(Error(stream_id=sid, error_code=CONNECTION_ERROR, data=reason.encode()))


stream_code = fault("error-stream-code-on-zero", "RS-ERROR-2",
                    "rejects an unknown name with ERROR[APPLICATION_ERROR] on stream 0")


@stream_code.on("reject")
def _stream_code(p: Policy, base: Base, s: RSocketConnection, sid: int, reason: str) -> None:
    s.send_unchecked(Error(stream_id=0, error_code=APPLICATION_ERROR, data=reason.encode()))


reserved_code = fault("error-reserved-code", "RS-ERROR-3", "rejects an unknown name with the RESERVED error code 0")


@reserved_code.on("reject")
def _reserved_code(p: Policy, base: Base, s: RSocketConnection, sid: int, reason: str) -> None:
    s.send_unchecked(Error(stream_id=sid, error_code=0, data=reason.encode()))


def _talks_after_error(parent: Callable[..., None]) -> Callable[..., None]:
    def fail(self: Endpoint, violation: Any, events: list[Any]) -> None:
        parent(self, violation, events)
        self.send_raw(self.encode(Keepalive(respond=not self.draft, data=b"still here")))
    return fail


endpoint_override("error-frames-after-connection-error", "RS-ERROR-5",
                   "sends a KEEPALIVE after its ERROR[CONNECTION_ERROR] on malformed input", "_fail",
                   _talks_after_error)

null_terminated = fault("error-null-terminated", "RS-ERROR-7", "ends the text of its stream ERRORs with a NUL byte")


@null_terminated.on("finish")
def _null_terminated(p: Policy, base: Base, s: RSocketConnection, flow: Flow, end: End) -> None:
    if end.error is None:
        base(s, flow, end)
        return
    s.send_unchecked(Error(stream_id=flow.sid, error_code=APPLICATION_ERROR, data=end.error.encode() + b"\0"))
    s.forget_flow(flow)


# -- metadata push and framing (RS-PUSH, RS-FRAME, RS-FRAG) -----------------------------------------------------

push_stream = fault("push-on-stream", "RS-PUSH-1", "sends a METADATA_PUSH on stream 1 after accepting the SETUP")


@push_stream.on("after_setup")
def _push_stream(p: Policy, base: Base, s: RSocketConnection, setup: Setup) -> None:
    base(s, setup)
    s.send_unchecked(MetadataPush(stream_id=1, metadata=b"push"))


server_setup = fault("setup-from-server", "RS-SETUP-3", "sends a SETUP of its own after accepting the client's")


@server_setup.on("after_setup")
def _server_setup(p: Policy, base: Base, s: RSocketConnection, setup: Setup) -> None:
    base(s, setup)
    s.send_unchecked(Setup(keepalive_interval=setup.keepalive_interval, max_lifetime=setup.max_lifetime,
                           major_version=setup.major_version, minor_version=setup.minor_version,
                           metadata_mime=b"application/octet-stream", data_mime=b"text/plain"))


late_setup_error = fault("error-setup-code-after-accept", "RS-ERROR-4",
                         "after its first response, sends ERROR[REJECTED_SETUP] on stream 0 and closes")


def _reject_late(p: Policy, s: RSocketConnection) -> None:
    if first_on_connection(p, "late-setup-error"):
        s.send_unchecked(Error(stream_id=0, error_code=REJECTED_SETUP, data=b"changed my mind"))
        s.close("fault error-setup-code-after-accept")


# The first response ends either with its last element (PAYLOAD N|C) or with a PAYLOAD C of its own, a
# seeded freedom per connection: the fault follows both, or whether it shows at all would depend on the seed.
@late_setup_error.on("emit")
def _late_setup_error(p: Policy, base: Base, s: RSocketConnection, flow: Flow, data: bytes, complete: bool) -> None:
    base(s, flow, data, complete)
    if complete:
        _reject_late(p, s)


@late_setup_error.on("finish")
def _late_setup_error_after_complete(p: Policy, base: Base, s: RSocketConnection, flow: Flow, end: End) -> None:
    base(s, flow, end)
    if end.error is None:
        _reject_late(p, s)


def _answer_unexpected(parent: Callable[..., None]) -> Callable[..., None]:
    def ignore(self: Endpoint, frame: Any, why: str, events: list[Any], rule: str = "RS-UNEXPECTED-1") -> None:
        if rule != "RS-UNEXPECTED-1" or isinstance(frame, Setup):
            parent(self, frame, why, events, rule)
            return
        self.send(Error(stream_id=0, error_code=CONNECTION_ERROR, data=f"unexpected: {why}".encode()), check=False)
        self.state = EndpointState.CLOSED
    return ignore


endpoint_override("unexpected-answered", "RS-UNEXPECTED-1",
                   "answers a frame on an unknown stream with ERROR[CONNECTION_ERROR] instead of ignoring it",
                   "_ignore", _answer_unexpected)


def _answer_second_setup(parent: Callable[..., None]) -> Callable[..., None]:
    def receive_setup(self: Endpoint, frame: Setup, events: list[Any]) -> None:
        self.send(Error(stream_id=0, error_code=CONNECTION_ERROR, data=b"a second SETUP"), check=False)
        self.state = EndpointState.CLOSED
    return receive_setup


endpoint_override("unexpected-second-setup-answered", "RS-UNEXPECTED-2",
                   "answers a second SETUP with ERROR[CONNECTION_ERROR] instead of ignoring it",
                   "_receive_setup", _answer_second_setup)


def _silent_close(parent: Callable[..., None]) -> Callable[..., None]:
    def fail(self: Endpoint, violation: Any, events: list[Any]) -> None:
        self.error = violation
        self.state = EndpointState.CLOSED  # closes without the ERROR[CONNECTION_ERROR]
        events.append(ProtocolError(violation=violation))
    return fail


endpoint_override("error-silent-close", "RS-ERROR-8",
                   "closes on malformed input (an invalid metadata length) without sending ERROR[CONNECTION_ERROR]",
                   "_fail", _silent_close)



push_closes = fault("tck-push-closes", "RS-TCK-8", "answers a METADATA_PUSH with ERROR[CONNECTION_ERROR] and closes")


@push_closes.on("on_metadata_push")
def _push_closes(p: Policy, base: Base, s: RSocketConnection, frame: MetadataPush) -> None:
    s.send_unchecked(Error(stream_id=0, error_code=CONNECTION_ERROR, data=b"no metadata push here"))
    s.close("fault tck-push-closes")


def _answer_ignored(rule: str) -> Callable[[Any], Callable[..., None]]:
    """An override of the endpoint's ``_ignore``: frames ``rule`` says to ignore get ERROR[CONNECTION_ERROR]."""
    def make(parent: Callable[..., None]) -> Callable[..., None]:
        def ignore(self: Endpoint, frame: Any, why: str, events: list[Any], rule_: str = "RS-UNEXPECTED-1") -> None:
            if rule_ != rule:
                parent(self, frame, why, events, rule_)
                return
            self.send(Error(stream_id=0, error_code=CONNECTION_ERROR, data=f"not understood: {why}".encode()),
                      check=False)
            self.state = EndpointState.CLOSED
        return ignore
    return make


endpoint_override("ignore-flag-answered", "RS-IGNORE-1",
                  "answers a frame of an unknown type with the I flag with ERROR[CONNECTION_ERROR]", "_ignore",
                  _answer_ignored("RS-IGNORE-1"))
endpoint_override("ignore-bad-metadata-answered", "RS-IGNORE-2",
                  "answers a frame with the I flag and an invalid metadata length with ERROR[CONNECTION_ERROR]",
                  "_ignore", _answer_ignored("RS-IGNORE-2"))

def _answer_ignored_late(parent: type[Endpoint]) -> dict[str, Callable[..., None]]:
    """The answer goes out of order: a barrier read after the frame is answered first, and the ERROR is
    written only once the kit's next step has sent something (a request on the same stream id would meet it)."""
    owed: list[Error] = []
    barrier_answered = [False]

    def ignore(self: Endpoint, frame: Any, why: str, events: list[Any], rule: str = "RS-UNEXPECTED-1") -> None:
        if rule != "RS-IGNORE-2":
            parent._ignore(self, frame, why, events, rule)
            return
        owed.append(Error(stream_id=frame.stream_id, error_code=APPLICATION_ERROR, data=f"failed: {why}".encode()))

    def receive_keepalive(self: Endpoint, frame: Keepalive, events: list[Any]) -> None:
        parent._receive_keepalive(self, frame, events)
        barrier_answered[0] = bool(owed)

    def receive_decoded(self: Endpoint, decoded: Any, whole: Any, events: list[Any]) -> None:
        if barrier_answered[0]:
            barrier_answered[0] = False
            while owed:
                self.send(owed.pop(0), check=False)
        parent._receive_decoded(self, decoded, whole, events)

    return {"_ignore": ignore, "_receive_keepalive": receive_keepalive, "_receive_decoded": receive_decoded}


endpoint_overrides("ignore-bad-metadata-answered-late", "RS-IGNORE-2",
                   "answers a frame with the I flag and an invalid metadata length with ERROR[APPLICATION_ERROR] on "
                   "its stream, but late: after its answer to the next KEEPALIVE, when the frame after that comes "
                   "(as rsocket-go's responder task may, F33)", _answer_ignored_late)


endpoint_override("draft-bad-metadata-answered", "RS-DRAFT-2",
                  "reactivesocket-draft: answers a frame whose metadata length does not fit with ERROR[CONNECTION_ERROR]",
                  "_ignore", _answer_ignored("RS-DRAFT-2"))

resume_ok = fault("resume-ok-unasked", "RS-RESUME-3", "sends RESUME_OK after accepting a SETUP (no RESUME asked)")


@resume_ok.on("after_setup")
def _resume_ok(p: Policy, base: Base, s: RSocketConnection, setup: Setup) -> None:
    base(s, setup)
    s.send_unchecked(ResumeOk(last_received_client_position=0))


def _resume_refused_wrongly(parent: Callable[..., None]) -> Callable[..., None]:
    def receive_first(self: Endpoint, frame: Any, events: list[Any]) -> None:
        if not isinstance(frame, Resume):
            parent(self, frame, events)
            return
        self.send(Error(stream_id=0, error_code=REJECTED_SETUP, data=b"no resumption here"), check=False)
        self.state = EndpointState.CLOSED
    return receive_first


endpoint_override("resume-refused-with-setup-code", "RS-RESUME-4",
                  "refuses a RESUME with ERROR[REJECTED_SETUP] instead of REJECTED_RESUME", "_receive_first",
                  _resume_refused_wrongly)


# -- the peer as client (the kit's listen mode judges clients) ----------------------------------------------------


def _client_setup(name: str, rule: str, description: str,
                  opening: Callable[[Endpoint, Setup], list[Any]]) -> None:
    """A fault of the client's opening: ``opening(endpoint, setup)`` gives the frames sent instead of the SETUP."""
    declared = fault(name, rule, description)

    @declared.on("make_endpoint")
    def _make(p: Policy, base: Base, s: RSocketConnection, **options: Any) -> Endpoint:
        setup = options.get("setup")
        if s.role is not Side.CLIENT or not isinstance(setup, Setup):
            return base(s, **options)  # type: ignore[no-any-return]
        endpoint: Endpoint = base(s, **{**options, "setup": False})
        for frame in opening(endpoint, setup):
            endpoint.send(frame, check=False)
        return endpoint


_client_setup("client-keepalive-before-setup", "RS-SETUP-1", "as client: sends a KEEPALIVE before its SETUP",
              lambda e, setup: [Keepalive(respond=not e.draft, data=b"early"), setup])
_client_setup("client-setup-twice", "RS-SETUP-2", "as client: sends its SETUP twice", lambda e, setup: [setup, setup])
_client_setup("client-setup-on-stream", "RS-SETUP-4", "as client: sends its SETUP on stream 1",
              lambda e, setup: [replace(setup, stream_id=1)])
_client_setup("client-setup-zero-keepalive", "RS-SETUP-5", "as client: its SETUP has keepalive interval 0",
              lambda e, setup: [replace(setup, keepalive_interval=0)])
_client_setup("client-setup-empty-mime", "RS-SETUP-7", "as client: its SETUP names an empty data MIME type",
              lambda e, setup: [replace(setup, data_mime=b"")])
_client_setup("client-keepalive-without-r", "RS-KEEPALIVE-4",
              "as client (rsocket-1.0): follows its SETUP with a KEEPALIVE it initiates without the R flag",
              lambda e, setup: [setup, Keepalive(respond=False, data=b"no answer wanted")])


def _payload_after_request(parent: Callable[..., None]) -> Callable[..., None]:
    def send(self: Endpoint, frame: Any, *, check: bool = True, fragment_size: int | None = None) -> None:
        parent(self, frame, check=check, fragment_size=fragment_size)
        if isinstance(frame, RequestResponse) and self.role is Side.CLIENT:
            parent(self, Payload(stream_id=frame.stream_id, next=True, data=b"more"), check=False)
    return send


endpoint_override("client-payload-on-request", "RS-STREAM-4",
                  "as client: follows its REQUEST_RESPONSE with a PAYLOAD of its own on that stream", "send",
                  _payload_after_request)
