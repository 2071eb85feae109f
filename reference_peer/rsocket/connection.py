"""One RSocket connection of the reference peer: a thin asyncio shell over the sans-IO ``Endpoint``.

Theory of operation.  Three tasks share one endpoint on one event loop: the
reader (bytes to ``receive_data``, events dispatched, answers flushed), the
producer (waits until a flow has work, then sends bounded batches round-robin,
flushing and draining after each round, so a remote that does not read stops
production at the transport's high-water mark), and the ticker (tells the
endpoint the time at its next deadline: KEEPALIVE, LEASE renewal).  Decisions
are the ``Policy``'s (faults replace them); the freedoms choose among legal
variants.  The connection ends when the endpoint closes (ERROR on stream 0
sent or received, a rejected SETUP, malformed input) or the transport ends;
only that connection ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from typing import Any

from rsio_tck.bindings.rsocket.endpoint import Endpoint, EndpointState, SetupRejected, default_setup, stream_error
from rsio_tck.bindings.rsocket.frames import (
    REJECTED,
    Cancel,
    Error,
    Frame,
    Lease,
    MetadataPush,
    Payload,
    RequestChannel,
    RequestFnf,
    RequestN,
    RequestResponse,
    RequestStream,
    Setup,
)
from rsio_tck.errors import ProtocolViolation, Side
from rsio_tck.protocol.events import ConnectionClosed, ProtocolError

from ..sources import End, QueueSource
from . import publishers
from .config import PeerConfig
from .faults import build_policy
from .flows import Consumer, Echo, Flow, SubscribeBack, step
from .freedoms import Freedoms

log = logging.getLogger("reference_peer.rsocket")
READ_SIZE = 64 * 1024
FRAGMENT_ROOM = 28  # bytes of a fragment that are not payload, at most (endpoint.FRAGMENT_OVERHEAD)


class RSocketConnection:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, config: PeerConfig,
                 role: Side = Side.SERVER, number: int = 0) -> None:
        self.reader, self.writer = reader, writer
        self.config = config
        self.role = role
        self.number = number
        self.loop = asyncio.get_running_loop()
        self.policy = build_policy(config.faults)
        self.freedoms = Freedoms(config.freedoms, config.seed, number, profile=config.profile, ids=config.ids)
        self.used_ids: set[int] = set()  # every stream id a request named on this connection, either side's
        self.remote_highest = 0  # the highest stream id of the remote's requests
        self.checked = not config.faults  # a correct peer checks every frame it sends
        setup: Setup | bool = False
        if role is Side.CLIENT:
            setup = default_setup(config.profile, keepalive_ms=config.keepalive_ms, lifetime_ms=config.lifetime_ms,
                                  lease=config.lease)
        self.endpoint: Endpoint = self.policy.make_endpoint(
            self, setup=setup, mtu=config.mtu, lease_grant=(config.lease_ttl_ms, config.lease_requests),
            enforce_lifetime=config.enforce_lifetime, now=self.loop.time())
        self.flows: dict[int, Flow] = {}  # streams this peer sends on, by id
        self.inbound: dict[int, Consumer] = {}  # streams this peer reads, by id
        self.waiting_lease: list[Any] = []  # requests held until a LEASE allows them
        self._active: dict[int, Flow] = {}
        self._wake = asyncio.Event()
        self.end_reason: str | None = None
        self._half_closed = False  # close() sent end-of-file; the transport closes once the remote has
        self.ready: asyncio.Future[None] = self.loop.create_future()  # SETUP accepted (server) or sent (client)
        with contextlib.suppress(AttributeError, NotImplementedError):
            writer.transport.set_write_buffer_limits(config.write_high, config.write_high // 4)  # type: ignore[attr-defined]
        sock = writer.get_extra_info("socket")
        if sock is not None and config.socket_send_buffer:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, config.socket_send_buffer)

    # -- running ---------------------------------------------------------------------------

    async def run(self) -> str:
        """Serve the connection until it ends; the reason it ended."""
        if self.role is Side.CLIENT and not self.ready.done():
            self.ready.set_result(None)
        self._guard(self.policy.on_connection_made, self)
        self.flush()
        tasks = [asyncio.ensure_future(self._produce()), asyncio.ensure_future(self._tick())]
        try:
            await self._read()
        except (ConnectionError, OSError) as exc:
            self.end_reason = self.end_reason or f"transport lost: {exc}"
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            self._teardown()
            await self._close_transport()
        if not self.ready.done():
            self.ready.set_exception(ConnectionError(self.end_reason or "closed"))
            self.ready.exception()
        return self.end_reason or "closed"

    async def _read(self) -> None:
        while True:
            data = await self.reader.read(READ_SIZE)
            if not data:
                if self.open:
                    self._guard(self.dispatch, self.endpoint.receive_eof())
                break
            if self.open:
                self._guard(self.dispatch, self.endpoint.receive_data(data, now=self.loop.time()))
                self.flush()
                # Reading goes on while production waits for the transport (a CANCEL must get through);
                # only answers the remote provokes beyond the hard bound make reading wait too.
                if self.writer.transport.get_write_buffer_size() > 4 * self.config.write_high:
                    await self.writer.drain()
            if not self.open:  # ended (here or elsewhere): half-close, drop input until the remote closes too
                self.close(self.end_reason or "closed")

    async def _produce(self) -> None:
        while self.open:
            await self._wake.wait()
            self._wake.clear()
            while self._active and self.open:
                for sid, flow in list(self._active.items()):
                    if not self._guard(step, self, flow):
                        self._active.pop(sid, None)
                self.flush()
                await self.writer.drain()
                await asyncio.sleep(0)  # the reader gets its turn between rounds

    async def _tick(self) -> None:
        while self.open:
            deadline = self.endpoint.next_deadline()
            delay = 1.0 if deadline is None else min(1.0, max(0.0, deadline - self.loop.time()))
            await asyncio.sleep(delay)
            self._guard(self.dispatch, self.endpoint.tick(self.loop.time()))
            self.flush()

    @property
    def open(self) -> bool:
        return self.endpoint.state is not EndpointState.CLOSED and self.end_reason is None

    # -- sending -----------------------------------------------------------------------------

    def send(self, frame: Frame, *, fragment_size: int | None = None) -> None:
        self.endpoint.send(frame, check=self.checked, fragment_size=fragment_size)

    def send_unchecked(self, frame: Any, *, fragment_size: int | None = None) -> None:
        """Send a frame that breaks a rule on purpose (faults)."""
        self.endpoint.send(frame, check=False, fragment_size=fragment_size)

    def send_raw(self, data: bytes, *, standing_for: Frame | None = None) -> None:
        self.endpoint.send_raw(data, standing_for=standing_for)

    def fragment_size(self, flow: Flow) -> int:
        """Payload bytes per fragment for ``flow``'s elements: what the frame limit and the MTU leave,
        tck/large's part, and the freedom's choice below that (a payload that fits is not cut)."""
        most = min(self.config.mtu or self.config.limits.max_frame, self.config.limits.max_frame) - FRAGMENT_ROOM
        if flow.part is not None:
            most = min(most, flow.part)
        elif self.config.mtu is None:
            return most  # only the frame limit: no choice to make
        return self.freedoms.fragment_size(most)

    def flush(self) -> None:
        data = self.endpoint.data_to_send()
        if not data or self.writer.is_closing():
            return
        for chunk in self.freedoms.chunks(data) or [data]:
            self.writer.write(chunk)

    # -- flows -----------------------------------------------------------------------------------

    def wake(self, flow: Flow) -> None:
        if not flow.done:
            self._active[flow.sid] = flow
            self._wake.set()

    def forget_flow(self, flow: Flow) -> None:
        """``flow`` ended (its terminal signal is out, or it was cancelled)."""
        flow.done = True
        if self.flows.get(flow.sid) is flow:
            del self.flows[flow.sid]
        self._active.pop(flow.sid, None)

    def stop_flow(self, flow: Flow) -> None:
        """End ``flow`` without a signal and release what feeds it."""
        self.forget_flow(flow)
        flow.source.stop()

    def end_flow(self, flow: Flow, end: End) -> None:
        if not flow.done:
            self.policy.finish(self, flow, end)
            flow.source.stop()

    # -- received events ----------------------------------------------------------------------

    def new_stream_id(self) -> int:
        """The stream id of this peer's next request, as its freedoms choose (never one used on the connection)."""
        sid = self.freedoms.stream_id(self.used_ids, self.endpoint.new_stream_id, self.remote_highest)
        self.used_ids.add(sid)
        return sid

    def dispatch(self, events: list[object]) -> None:
        for event in events:
            if isinstance(event, (RequestStream, RequestResponse, RequestChannel, RequestFnf)):
                self.used_ids.add(event.stream_id)
                self.remote_highest = max(self.remote_highest, event.stream_id)
            handler = self._HANDLERS.get(type(event))
            if handler is not None:
                handler(self, event)
            elif isinstance(event, (RequestStream, RequestResponse, RequestChannel)):
                self.open_stream(event)

    def _on_setup(self, setup: Setup) -> None:
        if not self.ready.done():
            self.ready.set_result(None)
        self.policy.after_setup(self, setup)

    def _on_fnf(self, frame: RequestFnf) -> None:
        self.policy.on_fnf(self, frame)

    def open_stream(self, frame: RequestStream | RequestResponse | RequestChannel) -> None:
        sid = frame.stream_id
        kind = "response" if isinstance(frame, RequestResponse) else "channel" if isinstance(
            frame, RequestChannel) else "stream"
        if len(self.flows) >= self.config.max_streams:
            self.send(stream_error(self.config.profile, sid, REJECTED,
                                   f"more than {self.config.max_streams} streams on this connection"))
            return
        resolved = publishers.resolve(frame.data, self.config.fnf_counts)
        name = frame.data.decode("utf-8", "replace")
        if isinstance(resolved, publishers.Unknown):
            self.policy.reject(self, sid, resolved.reason)
            return
        if (kind == "channel") != isinstance(resolved, publishers.Echo):
            self.policy.reject(self, sid, f"{name!r} is not served by {'request-channel' if kind == 'channel' else kind}")
            return
        if isinstance(resolved, publishers.SubscribeBack) and kind != "stream":
            self.policy.reject(self, sid, "tck/subscribe is served by request-stream only")
            return
        if isinstance(resolved, publishers.Opened):
            flow = Flow(sid, kind, name, resolved.source, resolved.part)
        elif isinstance(resolved, publishers.FnfCount):
            flow = Flow(sid, kind, name, publishers.CountingSource(self.config.fnf_counts.get(resolved.key, 0), 1))
        else:
            flow = Flow(sid, kind, name, QueueSource())
        self.flows[sid] = flow
        initial = frame.initial_request_n if isinstance(frame, (RequestStream, RequestChannel)) else 1
        if initial < 1:
            self.policy.on_bad_request_n(self, flow, initial)
            return
        if isinstance(resolved, publishers.Echo):
            echo = Echo(self, flow)
            self.inbound[sid] = echo
            if isinstance(frame, RequestChannel) and frame.complete:
                echo.on_end(None)
            else:
                self.policy.open_channel(self, echo)
        elif isinstance(resolved, publishers.SubscribeBack):
            back = SubscribeBack(self, resolved.spec, flow)
            self.policy.when_leased(self, lambda: self.policy.open_inner(self, back))
        self.wake(flow)

    def _on_lease(self, lease: Lease) -> None:
        while self.waiting_lease and self.endpoint.may_request():
            self.waiting_lease.pop(0)()

    def _on_request_n(self, frame: RequestN) -> None:
        flow = self.flows.get(frame.stream_id)
        if flow is None or flow.done:
            return
        if frame.request_n < 1:
            self.policy.on_bad_request_n(self, flow, frame.request_n)
            return
        self.wake(flow)

    def _on_cancel(self, frame: Cancel) -> None:
        flow = self.flows.get(frame.stream_id)
        if flow is not None:
            self.policy.on_cancel(self, flow)

    def _on_payload(self, frame: Payload) -> None:
        consumer = self.inbound.get(frame.stream_id)
        if consumer is None:
            return
        if frame.next:
            consumer.on_next(frame.data)
        if frame.complete:
            self.inbound.pop(frame.stream_id, None)
            consumer.on_end(None)

    def _on_error(self, frame: Error) -> None:
        if frame.stream_id == 0:
            self.end_reason = f"ERROR on stream 0 from the remote: {frame.data.decode('utf-8', 'replace')}"
            return
        consumer = self.inbound.pop(frame.stream_id, None)
        if consumer is not None:
            consumer.on_end(frame.data.decode("utf-8", "replace") or "error")
        flow = self.flows.get(frame.stream_id)
        if flow is not None:
            self.stop_flow(flow)

    def _on_protocol_error(self, event: ProtocolError) -> None:
        self.end_reason = f"protocol error by the remote, ERROR[CONNECTION_ERROR] sent: {event.violation}"

    def _on_setup_rejected(self, event: SetupRejected) -> None:
        self.end_reason = f"SETUP rejected: {event.reason}"

    def _on_closed(self, event: ConnectionClosed) -> None:
        self.end_reason = self.end_reason or event.reason

    _HANDLERS: dict[type, Any] = {
        Setup: _on_setup,
        RequestFnf: _on_fnf,
        MetadataPush: lambda s, frame: s.policy.on_metadata_push(s, frame),
        Lease: _on_lease,
        RequestN: _on_request_n,
        Cancel: _on_cancel,
        Payload: _on_payload,
        Error: _on_error,
        ProtocolError: _on_protocol_error,
        SetupRejected: _on_setup_rejected,
        ConnectionClosed: _on_closed,
    }

    # -- closing ------------------------------------------------------------------------------

    def close(self, reason: str) -> None:
        """End the connection: RSocket has no goodbye exchange, the transport just closes.

        Half-close first and close once the remote has closed too (or after ``linger``):
        closing a socket with unread input resets it, and the reset can destroy what was
        sent last (an ERROR on stream 0) before the remote reads it.
        """
        self.end_reason = self.end_reason or reason
        self._wake.set()
        self.flush()
        writer = self.writer
        if writer.is_closing() or self._half_closed:
            return
        self._half_closed = True
        with contextlib.suppress(ConnectionError, OSError, RuntimeError):
            if writer.can_write_eof():
                writer.write_eof()
                self.loop.call_later(self.config.linger, writer.close)
                return
        writer.close()

    def _teardown(self) -> None:
        for flow in list(self.flows.values()):
            self.stop_flow(flow)
        for consumer in list(self.inbound.values()):
            consumer.on_end("connection closed")
        self.inbound.clear()

    async def _close_transport(self) -> None:
        self.flush()
        writer = self.writer
        if writer.is_closing():
            return
        with contextlib.suppress(ConnectionError, OSError, RuntimeError, asyncio.TimeoutError):
            if writer.can_write_eof():
                writer.write_eof()
            await asyncio.wait_for(writer.drain(), self.config.linger)
        writer.close()
        with contextlib.suppress(ConnectionError, OSError, asyncio.TimeoutError):
            await asyncio.wait_for(writer.wait_closed(), 2.0)

    def _guard(self, function: Any, *args: Any) -> Any:
        """Run a step; a ProtocolViolation raised by a checked send is a bug of this peer: the connection ends."""
        try:
            return function(*args)
        except (ProtocolViolation, ValueError) as violation:  # ValueError: a frame its wire cannot carry
            log.error("rsocket connection #%d: the reference peer broke a rule: %s", self.number, violation)
            self.end_reason = f"internal error: the reference peer broke a rule: {violation}"
            return None


async def serve_connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, config: PeerConfig,
                           number: int = 0) -> str:
    """Serve one accepted connection as the RSocket server until it ends; the reason it ended."""
    session = RSocketConnection(reader, writer, config, Side.SERVER, number)
    reason = await session.run()
    log.info("rsocket connection #%d ended: %s", number, reason)
    return reason


__all__ = ["RSocketConnection", "serve_connection"]
