"""The hostile modes every binding has, and how a binding's own ``Burst`` modes run.

A mode is a coroutine over one connection (``Conn``): the carrier that writes, the binding's
material, and a seeded random source.  The same modes run in both roles: a server answers the
kit's opening first, a client sends its own (``Conn.answer``), then both misbehave alike.  Modes that name ``ws`` only need a ws:// listener.
Every loop here ends: on the connection's byte budget (``Spent``), on the kit closing
(``ConnectionError``) or on the process's time cap (the driver cancels it).
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass

from .carriers import TcpCarrier, WebSocketCarrier
from .material import FRAMES, RAW, Burst, HostileMaterial

PACE = 0.5  # seconds between the bytes of a trickling mode
BATCH = 64 * 1024  # bytes a flooding mode hands the socket per write
CONTINUATIONS = 10**6  # frames of ws-continuations' one message


@dataclass
class Conn:
    carrier: TcpCarrier
    material: HostileMaterial
    random: random.Random
    opening: bytes  # what the kit sent first (a client: b"", it speaks first)
    greeting: bytes | None = None  # the client role's own opening (None: the server role answers the kit's)

    async def answer(self) -> None:
        """The mode's valid start: the answer to the kit's opening, or, as a client, the client's opening (so
        that the hostile bytes come after a valid start, e.g. RSocket garbage after a SETUP)."""
        await self.carrier.send(self.material.answer(self.opening) if self.greeting is None else self.greeting)

    @property
    def ws(self) -> WebSocketCarrier:
        assert isinstance(self.carrier, WebSocketCarrier), "a ws-only mode on a TCP listener"
        return self.carrier


Run = Callable[[Conn], Awaitable[None]]


@dataclass(frozen=True)
class Mode:
    description: str
    run: Run
    transports: tuple[str, ...] = ("tcp", "ws")


def batch_of(unit: bytes) -> bytes:
    return unit * max(1, BATCH // max(1, len(unit)))


async def _repeat(conn: Conn, data: bytes, form: str) -> None:
    while True:  # until Spent, a closed connection, or the time cap
        await conn.carrier.send(data, form)


async def garbage(conn: Conn) -> None:
    await conn.answer()
    batches = [conn.random.randbytes(BATCH) for _ in range(16)]  # made once: the driver's CPU must not slow it
    number = 0
    while True:
        await conn.carrier.send(batches[number % len(batches)], RAW)
        number += 1


async def flood(conn: Conn) -> None:
    await conn.answer()
    await _repeat(conn, batch_of(conn.material.frame), FRAMES)


async def huge_length(conn: Conn) -> None:
    await conn.answer()
    await conn.carrier.announce(conn.material.huge_header)
    await _trickle(conn.carrier.fill, conn.material.filler)


async def _trickle(write: Callable[[bytes], Awaitable[None]], byte: bytes) -> None:
    import asyncio

    while True:
        await write(byte)
        await asyncio.sleep(PACE)  # the hostile writer's pace, not synchronisation


async def silent(conn: Conn) -> None:
    await conn.carrier.hold()


async def slowloris(conn: Conn) -> None:
    await conn.answer()
    while True:
        await conn.carrier.dribble(conn.material.frame, PACE)


async def half_close(conn: Conn) -> None:
    await conn.answer()
    conn.carrier.shut_write()
    await conn.carrier.hold()


async def mid_frame_close(conn: Conn) -> None:
    await conn.answer()
    await conn.carrier.cut(conn.material.frame)
    # An orderly end (FIN) inside the frame, then what the kit still sends is read: closing with bytes unread
    # would reset the connection, and a frame a reset cuts is not judged (SPEC.md decision y).
    conn.carrier.shut_write()
    await conn.carrier.hold()


async def ws_huge_frame(conn: Conn) -> None:
    from websockets.frames import Opcode

    await conn.answer()
    await conn.ws.header(Opcode.BINARY, 2**63 - 1)
    await _trickle(conn.ws.raw, conn.material.filler)


async def ws_ping_flood(conn: Conn) -> None:
    await conn.answer()
    while True:
        await conn.ws.ping(BATCH // 9)  # a ping of 7 bytes is 9 on the wire


async def ws_continuations(conn: Conn) -> None:
    from websockets.frames import Opcode

    await conn.answer()
    ws, filler = conn.ws, conn.material.filler
    first = ws.frame(ws.opcode, filler, fin=False)
    middle = ws.frame(Opcode.CONT, filler, fin=False)
    await ws.raw(first)
    per_batch = BATCH // len(middle)
    sent = 1
    while sent < CONTINUATIONS - 1:
        count = min(per_batch, CONTINUATIONS - 1 - sent)
        await ws.raw(middle * count)
        sent += count
    await ws.raw(ws.frame(Opcode.CONT, filler, fin=True))
    await ws.hold()


async def ws_close_then_data(conn: Conn) -> None:
    await conn.answer()
    await conn.ws.close_frame()
    await _repeat(conn, batch_of(conn.material.frame), FRAMES)


MODES: dict[str, Mode] = {
    "garbage": Mode("seeded random bytes after the opening, as fast as the socket takes them", garbage),
    "flood": Mode("valid frames (the binding's one) as fast as the socket takes them", flood),
    "huge-length": Mode("a frame header announcing the largest length, then one byte every 0.5 s", huge_length),
    "silent": Mode("accept the connection (and the WebSocket upgrade), then never write a byte", silent),
    "slowloris": Mode("a valid frame one byte every 0.5 s, again and again", slowloris),
    "half-close": Mode("answer the opening, then shut down writing but keep the socket open", half_close),
    "mid-frame-close": Mode("answer the opening, then the first half of a frame, then end writing (FIN)",
                            mid_frame_close),
    "ws-huge-frame": Mode("a WebSocket frame header announcing 2^63-1 bytes, then one byte every 0.5 s",
                          ws_huge_frame, ("ws",)),
    "ws-ping-flood": Mode("WebSocket pings as fast as the socket takes them", ws_ping_flood, ("ws",)),
    "ws-continuations": Mode(f"one message in {CONTINUATIONS:,} continuation frames of one byte",
                             ws_continuations, ("ws",)),
    "ws-close-then-data": Mode("a WebSocket close frame, then valid frames as fast as the socket takes them",
                               ws_close_then_data, ("ws",)),
}


def burst_mode(burst: Burst) -> Mode:
    """A binding's ``Burst`` as a mode."""

    async def run(conn: Conn) -> None:
        await conn.answer()
        await conn.carrier.send(burst.prefix, burst.form)
        await _repeat(conn, batch_of(burst.repeat), burst.form)

    return Mode(burst.description, run, burst.transports)


def all_modes(own: Mapping[str, Burst]) -> dict[str, Mode]:
    """Every mode of a binding: the common ones, then its own."""
    return {**MODES, **{name: burst_mode(burst) for name, burst in own.items()}}


def describe_modes(own: Mapping[str, Burst]) -> str:
    """One line per mode: its name, where it runs (ws only?) and what it does."""
    modes = all_modes(own)
    width = max(map(len, modes))
    return "\n".join(f"{name:<{width}}  {'ws only' if mode.transports == ('ws',) else '':<7}  {mode.description}"
                     for name, mode in modes.items())
