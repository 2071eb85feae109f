"""Byte streams by URL: ``tcp://host:port``, ``tls://host:port``, ``ws://host:port/path``, ``wss://...``,
``unix:/path``, ``exec:COMMAND``, stdio.

A ws:// or wss:// listener serves the session over WebSocket (``rsio_tck.websocket``:
the handshake, then the binding's ``framing`` between messages and the session's
byte stream); a path other than ``/`` must match the client's request (else HTTP 404).

Listening gives an ``asyncio.Server``; connecting gives a transport bound to
the session protocol.  A child process (``exec:``) and the peer's own
stdin/stdout (``--stdio``) are pipe pairs; ``PipePair`` and
``ProcessTransport`` present them to the session as one duplex transport with
the same flow control (``pause_writing`` from the write pipe, ``pause_reading``
on the read pipe).  URLs are parsed by ``rsio_tck.transport.Target``, as the kit
parses them.
"""

from __future__ import annotations

import asyncio
import ssl
import sys
from collections.abc import Callable
from typing import Any

from rsio_tck.errors import Side
from rsio_tck.transport import Target, TargetError

ProtocolFactory = Callable[[], asyncio.Protocol]
# Wraps each connection's protocol right above the socket (the tiny-writes habit, ``tiny_writes``).
Wrap = Callable[[asyncio.BaseProtocol], asyncio.BaseProtocol]


def _wrapped(factory: Callable[[], Any], wrap: Wrap | None) -> Callable[[], Any]:
    return factory if wrap is None else (lambda: wrap(factory()))

__all__ = ["Target", "TargetError", "connect", "connect_stdio", "listen", "client_ssl_context"]


def client_ssl_context(target: Target, cafile: str | None = None) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=cafile)
    if target.insecure:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    return context


async def listen(url: str, factory: ProtocolFactory, *, ssl_context: ssl.SSLContext | None = None,
                 backlog: int = 1024, framing: Any = None, wrap: Wrap | None = None) -> asyncio.Server:
    """Listen at ``url``; ``framing`` (the binding's ``websocket_framing``, a callable giving a fresh
    one per connection) is needed for ws:// and wss://.  ``wrap``: each connection's protocol, as the
    socket sees it, is ``wrap`` of it (over WebSocket: of the WebSocket adapter)."""
    target = Target.parse(url)
    loop = asyncio.get_running_loop()
    if target.websocket:
        from rsio_tck.websocket.shells import CarryOverWebSocket

        if framing is None:
            raise TargetError(f"{url}: this listener has no WebSocket framing")
        if target.scheme == "wss" and ssl_context is None:
            raise TargetError(f"{url}: listening on wss:// needs a certificate and key")
        path = target.path if target.path not in ("", "/") else None
        return await loop.create_server(_wrapped(lambda: CarryOverWebSocket(factory, framing(), path=path), wrap),
                                        target.host, target.port,
                                        backlog=backlog, ssl=ssl_context if target.scheme == "wss" else None,
                                        reuse_address=True)
    if target.scheme == "unix":
        return await loop.create_unix_server(_wrapped(factory, wrap), target.path, backlog=backlog)
    if target.scheme == "exec":
        raise TargetError(f"{url}: exec: is for connecting; use --stdio to serve over stdin/stdout")
    if target.scheme == "tls" and ssl_context is None:
        raise TargetError(f"{url}: listening on tls:// needs a certificate and key")
    return await loop.create_server(_wrapped(factory, wrap), target.host, target.port, backlog=backlog,
                                    ssl=ssl_context if target.scheme == "tls" else None, reuse_address=True)


