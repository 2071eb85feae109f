"""The peer's tiny-writes habit (``--tiny-writes N``): its bytes leave in pieces of at most N bytes.

TCP lets a sender write a few bytes at a time, so a correct target may deliver a large element
slowly while bytes arrive the whole time; the kit must wait for it as long as bytes come (its
time-outs measure silence, ``rsio_tck.scenarios.clock``).  This habit makes the reference peer
such a target, for every binding alike: it sits between the socket's transport and whatever the
binding stacks on it (the session, or the WebSocket framing under it, so over ws:// the pieces
are of the TCP stream, WebSocket frame headers cut too).

Each piece is handed to the socket only once the one before it left the transport's buffer (the
wrapper's drain), so each is its own send and, asyncio setting TCP_NODELAY, its own segment.  So
that a 1 MiB element does not take minutes, the pieces are tiny for the first ``TINY_HEAD`` bytes
of each write the session makes (one production round: frame headers, small frames, the start of
a large one), then at most ``LARGE_PIECE`` bytes.

Seeded, like the other freedoms: with freedoms on, a connection's cap is drawn from 1..N and each
tiny piece from 1..cap (``random.Random`` of seed and connection number); with freedoms off every
tiny piece is N bytes.  The session sees the wrapper's buffer as the transport's, so its flow
control (``set_write_buffer_limits``, ``pause_writing``/``resume_writing``, ``drain``) works as it
does on a socket, with the limits capped at ``QUEUE_MOST``.
"""

from __future__ import annotations

import asyncio
import itertools
import random
from collections import deque
from collections.abc import Callable
from typing import Any

TINY_HEAD = 4096  # bytes of each session write that go in tiny pieces
LARGE_PIECE = 64 * 1024  # the most one piece holds after them
DEFAULT_HIGH = 64 * 1024  # asyncio's default write-buffer limits, until the session sets its own
# The most the wrapper queues before the session's production pauses, whatever limits the session asks
# for: a target that writes a few bytes at a time keeps a queue in proportion to its pace (about a second
# of it on a loaded machine, some 16 KB a second), not the 256 KiB its session would queue for a fast
# socket.  What such a queue holds is in flight after a cancel: at the session's 256 KiB, ID-107's parts of
# a 4 MB element still trickled in after its 10 s drain bound in a loaded run.  Large amounts in flight
# are the flood scenarios' business (STR-006, RSFLOW-011: megabytes of socket buffer, a minute to drain).
QUEUE_MOST = 16 * 1024


def checked(most: int) -> int:
    """``--tiny-writes N`` as a config takes it: ValueError (one line) below 0 (0: off)."""
    if most < 0:
        raise ValueError(f"--tiny-writes {most}: at least 1 byte (0: off)")
    return most


class Pieces:
    """How one connection cuts its bytes."""

    def __init__(self, most: int, *, seeded: bool, seed: int, connection: int) -> None:
        if most < 1:
            raise ValueError(f"--tiny-writes {most}: at least 1 byte")
        self.rng = random.Random(f"rsio-peer/{seed}/{connection}/tiny") if seeded else None
        self.cap = self.rng.randint(1, most) if self.rng is not None else most

    def size(self, offset: int, left: int) -> int:
        """The next piece of a write, ``offset`` bytes into it, ``left`` bytes still to go."""
        if offset >= TINY_HEAD:
            return min(left, LARGE_PIECE)
        size = self.rng.randint(1, self.cap) if self.rng is not None else self.cap
        return min(size, left)


def wrapper(most: int, *, seeded: bool, seed: int) -> Callable[[asyncio.BaseProtocol], asyncio.BaseProtocol]:
    """What wraps each connection's protocol (numbered 1, 2, ... for the seed) in tiny writes of at most ``most``."""
    numbers = itertools.count(1)

    def wrap(protocol: asyncio.BaseProtocol) -> asyncio.BaseProtocol:
        return TinyWritesProtocol(protocol, Pieces(most, seeded=seeded, seed=seed, connection=next(numbers)))

    return wrap


