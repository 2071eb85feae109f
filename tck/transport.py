"""Opening a byte stream to a target addressed by URL (the kit's client side).

``tcp://host:port``, ``tls://host:port`` (``?insecure=1`` skips certificate
checks, for self-signed test targets), ``ws://host:port/path`` and
``wss://host:port/path`` (WebSocket, the binding's ``websocket_framing``; ``wss``
takes ``?insecure=1`` too), ``unix:/path`` and ``exec:COMMAND`` (a child process
speaking the binding over its stdin/stdout).  Every open has a timeout.  The URL
(``Target``, ``TargetError``) and the client's socket and TLS settings are ``targets``';
this module gives them on, as it always has.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import ssl
import struct
from typing import Any

from .binding import DEFAULT_BINDING
from .child_process import reap
from .targets import KIT_RECEIVE_BUFFER, Target, TargetError, client_context, tcp_socket

__all__ = ["KIT_RECEIVE_BUFFER", "READ_LIMIT", "Target", "TargetError", "client_context", "open_target"]


class _ProcessWriter:
    """The part of asyncio.StreamWriter the kit uses, over a child's stdin."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self._process = process
        assert process.stdin is not None
        self._stdin = process.stdin

    def write(self, data: bytes) -> None:
        self._stdin.write(data)

    async def drain(self) -> None:
        await self._stdin.drain()

    def close(self) -> None:
        if not self._stdin.is_closing():
            self._stdin.close()
        if self._process.returncode is None:
            self._process.terminate()

    def is_closing(self) -> bool:
        return self._stdin.is_closing()

    async def wait_closed(self) -> None:
        await reap(self._process, 2.0)  # bounded, even when nobody reads the child's output any more

    def write_eof(self) -> None:
        self._stdin.close()

READ_LIMIT = 256 * 1024  # StreamReader buffer: one read of the kit's session


async def open_target(target: Target | str, timeout: float = 5.0, *, binding: Any = DEFAULT_BINDING,
                      profile: str | None = None, limits: Any = None) -> tuple[asyncio.StreamReader, Any]:
    """Connect; returns a StreamReader and a StreamWriter-like object.

    Over ws:// and wss:// both carry the binding's byte stream (``binding``, ``profile``: its
    ``websocket_framing``, its largest message the one ``limits`` allow: a scenario connection's are the
    kit's configured maxima); the writer then also holds the raw bytes (``wire``) and, once the
    WebSocket failed, why (``failure``)."""
    if isinstance(target, str):
        target = Target.parse(target)
    if target.websocket:
        from .websocket.framing import framing_for
        from .websocket.shells import open_websocket

        try:
            framing = framing_for(binding, profile, limits)
        except ValueError as exc:
            raise TargetError(f"{target.url}: {exc}") from None
        return await open_websocket(target, framing, timeout)
    try:
        if target.scheme == "tcp":
            sock = await asyncio.wait_for(tcp_socket(target.host, target.port), timeout)
            return await asyncio.open_connection(sock=sock, limit=READ_LIMIT)
        if target.scheme == "tls":
            context = client_context(target)
            sock = await asyncio.wait_for(tcp_socket(target.host, target.port), timeout)
            return await asyncio.wait_for(
                asyncio.open_connection(sock=sock, ssl=context, server_hostname=target.host, limit=READ_LIMIT), timeout
            )
        if target.scheme == "unix":
            return await asyncio.wait_for(asyncio.open_unix_connection(target.path), timeout)
        process = await asyncio.wait_for(
            asyncio.create_subprocess_exec(
                *target.command,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.DEVNULL,
                start_new_session=True,  # its own group: a kill reaches what it started (child_process.reap)
            ),
            timeout,
        )
        assert process.stdout is not None
        return process.stdout, _ProcessWriter(process)
    except (TimeoutError, OSError, ssl.SSLError) as exc:
        raise TargetError(f"cannot reach {target.url}: {str(exc) or type(exc).__name__}",
                          timed_out=isinstance(exc, TimeoutError)) from None


def reset(writer: asyncio.StreamWriter) -> None:
    """End the connection with a reset: the bytes not yet sent, the kernel's included, are dropped (SO_LINGER of
    zero), where ``transport.abort`` alone drops only asyncio's and the kernel still sends its own, then a FIN."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()