async def connect(url: str, factory: ProtocolFactory, *, ssl_context: ssl.SSLContext | None = None,
                  timeout: float = 10.0, framing: Any = None, wrap: Wrap | None = None) -> asyncio.Protocol:
    """Connect and return the protocol ``factory`` made (its connection_made has run); over ws:// and
    wss:// once the opening handshake completed (``framing``, ``wrap``: as for ``listen``; a child
    process's pipes are not wrapped)."""
    target = Target.parse(url)
    loop = asyncio.get_running_loop()
    try:
        if target.websocket:
            from rsio_tck.websocket.framing import WebSocketError
            from rsio_tck.websocket.shells import CarryOverWebSocket

            if framing is None:
                raise TargetError(f"{url}: this connection has no WebSocket framing")
            adapter = CarryOverWebSocket(factory, framing(), role=Side.CLIENT, uri=target.websocket_uri)
            secure = target.scheme == "wss"
            context = (ssl_context or client_ssl_context(target)) if secure else None
            transport, _ = await asyncio.wait_for(loop.create_connection(
                _wrapped(lambda: adapter, wrap), target.host, target.port, ssl=context,
                server_hostname=target.host if secure else None), timeout)
            try:
                return await asyncio.wait_for(asyncio.shield(adapter.opened), timeout)
            except (TimeoutError, WebSocketError) as exc:
                transport.abort()
                raise TargetError(f"cannot reach {url}: {exc or type(exc).__name__}") from None
        made: list[Any] = []  # the session the factory made, under any wrapper

        def session() -> Any:
            made.append(factory())
            return made[-1]

        if target.scheme == "tcp":
            await asyncio.wait_for(loop.create_connection(_wrapped(session, wrap), target.host, target.port), timeout)
            protocol = made[0]
        elif target.scheme == "tls":
            context = ssl_context or client_ssl_context(target)
            await asyncio.wait_for(loop.create_connection(_wrapped(session, wrap), target.host, target.port,
                                                          ssl=context, server_hostname=target.host), timeout)
            protocol = made[0]
        elif target.scheme == "unix":
            await asyncio.wait_for(loop.create_unix_connection(_wrapped(session, wrap), target.path), timeout)
            protocol = made[0]
        else:
            bridge = ProcessBridge(factory())
            await asyncio.wait_for(loop.subprocess_exec(lambda: bridge, *target.command, stdin=asyncio.subprocess.PIPE,
                                                        stdout=asyncio.subprocess.PIPE,
                                                        stderr=asyncio.subprocess.DEVNULL), timeout)
            protocol = bridge.protocol
    except (TimeoutError, OSError, ssl.SSLError) as exc:
        raise TargetError(f"cannot reach {url}: {exc or type(exc).__name__}") from None
    return protocol  # type: ignore[return-value]


async def connect_stdio(protocol: asyncio.Protocol) -> PipePair:
    """Run ``protocol`` over this process's stdin and stdout."""
    loop = asyncio.get_running_loop()
    pair = PipePair(protocol, "stdio")
    # The write side first: the read side attaches the pair in its connection_made, which
    # runs before its first data_received.
    pair.writer, _ = await loop.connect_write_pipe(lambda: _WriteSide(pair), sys.stdout.buffer)
    await loop.connect_read_pipe(lambda: _ReadSide(pair), sys.stdin.buffer)
    return pair


class PipePair(asyncio.Transport):
    """A read pipe and a write pipe as one duplex transport."""

    def __init__(self, protocol: asyncio.Protocol, name: str) -> None:
        super().__init__()
        self.protocol = protocol
        self.name = name
        self.reader: asyncio.ReadTransport | None = None
        self.writer: asyncio.WriteTransport | None = None
        self._lost: set[str] = set()
        self._closing = False
        self._reported = False

    def attach(self, reader: asyncio.ReadTransport) -> None:
        self.reader = reader
        self.protocol.connection_made(self)

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return self.name if name == "peername" else default

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if self.writer is not None and not self.writer.is_closing():
            self.writer.write(data)

    def can_write_eof(self) -> bool:
        return True

    def write_eof(self) -> None:
        if self.writer is not None:
            self.writer.close()  # a pipe's end of file is its close

    def is_closing(self) -> bool:
        return self._closing

    def close(self) -> None:
        self._closing = True
        for side in (self.writer, self.reader):
            if side is not None and not side.is_closing():
                side.close()

    def abort(self) -> None:
        self._closing = True
        if self.writer is not None:
            self.writer.abort()
        if self.reader is not None and not self.reader.is_closing():
            self.reader.close()

    def pause_reading(self) -> None:
        if self.reader is not None and self.reader.is_reading():
            self.reader.pause_reading()

    def resume_reading(self) -> None:
        if self.reader is not None and not self.reader.is_closing() and not self.reader.is_reading():
            self.reader.resume_reading()

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        if self.writer is not None:
            self.writer.set_write_buffer_limits(high, low)

    def get_write_buffer_size(self) -> int:
        return self.writer.get_write_buffer_size() if self.writer is not None else 0

    def side_lost(self, side: str, exc: Exception | None) -> None:
        self._lost.add(side)
        if side == "write":
            self.close()  # nothing can be said any more: stop listening too
        if self._lost >= {"read", "write"} and not self._reported:
            self._reported = True
            self.protocol.connection_lost(exc)

    def eof(self) -> None:
        if not self.protocol.eof_received():
            self.close()


