"""Thin asyncio shells over ``link.WebSocketLink``: the kit's client side, and any protocol served over WebSocket.

``open_websocket(target, framing, timeout)`` connects (TCP, TLS for wss), completes the
opening handshake and returns ``(StreamReader, WebSocketWriter)``: the same pair
``open_target`` gives for tcp://, carrying the binding's byte stream, so the kit's
sessions do not know the transport.  The writer also holds ``wire`` (the raw bytes
both ways, for the pcap, bounded by ``WIRE_MAX_BYTES``) and ``failure`` (why the
WebSocket failed: the reader then ends as at end of stream).

``CarryOverWebSocket(factory, framing, role=...)`` is an ``asyncio.Protocol`` for either
role (a listener's by default): it does the handshake, then runs the protocol
``factory`` made over a transport (``MessageTransport``) whose ``write`` sends messages
and whose ``write_eof`` starts the closing handshake.  The reference peer uses it to
listen and to connect.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

from ..errors import Side
from ..monitor.trace import TraceRecord
from ..targets import TargetError, client_context, tcp_socket
from .framing import Framing, WebSocketError
from .link import WebSocketLink

log = logging.getLogger("rsio_tck.websocket")
WIRE_MAX_BYTES = 4 * 1024 * 1024  # raw bytes of both directions one connection records (as a session's trace)
# The StreamReader's limit: past twice this many stream bytes not yet read by the session, the transport pauses.
# Smaller than TCP's (``transport.READ_LIMIT``) because a stream byte can cost a WebSocket frame to parse
# (~17 us on a loaded machine): a session that stopped reading (a verdict, bytes it cannot decode) faced with
# one-byte continuations (RS-IO's stream framing hands each on at once) made the link parse 512K frames per
# connection before the pause, and eight such connections starved the event loop for a minute.
READ_LIMIT = 16 * 1024
HIGH_WATER = 256 * 1024  # bytes queued on the socket before drain() waits
ANSWERS_MAX_BYTES = 1024 * 1024  # bytes queued on the socket before the kit stops reading (pongs nobody reads)


class WireLog:
    """The raw bytes of one connection, both ways, with monotonic times; cut at ``WIRE_MAX_BYTES``."""

    def __init__(self) -> None:
        self.records: list[tuple[float, Side, bytes | None]] = []
        self.size = 0
        self.cut = False

    def add(self, sender: Side, data: bytes | None) -> None:
        if self.cut:
            return
        self.size += len(data or b"")
        if self.size > WIRE_MAX_BYTES:
            self.cut = True
        self.records.append((time.monotonic(), sender, None if self.cut else data))

    def trace(self, t0: float) -> list[TraceRecord]:
        """The records as a trace, times relative to ``t0`` (a monotonic time), or to the first record
        when that came earlier (the opening handshake precedes a session's clock): never negative."""
        if self.records:
            t0 = min(t0, self.records[0][0])
        last = len(self.records) - 1
        return [TraceRecord(t=t - t0, sender=sender, data=data, truncated=self.cut and i == last)
                for i, (t, sender, data) in enumerate(self.records)]


def _retrieved(future: asyncio.Future[Any]) -> None:
    """Marks a failed handshake's exception as seen (whoever awaits ``opened`` still gets it)."""
    if not future.cancelled():
        future.exception()


class _Pump:
    """Writes what the link queued to a transport and records it."""

    def __init__(self, link: WebSocketLink, wire: WireLog, me: Side) -> None:
        self.link, self.wire, self.me = link, wire, me
        self.transport: asyncio.Transport | None = None

    def flush(self) -> None:
        transport = self.transport
        for chunk in self.link.data_to_send():
            if transport is None or transport.is_closing():
                continue
            if chunk:
                self.wire.add(self.me, chunk)
                transport.write(chunk)
            elif self.me is Side.SERVER or not transport.can_write_eof():
                self.wire.add(self.me, None)
                transport.close()  # RFC 6455: the server closes the TCP connection first
            else:
                self.wire.add(self.me, None)
                transport.write_eof()


class _KitProtocol(asyncio.Protocol):
    def __init__(self, link: WebSocketLink, reader: asyncio.StreamReader) -> None:
        self.link = link
        self.reader = reader
        self.wire = WireLog()
        self.pump = _Pump(link, self.wire, Side.CLIENT)
        self.opened: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.opened.add_done_callback(_retrieved)
        self.closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.writable = asyncio.Event()
        self.writable.set()
        self.ended = False
        # Monotonic time of the last bytes that went toward a message not yet whole (the link holds them until
        # it is): the kit's silence clock counts them, since the stream reader sees only whole messages.
        self.partial_at = 0.0
        # Seconds the slowest message took, from the read that brought its first bytes to the one that completed
        # it: a frame that trickled in, as ``KitSession.slowest_frame`` measures it on a byte stream, which sees
        # a message only once it is whole (a target writing a frame a byte a WebSocket frame is too slow to judge).
        self.slowest_message = 0.0
        self._message_began: float | None = None  # the read that brought the first bytes of the message in progress
        self.held = False  # reading paused by ``_hold_reading``

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.pump.transport = transport  # type: ignore[assignment]
        self.reader.set_transport(transport)
        self.pump.flush()  # the opening handshake

    def data_received(self, data: bytes) -> None:
        self.wire.add(Side.SERVER, data)
        stream = self.link.receive_data(data)
        self.pump.flush()
        now = time.monotonic()
        began = self._message_began
        if stream:
            if began is not None:
                self.slowest_message = max(self.slowest_message, now - began)
            self._message_began = now if self.link.partial else None  # the read may begin the next one too
            self.reader.feed_data(stream)
        elif self.link.partial:
            self.partial_at = now
            if began is None:
                self._message_began = now
        self._settle()
        self._hold_reading()

    def _hold_reading(self) -> None:
        """Reading follows writing: the link answers what it reads by itself (a pong per ping, RFC 6455 5.5.2),
        so a server that pings and never reads the pongs would fill the kit's send buffer without end.  Past
        ``ANSWERS_MAX_BYTES`` queued, the kit stops reading until the socket takes them (``resume_writing``)."""
        transport = self.pump.transport
        if transport is not None and not self.held and transport.get_write_buffer_size() > ANSWERS_MAX_BYTES:
            self.held = True
            transport.pause_reading()

    def eof_received(self) -> bool:
        self.wire.add(Side.SERVER, None)
        stream = self.link.receive_eof()
        if stream:
            self.reader.feed_data(stream)
        self.pump.flush()
        self._settle(ended=True)
        return False

    def _settle(self, ended: bool = False) -> None:
        if not self.opened.done():
            if self.link.opened:
                self.opened.set_result(None)
            elif self.link.failure is not None or ended:
                self.opened.set_exception(self.link.failure or WebSocketError("the server closed the connection"))
        if (self.link.failure is not None or self.link.close_received or ended) and not self.ended:
            self.ended = True
            self.reader.feed_eof()

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.opened.done():
            self.opened.set_exception(WebSocketError(f"connection lost: {exc or 'closed'}"))
        if not self.ended:
            self.ended = True
            self.reader.feed_eof()
        self.writable.set()
        if not self.closed.done():
            self.closed.set_result(None)

    def pause_writing(self) -> None:
        self.writable.clear()

    def resume_writing(self) -> None:
        self.writable.set()
        transport = self.pump.transport
        if self.held and transport is not None and transport.get_write_buffer_size() <= ANSWERS_MAX_BYTES:
            self.held = False
            if not getattr(self.reader, "_paused", False):  # the reader's own pause (a full buffer) stays
                transport.resume_reading()


class WebSocketWriter:
    """The StreamWriter-like half of ``open_websocket``'s pair: writes the binding's stream as messages."""

    def __init__(self, protocol: _KitProtocol, transport: asyncio.Transport) -> None:
        self._protocol = protocol
        self.transport = transport
        self.link = protocol.link
        self.wire = protocol.wire

    @property
    def failure(self) -> WebSocketError | None:
        return self.link.failure

    @property
    def partial_at(self) -> float:
        """When bytes of a message not yet whole last arrived (monotonic; 0.0: never): ``KitSession`` counts
        them as the target's progress, though the reader gets the stream a whole message at a time."""
        return self._protocol.partial_at

    @property
    def slowest_message(self) -> float:
        """Seconds the slowest message took to arrive whole, from its first bytes (the runner's ``stretched``)."""
        return self._protocol.slowest_message

    def write(self, data: bytes) -> None:
        self.link.send(bytes(data))
        self._protocol.pump.flush()

    async def drain(self) -> None:
        if self.transport.is_closing():
            raise ConnectionResetError("the WebSocket connection is closed")
        await self._protocol.writable.wait()

    def can_write_eof(self) -> bool:
        return True

    def write_eof(self) -> None:
        """The binding's stream ends: the closing handshake (1000); the server then closes TCP."""
        self.link.close(1000)
        self._protocol.pump.flush()

    def is_closing(self) -> bool:
        return self.transport.is_closing()

    def close(self) -> None:
        self.link.close(1000)
        self._protocol.pump.flush()
        self.transport.close()

    async def wait_closed(self) -> None:
        await asyncio.shield(self._protocol.closed)

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return self.transport.get_extra_info(name, default)


async def open_websocket(target: Any, framing: Framing, timeout: float) -> tuple[asyncio.StreamReader, WebSocketWriter]:
    """Connect to a ws:// or wss:// ``target`` (``targets.Target``) and complete the opening handshake."""
    import ssl

    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=READ_LIMIT)
    protocol = _KitProtocol(WebSocketLink(Side.CLIENT, framing, uri=target.websocket_uri), reader)
    transport: Any = None
    try:
        sock = await asyncio.wait_for(tcp_socket(target.host, target.port), timeout)
        secure = target.scheme == "wss"
        transport, _ = await asyncio.wait_for(loop.create_connection(
            lambda: protocol, sock=sock, ssl=client_context(target) if secure else None,
            server_hostname=target.host if secure else None), timeout)
        await asyncio.wait_for(asyncio.shield(protocol.opened), timeout)
    except (TimeoutError, OSError, ssl.SSLError, WebSocketError) as exc:
        if transport is not None:
            transport.abort()
        raise TargetError(f"cannot reach {target.url}: {str(exc) or type(exc).__name__}",
                          timed_out=isinstance(exc, TimeoutError)) from None
    return reader, WebSocketWriter(protocol, transport)


