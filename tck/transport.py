"""Opening a byte stream to a target addressed by URL (the kit's client side).

``tcp://host:port``, ``tls://host:port`` (``?insecure=1`` skips certificate
checks, for self-signed test targets), ``unix:/path`` and ``exec:COMMAND`` (a
child process speaking RS-IO over its stdin/stdout).  Every open has a timeout.
"""

from __future__ import annotations

import asyncio
import shlex
import socket
import ssl
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit


class TargetError(Exception):
    """The target could not be reached or its URL is not understood."""


@dataclass(frozen=True, slots=True)
class Target:
    url: str
    scheme: str
    host: str = ""
    port: int = 0
    path: str = ""
    command: tuple[str, ...] = ()
    insecure: bool = False

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
        if parts.scheme not in ("tcp", "tls"):
            raise TargetError(f"{url}: the scheme must be tcp://, tls://, unix: or exec:")
        if not parts.hostname or parts.port is None:
            raise TargetError(f"{url}: give host and port, e.g. tcp://127.0.0.1:7878")
        insecure = parse_qs(parts.query).get("insecure", ["0"])[0] in ("1", "true", "yes")
        return cls(url=url, scheme=parts.scheme, host=parts.hostname, port=parts.port, insecure=insecure)


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
        try:
            await asyncio.wait_for(self._process.wait(), 2.0)
        except TimeoutError:
            self._process.kill()
            await self._process.wait()

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


async def open_target(target: Target | str, timeout: float = 5.0) -> tuple[asyncio.StreamReader, object]:
    """Connect; returns a StreamReader and a StreamWriter-like object."""
    if isinstance(target, str):
        target = Target.parse(target)
    try:
        if target.scheme == "tcp":
            sock = await asyncio.wait_for(_tcp_socket(target.host, target.port), timeout)
            return await asyncio.open_connection(sock=sock, limit=READ_LIMIT)
        if target.scheme == "tls":
            context = ssl.create_default_context()
            if target.insecure:
                context.check_hostname = False
                context.verify_mode = ssl.CERT_NONE
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
            ),
            timeout,
        )
        assert process.stdout is not None
        return process.stdout, _ProcessWriter(process)
    except (TimeoutError, OSError, ssl.SSLError) as exc:
        raise TargetError(f"cannot reach {target.url}: {str(exc) or type(exc).__name__}") from None
