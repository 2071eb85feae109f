"""Opening a byte stream to a target addressed by URL (the kit's client side).

``tcp://host:port``, ``tls://host:port`` (``?insecure=1`` skips certificate
checks, for self-signed test targets), ``unix:/path`` and ``exec:COMMAND`` (a
child process speaking RS-IO over its stdin/stdout).  Every open has a timeout.
"""

from __future__ import annotations

import asyncio
import shlex
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


async def open_target(target: Target | str, timeout: float = 5.0) -> tuple[asyncio.StreamReader, object]:
    """Connect; returns a StreamReader and a StreamWriter-like object."""
    if isinstance(target, str):
        target = Target.parse(target)
    try:
        if target.scheme == "tcp":
            return await asyncio.wait_for(asyncio.open_connection(target.host, target.port), timeout)
        if target.scheme == "tls":
            context = ssl.create_default_context()
            if target.insecure:
                context.check_hostname = False
                context.verify_mode = ssl.CERT_NONE
            return await asyncio.wait_for(
                asyncio.open_connection(target.host, target.port, ssl=context, server_hostname=target.host), timeout
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
        raise TargetError(f"cannot reach {target.url}: {exc or type(exc).__name__}") from None
