"""Opening a byte stream to a target addressed by URL (the kit's client side).

``tcp://host:port``, ``tls://host:port`` (``?insecure=1`` skips certificate
checks, for self-signed test targets), ``ws://host:port/path`` and
``wss://host:port/path`` (WebSocket, the binding's ``websocket_framing``; ``wss``
takes ``?insecure=1`` too), ``unix:/path`` and ``exec:COMMAND`` (a child process
speaking the binding over its stdin/stdout).  Every open has a timeout.
"""

from __future__ import annotations

import asyncio
import shlex
import socket
import ssl
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

from .binding import DEFAULT_BINDING
from .child_process import reap


class TargetError(Exception):
    """The target could not be reached or its URL is not understood; ``timed_out``: reaching it took too long
    (a connection or, over WebSocket, an opening handshake nobody answered), not a refusal."""

    def __init__(self, message: str, *, timed_out: bool = False) -> None:
        super().__init__(message)
        self.timed_out = timed_out


@dataclass(frozen=True, slots=True)
class Target:
    url: str
    scheme: str
    host: str = ""
    port: int = 0
    path: str = ""
    command: tuple[str, ...] = ()
    insecure: bool = False
    resource: str = ""  # ws/wss: the request path and query (without the kit's own ``insecure``)

    @property
    def websocket(self) -> bool:
        return self.scheme in ("ws", "wss")

    @property
    def websocket_uri(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}:{self.port}{self.resource}"

    @classmethod
    def parse(cls, url: str) -> Target:
        if url.startswith("unix:"):
            path = url[len("unix:"):].removeprefix("//")
            if not path:
                raise TargetError(f"{url}: unix: needs a socket path")
            return cls(url=url, scheme="unix", path=path)
        if url.startswith("exec:"):
            command = tuple(shlex.split(url[len("exec:"):]))
            if not command:
                raise TargetError(f"{url}: exec: needs a command")
            return cls(url=url, scheme="exec", command=command)
        parts = urlsplit(url)
        if parts.scheme not in ("tcp", "tls", "ws", "wss"):
            raise TargetError(f"{url}: the scheme must be tcp://, tls://, ws://, wss://, unix: or exec:")
        try:
            port = parts.port
        except ValueError:
            raise TargetError(f"{url}: the port is not a number from 0 to 65535") from None
        query = parse_qs(parts.query)
        insecure = query.get("insecure", ["0"])[0] in ("1", "true", "yes")
        if parts.scheme in ("ws", "wss"):
            if not parts.hostname:
                raise TargetError(f"{url}: give a host, e.g. ws://127.0.0.1:7878/rsio")
            kept = "&".join(p for p in parts.query.split("&") if p and not p.startswith("insecure="))
            resource = (parts.path or "/") + (f"?{kept}" if kept else "")
            return cls(url=url, scheme=parts.scheme, host=parts.hostname,
                       port=port if port is not None else (443 if parts.scheme == "wss" else 80),
                       path=parts.path or "/", insecure=insecure, resource=resource)
        if not parts.hostname or port is None:
            raise TargetError(f"{url}: give host and port, e.g. tcp://127.0.0.1:7878")
        return cls(url=url, scheme=parts.scheme, host=parts.hostname, port=port, insecure=insecure)


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

# The kit's receive buffer is kept small so a target that floods (legally, say with
# demand 2^63-1) feels backpressure soon: a cancel then stops a bounded amount of
# data in flight, whatever the kernel's autotuning would otherwise allow.
KIT_RECEIVE_BUFFER = 128 * 1024


async def _tcp_socket(host: str, port: int) -> socket.socket:
    loop = asyncio.get_running_loop()
    infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    last: OSError | None = None
    for family, kind, proto, _, address in infos:
        sock = socket.socket(family, kind, proto)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, KIT_RECEIVE_BUFFER)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.setblocking(False)
            await loop.sock_connect(sock, address)
            return sock
        except OSError as exc:
            sock.close()
            last = exc
    raise last or OSError(f"no address for {host}")


def client_context(target: Target) -> ssl.SSLContext:
    context = ssl.create_default_context()
    if target.insecure:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    return context


async def open_target(target: Target | str, timeout: float = 5.0, *, binding: Any = DEFAULT_BINDING,
                      profile: str | None = None) -> tuple[asyncio.StreamReader, Any]:
    """Connect; returns a StreamReader and a StreamWriter-like object.

    Over ws:// and wss:// both carry the binding's byte stream (``binding``, ``profile``: its
    ``websocket_framing``); the writer then also holds the raw bytes (``wire``) and, once the
    WebSocket failed, why (``failure``)."""
    if isinstance(target, str):
        target = Target.parse(target)
    if target.websocket:
        from .websocket.framing import framing_for
        from .websocket.shells import open_websocket

        try:
            framing = framing_for(binding, profile)
        except ValueError as exc:
            raise TargetError(f"{target.url}: {exc}") from None
        return await open_websocket(target, framing, timeout)
    try:
        if target.scheme == "tcp":
            sock = await asyncio.wait_for(_tcp_socket(target.host, target.port), timeout)
            return await asyncio.open_connection(sock=sock, limit=READ_LIMIT)
        if target.scheme == "tls":
            context = client_context(target)
            sock = await asyncio.wait_for(_tcp_socket(target.host, target.port), timeout)
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
