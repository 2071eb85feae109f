"""The hostile driver: listen, and on every connection run one mode, within its bounds; or connect once
and run it as a client (``connect_hostile``: the kit in listen mode, or a proxy, against a hostile client).

Both roles share the carriers and the modes; only the opening differs (a client speaks first: the
binding's ``HostileMaterial.hello``, or the kit's own opening for the binding when it lends none).
Both are bounded alike: ``max_bytes`` a connection, ``max_seconds`` in all.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections.abc import Awaitable, Callable

from rsio_tck.binding import get_binding
from rsio_tck.transport import Target, TargetError

from .carriers import Spent, TcpCarrier, WebSocketCarrier
from .material import HostileMaterial
from .modes import Conn, Mode, all_modes

log = logging.getLogger("reference_peer.hostile")


class HostileError(ValueError):
    """A hostile run that cannot start (an unknown mode, a mode the URL's transport has not): one line."""


def pick(material: HostileMaterial, mode: str, urls: list[str], verb: str = "listens") -> Mode:
    """The mode called ``mode``, checked against the listeners' transports."""
    modes = all_modes(material.modes)
    chosen = modes.get(mode)
    if chosen is None:
        raise HostileError(f"--hostile {mode!r}: no such mode; choose one of {', '.join(modes)} (--hostile list)")
    for url in urls:
        target = Target.parse(url)
        if target.scheme not in ("tcp", "ws"):
            raise HostileError(f"--hostile {verb} on tcp:// or ws:// only, not {url}")
        transport = "ws" if target.websocket else "tcp"
        if transport not in chosen.transports:
            raise HostileError(f"--hostile {mode}: needs a {' or '.join(chosen.transports)}:// URL, not {url}")
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
            try:
                opening = b"" if mode == "silent" else await carrier.opening()
                why = await _run(chosen, Conn(carrier, material, random.Random(seed * 1_000_003 + number), opening),
                                 max_bytes)
            except (ConnectionError, OSError, TimeoutError) as exc:
                why = _ended(exc)
            finally:
                tasks.discard(task)
                with contextlib.suppress(Exception):
                    carrier.close()
            log.info("hostile connection %d (%s): %s", number, mode, why)

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


async def _run(chosen: Mode, conn: Conn, max_bytes: int) -> str:
    """One connection's mode to its end; why it ended, in a few words."""
    try:
        await chosen.run(conn)
    except Spent:
        return f"wrote its {max_bytes} bytes"
    except (ConnectionError, OSError, TimeoutError) as exc:
        return _ended(exc)
    return "done"


def _ended(exc: BaseException) -> str:
    """Why a connection ended, from the error that ended it, whose traceback is let go.

    The stream's closed future holds the same exception, and its traceback holds the frames that hold
    the stream: a reference cycle.  Left to the cyclic GC, which frees it in no set order, the future
    can go before its protocol marks it retrieved, and asyncio logs "Future exception was never
    retrieved" with the traceback (it did, once the peer's shell stopped importing the RS-IO peer and
    the collections fell at other moments)."""
    exc.__traceback__ = None
    return f"ended: {exc or type(exc).__name__}"


def client_hello(material: HostileMaterial, binding: str, profile: str) -> bytes:
    """The client role's opening: the binding's own (``material.hello``), else the kit's for the binding (its
    scenario adapter's ``opening()`` frames, encoded: RS-IO's clientHello, RSocket's SETUP)."""
    if material.hello is not None:
        return material.hello
    chosen = get_binding(binding)
    adapter = chosen.scenario_adapter(profile, {})  # type: ignore[attr-defined]
    encoder = chosen.encoder(profile)
    return b"".join(encoder.encode(frame) for frame in adapter.opening())


CONNECT_WAIT = 5.0  # seconds the connect may take


async def connect_hostile(url: str, material: HostileMaterial, mode: str, *, hello: bytes, max_bytes: int,
                          max_seconds: float, seed: int = 0, stop: asyncio.Event | None = None) -> str:
    """Connect to ``url`` once and run ``mode`` as a client (``hello`` first), until the mode ends, the kit
    closes, ``stop`` is set or ``max_seconds`` passed; returns why it ended, in a few words.  TargetError
    (one line) when the connection cannot be made."""
    chosen = pick(material, mode, [url], "connects")
    target = Target.parse(url)
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection(target.host, target.port), CONNECT_WAIT)
    except (OSError, TimeoutError) as exc:
        raise TargetError(f"cannot connect to {url}: {getattr(exc, 'strerror', None) or exc or 'timed out'}") \
            from None
    carrier: TcpCarrier = (WebSocketCarrier(reader, writer, max_bytes, material.framing(), None, client=True,
                                            uri=url) if target.websocket
                           else TcpCarrier(reader, writer, max_bytes, client=True))

    async def one() -> str:
        try:
            await carrier.opening()  # ws: the upgrade; tcp: nothing (the mode's answer() sends the hello)
        except (ConnectionError, OSError, TimeoutError) as exc:
            return _ended(exc)
        return await _run(chosen, Conn(carrier, material, random.Random(seed * 1_000_003 + 1), b"", hello), max_bytes)

    running = asyncio.ensure_future(one())
    stopped = asyncio.ensure_future((stop or asyncio.Event()).wait())
    try:
        done, _ = await asyncio.wait({running, stopped}, timeout=max_seconds, return_when=asyncio.FIRST_COMPLETED)
        if running in done:
            why = running.result()
        else:
            why = "stopped" if stopped in done else f"ran its {max_seconds:g} s"
    finally:
        for task in (running, stopped):
            task.cancel()
        await asyncio.gather(running, stopped, return_exceptions=True)
        with contextlib.suppress(Exception):
            carrier.close()
    log.info("hostile client (%s) to %s: %s", mode, url, why)
    return why
