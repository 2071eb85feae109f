"""Where the kit connects: a target's URL parsed (``Target``), and the TCP socket and TLS context it opens.

``Target.parse`` reads ``tcp://``, ``tls://``, ``ws://``, ``wss://``, ``unix:`` and
``exec:`` URLs; ``TargetError`` is the one error for a URL not understood or a target
not reached.  ``tcp_socket`` and ``client_context`` are the client side's socket and TLS
settings, shared by the byte-stream transports (``transport``) and the WebSocket shell
(``websocket.shells``), which is why they live below both.
"""

from __future__ import annotations

import asyncio
import ipaddress
import shlex
import socket
import ssl
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit


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


# The kit's receive buffer is kept small so a target that floods (legally, say with
# demand 2^63-1) feels backpressure soon: a cancel then stops a bounded amount of
# data in flight, whatever the kernel's autotuning would otherwise allow.
KIT_RECEIVE_BUFFER = 128 * 1024


async def tcp_socket(host: str, port: int) -> socket.socket:
    loop = asyncio.get_running_loop()
    places: list[tuple[int, int, int, Any]]
    try:  # an address needs no lookup (a lookup is a thread-pool round trip per connection)
        literal = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        places = [(family, kind, proto, address) for family, kind, proto, _, address in infos]
    else:
        v6 = literal.version == 6
        places = [(socket.AF_INET6 if v6 else socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP,
                   (str(literal), port, 0, 0) if v6 else (str(literal), port))]
    last: OSError | None = None
    for family, kind, proto, address in places:
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
