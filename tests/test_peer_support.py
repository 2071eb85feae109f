"""Support for the reference peer's tests: a kit-side probe, in-process and child-process peers.

``Probe`` is the kit's end of one connection: a ``rsio_tck.protocol.Connection``
(client role) over asyncio streams, with a ``Monitor`` judging every byte in
both directions in the order the probe saw it.  It also serves ``kit/``
publishers, so the peer's ``tck/subscribe`` has something to subscribe back to:

    kit/seq?n=N[&size=K][&split=P][&fixed=K&packed=1][&error=TEXT][&cut=1]

N elements (MessagePack ints, or K-byte patterns with ``size``), split in parts
of P bytes, or fixed-size (packed where ``packed=1``), then onComplete (or
onError(TEXT)); with ``cut=1`` the onError comes before the last part of the
last element.  Elements go out as the peer's demand allows.  A probe with
``serve_kit = False`` leaves the subscribes to the test.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

import msgpack

from rsio_tck.bindings.rsio.contract import ContractJudge
from rsio_tck.bindings.rsio.wire import get_codec
from rsio_tck.bindings.rsio.wire.frames import (
    Cancel,
    ClientHello,
    Frame,
    Goodbye,
    OnComplete,
    OnError,
    OnNext,
    OnNextLastPart,
    OnNextPacked,
    OnNextPart,
    OnSubscribe,
    Request,
    Subscribe,
)
from rsio_tck.errors import Side
from rsio_tck.monitor import Monitor
from rsio_tck.protocol import Connection, ConnectionClosed, ProtocolError
from rsio_tck.reference_peer import Peer
from rsio_tck.reference_peer.rsio import PeerConfig
from rsio_tck.reference_peer.rsio.freedoms import DELIBERATE_WARNINGS
from rsio_tck.transport import open_target

MAX = 2**63 - 1


def codecs() -> list[str]:
    """The codecs the core provides (varint may not have landed)."""
    names = ["msgpack"]
    try:
        get_codec("varint")
        names.append("varint")
    except (ImportError, ValueError):
        pass
    return names


def run(coroutine: Any, timeout: float = 30.0) -> Any:
    """Run a test coroutine with a hard deadline."""
    return asyncio.run(asyncio.wait_for(coroutine, timeout))


@contextlib.asynccontextmanager
async def serving(config: PeerConfig | None = None, url: str = "tcp://127.0.0.1:0",
                  **kwargs: Any) -> AsyncIterator[tuple[Peer, str]]:
    peer = Peer(config or PeerConfig(**kwargs))
    server = await peer.listen(url)
    try:
        yield peer, server.url
    finally:
        await peer.shutdown(timeout=3.0)


class _Judge(ContractJudge):
    """The contract judge, skipping frames of no subscription (it reads ``frame.subscriber`` of
    every frame once a contract is active, so a hello or goodbye after a subscribe raised)."""

    def observe(self, sender: Side, frame: Frame) -> list[Any]:
        if not hasattr(frame, "subscriber"):
            return []
        return super().observe(sender, frame)


@dataclass
class KitStream:
    sid: int
    n: int
    size: int = 0
    split: int = 0
    fixed: int = 0
    packed: bool = False
    error: str | None = None
    cut: bool = False
    sent: int = 0
    done: bool = False

    def element(self, i: int) -> bytes:
        if self.fixed:
            return (i % 256**self.fixed).to_bytes(self.fixed, "big")
        if self.size:
            return bytes((i + j) % 256 for j in range(self.size))
        return msgpack.packb(i)


@dataclass
class Probe:
    reader: asyncio.StreamReader
    writer: Any
    codec: str = "msgpack"
    conn: Connection = field(init=False)
    monitor: Monitor = field(init=False)

    def __post_init__(self) -> None:
        self.conn = Connection(Side.CLIENT, self.codec)
        self.monitor = Monitor(self.codec)
        self.monitor.contract = _Judge()
        self.events: list[object] = []
        self.eof = False
        self.half_closed = False
        self.raw: list[bytes] = []  # everything the peer sent, as read
        self.kit: dict[int, KitStream] = {}
        self.serve_kit = True
        self._elements: dict[int, list[bytes]] = {}
        self._terminals: dict[int, OnComplete | OnError] = {}
        self._arrival = asyncio.Event()
        self._task = asyncio.get_running_loop().create_task(self._read())

    @classmethod
    async def open(cls, url: str, codec: str = "msgpack", *, hello: bool = True) -> Probe:
        reader, writer = await open_target(url)
        probe = cls(reader, writer, codec)
        if hello:
            probe.send(ClientHello(version=0))
        return probe

    # -- sending ------------------------------------------------------------------------

    def send(self, frame: Frame, *, check: bool = True) -> None:
        self.conn.send(frame, check=check)
        self.flush()

    def send_raw(self, data: bytes) -> None:
        self.conn.send_raw(data)
        self.flush()

    def flush(self) -> None:
        data = self.conn.data_to_send()
        if data and not self.writer.is_closing() and not self.half_closed:
            self.monitor.observe(Side.CLIENT, data)
            self.writer.write(data)

    def half_close(self) -> None:
        """End the kit's direction without goodbye."""
        self.monitor.close(Side.CLIENT)
        self.half_closed = True
        self.writer.write_eof()

    # -- receiving -------------------------------------------------------------------------

    async def _read(self) -> None:
        try:
            while True:
                data = await self.reader.read(256 * 1024)
                if not data:
                    break
                self.raw.append(data)
                self.monitor.observe(Side.SERVER, data)
                events = self.conn.receive_data(data)
                self.events.extend(events)
                for event in events:
                    self._sort(event)
                    self._serve_kit(event)
                self.flush()
                self._arrival.set()
        except (ConnectionError, OSError):
            pass
        self.eof = True
        self.monitor.close(Side.SERVER)
        self.events.extend(self.conn.receive_eof())
        self._arrival.set()

    async def wait(self, condition: Callable[[], Any], timeout: float = 2.0) -> Any:
        """Wait until ``condition()`` is truthy (re-checked on every arrival); returns its value."""
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            value = condition()
            if value:
                return value
            if self.eof and self._task.done():
                raise AssertionError(f"connection ended before the condition held; events: {self.tail()}")
            remaining = deadline - asyncio.get_running_loop().time()
            if remaining <= 0:
                raise AssertionError(f"timed out after {timeout} s; last events: {self.tail()}")
            self._arrival.clear()
            try:
                await asyncio.wait_for(self._arrival.wait(), remaining)
            except TimeoutError:
                pass

    async def quiet(self, window: float = 0.1) -> None:
        """Let ``window`` seconds pass with the reader running (a bounded silence window)."""
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._task), window)

    def tail(self, n: int = 8) -> list[str]:
        return [type(e).__name__ + (f"({getattr(e, 'subscriber', '')})") for e in self.events[-n:]]

    def frames(self, kind: type, sid: int | None = None) -> list[Any]:
        return [e for e in self.events if type(e) is kind and (sid is None or getattr(e, "subscriber", None) == sid)]

    def _sort(self, event: object) -> None:
        kind = type(event)
        if kind is OnNext:
            self._elements.setdefault(event.subscriber, []).append(event.element)  # type: ignore[attr-defined]
        elif kind is OnNextPacked:
            self._elements.setdefault(event.subscriber, []).extend(event.elements())  # type: ignore[attr-defined]
        elif kind is OnComplete or kind is OnError:
            self._terminals.setdefault(event.subscriber, event)  # type: ignore[attr-defined, arg-type]
        elif kind is OnSubscribe:  # a reused Id starts afresh
            self._elements.pop(event.subscriber, None)  # type: ignore[attr-defined]
            self._terminals.pop(event.subscriber, None)  # type: ignore[attr-defined]

    def elements(self, sid: int) -> list[bytes]:
        """Elements of the current subscription ``sid`` (packed frames unpacked, parts joined)."""
        return self._elements.get(sid, [])

    def terminal(self, sid: int) -> OnComplete | OnError | None:
        return self._terminals.get(sid)

    def goodbye(self) -> Goodbye | None:
        found = self.frames(Goodbye)
        return found[0] if found else None

    def protocol_error(self) -> ProtocolError | None:
        found = [e for e in self.events if isinstance(e, ProtocolError)]
        return found[0] if found else None

    def closed(self) -> ConnectionClosed | None:
        found = [e for e in self.events if isinstance(e, ConnectionClosed)]
        return found[0] if found else None

    async def collect(self, sid: int, count: int, timeout: float = 3.0) -> list[bytes]:
        await self.wait(lambda: len(self.elements(sid)) >= count or self.terminal(sid), timeout)
        return self.elements(sid)

    async def finish(self, sid: int, timeout: float = 5.0) -> Any:
        return await self.wait(lambda: self.terminal(sid), timeout)

    # -- closing -------------------------------------------------------------------------

    async def close(self, timeout: float = 3.0) -> None:
        """Orderly goodbye, wait for the peer's and its end of file."""
        if self.conn.state.value == "open":
            self.send(Goodbye(reason="probe done"))
        await self.wait_eof(timeout)

    async def wait_eof(self, timeout: float = 3.0) -> None:
        await asyncio.wait_for(asyncio.shield(self._task), timeout)
        self.writer.close()

    def findings(self, side: Side | None = Side.SERVER) -> list[str]:
        """Findings, less the warnings the peer's freedoms cause on purpose (wide integers, TCK-9)."""
        return [f"{f.rule}: {f.message}" for f in self.monitor.findings
                if (side is None or f.side is side) and f.rule not in DELIBERATE_WARNINGS]

    def rules(self, side: Side | None = Side.SERVER) -> set[str]:
        return {f.rule for f in self.monitor.findings
                if (side is None or f.side is side) and f.rule not in DELIBERATE_WARNINGS}

    # -- the kit's publishers (for tck/subscribe) -------------------------------------------

    def _serve_kit(self, event: object) -> None:
        if self.conn.state.value != "open" or not self.serve_kit:
            return
        if isinstance(event, Subscribe):
            path, _, query = event.publisher.partition("?")
            params = dict(parse_qsl(query))
            stream = KitStream(event.subscriber, int(params.get("n", "0")), int(params.get("size", "0")),
                               int(params.get("split", "0")), int(params.get("fixed", "0")),
                               params.get("packed") == "1", params.get("error"), params.get("cut") == "1")
            self.kit[event.subscriber] = stream
            self.conn.send(OnSubscribe(subscriber=event.subscriber, element_size=stream.fixed))
            self._pump(stream)
        elif isinstance(event, Request):
            stream = self.kit.get(event.subscriber)  # type: ignore[assignment]
            if stream is not None:
                self._pump(stream)
        elif isinstance(event, Cancel):
            self.kit.pop(event.subscriber, None)

    def _pump(self, stream: KitStream) -> None:
        if stream.done:
            return
        sid = stream.sid
        record = self.conn.model.spaces[Side.SERVER].get(sid)
        if record is not None and record.owes_3_9:  # the peer asked for demand <= 0
            stream.done = True
            self.conn.send(OnError(subscriber=sid, error="demand <= 0 violates rule 3.9"))
            return
        while stream.sent < stream.n and self.conn.outstanding(sid) > 0:
            if stream.packed:
                count = min(self.conn.outstanding(sid), stream.n - stream.sent, 64)
                data = b"".join(stream.element(stream.sent + i) for i in range(count))
                self.conn.send(OnNextPacked(subscriber=sid, count=count, data=data))
                stream.sent += count
                continue
            element = stream.element(stream.sent)
            stream.sent += 1
            if stream.split and len(element) > stream.split:
                pieces = [element[i : i + stream.split] for i in range(0, len(element), stream.split)]
                for piece in pieces[:-1]:
                    self.conn.send(OnNextPart(subscriber=sid, element=7, data=piece))
                if stream.cut and stream.sent >= stream.n:
                    break  # the onError below cuts this element short
                self.conn.send(OnNextLastPart(subscriber=sid, element=7, data=pieces[-1]))
            else:
                self.conn.send(OnNext(subscriber=sid, element=element))
        if stream.sent >= stream.n:
            stream.done = True
            if stream.error is not None:
                self.conn.send(OnError(subscriber=sid, error=stream.error))
            else:
                self.conn.send(OnComplete(subscriber=sid))


