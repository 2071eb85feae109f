"""How the hostile driver's bytes reach the kit: raw on TCP, inside WebSocket frames on ws://.

Both carriers count what they write against the connection's byte budget (``Spent`` once it
is used up) and wait for the socket to take each write (a bounded drain), so a kit that stops
reading stops the driver too.  The WebSocket carrier answers the kit's upgrade with the same
sans-IO link the peer uses (``rsio_tck.websocket.link``), then writes frames itself: the
hostile modes need frames the link would never send (no FIN ever, a close followed by data, a
header announcing more than will come), and a server's frames are unmasked (RFC 6455 5.1).

In the client role (``--connect``, ``client=True``) the driver speaks first: ``opening()``
reads nothing on TCP, and on ws:// sends the upgrade request and waits for its answer; every
frame the client writes is masked, as RFC 6455 5.1 asks of a client (so only the hostile
part is hostile, not the framing).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import struct

from websockets.frames import Close, Frame, Opcode

from rsio_tck.errors import Side
from rsio_tck.websocket.framing import StreamFraming
from rsio_tck.websocket.link import WebSocketLink

from .material import ENDLESS, FRAMES

OPENING_WAIT = 5.0  # seconds the driver waits for the kit's opening
DRAIN_WAIT = 30.0  # seconds one write may wait for the kit to read
READ_SIZE = 64 * 1024


class Spent(Exception):  # noqa: N818 - a control-flow signal: the connection's byte budget is used up
    """The connection wrote its ``max_bytes``."""


class TcpCarrier:
    transport = "tcp"

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, max_bytes: int,
                 client: bool = False) -> None:
        self.reader, self.writer = reader, writer
        self.left = max_bytes
        self.client = client  # the driver connected (it speaks first)

    async def opening(self) -> bytes:
        """The kit's first bytes (b"" if none came in ``OPENING_WAIT``); b"" at once for a client."""
        if self.client:
            return b""
        with contextlib.suppress(TimeoutError):
            return await asyncio.wait_for(self.reader.read(READ_SIZE), OPENING_WAIT)
        return b""

    async def raw(self, data: bytes) -> None:
        """Bytes onto the socket as they are (on WebSocket: inside whatever frame is open)."""
        if not data:
            return
        if self.left <= 0:
            raise Spent
        self.left -= len(data)
        self.writer.write(data)
        await asyncio.wait_for(self.writer.drain(), DRAIN_WAIT)

    async def send(self, data: bytes, form: str = FRAMES) -> None:
        await self.raw(data)

    async def dribble(self, frame: bytes, pace: float) -> None:
        """One whole frame, one byte every ``pace`` seconds (the pause paces a hostile writer, it
        synchronises nothing)."""
        for offset in range(len(frame)):
            await self.raw(frame[offset : offset + 1])
            await asyncio.sleep(pace)

    async def announce(self, header: bytes) -> None:
        """The start of a frame announcing the largest length the binding allows."""
        await self.raw(header)

    async def fill(self, data: bytes) -> None:
        """More of the frame ``announce`` started."""
        await self.raw(data)

    async def cut(self, frame: bytes) -> None:
        """The first half of a frame (then the driver closes)."""
        await self.raw(frame[: max(1, len(frame) // 2)])

    def shut_write(self) -> None:
        if self.writer.can_write_eof():
            self.writer.write_eof()

    async def hold(self) -> None:
        """Read and drop whatever the kit sends until it closes (the process's time cap ends it else)."""
        while await self.reader.read(READ_SIZE):
            pass

    def close(self) -> None:
        self.writer.close()


class WebSocketCarrier(TcpCarrier):
    transport = "ws"

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, max_bytes: int,
                 framing: object, path: str | None, client: bool = False, uri: str = "") -> None:
        super().__init__(reader, writer, max_bytes, client)
        self.framing = framing
        self.link = (WebSocketLink(Side.CLIENT, framing, uri=uri) if client  # type: ignore[arg-type]
                     else WebSocketLink(Side.SERVER, framing, path=path))  # type: ignore[arg-type]
        binary = getattr(framing, "message_type", "binary") == "binary"
        self.opcode = Opcode.BINARY if binary else Opcode.TEXT
        self.endless_started = False  # an ENDLESS message has its first frame out
        self.announced_in_stream = False  # ``announce`` put the binding's own header in a message

    async def opening(self) -> bytes:
        """The upgrade, answered by the link; then the kit's first stream bytes (b"" if none came).  A client
        sends the upgrade request and returns once the kit accepted it."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + OPENING_WAIT
        if self.client:
            for out in self.link.data_to_send():
                self.writer.write(out)  # the upgrade request: not charged to the hostile budget either
        while loop.time() < deadline:
            if self.client and self.link.opened:
                return b""
            try:
                data = await asyncio.wait_for(self.reader.read(READ_SIZE), deadline - loop.time())
            except TimeoutError:
                break
            if not data:
                raise ConnectionError("the kit closed during the opening")
            stream = self.link.receive_data(data)
            for out in self.link.data_to_send():
                self.writer.write(out)  # the handshake's answer: not charged to the hostile budget
            if self.link.failure is not None:
                raise ConnectionError(str(self.link.failure))
            if stream and not self.client:
                return stream
        if not self.link.opened:
            raise ConnectionError("no WebSocket upgrade from the kit")
        return b""

    def frame(self, opcode: Opcode, payload: bytes, fin: bool = True) -> bytes:
        return Frame(opcode, payload, fin=fin).serialize(mask=self.client)

    def messages(self, data: bytes) -> list[bytes]:
        """Whole frames of the binding's stream as the messages its framing makes of them."""
        out = self.link.framing.outgoing(data)  # whole frames: the framing holds nothing back
        return [m.encode() if isinstance(m, str) else m for m in out]

    async def send(self, data: bytes, form: str = FRAMES) -> None:
        if form == FRAMES:
            await self.raw(b"".join(self.frame(self.opcode, m) for m in self.messages(data)))
        elif form == ENDLESS:
            opcode = Opcode.CONT if self.endless_started else self.opcode
            self.endless_started = True
            await self.raw(self.frame(opcode, data, fin=False))
        else:
            await self.raw(self.frame(self.opcode, data))

    async def dribble(self, frame: bytes, pace: float) -> None:
        """One whole frame's message, one byte a WebSocket frame every ``pace`` seconds (the last with FIN)."""
        for message in self.messages(frame):
            for offset in range(len(message)):
                last = offset == len(message) - 1
                await self.raw(self.frame(Opcode.CONT if offset else self.opcode, message[offset : offset + 1], last))
                await asyncio.sleep(pace)

    async def announce(self, header: bytes) -> None:
        """The largest length where the binding keeps it.  A binding whose frame is one message (RSocket,
        Ditto) has it in the WebSocket header: a header announcing the largest message its framing takes.
        A byte stream whose message boundaries mean nothing (RS-IO's ``StreamFraming``) keeps its own
        length inside the stream: ``header`` itself, in one message of its own."""
        if isinstance(self.framing, StreamFraming):
            self.announced_in_stream = True  # ``fill`` then continues that frame in messages of its own
            await self.raw(self.frame(self.opcode, header))
            return
        await self.header(self.opcode, int(getattr(self.framing, "max_message", 1 << 24)))

    async def fill(self, data: bytes) -> None:
        """More of the announced frame: the announced message's payload, or (a stream framing) a message."""
        if self.announced_in_stream:
            await self.raw(self.frame(self.opcode, data))
        else:
            await self.raw(data)

    async def header(self, opcode: Opcode, length: int) -> None:
        """A frame header alone, announcing ``length`` payload bytes (RFC 6455 5.2: 127, then 64 bits).
        Hand-written: ``Frame.serialize`` needs the payload it announces.  A client's header has the mask bit
        and a masking key (the payload that trickles after it is never unmasked whole: it never ends)."""
        mask = (0x80, os.urandom(4)) if self.client else (0, b"")
        await self.raw(bytes([0x80 | opcode.value, mask[0] | 127]) + struct.pack("!Q", length) + mask[1])

    async def cut(self, frame: bytes) -> None:
        whole = b"".join(self.frame(self.opcode, m) for m in self.messages(frame))
        await self.raw(whole[: max(1, len(whole) // 2)])

    async def ping(self, count: int) -> None:
        await self.raw(self.frame(Opcode.PING, b"hostile") * count)

    async def close_frame(self) -> None:
        await self.raw(self.frame(Opcode.CLOSE, Close(1000, "hostile").serialize()))
