"""The behaviour hooks of an RSocket session, each doing what Protocol.md and bindings.md §2 require.

Theory of operation, as in the RS-IO peer: the session (``connection.py``) is
mechanism (bytes, events, production, closing); every decision a deliberate
fault may want to get wrong is a method here.  The ``faults`` package replaces
methods on one ``Policy`` instance per connection; a replacement gets the
method it replaces as ``base`` and usually calls it, so faults combine.
``make_endpoint`` is a hook too: faults of the connection's own machinery
(SETUP, KEEPALIVE) wrap the sans-IO endpoint from outside by subclassing it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rsio_tck.bindings.rsocket.endpoint import Endpoint, stream_error
from rsio_tck.bindings.rsocket.frames import (
    APPLICATION_ERROR,
    INVALID,
    Cancel,
    Error,
    MetadataPush,
    Payload,
    RequestFnf,
    RequestN,
    RequestStream,
    Setup,
)

from ..sources import End
from . import publishers

if TYPE_CHECKING:
    from .connection import RSocketConnection
    from .flows import Echo, Flow, SubscribeBack

RULE_3_9 = "Reactive Streams rule 3.9"


class Policy:
    def __init__(self) -> None:
        self.state: dict[str, Any] = {}  # per-connection scratch for faults
        self.faults: tuple[str, ...] = ()

    # -- the connection --------------------------------------------------------------------

    def make_endpoint(self, s: RSocketConnection, **options: Any) -> Endpoint:
        return Endpoint(s.role, s.config.profile, s.config.limits, **options)

    def on_connection_made(self, s: RSocketConnection) -> None:
        pass  # a server waits for the client's SETUP; a client's SETUP is already queued

    def after_setup(self, s: RSocketConnection, setup: Setup) -> None:
        pass  # the endpoint accepted it (and granted a LEASE if asked)

    def when_leased(self, s: RSocketConnection, request: Callable[[], None]) -> None:
        """Send a request now if the lease allows one, else when a LEASE does (Lease Semantics)."""
        if s.endpoint.may_request():
            request()
        else:
            s.waiting_lease.append(request)

    # -- serving -------------------------------------------------------------------------

    def reject(self, s: RSocketConnection, sid: int, reason: str) -> None:
        """An unknown or malformed name: ERROR[APPLICATION_ERROR] on that stream; the connection stays."""
        s.send(Error(stream_id=sid, error_code=APPLICATION_ERROR, data=reason.encode()))

    def on_bad_request_n(self, s: RSocketConnection, flow: Flow, n: int) -> None:
        """Request N = 0 (bindings.md §2): ERROR[INVALID] on the stream, as rule 3.9 asks."""
        s.send(stream_error(s.config.profile, flow.sid, INVALID, f"request N {n} violates {RULE_3_9}"))
        s.stop_flow(flow)

    def sendable(self, s: RSocketConnection, flow: Flow) -> int:
        return s.endpoint.credit(flow.sid)

    def emit(self, s: RSocketConnection, flow: Flow, data: bytes, complete: bool) -> None:
        """One element; with ``complete`` it ends the stream too (PAYLOAD N|C)."""
        s.send(Payload(stream_id=flow.sid, next=True, complete=complete, data=data), fragment_size=s.fragment_size(flow))
        flow.sent += 1
        if complete:
            s.forget_flow(flow)

    def complete_together(self, s: RSocketConnection, flow: Flow) -> bool:
        """Whether the stream's last element carries its completion (N|C) or a PAYLOAD C follows: a freedom."""
        return s.freedoms.complete_together()

    def finish(self, s: RSocketConnection, flow: Flow, end: End) -> None:
        if end.error is None:
            s.send(Payload(stream_id=flow.sid, complete=True))
        else:
            s.send(Error(stream_id=flow.sid, error_code=APPLICATION_ERROR, data=end.error.encode()))
        s.forget_flow(flow)

    def on_cancel(self, s: RSocketConnection, flow: Flow) -> None:
        s.stop_flow(flow)

    def on_fnf(self, s: RSocketConnection, frame: RequestFnf) -> None:
        publishers.count_fnf(frame.data, s.config.fnf_counts)  # nothing goes back (RS-FNF-1)

    def on_metadata_push(self, s: RSocketConnection, frame: MetadataPush) -> None:
        pass  # bindings.md §2: metadata push is ignored; the connection stays up (RS-TCK-8)

    def open_channel(self, s: RSocketConnection, echo: Echo) -> None:
        echo.grant()  # the first REQUEST_N of the channel (RS-CHANNEL-3)

    # -- requesting (tck/subscribe, channel echo, the client role) --------------------------

    def open_inner(self, s: RSocketConnection, back: SubscribeBack) -> None:
        sid = s.new_stream_id()
        back.inner = sid
        s.inbound[sid] = back
        s.send(RequestStream(stream_id=sid, initial_request_n=back.initial_n(), data=back.spec.to.encode()))

    def request_n(self, s: RSocketConnection, sid: int, n: int) -> None:
        s.send(RequestN(stream_id=sid, request_n=n))

    def cancel_inner(self, s: RSocketConnection, back: SubscribeBack) -> None:
        if back.inner is not None:
            s.send(Cancel(stream_id=back.inner))
