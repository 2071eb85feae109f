"""The ndjson reference peer: a small server of the test publishers, with four deliberate faults.

It has the stream-shaped entry point the kit's peer shell adapts (``rsio_tck.reference_peer.
peer_binding``: ``serve_connection``, ``make_config``, ``FAULTS``), so ``rsio-peer --binding ndjson``
serves it (with ``RSIO_TCK_BINDINGS`` naming this binding).  Per connection one reader task applies
the subscriber's lines and one writer loop sends what demand allows, a few lines at a time, so a
cancel is read while an unbounded tck/infinite streams.  Each fault breaks one rule of ``rules``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import count
from typing import Any
from urllib.parse import parse_qs, urlsplit

from rsio_tck.errors import ProtocolViolation

from .binding import PROFILES
from .wire import UNBOUNDED, LineEncoder, Message, add_demand, decode_line

PROFILE_NAMES = PROFILES
BATCH = 32  # lines written before the writer lets the reader run


@dataclass(frozen=True)
class Fault:
    rule: str
    description: str


FAULTS: dict[str, Fault] = {
    "overdeliver": Fault("NDJ-DEM-1", "sends one next more than the demand, once per subscription"),
    "next-after-complete": Fault("NDJ-SUB-2", "sends one more next after a completed tck/range"),
    "ignore-cancel": Fault("NDJ-SUB-3", "goes on sending after cancel while demand lasts"),
    "error-early": Fault("NDJ-TCK-3", "tck/error?after=N emits only N-1 elements before its error"),
}


@dataclass(frozen=True)
class PeerConfig:
    profile: str = PROFILES[0]
    faults: tuple[str, ...] = ()
    seed: int = 0
    freedoms: bool = False
    goodbye_timeout: float = 1.0
    linger: float = 0.0


def make_config(args: argparse.Namespace) -> PeerConfig:
    profile = getattr(args, "profile", None) or PROFILES[0]
    if profile not in PROFILES:
        raise ValueError(f"--profile {profile!r}: choose one of {', '.join(PROFILES)}")
    faults = tuple(getattr(args, "fault", None) or ())
    unknown = [name for name in faults if name not in FAULTS]
    if unknown:
        raise ValueError(f"--fault {unknown[0]!r}: no such ndjson fault; choose from {', '.join(FAULTS)}")
    return PeerConfig(profile=profile, faults=faults, seed=getattr(args, "seed", 0) or 0)


def elements(publisher: str, faults: tuple[str, ...]) -> tuple[Iterator[int], str | None]:
    """The elements of a test publisher, and the error that follows them (None: complete); ValueError for
    a name it does not serve."""
    parts = urlsplit(publisher)
    query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
    start = int(query.get("start", 0))
    if parts.path == "tck/range":
        return iter(range(start, start + int(query.get("count", 0)))), None
    if parts.path == "tck/infinite":
        return count(start), None
    if parts.path == "tck/error":
        after = int(query.get("after", 0)) - ("error-early" in faults)
        return iter(range(max(after, 0))), query.get("message", "failed")
    raise ValueError(f"unknown publisher {publisher!r}")


@dataclass
class Subscription:
    id: int
    source: Iterator[int]
    error: str | None
    demand: int
    path: str
    pending: Any = None  # the next element, taken from source but not yet sent
    extra_sent: bool = False
    cancelled: bool = False
    done: bool = False


@dataclass
class Connection:
    config: PeerConfig
    writer: asyncio.StreamWriter
    subscriptions: dict[int, Subscription] = field(default_factory=dict)
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    encoder: LineEncoder = field(default_factory=LineEncoder)

    def fault(self, name: str) -> bool:
        return name in self.config.faults

    def apply(self, message: Message) -> None:
        sub = self.subscriptions.get(message.id)
        live = sub is not None and not sub.done and not sub.cancelled
        if message.op == "subscribe":
            if live:
                return  # a subscriber's error (NDJ-SUB-5); the live subscription goes on
            try:
                source, error = elements(str(message.publisher), self.config.faults)
            except ValueError as exc:
                self.send(Message("error", message.id, message=str(exc)))
                self.subscriptions.pop(message.id, None)
                return
            self.subscriptions[message.id] = Subscription(message.id, source, error, add_demand(0, max(message.n or 0, 0)),
                                                          urlsplit(str(message.publisher)).path)
        elif message.op == "request" and sub is not None and live and (message.n or 0) > 0:
            sub.demand = add_demand(sub.demand, int(message.n or 0))
        elif message.op == "cancel" and sub is not None and live and not self.fault("ignore-cancel"):
            sub.cancelled = True
        self.wake.set()

    def send(self, message: Message) -> None:
        self.writer.write(self.encoder.encode(message))

    def step(self, sub: Subscription) -> bool:
        """Send what ``sub`` may send now, one line; whether it sent one."""
        if sub.done or sub.cancelled:
            return False
        if sub.pending is None:
            sub.pending = next(sub.source, None)
        if sub.pending is None:
            sub.done = True
            if sub.error is not None:
                self.send(Message("error", sub.id, message=sub.error))
            else:
                self.send(Message("complete", sub.id))
                if self.fault("next-after-complete") and sub.path == "tck/range":
                    self.send(Message("next", sub.id, value=0))
            return True
        if sub.demand == 0:
            if self.fault("overdeliver") and not sub.extra_sent:
                sub.extra_sent = True
                self.send(Message("next", sub.id, value=sub.pending))
                sub.pending = None
                return True
            return False
        if sub.demand != UNBOUNDED:
            sub.demand -= 1
        self.send(Message("next", sub.id, value=sub.pending))
        sub.pending = None
        return True

    async def write_loop(self) -> None:
        while True:
            sent = 0
            for sub in list(self.subscriptions.values()):
                while sent < BATCH and self.step(sub):
                    sent += 1
            if sent:
                await self.writer.drain()
                await asyncio.sleep(0)
                continue
            self.wake.clear()
            await self.wake.wait()


async def serve_connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, config: PeerConfig,
                           number: int = 0) -> str:
    """Serve one connection until the subscriber closes it; the reason it ended."""
    connection = Connection(config, writer)
    writing = asyncio.ensure_future(connection.write_loop())
    reason = "the subscriber closed the connection"
    try:
        while True:
            line = await reader.readline()
            if not line.endswith(b"\n"):
                break
            try:
                connection.apply(decode_line(line[:-1]))
            except ProtocolViolation as exc:
                reason = f"closed on a broken rule: {exc}"
                break
    except (ConnectionError, asyncio.LimitOverrunError, ValueError) as exc:
        reason = f"connection failed: {exc}"
    finally:
        writing.cancel()
        with contextlib.suppress(asyncio.CancelledError, ConnectionError):
            await writing
        writer.close()
    return reason
