"""Bounded everything: stalled readers, many connections, one bad connection among good ones."""

from __future__ import annotations

import asyncio
import resource
import socket
import time
from collections.abc import Callable

import msgpack
import psutil
from test_peer_support import MAX, Probe, peer_process, run, serving

from rsio_tck.bindings.rsio.wire.frames import (
    ClientHello,
    Goodbye,
    OnComplete,
    OnNext,
    OnNextPacked,
    Request,
    Subscribe,
)
from rsio_tck.errors import Side
from rsio_tck.protocol import Connection
from rsio_tck.transport import Target

MB = 1024 * 1024


def _stalled_client(url: str, names: list[str]) -> socket.socket:
    """Handshake, subscribe with demand 2^63-1 to each name, and never read."""
    target = Target.parse(url)
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.settimeout(5)
    sock.connect((target.host, target.port))
    conn = Connection(Side.CLIENT)
    conn.send(ClientHello(version=0))
    for sid, name in enumerate(names, start=1):
        conn.send(Subscribe(publisher=name, subscriber=sid, initial_demand=MAX))
    sock.sendall(conn.data_to_send())
    return sock


async def _until(condition: Callable[[], object], timeout: float) -> None:
    """Poll ``condition`` (something no event announces, like a transport's state) until a deadline."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition did not hold in time"
        await asyncio.sleep(0.01)


def test_a_reader_that_never_reads_does_not_grow_the_peers_memory() -> None:
    names = ["tck/infinite", "tck/fixed?size=8&count=1000000000000", "tck/large?size=1048576&count=1000000&part=65536"]
    with peer_process() as peer:
        process = psutil.Process(peer.pid)
        stalled = [_stalled_client(peer.url, names) for _ in range(3)]
        try:
            time.sleep(1.0)  # let every buffer fill: this measures memory over time, it synchronises nothing
            baseline = process.memory_info().rss
            peak = baseline
            for _ in range(10):
                time.sleep(1.0)
                peak = max(peak, process.memory_info().rss)
            assert peak - baseline < 50 * MB, f"RSS grew by {(peak - baseline) / MB:.1f} MB"

            async def still_serving() -> None:
                p = await Probe.open(peer.url)
                p.send(Subscribe(publisher="tck/range?count=3", subscriber=1, initial_demand=3))
                assert isinstance(await p.finish(1), OnComplete)
                await p.close()

            run(still_serving())
        finally:
            for sock in stalled:
                sock.close()


def test_production_pauses_at_the_write_buffer_bound() -> None:
    async def go() -> None:
        async with serving(write_high=64 * 1024, write_low=16 * 1024) as (peer, url):
            sock = await asyncio.to_thread(_stalled_client, url, ["tck/infinite", "tck/fixed?size=8&count=10000000000"])
            try:
                await _until(lambda: peer.connections and next(iter(peer.connections)).paused, 5.0)
                session = next(iter(peer.connections))
                bound = session.config.write_high + session.config.frame_bytes()
                for _ in range(20):  # stays paused and bounded while nobody reads
                    await asyncio.sleep(0.01)
                    assert session.transport.get_write_buffer_size() <= bound
                assert session.paused
            finally:
                sock.close()

    run(go())


async def _stream(url: str, start: asyncio.Event, count: int, packed: bool) -> int:
    reader, writer = await asyncio.open_connection(*url.removeprefix("tcp://").split(":"))
    conn = Connection(Side.CLIENT)
    conn.send(ClientHello(version=0))
    writer.write(conn.data_to_send())
    await start.wait()
    name = f"tck/fixed?size=8&count={count}" if packed else f"tck/range?count={count}"
    conn.send(Subscribe(publisher=name, subscriber=1, initial_demand=MAX))
    writer.write(conn.data_to_send())
    received = 0
    while True:
        data = await reader.read(256 * 1024)
        assert data, "connection closed before onComplete"
        for event in conn.receive_data(data):
            if type(event) is OnNext:
                received += 1
            elif type(event) is OnNextPacked:
                received += event.count  # type: ignore[attr-defined]
            elif type(event) is OnComplete:
                conn.send(Goodbye(reason="done"))
                writer.write(conn.data_to_send())
                writer.close()
                return received


def test_500_concurrent_connections_each_streaming() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 2048:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(4096, hard), hard))  # the child inherits it
    with peer_process() as peer:
        process = psutil.Process(peer.pid)

        async def go() -> None:
            start = asyncio.Event()
            tasks = [asyncio.ensure_future(_stream(peer.url, start, 1000, packed=i % 5 == 0)) for i in range(500)]
            await _until(lambda: process.num_fds() >= 500, 20.0)  # all connected (accepted) at once
            start.set()
            counts = await asyncio.gather(*tasks)
            assert counts == [1000] * 500

        run(go(), timeout=60)


def test_malformed_input_on_one_connection_leaves_the_others_untouched() -> None:
    bad_inputs = {
        "reserved type": b"\x3f",
        "oversize bin": b"\x08\x01\xc6\x40\x00\x00\x00",
        "invalid utf-8": b"\x04\xa2\xff\xfe\x01\x00",
        "string where an Id belongs": b"\x06\xa1x",
        "second hello": b"\x01\x00\x90",
        "server hello from a client": b"\x02\x00\x90",
    }

    async def go() -> None:
        async with serving() as (_, url):
            healthy = await Probe.open(url)
            healthy.send(Subscribe(publisher="tck/infinite", subscriber=1, initial_demand=100))
            await healthy.collect(1, 100)
            bad = {}
            for what, data in bad_inputs.items():
                bad[what] = probe = await Probe.open(url)
                probe.send_raw(data)
            for what, probe in bad.items():
                goodbye = await probe.wait(probe.goodbye)
                assert goodbye.reason.strip(), what
                await probe.wait_eof()
                assert probe.findings(Side.SERVER) == [], what
            truncated = await Probe.open(url)
            truncated.send_raw(b"\x04\xa5tck")
            truncated.half_close()
            assert (await truncated.wait(truncated.goodbye)).reason.strip()
            await truncated.wait_eof()
            healthy.send(Request(subscriber=1, demand=100))
            assert [msgpack.unpackb(e) for e in await healthy.collect(1, 200)] == list(range(200))  # values (TCK-9)
            await healthy.close()
            assert healthy.findings(None) == []

    run(go())


def test_clients_resetting_mid_flood_never_wedge_the_peer() -> None:
    # Regression: a production round on a transport that was closing wrote nothing and
    # never spent its budget, so the event loop spun forever and every connection hung.
    import struct

    with peer_process() as peer:
        for _ in range(30):
            sock = _stalled_client(peer.url, ["tck/infinite", "tck/fixed?size=8&count=1000000000000"])
            assert sock.recv(65536)  # the flood has begun
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            sock.close()  # reset while the peer is producing

        async def still_serving() -> None:
            probe = await Probe.open(peer.url)
            probe.send(Subscribe(publisher="tck/range?count=3", subscriber=1, initial_demand=3))
            assert len(await probe.collect(1, 3)) == 3
            await probe.close()

        run(still_serving(), timeout=10)