def reports(probe: Probe, sid: int) -> list[dict[str, Any]]:
    return [msgpack.unpackb(e, raw=False) for e in probe.elements(sid)]


# -- the peer as a child process --------------------------------------------------------------


@dataclass
class PeerProcess:
    process: subprocess.Popen[bytes]
    url: str
    log: Path

    @property
    def pid(self) -> int:
        return self.process.pid

    def output(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""


@contextlib.contextmanager
def peer_process(*args: str, listen: str = "tcp://127.0.0.1:0", timeout: float = 15.0) -> Iterator[PeerProcess]:
    """``python -m rsio_tck.reference_peer --listen ... ARGS`` on a free port; terminated on exit."""
    with tempfile.TemporaryDirectory(prefix="rsio-peer-test-") as scratch:
        port_file, log = Path(scratch) / "port", Path(scratch) / "log"
        command = [sys.executable, "-m", "rsio_tck.reference_peer", "--listen", listen, "--port-file", str(port_file), *args]
        with log.open("wb") as out:
            process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=out,
                                       env={**os.environ, "PYTHONUNBUFFERED": "1"})
        try:
            deadline = time.monotonic() + timeout
            while not (port_file.exists() and port_file.read_text().strip()):
                if process.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(f"peer did not start: {log.read_text(errors='replace')}")
                time.sleep(0.02)  # polling a file the child writes, bounded by the deadline
            scheme = listen.split(":", 1)[0]
            url = f"{scheme}://127.0.0.1:{int(port_file.read_text())}" if scheme in ("tcp", "tls") else listen
            yield PeerProcess(process, url, log)
        finally:
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait(5)
