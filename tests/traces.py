"""A tiny trace notation for monitor tests: (sender, frame | raw bytes | CLOSE) steps."""

from __future__ import annotations

from rsio_tck.bindings.rsio.wire import Frame, get_codec
from rsio_tck.bindings.rsio.wire.frames import (
    Cancel,
    ClientHello,
    Goodbye,
    OnComplete,
    OnError,
    OnNext,
    OnNextLastPart,
    OnNextPacked,
    OnNextPart,
    OnSubscribe,
    Request,
    ServerHello,
    Subscribe,
)
from rsio_tck.errors import Side
from rsio_tck.monitor import Finding, Monitor

C, S = Side.CLIENT, Side.SERVER
CLOSE = None
Step = tuple[Side, Frame | bytes | None]


def hello() -> list[Step]:
    return [(C, ClientHello(version=0)), (S, ServerHello(version=0))]


def sub(sid: int, demand: int = 0, name: str = "p", by: Side = C) -> Step:
    return (by, Subscribe(publisher=name, subscriber=sid, initial_demand=demand))


def req(sid: int, n: int, by: Side = C) -> Step:
    return (by, Request(subscriber=sid, demand=n))


def cancel(sid: int, by: Side = C) -> Step:
    return (by, Cancel(subscriber=sid))


def onsub(sid: int, size: int = 0, by: Side = S) -> Step:
    return (by, OnSubscribe(subscriber=sid, element_size=size))


def nxt(sid: int, element: bytes = b"\x01", by: Side = S) -> Step:
    return (by, OnNext(subscriber=sid, element=element))


def packed(sid: int, count: int, size: int, by: Side = S) -> Step:
    return (by, OnNextPacked(subscriber=sid, count=count, data=bytes(count * size)))


def part(sid: int, element: int, data: bytes = b"p", by: Side = S) -> Step:
    return (by, OnNextPart(subscriber=sid, element=element, data=data))


def last(sid: int, element: int, data: bytes = b"l", by: Side = S) -> Step:
    return (by, OnNextLastPart(subscriber=sid, element=element, data=data))


def done(sid: int, by: Side = S) -> Step:
    return (by, OnComplete(subscriber=sid))


def err(sid: int, text: str = "failed", by: Side = S) -> Step:
    return (by, OnError(subscriber=sid, error=text))


def bye(by: Side, reason: str = "bye") -> Step:
    return (by, Goodbye(reason=reason))


def judge(steps: list[Step], codec: str = "msgpack", chunk: int = 0) -> list[Finding]:
    """Encode each sender's frames with its own encoder and let a Monitor judge them."""
    chosen = get_codec(codec)
    encoders = {side: chosen.encoder() for side in Side}
    monitor = Monitor(codec)
    for sender, item in steps:
        if item is None:
            monitor.close(sender)
            continue
        data = item if isinstance(item, bytes) else encoders[sender].encode(item)
        if chunk:
            for i in range(0, len(data), chunk):
                monitor.observe(sender, data[i : i + chunk])
        else:
            monitor.observe(sender, data)
    return monitor.findings


def rules_of(findings: list[Finding]) -> list[tuple[str, Side | None]]:
    return [(f.rule, f.side) for f in findings]
