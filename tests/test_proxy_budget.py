"""The proxy's budget of bytes held across its connections (``tck/proxy/budget.py``), in process.

A connection whose bytes take the total past ``max_held`` is closed at the kit's own limit: its line says so,
neither side is judged from there (a close inside a frame is nobody's RS-FRAME-8), and the budget lets go of
it.  Ordinary traffic with large legal frames, several connections at once, never reaches it, and a trace
never closes a connection (it is cut at half the budget).  Loopback only; every wait is bounded.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from rsio_tck.binding import get_binding
from rsio_tck.bindings.rsio.wire.frames import ClientHello, Goodbye, OnComplete, OnNext, Subscribe
from rsio_tck.bindings.rsocket import get_profile
from rsio_tck.bindings.rsocket.frames import Payload, Setup
from rsio_tck.embedded import EmbeddedPeer
from rsio_tck.errors import Side
from rsio_tck.protocol import Connection
from rsio_tck.proxy import run_proxy
from rsio_tck.proxy.relay import READ_SIZE
from rsio_tck.testpubs import large_bytes

TIMEOUT = 30.0
MIB = 1 << 20


async def _sink(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """A server that reads and drops everything, never writing."""
    try:
        while await asyncio.wait_for(reader.read(1 << 18), TIMEOUT):
            pass
    except (ConnectionError, OSError):
        pass
    finally:
        writer.close()


async def _through_proxy(target: str | None, clients: list[Callable[[str], Awaitable[Any]]], binding: str,
                         profile: str, **options: Any) -> tuple[Any, list[Any]]:
    """Run ``clients`` at once through a proxy (one connection each) to ``target`` (None: an in-process sink);
    the proxy's result and the clients' results."""
    sink = None
    if target is None:
        sink = await asyncio.start_server(_sink, "127.0.0.1", 0)
        target = f"tcp://127.0.0.1:{sink.sockets[0].getsockname()[1]}"
    ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    proxy = asyncio.ensure_future(run_proxy("tcp://127.0.0.1:0", target, get_binding(binding), profile,
                                            max_connections=len(clients), duration=TIMEOUT,
                                            on_ready=ready.set_result, **options))
    try:
        url = await asyncio.wait_for(ready, TIMEOUT)
        done = await asyncio.wait_for(asyncio.gather(*(client(url) for client in clients)), TIMEOUT)
        return await asyncio.wait_for(proxy, TIMEOUT), list(done)
    finally:
        proxy.cancel()
        if sink is not None:
            sink.close()


def _endless_fragments(total: int) -> Callable[[str], Awaitable[int]]:
    """An RSocket client: SETUP, then PAYLOAD fragments with F of 64 KiB on stream 1 until ``total`` bytes or the
    proxy closes; the bytes it wrote."""
    encoder = get_profile("rsocket-1.0").encoder()
    setup = encoder.encode(Setup(keepalive_interval=30_000, max_lifetime=90_000, metadata_mime=b"a/b",
                                 data_mime=b"a/b"))
    fragment = encoder.encode(Payload(stream_id=1, next=True, follows=True, data=b"\x2a" * 65536))

    async def client(url: str) -> int:
        host, port = url.removeprefix("tcp://").rsplit(":", 1)
        _, writer = await asyncio.wait_for(asyncio.open_connection(host, int(port)), TIMEOUT)
        writer.write(setup)
        sent = len(setup)
        try:
            while sent < total:
                # Each write cut inside a frame: the proxy's close finds a frame in progress.
                piece = fragment[: len(fragment) // 2 + 7] if sent + len(fragment) >= total else fragment
                writer.write(piece)
                sent += len(piece)
                await asyncio.wait_for(writer.drain(), TIMEOUT)
        except (ConnectionError, OSError):
            pass
        writer.close()
        return sent

    return client


def test_a_connection_that_takes_the_total_past_the_budget_is_closed_at_the_kits_limit() -> None:
    result, sent = asyncio.run(_through_proxy(None, [_endless_fragments(32 * MIB)], "rsocket", "rsocket-1.0",
                                              max_held=2 * MIB))
    (verdict,) = result.connections
    line = verdict.line()
    assert "the kit closed it at the kit's limit: 2 MiB held across connections (--max-held)" in line, line
    assert verdict.must == {"client": 0, "server": 0} and not verdict.findings, line  # no RS-FRAME-8 for the cut
    # Read to the limit (reassembly, and a trace of at most half the budget), not to the client's last byte.
    assert verdict.sent["client"] < 2 * MIB and sent[0] < 32 * MIB, (line, sent)
    assert 2 * MIB < result.budget.peak <= 2 * MIB + READ_SIZE  # past the limit by one read at most
    assert result.budget.total == 0  # the connection ended: let go


def test_only_the_connection_whose_bytes_pass_the_budget_is_closed() -> None:
    # Two hostile clients, 1.5 MiB each, under a budget of 2 MiB (no traces: only the reassembly counts): the
    # one whose bytes pass it is closed, and the other, with room again, is relayed to its last byte and judged
    # at its own close (RS-FRAME-8: it closed inside a frame).
    result, sent = asyncio.run(_through_proxy(None, [_endless_fragments(3 * MIB // 2)] * 2, "rsocket",
                                              "rsocket-1.0", max_held=2 * MIB, keep_traces=False))
    lines = [v.line() for v in result.connections]
    limited = [v for v in result.connections if "the kit's limit" in (v.ended or "")]
    assert len(limited) == 1, lines
    (other,) = [v for v in result.connections if v is not limited[0]]
    assert other.sent["client"] in sent and {f["rule"] for f in other.findings} == {"RS-FRAME-8"}, lines
    assert not limited[0].findings, lines
    assert result.budget.total == 0


async def _large_client(url: str, size: int, count: int) -> list[bytes]:
    """An RS-IO client subscribing to tck/large (``count`` elements of ``size`` bytes) through ``url``."""
    host, port = url.removeprefix("tcp://").rsplit(":", 1)
    reader, writer = await asyncio.wait_for(asyncio.open_connection(host, int(port)), TIMEOUT)
    conn = Connection(Side.CLIENT, "msgpack")
    conn.send(ClientHello(version=0, extensions=()))
    conn.send(Subscribe(publisher=f"tck/large?size={size}&count={count}", subscriber=1, initial_demand=count))
    writer.write(conn.data_to_send())
    elements: list[bytes] = []
    done = False
    while not done:  # until the server's goodbye answers ours, sent at onComplete (BYE-3)
        data = await asyncio.wait_for(reader.read(1 << 20), TIMEOUT)
        assert data, "the connection ended before the server's goodbye"
        for event in conn.receive_data(data):
            if isinstance(event, OnNext):
                elements.append(event.element)
            elif isinstance(event, OnComplete):
                conn.send(Goodbye(reason="done"))
            elif isinstance(event, Goodbye):
                done = True
        writer.write(conn.data_to_send())
    writer.close()
    return elements


def test_large_legal_frames_on_several_connections_at_once_stay_within_the_default_budget() -> None:
    # Four clients at once, each receiving two elements of 6 MB, each in one onNext frame (the peer splits none
    # under 8 MiB): the proxy holds each frame whole before judging it, up to 24 MB at once, which the default
    # budget takes (no traces are kept, so the peak is the frames').
    size, count, clients = 6_000_000, 2, 4
    with EmbeddedPeer(extra=("--split-threshold", str(8 * MIB))) as target:
        result, got = asyncio.run(_through_proxy(
            target, [lambda url: _large_client(url, size, count)] * clients, "rsio", "msgpack", keep_traces=False))
    for elements in got:
        assert elements == [large_bytes(i, 0, size) for i in range(count)]
    for verdict in result.connections:
        assert verdict.must == {"client": 0, "server": 0} and verdict.error is None, verdict.line()
        assert "the kit's limit" not in (verdict.ended or ""), verdict.line()
    assert size - READ_SIZE <= result.budget.peak < result.budget.limit  # frames in progress counted, under 64 MiB
    assert result.budget.total == 0


def test_traces_are_cut_at_half_the_budget_and_never_close_a_connection() -> None:
    # Whole frames hold nothing in the monitor, so only the trace grows: it stops at half the budget, with its
    # truncation marker, and the connection is relayed to its end.
    encoder = get_profile("rsocket-1.0").encoder()
    setup = encoder.encode(Setup(keepalive_interval=30_000, max_lifetime=90_000, metadata_mime=b"a/b",
                                 data_mime=b"a/b"))
    frames = encoder.encode(Payload(stream_id=0, next=True, data=b"\x2a" * 1000)) * 1000  # 1 MB of whole frames

    async def client(url: str) -> None:
        host, port = url.removeprefix("tcp://").rsplit(":", 1)
        _, writer = await asyncio.wait_for(asyncio.open_connection(host, int(port)), TIMEOUT)
        writer.write(setup + frames)
        await asyncio.wait_for(writer.drain(), TIMEOUT)
        writer.close()

    result, _ = asyncio.run(_through_proxy(None, [client], "rsocket", "rsocket-1.0", max_held=512 * 1024))
    (verdict,) = result.connections
    assert verdict.ended == "the client closed" and verdict.sent["client"] == len(setup + frames), verdict.line()
    assert verdict.trace[-1].truncated
    kept = sum(len(r.data or b"") for r in verdict.trace)
    assert 0 < kept <= 256 * 1024 < len(frames)
