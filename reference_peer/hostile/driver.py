"""The hostile driver: listen, and on every connection run one mode, within its bounds."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections.abc import Awaitable, Callable

from rsio_tck.transport import Target, TargetError

from .carriers import Spent, TcpCarrier, WebSocketCarrier
from .material import HostileMaterial
from .modes import Conn, Mode, all_modes

log = logging.getLogger("reference_peer.hostile")


class HostileError(ValueError):
    """A hostile run that cannot start (an unknown mode, a mode the URL's transport has not): one line."""


def pick(material: HostileMaterial, mode: str, urls: list[str]) -> Mode:
    """The mode called ``mode``, checked against the listeners' transports."""
    modes = all_modes(material.modes)
    chosen = modes.get(mode)
    if chosen is None:
        raise HostileError(f"--hostile {mode!r}: no such mode; choose one of {', '.join(modes)} (--hostile list)")
    for url in urls:
        target = Target.parse(url)
        if target.scheme not in ("tcp", "ws"):
            raise HostileError(f"--hostile listens on tcp:// or ws:// only, not {url}")
        transport = "ws" if target.websocket else "tcp"
        if transport not in chosen.transports:
            raise HostileError(f"--hostile {mode}: needs a {' or '.join(chosen.transports)}:// listener, not {url}")
    return chosen


async def serve_hostile(urls: list[str], material: HostileMaterial, mode: str, *, max_bytes: int,
                        max_seconds: float, seed: int = 0, stop: asyncio.Event | None = None,
                        on_listening: Callable[[str, int], None] | None = None) -> int:
    """Serve ``mode`` on every URL until ``stop`` is set or ``max_seconds`` passed; returns the
    number of connections served.  ``on_listening(url, port)`` is called per bound listener."""
    chosen = pick(material, mode, urls)
    tasks: set[asyncio.Task[None]] = set()
    served = 0

    def handler(websocket_path: str | None,
                websocket: bool) -> Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]:
        async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            nonlocal served
            served += 1
            number = served
            task = asyncio.current_task()
            assert task is not None
            tasks.add(task)
            carrier: TcpCarrier = (WebSocketCarrier(reader, writer, max_bytes, material.framing(), websocket_path)
                                   if websocket else TcpCarrier(reader, writer, max_bytes))
            why = "done"
            try:
                opening = b"" if mode == "silent" else await carrier.opening()
                await chosen.run(Conn(carrier, material, random.Random(seed * 1_000_003 + number), opening))
            except Spent:
                why = f"wrote its {max_bytes} bytes"
            except (ConnectionError, OSError, TimeoutError) as exc:
                why = f"ended: {exc or type(exc).__name__}"
            finally:
                tasks.discard(task)
                log.info("hostile connection %d (%s): %s", number, mode, why)
                with contextlib.suppress(Exception):
                    carrier.close()

        return connection

    servers = []
    for url in urls:
        target = Target.parse(url)
        path = target.path if target.websocket and target.path not in ("", "/") else None
        try:
            server = await asyncio.start_server(handler(path, target.websocket), target.host, target.port,
                                                reuse_address=True)
        except OSError as exc:
            raise TargetError(f"cannot listen on {url}: {exc.strerror or exc}") from None
        servers.append(server)
        port = server.sockets[0].getsockname()[1]
        log.info("hostile (%s) listening on %s port %d, at most %d bytes a connection, %g s in all",
                 mode, url, port, max_bytes, max_seconds)
        if on_listening is not None:
            on_listening(url, port)
    stop = stop or asyncio.Event()
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(stop.wait(), max_seconds)  # the process's own time cap
    for server in servers:
        server.close()
    for task in list(tasks):
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    return served