class _ReadSide(asyncio.Protocol):
    def __init__(self, pair: PipePair) -> None:
        self.pair = pair

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.pair.attach(transport)  # type: ignore[arg-type]

    def data_received(self, data: bytes) -> None:
        self.pair.protocol.data_received(data)

    def eof_received(self) -> bool:
        self.pair.eof()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.pair.side_lost("read", exc)


class _WriteSide(asyncio.BaseProtocol):
    def __init__(self, pair: PipePair) -> None:
        self.pair = pair

    def pause_writing(self) -> None:
        self.pair.protocol.pause_writing()

    def resume_writing(self) -> None:
        self.pair.protocol.resume_writing()

    def connection_lost(self, exc: Exception | None) -> None:
        self.pair.side_lost("write", exc)


class ProcessBridge(asyncio.SubprocessProtocol):
    """A child process speaking the binding's wire on its stdin/stdout, seen by the session as a transport."""

    def __init__(self, protocol: asyncio.Protocol) -> None:
        self.protocol = protocol
        self.transport: ProcessTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = ProcessTransport(transport)  # type: ignore[arg-type]
        self.protocol.connection_made(self.transport)

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        if fd == 1:
            self.protocol.data_received(data)

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if fd == 1 and self.transport is not None and not self.protocol.eof_received():
            self.transport.close()

    def pause_writing(self) -> None:
        self.protocol.pause_writing()

    def resume_writing(self) -> None:
        self.protocol.resume_writing()

    def connection_lost(self, exc: Exception | None) -> None:
        if self.transport is not None:
            self.transport.finished()
        self.protocol.connection_lost(exc)


class ProcessTransport(asyncio.Transport):
    GRACE = 2.0  # seconds a closed child may take to exit before it is killed

    def __init__(self, transport: asyncio.SubprocessTransport) -> None:
        super().__init__()
        self.process = transport
        self._closing = False
        self._kill: asyncio.TimerHandle | None = None

    def _pipe(self, fd: int) -> Any:
        return self.process.get_pipe_transport(fd)

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return f"exec pid {self.process.get_pid()}" if name == "peername" else default

    def write(self, data: bytes | bytearray | memoryview) -> None:
        stdin = self._pipe(0)
        if stdin is not None and not stdin.is_closing():
            stdin.write(data)

    def can_write_eof(self) -> bool:
        return True

    def write_eof(self) -> None:
        stdin = self._pipe(0)
        if stdin is not None:
            stdin.close()

    def is_closing(self) -> bool:
        return self._closing

    def close(self) -> None:
        if self._closing:
            return
        self._closing = True
        self.write_eof()
        self._kill = asyncio.get_running_loop().call_later(self.GRACE, self.abort)

    def abort(self) -> None:
        self._closing = True
        if self.process.get_returncode() is None:
            try:
                self.process.kill()
            except ProcessLookupError:
                pass

    def finished(self) -> None:
        if self._kill is not None:
            self._kill.cancel()

    def pause_reading(self) -> None:
        stdout = self._pipe(1)
        if stdout is not None and stdout.is_reading():
            stdout.pause_reading()

    def resume_reading(self) -> None:
        stdout = self._pipe(1)
        if stdout is not None and not stdout.is_closing() and not stdout.is_reading():
            stdout.resume_reading()

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        stdin = self._pipe(0)
        if stdin is not None:
            stdin.set_write_buffer_limits(high, low)

    def get_write_buffer_size(self) -> int:
        stdin = self._pipe(0)
        return stdin.get_write_buffer_size() if stdin is not None else 0
