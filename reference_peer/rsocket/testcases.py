"""The RSocket reference peer as the client of listen mode: performs the RSocket client test cases.

Usage: RSIO_URL=tcp://127.0.0.1:PORT RSIO_TESTCASE=NAME \\
    python -m rsio_tck.reference_peer.rsocket.testcases [--profile P] [--fault NAME]...

Like the interop fixture programs (interop/testcases.json gives the conventions),
it opens one connection with the peer's client role (``client.py``: SETUP, then
the named test case of ``rsio_tck.listen.cases``), prints one line per signal it
received ('next TEXT', 'complete', 'error TEXT'; for tck/large 'next N bytes
ok|BAD'), closes the connection, and exits 0 when the case went as expected, 1
when not, 127 for a test case it does not know.  Faults (``--fault`` or the
comma-separated ``RSIO_PEER_FAULTS``) switch on the peer's client faults, so the
self-check can see listen mode catch them.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import os
import sys

from rsio_tck.bindings.rsocket import PROFILE_NAMES
from rsio_tck.bindings.rsocket.frames import Cancel, MetadataPush, RequestStream

from . import make_config
from .client import Collector, Outcome, connect, run_interaction
from .config import PeerConfig
from .connection import RSocketConnection

TIMEOUT = 10.0  # seconds for one interaction
KEEPALIVE_IDLE = 2.5  # seconds idle in the keepalive case, past its SETUP's max lifetime (2 s; interval 200 ms)
UNSUPPORTED = 127


def _text(data: bytes) -> str:
    return data.decode("utf-8", "replace")


def _large(index: int, element: bytes) -> str:
    good = element == bytes((index + j) % 256 for j in range(len(element)))
    return f"next {len(element)} bytes {'ok' if good else 'BAD'}"


def _lines(outcome: Outcome, large: bool = False) -> list[str]:
    lines = [_large(i, e) if large else f"next {_text(e)}" for i, e in enumerate(outcome.elements)]
    if outcome.error is not None:
        lines.append(f"error {outcome.error}")
    elif outcome.completed:
        lines.append("complete")
    return lines


class Taker(Collector):
    """Takes the first ``take`` elements of a stream, then cancels it; later elements are dropped."""

    def __init__(self, s: RSocketConnection, take: int) -> None:
        super().__init__(s, batch=take)
        self.take = take

    def on_next(self, data: bytes) -> None:
        if self.done.done():
            return  # in flight when we cancelled: RSocket allows it, the subscriber sees nothing more
        self.outcome.elements.append(data)
        if len(self.outcome.elements) == self.take:
            self.session.inbound.pop(self.sid, None)
            self.session.send(Cancel(stream_id=self.sid))
            self.session.flush()
            self.done.set_result(self.outcome)


async def _cancel_infinite(s: RSocketConnection) -> list[str]:
    sid = s.endpoint.new_stream_id()
    taker = Taker(s, 5)
    taker.sid = sid

    def request() -> None:
        s.inbound[sid] = taker
        s.send(RequestStream(stream_id=sid, initial_request_n=5, data=b"tck/infinite"))
        s.flush()

    s.policy.when_leased(s, request)
    s.flush()
    outcome = await asyncio.wait_for(taker.done, TIMEOUT)
    return [f"next {_text(e)}" for e in outcome.elements]


async def _fnf_count(s: RSocketConnection, want: str) -> list[str]:
    """tck/fnf-count?key=interop until it answers ``want``, at most 10 times, 0.2 s apart: a responder may
    count fire-and-forgets asynchronously, and nothing acknowledges them (interop/testcases.json)."""
    lines = _lines(await run_interaction(s, "response", "tck/fnf-count?key=interop", 1, timeout=TIMEOUT))
    for _ in range(9):
        if lines[:1] == [want]:
            break
        await asyncio.sleep(0.2)  # the poll's interval: the count changes on the server, unannounced
        lines = _lines(await run_interaction(s, "response", "tck/fnf-count?key=interop", 1, timeout=TIMEOUT))
    return lines


async def _perform(s: RSocketConnection, name: str) -> list[str]:
    if name == "stream-range":
        return _lines(await run_interaction(s, "stream", "tck/range?count=10", 3, timeout=TIMEOUT))
    if name == "request-response":
        return _lines(await run_interaction(s, "response", "tck/range?start=7&count=1", 1, timeout=TIMEOUT))
    if name == "fnf":
        for _ in range(3):
            await run_interaction(s, "fnf", "tck/fnf?key=interop", 0, timeout=TIMEOUT)
        return await _fnf_count(s, "next 3")
    if name == "keepalive":
        await asyncio.sleep(KEEPALIVE_IDLE)  # the test itself: only the session's KEEPALIVEs cross meanwhile
        return _lines(await run_interaction(s, "response", "tck/range?start=7&count=1", 1, timeout=TIMEOUT))
    if name == "channel-echo":
        return _lines(await run_interaction(s, "channel", "tck/echo", 16, echo=[b"a", b"b", b"c"], timeout=TIMEOUT))
    if name == "cancel-infinite":
        return await _cancel_infinite(s)
    if name == "large-fragmented":
        return _lines(await run_interaction(s, "stream", "tck/large?size=100000&count=3", 3, timeout=TIMEOUT),
                      large=True)
    if name == "error":
        return _lines(await run_interaction(s, "stream", "tck/error?after=2", 10, timeout=TIMEOUT))
    # metadata-push
    s.send(MetadataPush(metadata=b"tck"))
    s.flush()
    return _lines(await run_interaction(s, "response", "tck/range?count=1", 1, timeout=TIMEOUT))


# What each test case prints when it went as expected.
EXPECTED: dict[str, list[str]] = {
    "stream-range": [f"next {i}" for i in range(10)] + ["complete"],
    "request-response": ["next 7", "complete"],
    "fnf": ["next 3", "complete"],
    "channel-echo": ["next a", "next b", "next c", "complete"],
    "cancel-infinite": [f"next {i}" for i in range(5)],
    "large-fragmented": ["next 100000 bytes ok"] * 3 + ["complete"],
    "error": ["next 0", "next 1", "error failed"],
    "keepalive": ["next 7", "complete"],
    "metadata-push": ["next 0", "complete"],
}


async def perform(url: str, name: str, config: PeerConfig) -> list[str]:
    """Connect, SETUP, perform test case ``name``, close; the lines to print."""
    session, task = await connect(url, config, timeout=TIMEOUT)
    try:
        return await _perform(session, name)
    finally:
        session.close("test case done")
        await asyncio.wait_for(task, TIMEOUT)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m rsio_tck.reference_peer.rsocket.testcases",
                                description="The RSocket reference peer performing a client test case of listen mode.")
    p.add_argument("--profile", choices=PROFILE_NAMES, default="rsocket-1.0", help="RSocket wire profile")
    p.add_argument("--fault", action="append", default=[], metavar="NAME", help="switch on a fault (repeatable)")
    args = p.parse_args(argv)
    args.fault += [f for f in os.environ.get("RSIO_PEER_FAULTS", "").split(",") if f.strip()]
    name = os.environ.get("RSIO_TESTCASE", "")
    url = os.environ.get("RSIO_URL", "")
    if name not in EXPECTED:
        print(f"unsupported test case {name!r}", file=sys.stderr)
        return UNSUPPORTED
    if not url.startswith(("tcp://", "ws://", "wss://")):
        print(f"RSIO_URL must be tcp://HOST:PORT or ws://HOST:PORT/PATH, not {url!r}", file=sys.stderr)
        return 2
    try:
        config = make_config(args)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if name == "keepalive":
        config = dataclasses.replace(config, keepalive_ms=200, lifetime_ms=2000)
    if name == "channel-echo" and config.profile == "reactivesocket-draft":
        print("the draft has no request-channel", file=sys.stderr)
        return UNSUPPORTED
    try:
        lines = asyncio.run(perform(url, name, config))
    except (OSError, TimeoutError, ConnectionError) as exc:
        print(f"error: {exc or type(exc).__name__}", file=sys.stderr)
        return 1
    print("\n".join(lines), flush=True)
    return 0 if lines == EXPECTED[name] else 1


if __name__ == "__main__":
    sys.exit(main())
