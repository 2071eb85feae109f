"""The asyncio shell of one Ditto connection: bytes between the transport and the sans-IO ``DittoConnection``.

Two coroutines share the session on one event loop: the reader (bytes to
``receive_data``, answers flushed) and the producer (waits until the session
has work, then ``pump``s bounded rounds, flushing and draining after each, so
a subscriber that does not read stops production at the transport's high-water
mark, while its ``cancel`` still gets read).  The connection ends when the remote
closes, the transport fails, or the session asks to close (a line over the
limit, a fault that cuts a line); only that connection ends.  Events the session
queued late (in flight after a cancel, a freedom) are written by a task of their
own once their delay has passed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from .config import PeerConfig
from .connection import DittoConnection
from .faults import build_policy
from .freedoms import Freedoms

log = logging.getLogger("reference_peer.ditto")
READ_SIZE = 64 * 1024


class Connection:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, config: PeerConfig,
                 number: int = 0) -> None:
        self.reader, self.writer, self.config, self.number = reader, writer, config, number
        self.freedoms = Freedoms(config.freedoms, config.seed, number, config.forced_freedoms, ids=config.ids)
        self.session = DittoConnection(policy=build_policy(config.faults), freedoms=self.freedoms, limits=config.limits,
                                    max_subscriptions=config.max_subscriptions)
        self.wake = asyncio.Event()
        self.end_reason: str | None = None
        self._late: set[asyncio.Future[None]] = set()
        with contextlib.suppress(AttributeError, NotImplementedError):
            writer.transport.set_write_buffer_limits(config.write_high, config.write_high // 4)  # type: ignore[attr-defined]

    async def run(self) -> str:
        producer = asyncio.ensure_future(self._produce())
        try:
            await self._read()
        except (ConnectionError, OSError) as exc:
            self.end_reason = self.end_reason or f"transport lost: {exc}"
        finally:
            producer.cancel()
            for task in self._late:
                task.cancel()
            await asyncio.gather(producer, *self._late, return_exceptions=True)
            await self._close()
        return self.end_reason or "closed"

    async def _read(self) -> None:
        session = self.session
        while self.end_reason is None:
            data = await self.reader.read(READ_SIZE)
            if not data:
                session.receive_eof()
                self.flush()
                self.end_reason = "the remote closed the connection"
                return
            session.receive_data(data)
            self.flush()
            self.wake.set()
            if session.closing is not None:
                self.end_reason = session.closing
                return
            if self._buffered() > 4 * self.config.write_high:
                await self.writer.drain()  # answers the remote provokes beyond the hard bound: read waits too

    async def _produce(self) -> None:
        session = self.session
        while True:
            await self.wake.wait()
            self.wake.clear()
            while session.has_work():
                session.pump(self.config.batch)
                self.flush()
                await self.writer.drain()
                await asyncio.sleep(0)  # the reader gets its turn between rounds
            if session.closing is not None:
                self.end_reason = self.end_reason or session.closing
                self.flush()
                self.writer.close()  # the reader sees the end and the connection closes
                return

    def _buffered(self) -> int:
        """Bytes the transport holds unwritten (0 for a transport that does not say, e.g. a WebSocket adapter)."""
        size = getattr(self.writer.transport, "get_write_buffer_size", None)
        try:
            return int(size()) if size is not None else 0
        except (NotImplementedError, RuntimeError):
            return 0

    def flush(self) -> None:
        late = self.session.late_to_send()
        if late is not None:
            task = asyncio.ensure_future(self._write_late(*late))
            self._late.add(task)
            task.add_done_callback(self._late.discard)
        data = self.session.data_to_send()
        if not data or self.writer.is_closing():
            return
        for chunk in self.freedoms.chunks(data) or [data]:
            self.writer.write(chunk)

    async def _write_late(self, delay: float, data: bytes, subs: list[Any]) -> None:
        """Events held back (a freedom), written ``delay`` seconds later; then their subscriptions go on."""
        await asyncio.sleep(delay)
        if not self.writer.is_closing():
            self.writer.write(data)
        self.session.released(subs)
        self.wake.set()

    async def _close(self) -> None:
        self.flush()
        writer = self.writer
        if writer.is_closing():
            return
        with contextlib.suppress(ConnectionError, OSError, RuntimeError, asyncio.TimeoutError):
            if writer.can_write_eof():
                writer.write_eof()
            await asyncio.wait_for(writer.drain(), self.config.linger)
        writer.close()
        with contextlib.suppress(ConnectionError, OSError, asyncio.TimeoutError):
            await asyncio.wait_for(writer.wait_closed(), 2.0)


async def serve_connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, config: PeerConfig,
                           number: int = 0) -> str:
    """Serve one accepted connection as the Ditto publisher until it ends; the reason it ended."""
    connection = Connection(reader, writer, config, number)
    log.info("ditto connection #%d: %s", number, connection.freedoms.describe())
    reason = await connection.run()
    log.info("ditto connection #%d ended: %s", number, reason)
    return reason


__all__ = ["Connection", "serve_connection"]
