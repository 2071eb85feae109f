"""One RS-IO connection of the reference peer: an asyncio Protocol over the sans-IO Connection.

Theory of operation.  Bytes received go to ``Connection.receive_data``; the
events it returns are dispatched to handlers here (mechanism) and to the hooks
of the session's ``Policy`` (decisions).  Publishing is pull-based: a flow
with work is put in ``_active`` and ``_produce`` (run with ``call_soon``) sends
bounded batches round-robin, writing after each batch, until a round's budget
is spent, nothing is left to do, or the transport asks to pause.

Backpressure: the transport's write buffer is limited (``write_high``) and
``pause_writing`` stops production, so a remote that does not read cannot make
this peer buffer more than one batch beyond it; every flow is bounded the same
way, whatever feeds it.  Reading goes on while production waits (a cancel must
get through to a saturated writer) until the answers the remote provokes pile
up beyond ``hard_buffer``; then reading pauses too.  The socket's own send
buffer is bounded as well (``socket_send_buffer``), so little sits in the kernel.

Closing: after the last goodbye (sent as acknowledgement, or received as one)
the session half-closes its side where the transport allows it and drains the
input until end-of-file or ``linger`` seconds, so a goodbye is not lost to a
reset.  One log line per connection says why it ended.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from rsio_tck.bindings.rsio.wire.frames import (
    Cancel,
    ClientHello,
    Frame,
    Goodbye,
    OnComplete,
    OnError,
    OnNext,
    OnNextPacked,
    OnSubscribe,
    Request,
    ServerHello,
    Subscribe,
)
from rsio_tck.errors import ProtocolViolation, Side
from rsio_tck.protocol import Connection, ConnectionClosed, ConnectionState, Ignored, ProtocolError, ReassemblyLimit

from ..sources import End, RangeSource
from . import flows
from .config import UNBOUNDED, PeerConfig
from .faults import build_policy
from .flows import Outflow
from .freedoms import Freedoms
from .inflows import Subscriptions
from .publishers import Rejected

if TYPE_CHECKING:
    from .publishers import PublisherTable

log = logging.getLogger("reference_peer")

ROUND_BYTES = 256 << 10  # bytes one production round may write before yielding to the loop (fairness between connections)


class PeerContext(Protocol):
    """What a session needs from the peer that owns it."""

    config: PeerConfig
    publishers: PublisherTable

    def connection_started(self, session: RsioConnection) -> None: ...
    def connection_ended(self, session: RsioConnection, reason: str) -> None: ...
    def abort_all(self, reason: str) -> None: ...
    def stop_serving(self, reason: str) -> None: ...


class RsioConnection(asyncio.Protocol):
    def __init__(self, role: Side, context: PeerContext, number: int, label: str = "") -> None:
        self.role = role
        self.context = context
        self.config = config = context.config
        self.number = number
        self.label = label
        self.policy = build_policy(config.faults)
        self.freedoms = Freedoms(config.freedoms, config.seed, number, wide_ints=config.wide_ints, ids=config.ids)
        self.conn = Connection(role, config.codec, config.limits, tolerate=self.policy.tolerate)
        self.checked = not config.faults  # a correct peer checks every frame it sends
        self.outflows: dict[int, Outflow] = {}
        self.subscriptions = Subscriptions(self)  # what this peer subscribed to on this connection
        self._active: dict[int, Outflow] = {}
        self._scheduled = False
        self.transport: Any = None
        self.paused = False  # the transport asked to stop writing: production waits
        self.reading_paused = False
        self.hard_buffer = 4 * config.write_high + config.frame_bytes()
        self.hello_sent = False
        self.handshaken = False
        self.initiated_goodbye: str | None = None  # our reason, if we started the goodbye
        self.end_reason: str | None = None
        self._finishing = False
        self._timers: list[asyncio.TimerHandle] = []
        self.loop = asyncio.get_running_loop()
        self.closed: asyncio.Future[str] = self.loop.create_future()
        self.ready: asyncio.Future[None] = self.loop.create_future()  # handshake done
        self.started = time.monotonic()

    # -- transport callbacks ---------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport
        try:
            transport.set_write_buffer_limits(self.config.write_high, self.config.write_low)  # type: ignore[attr-defined]
        except (AttributeError, NotImplementedError):
            pass
        sock = transport.get_extra_info("socket")
        if sock is not None and self.config.socket_send_buffer:
            try:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, self.config.socket_send_buffer)
            except OSError:
                pass
        if not self.label:
            peer = transport.get_extra_info("peername")
            self.label = f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) else str(peer or "pipe")
        self.context.connection_started(self)
        self._guard(self.policy.on_connection_made, self)
        if self.role is Side.SERVER and not self._finishing:
            self._later(self.config.handshake_timeout, self._handshake_expired)
        self.flush()

    def data_received(self, data: bytes) -> None:
        if self._finishing:
            return  # lingering after the last goodbye: input is drained and ignored
        events = self.conn.receive_data(data)
        if events:
            self._guard(self._dispatch, events)
        self.flush()
        self._input_backpressure()

    def eof_received(self) -> bool:
        if not self._finishing:
            events = self.conn.receive_eof()
            self._guard(self._dispatch, events)
        self._close_transport()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        if not self._finishing and self.end_reason is None:
            self.end_reason = f"transport lost: {exc}" if exc else "transport closed without goodbye"
        said_goodbye = self.initiated_goodbye is not None or self.conn.goodbye_reason is not None
        if not (self._finishing or said_goodbye or self.conn.error is not None):
            # The remote's transport ended (end of stream or reset) with no goodbye either way.
            self._guard(self.policy.on_transport_lost, self, self.end_reason or "closed")
        self._teardown(self.end_reason or "closed")
        for timer in self._timers:
            timer.cancel()
        reason = self.end_reason or "closed"
        if not self.closed.done():
            self.closed.set_result(reason)
        if not self.ready.done():
            self.ready.set_exception(ConnectionError(reason))
            self.ready.exception()  # retrieved: nobody may be waiting
        log.info("connection #%d %s %s ended after %.2f s: %s", self.number, self.role.value, self.label,
                 time.monotonic() - self.started, reason)
        self.context.connection_ended(self, reason)

    def pause_writing(self) -> None:
        self.paused = True  # production stops; reading goes on (cancel, request must get through)

    def resume_writing(self) -> None:
        self.paused = False
        self._resume_reading()
        if self._active:
            self._schedule()

    def _input_backpressure(self) -> None:
        """Stop reading while answers to the peer's own input pile up beyond the hard bound.

        Production alone stays within ``write_high`` plus one batch; only frames the
        remote provokes (onSubscribe, onError, reports...) can go beyond, so a remote
        that sends without reading is throttled, and one that reads is never starved.
        """
        transport = self.transport
        if (transport is not None and not self.reading_paused and not transport.is_closing()
                and transport.get_write_buffer_size() > self.hard_buffer):
            self.reading_paused = True
            try:
                transport.pause_reading()
            except (AttributeError, NotImplementedError, RuntimeError):
                pass

    def _resume_reading(self) -> None:
        if self.reading_paused and self.transport is not None and not self.transport.is_closing():
            self.reading_paused = False
            try:
                self.transport.resume_reading()
            except (AttributeError, NotImplementedError, RuntimeError):
                pass

    # -- received events -----------------------------------------------------------------

    def _dispatch(self, events: list[object]) -> None:
        on_next = self.subscriptions.on_next
        for event in self.policy.events_of_read(self, events):
            kind = type(event)
            if kind is OnNext:
                on_next(event)  # type: ignore[arg-type]
                continue
            handler = self._HANDLERS.get(kind)
            if handler is not None:
                handler(self, event)

    def _on_client_hello(self, hello: ClientHello) -> None:
        if hello.version not in self.conn.model.supported_versions:  # the connection queued goodbye
            self.end_reason = f"clientHello version {hello.version} is not supported"
            self.policy.on_unsupported_version(self)
            return
        if self.open:  # not if a goodbye came in the same read
            self.policy.on_client_hello(self, hello)
        self._handshake_done()

    def _on_server_hello(self, hello: ServerHello) -> None:
        if hello.version not in self.conn.model.supported_versions:
            self.end_reason = f"serverHello version {hello.version} is not supported"
            self.policy.on_unsupported_version(self)
            return
        self._handshake_done()

    def _handshake_done(self) -> None:
        if self.handshaken:
            return
        self.handshaken = True
        if not self.ready.done():
            self.ready.set_result(None)
        if self.open:
            self.policy.after_handshake(self)

    def _on_closed(self, closed: ConnectionClosed) -> None:
        if self.end_reason is None:
            self.end_reason = closed.reason
        self._teardown(closed.reason)

    def handle_subscribe(self, frame: Subscribe) -> None:
        if not self.open:
            return
        sid, policy = frame.subscriber, self.policy
        if sid in self.outflows:
            policy.on_duplicate_subscribe(self, frame)
            return
        opened = policy.resolve(self, frame.publisher)
        if isinstance(opened, Rejected):
            policy.reject(self, sid, opened)
            return
        if isinstance(opened.source, RangeSource) and self.freedoms.int_width != "shortest":
            opened.source.widen = self.freedoms.widen_ints
        if len(self.outflows) >= self.config.max_subscriptions:
            opened.source.stop()
            policy.reject(self, sid, Rejected(f"more than {self.config.max_subscriptions} concurrent subscriptions "
                                              "on this connection", opened.source.element_size))
            return
        flow = Outflow(sid, frame.publisher, opened.source)
        self.outflows[sid] = flow
        policy.send_on_subscribe(self, flow)
        if frame.initial_demand < 0:
            policy.on_negative_initial_demand(self, flow, frame.initial_demand)
        else:
            flow.demand = min(policy.initial_demand(self, flow, frame.initial_demand), UNBOUNDED)
        if not flow.done and opened.start is not None:
            opened.start(self, flow)
        self.wake(flow)

    def _on_request(self, frame: Request) -> None:
        flow = self.outflows.get(frame.subscriber)
        if flow is None or flow.done or not self.open:
            return
        if frame.demand <= 0:
            self.policy.on_bad_request(self, flow, frame.demand)
            return
        flow.requested = True
        self.policy.add_demand(self, flow, frame.demand)
        if flow.on_demand is not None:
            flow.on_demand()
        self.wake(flow)

    def _on_cancel(self, frame: Cancel) -> None:
        flow = self.outflows.get(frame.subscriber)
        if flow is not None and self.open:
            self.policy.on_cancel(self, flow)

    def _on_ignored(self, ignored: Ignored) -> None:
        if isinstance(ignored.frame, (Request, Cancel)) and self.open:
            self.policy.on_stale_signal(self, ignored.frame)

    _HANDLERS: dict[type, Callable[[RsioConnection, Any], None]] = {
        ClientHello: _on_client_hello,
        ServerHello: _on_server_hello,
        Goodbye: lambda s, goodbye: s.policy.on_goodbye(s, goodbye.reason),
        ProtocolError: lambda s, error: s.policy.on_protocol_error(s, error.violation),
        ConnectionClosed: _on_closed,
        Subscribe: handle_subscribe,
        Request: _on_request,
        Cancel: _on_cancel,
        OnSubscribe: lambda s, frame: s.subscriptions.on_subscribe(frame),
        OnNextPacked: lambda s, frame: s.subscriptions.on_packed(frame),
        OnComplete: lambda s, frame: s.subscriptions.on_terminal(frame),
        OnError: lambda s, frame: s.subscriptions.on_terminal(frame),
        ReassemblyLimit: lambda s, event: s.policy.on_reassembly_limit(s, event),
        Ignored: _on_ignored,
    }

    # -- sending (used by the policy, flows and the API) ---------------------------------------

    @property
    def open(self) -> bool:
        return self.conn.state is ConnectionState.OPEN and not self._finishing

    def send(self, frame: Frame) -> None:
        if isinstance(frame, (ClientHello, ServerHello)):
            self.hello_sent = True
        self.conn.send(frame, check=self.checked)

    def send_unchecked(self, frame: Frame) -> None:
        """Send a frame that breaks a rule on purpose (faults)."""
        self.conn.send(frame, check=False)

    def send_raw(self, data: bytes) -> None:
        self.conn.send_raw(data)

    def emit_elements(self, sid: int, elements: list[bytes]) -> None:
        if self.checked:
            self.conn.send_elements(sid, elements)
        else:
            for element in elements:
                self.conn.send(OnNext(subscriber=sid, element=element), check=False)

    def flush(self) -> int:
        data = self.conn.data_to_send()
        transport = self.transport
        if not data:
            return 0
        if transport is None or transport.is_closing():
            # Dropped, but it was work done: the production budget must still be spent,
            # or a round on a transport that is going away would never end.
            return len(data)
        chunks = self.freedoms.chunks(data)
        if chunks is None:
            transport.write(data)
        else:
            for chunk in chunks:
                transport.write(chunk)
        return len(data)

    def discard_output(self) -> None:
        self.conn.data_to_send()

    # -- publishing ---------------------------------------------------------------------------

    def wake(self, flow: Outflow) -> None:
        if not flow.done:
            self._active[flow.sid] = flow
            self._schedule()

    def _closing(self) -> bool:
        return self.transport is None or self.transport.is_closing()

    def _schedule(self) -> None:
        if not self._scheduled and self.open:
            self._scheduled = True
            self.loop.call_soon(self._produce)

    def _produce(self) -> None:
        self._scheduled = False
        self._guard(self._produce_round)

    def _produce_round(self) -> None:
        written = 0
        active = self._active
        while active and self.open and not self.paused and written < ROUND_BYTES and not self._closing():
            for sid, flow in list(active.items()):
                more = flows.step(self, flow)
                active.pop(sid, None)
                if more and not flow.done:
                    active[sid] = flow  # to the back of the round
                written += self.flush()
                if self.paused or not self.open:
                    break
        if active and self.open and not self.paused:
            self._schedule()

    def end_flow(self, flow: Outflow, end: End) -> None:
        """Send the terminal signal of ``flow`` and forget it."""
        if end.error is None:
            self.send(OnComplete(subscriber=flow.sid))
        else:
            self.send(OnError(subscriber=flow.sid, error=end.error))
        self.stop_flow(flow)

    def stop_flow(self, flow: Outflow) -> None:
        """Forget ``flow`` without a signal (cancelled, or the connection is ending)."""
        flow.done = True
        if self.outflows.get(flow.sid) is flow:
            del self.outflows[flow.sid]
        self._active.pop(flow.sid, None)
        flow.source.stop()

    # -- closing --------------------------------------------------------------------------------

    def goodbye(self, reason: str) -> None:
        """Start an orderly close: goodbye, then wait (bounded) for the acknowledgement."""
        if self.conn.state is not ConnectionState.OPEN or self._finishing:
            return
        self.initiated_goodbye = reason
        self.send(Goodbye(reason=reason))
        self._teardown(f"goodbye sent: {reason}")
        self.flush()
        self._later(self.config.goodbye_timeout, self._goodbye_expired)

    def shutdown(self, reason: str = "peer shutting down") -> None:
        self._guard(self.policy.shutdown, self, reason)
        self.flush()

    def finish(self, reason: str) -> None:
        """The last goodbye is out (or owed no more): flush, half-close, drain, close."""
        if self._finishing:
            return
        self.end_reason = self.end_reason or reason
        self._teardown(reason)
        self.flush()
        self._finishing = True
        transport = self.transport
        if transport is None or transport.is_closing():
            return
        self._resume_reading()
        if transport.can_write_eof():
            transport.write_eof()
            self._later(self.config.linger, self.abort_transport)
        else:
            self._close_transport()

    def abort(self, reason: str) -> None:
        """Close at once, dropping what is not written yet (no goodbye)."""
        self.end_reason = self.end_reason or reason
        self.discard_output()
        self._teardown(reason)
        self._finishing = True
        self.abort_transport()

    def close_transport(self, reason: str) -> None:
        """Write what is queued and close, without a goodbye."""
        self.end_reason = self.end_reason or reason
        self.flush()
        self._teardown(reason)
        self._finishing = True
        self._close_transport()

    def abort_transport(self) -> None:
        if self.transport is not None:
            self.transport.abort()

    def _close_transport(self) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.close()
            self._later(self.config.linger, self.abort_transport)

    def _teardown(self, reason: str) -> None:
        """End every stream: publications stop, subscriptions fail (goodbye or close ends them all)."""
        for flow in list(self.outflows.values()):
            self.stop_flow(flow)
        self.subscriptions.end_all(reason)

    def _handshake_expired(self) -> None:
        if not self.handshaken and not self._finishing:
            self.end_reason = f"no clientHello within {self.config.handshake_timeout:g} s"
            self.goodbye(self.end_reason)

    def _goodbye_expired(self) -> None:
        if not self._finishing:
            self.end_reason = f"goodbye ({self.initiated_goodbye}) not acknowledged within " \
                              f"{self.config.goodbye_timeout:g} s"
            self.close_transport(self.end_reason)

    def _later(self, delay: float, callback: Callable[[], None]) -> None:
        self._timers.append(self.loop.call_later(delay, callback))

    def _guard(self, function: Callable[..., None], *args: Any) -> None:
        """Run a step; a ProtocolViolation raised by a checked send is a bug of this peer."""
        try:
            function(*args)
        except ProtocolViolation as violation:
            log.error("connection #%d: the reference peer broke a rule: %s", self.number, violation)
            self.abort(f"internal error: the reference peer broke a rule: {violation}")