class TinyWritesProtocol(asyncio.Protocol):
    """The socket's protocol: passes everything up to ``inner``, and gives it a ``TinyWritesTransport``."""

    def __init__(self, inner: asyncio.BaseProtocol, pieces: Pieces) -> None:
        self.inner = inner
        self.pieces = pieces
        self.transport: TinyWritesTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # Told to pause as soon as a piece waits in the socket's buffer, to resume once it is out: the drain.
        transport.set_write_buffer_limits(0, 0)  # type: ignore[attr-defined]
        self.transport = TinyWritesTransport(transport, self)  # type: ignore[arg-type]
        self.inner.connection_made(self.transport)

    def data_received(self, data: bytes) -> None:
        self.inner.data_received(data)  # type: ignore[attr-defined]

    def eof_received(self) -> bool | None:
        keep_open = self.inner.eof_received()  # type: ignore[attr-defined]
        if not keep_open and self.transport is not None and self.transport.chunks:
            # asyncio would close the socket's transport now, dropping the bytes still held here (a
            # goodbye answering the remote's last bytes): close once they are out instead.
            self.transport.close()
            return True
        return bool(keep_open)

    def pause_writing(self) -> None:
        if self.transport is not None:
            self.transport.socket_busy = True

    def resume_writing(self) -> None:
        if self.transport is not None:
            self.transport.socket_busy = False
            self.transport.schedule()

    def connection_lost(self, exc: Exception | None) -> None:
        if self.transport is not None:
            self.transport.lost()
        self.inner.connection_lost(exc)


class TinyWritesTransport(asyncio.Transport):
    """The transport the session writes to: it holds the bytes and hands them on in pieces."""

    def __init__(self, transport: asyncio.Transport, owner: TinyWritesProtocol) -> None:
        super().__init__()
        self.socket = transport
        self.owner = owner
        self.loop = asyncio.get_running_loop()
        self.chunks: deque[bytes] = deque()  # the session's writes not yet handed on
        self.offset = 0  # bytes of chunks[0] handed on
        self.held = 0  # bytes in chunks, less offset
        self.high, self.low = QUEUE_MOST, QUEUE_MOST // 4
        self.paused = False  # the session was told to pause writing
        self.socket_busy = False  # a piece waits in the socket's buffer
        self.scheduled = False
        self.closing = False
        self.eof_owed = False  # write_eof / close once the held bytes are out
        self.close_owed = False

    # -- writing ----------------------------------------------------------------------------

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if not data or self.closing or self.eof_owed:
            return
        self.chunks.append(bytes(data))
        self.held += len(data)
        if not self.paused and self.get_write_buffer_size() > self.high:
            self.paused = True
            self.owner.inner.pause_writing()
        self.schedule()

    def schedule(self) -> None:
        """Hand on the next piece at the loop's next turn: one piece a turn, each its own send."""
        if not self.scheduled and not self.socket_busy:
            self.scheduled = True
            self.loop.call_soon(self.pump)

    def pump(self) -> None:
        self.scheduled = False
        if self.socket_busy or self.socket.is_closing():
            return
        if self.chunks:
            chunk = self.chunks[0]
            size = self.owner.pieces.size(self.offset, len(chunk) - self.offset)
            piece = chunk[self.offset:self.offset + size]
            self.offset += size
            if self.offset >= len(chunk):
                self.chunks.popleft()
                self.offset = 0
            self.held -= size
            self.socket.write(piece)  # may call pause_writing at once: the socket did not take it all
            if self.paused and self.get_write_buffer_size() <= self.low:
                self.paused = False
                self.owner.inner.resume_writing()
        if self.chunks:
            self.schedule()
            return
        # Everything is handed on: a half-close or close asked for meanwhile can follow (the socket's
        # transport flushes its own buffer first).
        if self.eof_owed and not self.close_owed:
            self.eof_owed = False
            self.socket.write_eof()
        if self.close_owed:
            self.close_owed = False
            self.socket.close()

    def get_write_buffer_size(self) -> int:
        return self.held + self.socket.get_write_buffer_size()

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        self.high = min(DEFAULT_HIGH if high is None else high, QUEUE_MOST)
        self.low = self.high // 4 if low is None else min(low, self.high // 4)  # a quarter, as the session asks

    def get_write_buffer_limits(self) -> tuple[int, int]:
        return self.low, self.high

    def can_write_eof(self) -> bool:
        return self.socket.can_write_eof()

    def write_eof(self) -> None:
        if self.chunks:
            self.eof_owed = True
        else:
            self.socket.write_eof()

    # -- closing ----------------------------------------------------------------------------

    def is_closing(self) -> bool:
        return self.closing or self.socket.is_closing()

    def close(self) -> None:
        if self.closing:
            return
        self.closing = True
        if self.chunks:
            self.close_owed = True
        else:
            self.socket.close()

    def abort(self) -> None:
        self.closing = True
        self.lost()
        self.socket.abort()

    def lost(self) -> None:
        self.chunks.clear()
        self.held = self.offset = 0

    # -- the rest is the socket's -------------------------------------------------------------

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return self.socket.get_extra_info(name, default)

    def is_reading(self) -> bool:
        return self.socket.is_reading()

    def pause_reading(self) -> None:
        self.socket.pause_reading()

    def resume_reading(self) -> None:
        self.socket.resume_reading()

    def set_protocol(self, protocol: asyncio.BaseProtocol) -> None:
        self.owner.inner = protocol

    def get_protocol(self) -> asyncio.BaseProtocol:
        return self.owner.inner