class MessageTransport(asyncio.Transport):
    """What the carried protocol writes to: its stream goes out as messages."""

    def __init__(self, owner: CarryOverWebSocket) -> None:
        super().__init__()
        self._owner = owner
        self._closing = False

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        transport = self._owner.transport
        return transport.get_extra_info(name, default) if transport is not None else default

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if not self._closing:
            self._owner.link.send(bytes(data))
            self._owner.pump.flush()

    def can_write_eof(self) -> bool:
        return True

    def write_eof(self) -> None:
        self._owner.link.close(1000)
        self._owner.pump.flush()

    def is_closing(self) -> bool:
        transport = self._owner.transport
        return self._closing or transport is None or transport.is_closing()

    def close(self) -> None:
        if self._closing:
            return
        self._closing = True
        self._owner.link.close(1000)
        self._owner.pump.flush()
        transport = self._owner.transport
        if transport is not None and not transport.is_closing():
            # The other side answers our close and the server ends TCP; if that does not happen,
            # the TCP connection is ended after a short wait (RFC 6455 7.1.1).
            asyncio.get_running_loop().call_later(self._owner.close_timeout, transport.close)

    def abort(self) -> None:
        self._closing = True
        if self._owner.transport is not None:
            self._owner.transport.abort()

    def pause_reading(self) -> None:
        if self._owner.transport is not None and self._owner.transport.is_reading():
            self._owner.transport.pause_reading()

    def resume_reading(self) -> None:
        transport = self._owner.transport
        if transport is not None and not transport.is_closing() and not transport.is_reading():
            transport.resume_reading()

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        if self._owner.transport is not None:
            self._owner.transport.set_write_buffer_limits(high, low)

    def get_write_buffer_size(self) -> int:
        transport = self._owner.transport
        return transport.get_write_buffer_size() if transport is not None else 0


