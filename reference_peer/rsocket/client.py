"""The peer as RSocket client: connect, send SETUP, run one named interaction, report what came back.

Used by ``python -m rsio_tck.reference_peer.rsocket --connect URL --interaction stream --name tck/range?count=3``
and by the kit's listen mode later.  The session is the same as the server's
(it also serves requests the server sends); the client only adds a requester
``Consumer`` that collects the elements and the end of one stream.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from rsio_tck.bindings.rsocket.frames import (
    RequestChannel,
    RequestFnf,
    RequestN,
    RequestResponse,
    RequestStream,
)
from rsio_tck.errors import Side
from rsio_tck.transport import Target, open_target

from ..sources import COMPLETE, QueueSource
from .config import PeerConfig
from .connection import RSocketConnection
from .flows import Consumer, Flow

INTERACTIONS = ("stream", "response", "fnf", "channel")


@dataclass(slots=True)
class Outcome:
    elements: list[bytes] = field(default_factory=list)
    error: str | None = None
    completed: bool = False


class Collector(Consumer):
    """Collects one stream's elements, asking ``batch`` more each time as many have arrived."""

    def __init__(self, s: RSocketConnection, batch: int) -> None:
        self.session = s
        self.batch = batch
        self.sid = 0
        self.outcome = Outcome()
        self.done: asyncio.Future[Outcome] = asyncio.get_running_loop().create_future()
        self._since_request = 0

    def on_next(self, data: bytes) -> None:
        self.outcome.elements.append(data)
        self._since_request += 1
        if self._since_request >= self.batch and self.session.endpoint.receiving(self.sid) and self.session.open:
            self._since_request = 0
            self.session.send(RequestN(stream_id=self.sid, request_n=self.batch))

    def on_end(self, error: str | None) -> None:
        self.outcome.error = error
        self.outcome.completed = error is None
        if not self.done.done():
            self.done.set_result(self.outcome)


async def run_interaction(s: RSocketConnection, interaction: str, name: str, n: int, echo: list[bytes] | None = None,
                          timeout: float = 30.0) -> Outcome:
    """Send one request named ``name`` and wait (bounded) for its outcome."""
    sid = s.endpoint.new_stream_id()
    data = name.encode()
    collector = Collector(s, n)
    collector.sid = sid
    if interaction not in INTERACTIONS:
        raise ValueError(f"unknown interaction {interaction!r}; choose one of {', '.join(INTERACTIONS)}")

    def request() -> None:
        if interaction == "fnf":
            s.send(RequestFnf(stream_id=sid, data=data))
            collector.on_end(None)
            return
        s.inbound[sid] = collector
        if interaction == "stream":
            s.send(RequestStream(stream_id=sid, initial_request_n=n, data=data))
        elif interaction == "response":
            s.send(RequestResponse(stream_id=sid, data=data))
        else:
            items = list(echo or [])
            s.send(RequestChannel(stream_id=sid, initial_request_n=n, data=data, complete=not items))
            if items:  # the channel's outbound direction: sent as the server grants it (REQUEST_N), then completed
                source = QueueSource()
                for item in items:
                    source.push(item)
                source.finish(COMPLETE)
                s.flows[sid] = Flow(sid, "stream", name, source)
        s.flush()

    s.policy.when_leased(s, request)  # with leases, the request waits for the server's LEASE
    s.flush()
    return await asyncio.wait_for(collector.done, timeout)


async def connect(url: str, config: PeerConfig, timeout: float = 10.0) -> tuple[RSocketConnection, asyncio.Task[str]]:
    """A client session on ``url`` (tcp:// or ws://, wss://), SETUP sent, running in a task."""
    target = Target.parse(url)
    reader: Any
    writer: Any
    if target.websocket:
        reader, writer = await open_target(target, timeout, binding="rsocket", profile=config.profile)
    elif target.scheme != "tcp":
        raise ValueError(f"{url}: the RSocket peer connects over tcp://, ws:// or wss:// only")
    else:
        reader, writer = await asyncio.wait_for(asyncio.open_connection(target.host, target.port), timeout)
    session = RSocketConnection(reader, writer, config, Side.CLIENT)
    return session, asyncio.ensure_future(session.run())


async def run_client(url: str, config: PeerConfig, interaction: str, name: str, n: int = 16,
                     timeout: float = 30.0) -> Outcome:
    """Connect, SETUP, run ``interaction`` on ``name``, close; the outcome."""
    session, task = await connect(url, config)
    try:
        return await run_interaction(session, interaction, name, n, timeout=timeout)
    finally:
        session.close("client done")
        await asyncio.wait_for(task, timeout)


__all__ = ["INTERACTIONS", "Collector", "Outcome", "connect", "run_client", "run_interaction"]