class CarryOverWebSocket(asyncio.Protocol):
    """One WebSocket connection, either role: the opening handshake, then ``factory()``'s protocol
    over messages (``MessageTransport``).  A client sends its request at once; ``opened`` resolves
    when the handshake completed (or fails with the ``WebSocketError``)."""

    close_timeout = 2.0  # seconds the other side has to answer our close before TCP is closed

    def __init__(self, factory: Callable[[], asyncio.Protocol], framing: Framing, *, role: Side = Side.SERVER,
                 path: str | None = None, uri: str = "") -> None:
        self.factory = factory
        self.link = WebSocketLink(role, framing, path=path, uri=uri)
        self.wire = WireLog()
        self.pump = _Pump(self.link, self.wire, role)
        self.peer = Side.CLIENT if role is Side.SERVER else Side.SERVER
        self.transport: asyncio.Transport | None = None
        self.inner: asyncio.Protocol | None = None
        self.opened: asyncio.Future[asyncio.Protocol] = asyncio.get_running_loop().create_future()
        self.opened.add_done_callback(_retrieved)  # a listener's is never awaited
        self._ended = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        self.pump.transport = transport  # type: ignore[assignment]
        self.pump.flush()  # a client's opening handshake

    def data_received(self, data: bytes) -> None:
        self.wire.add(self.peer, data)
        stream = self.link.receive_data(data)
        if self.link.opened and self.inner is None and self.link.failure is None:
            self.inner = self.factory()
            self.inner.connection_made(MessageTransport(self))
            if not self.opened.done():
                self.opened.set_result(self.inner)
        if stream and self.inner is not None:
            self.inner.data_received(stream)
        self._settle()
        self.pump.flush()

    def eof_received(self) -> bool:
        self.wire.add(self.peer, None)
        stream = self.link.receive_eof()
        if stream and self.inner is not None:
            self.inner.data_received(stream)
        self._settle(ended=True)
        self.pump.flush()
        return False

    def _settle(self, ended: bool = False) -> None:
        failure = self.link.failure
        if failure is not None and not self._ended:
            peer = self.transport.get_extra_info("peername") if self.transport is not None else None
            log.warning("websocket %s: %s", peer, failure)
        if (failure is not None or ended) and not self.opened.done():
            self.opened.set_exception(failure or WebSocketError("the connection ended during the opening handshake"))
        if (failure is not None or self.link.close_received or ended) and not self._ended:
            self._ended = True
            if self.inner is not None and not self.inner.eof_received() and self.transport is not None:
                self.pump.flush()
                if failure is not None or ended:
                    self.transport.close()
            elif self.inner is None and self.transport is not None:
                self.pump.flush()
                self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.opened.done():
            self.opened.set_exception(WebSocketError(f"connection lost during the opening handshake: {exc or 'closed'}"))
        if self.inner is not None:
            self.inner.connection_lost(exc)

    def pause_writing(self) -> None:
        if self.inner is not None:
            self.inner.pause_writing()

    def resume_writing(self) -> None:
        if self.inner is not None:
            self.inner.resume_writing()
