"""The proxy's throughput: legal RSocket traffic relayed and judged by ``run_proxy`` on loopback.

One event loop runs a server, the proxy (``rsio_tck.proxy.run_proxy``, the binding's limits) and a
client, so the figures are the relay's and the monitor's cost with the two ends as cheap as they can
be: the server writes pre-encoded frames, the client reads and drops them.  Three exchanges, each
on its own connection after the client's SETUP and REQUEST_STREAM (initial N 2^31-1; the request data
names no test publisher, so only the connection's rules are judged):

- ``stream``: ``FRAMES`` PAYLOAD (N) frames of 64 bytes of data, written 256 KiB at a time: what a
  stream of elements costs (the proxy reads 64 KiB at a time, the monitor takes whole runs);
- ``large``: ``LARGE_FRAMES`` PAYLOAD frames of 4 MiB (under RSocket's 16 MiB frame): a frame is held
  whole in the monitor's decoder before it is judged, for many reads;
- ``ping-pong``: ``ROUND_TRIPS`` round trips of one REQUEST_N 1 and one PAYLOAD answering it: one
  small frame per read, the relay's fixed cost per read.

Best of ``REPEATS``; MB/s (of the server's bytes) and round trips/s.  Every wait is bounded by
``TIMEOUT``.  Run: ``.venv/bin/python -m benchmarks.bench_proxy`` (part of ``make bench``).

``python -m benchmarks.bench_proxy many [PROXY OPTION ...]`` measures instead the proxy's own process
(``rsio-tck proxy``, psutil) with eight hostile clients at once (``tests/hostile_roles.run_proxy_many``:
40 MiB each, to a server that reads everything), for each cell of ``MANY``, and then with ``WIDE``'s many
connections from one client process (this module's ``clients``: a SETUP, then PAYLOAD fragments with F of
one size, 800 MB in all); the options are the proxy's, e.g. ``--max-held 128``.  Goal (issue 27): under
60 s and 200 MB.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

from rsio_tck.binding import get_binding
from rsio_tck.bindings.rsocket import get_profile
from rsio_tck.bindings.rsocket.frames import Payload, RequestN, RequestStream, Setup

PROFILE = "rsocket-1.0"
FRAMES = 300_000
LARGE_FRAMES = 24
LARGE = 4 * 1024 * 1024
ROUND_TRIPS = 3_000
WRITE = 256 * 1024
REPEATS = 5
TIMEOUT = 120.0


def _setup() -> bytes:
    return get_profile(PROFILE).encoder().encode(Setup(
        major_version=1, keepalive_interval=30_000, max_lifetime=90_000,
        metadata_mime=b"application/octet-stream", data_mime=b"text/plain"))


def _opening() -> bytes:
    request = RequestStream(stream_id=1, initial_request_n=2**31 - 1, data=b"bench")
    return _setup() + get_profile(PROFILE).encoder().encode(request)


def _payloads(count: int, size: int) -> bytes:
    frame = get_profile(PROFILE).encoder().encode(Payload(stream_id=1, next=True, data=b"\x2a" * size))
    return frame * count


Exchange = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


async def _through_proxy(server: Exchange, client: Exchange) -> float:
    """Seconds ``client`` took through a proxy (one connection) to a server running ``server``."""
    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await server(reader, writer)
        finally:
            writer.close()

    listening = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = listening.sockets[0].getsockname()[1]
    loop = asyncio.get_running_loop()
    ready: asyncio.Future[str] = loop.create_future()
    from rsio_tck.proxy import run_proxy

    proxy = asyncio.ensure_future(run_proxy("tcp://127.0.0.1:0", f"tcp://127.0.0.1:{port}",
                                            get_binding("rsocket"), PROFILE, max_connections=1,
                                            duration=TIMEOUT, on_ready=ready.set_result))
    try:
        url = await asyncio.wait_for(ready, TIMEOUT)
        host, proxy_port = url.removeprefix("tcp://").rsplit(":", 1)
        reader, writer = await asyncio.wait_for(asyncio.open_connection(host, int(proxy_port)), TIMEOUT)
        started = time.perf_counter()
        await asyncio.wait_for(client(reader, writer), TIMEOUT)
        took = time.perf_counter() - started
        writer.close()
        result = await asyncio.wait_for(proxy, TIMEOUT)
    finally:
        proxy.cancel()
        listening.close()
    (verdict,) = result.connections
    assert not any(verdict.monitor.must_seen.values()), verdict.line()
    return took


def _bulk(data: bytes) -> tuple[Exchange, Exchange]:
    opening = _opening()

    async def server(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        got = b""
        while len(got) < len(opening):
            more = await asyncio.wait_for(reader.read(65536), TIMEOUT)
            if not more:
                return
            got += more
        view = memoryview(data)
        for start in range(0, len(data), WRITE):
            writer.write(view[start : start + WRITE])
            await asyncio.wait_for(writer.drain(), TIMEOUT)
        writer.write_eof()
        await asyncio.wait_for(reader.read(), TIMEOUT)  # until the client closes

    async def client(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(opening)
        left = len(data)
        while left > 0:
            more = await asyncio.wait_for(reader.read(1 << 20), TIMEOUT)
            assert more, f"the stream ended {left} bytes short"
            left -= len(more)

    return server, client


def _ping_pong(rounds: int) -> tuple[Exchange, Exchange]:
    encoder = get_profile(PROFILE).encoder()
    opening = _opening()
    request = encoder.encode(RequestN(stream_id=1, request_n=1))
    answer = encoder.encode(Payload(stream_id=1, next=True, data=b"\x2a" * 64))

    async def server(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await asyncio.wait_for(reader.readexactly(len(opening)), TIMEOUT)
        for _ in range(rounds):
            await asyncio.wait_for(reader.readexactly(len(request)), TIMEOUT)
            writer.write(answer)
        await asyncio.wait_for(reader.read(), TIMEOUT)

    async def client(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(opening)
        for _ in range(rounds):
            writer.write(request)
            await asyncio.wait_for(reader.readexactly(len(answer)), TIMEOUT)

    return server, client


def best(exchange: Callable[[], tuple[Exchange, Exchange]]) -> float:
    return min(asyncio.run(_through_proxy(*exchange())) for _ in range(REPEATS))


MANY = [("rsocket", "tcp", "endless-fragments"), ("rsocket", "ws", "endless-fragments"),
        ("ditto", "tcp", "endless-line"), ("ditto", "ws", "endless-line")]
CLIENTS = 8
WIDE = [(100, 60_000), (100, 4_000_000), (8, 8_000_000)]  # (connections, bytes of each fragment)
WIDE_TOTAL = 800_000_000  # bytes the client process writes, over all its connections


def many(*extra: str) -> None:
    from .bench_hostile import test_module

    roles, sink = test_module("hostile_roles"), test_module("sink_target")
    print(f"rsio-tck proxy {' '.join(extra)} with hostile clients at once (benchmarks/bench_proxy.py many)")
    print("   | binding | transport | clients | wall s | peak MB | exit | closed at the kit's limit |")

    def row(binding: str, transport: str, what: str, measured: Any, clients: int) -> None:
        limited = measured.output.count("at the kit's limit")
        print(f"   | {binding} | {transport} | {what} | {measured.wall:.1f} | {measured.peak_rss / 2**20:.0f} | "
              f"{measured.returncode} | {limited} of {clients} |", flush=True)

    for binding, transport, mode in MANY:
        row(binding, transport, f"{CLIENTS} x {mode}", roles.run_proxy_many(binding, transport, mode, CLIENTS, *extra),
            CLIENTS)
    for count, size in WIDE:
        with sink.SinkTarget("tcp", max_seconds=roles.KILL_AFTER + 30) as target:
            command = [sys.executable, "-m", "rsio_tck.cli", "proxy", "--binding", "rsocket", "--listen",
                       "tcp://127.0.0.1:0", "--target", target, "--max-connections", str(count), "--duration", "45",
                       *extra]
            args = [str(count), str(size), str(WIDE_TOTAL // count)]
            measured, _ = roles.measure_pair(command, roles.KILL_AFTER, lambda url, args=args: (
                [sys.executable, __file__, "clients", url, *args], {}))
        row("rsocket", "tcp", f"{count} connections of {size:,} B fragments", measured, count)


def clients(url: str, count: int, size: int, total: int) -> None:
    """``count`` connections to ``url`` at once, each a SETUP and then PAYLOAD fragments with F of ``size`` bytes
    on stream 1 until ``total`` bytes or the proxy closes it."""
    encoder = get_profile(PROFILE).encoder()
    fragment = encoder.encode(Payload(stream_id=1, next=True, follows=True, data=b"\x2a" * size))
    host, port = url.removeprefix("tcp://").rsplit(":", 1)

    async def one() -> None:
        _, writer = await asyncio.wait_for(asyncio.open_connection(host, int(port)), TIMEOUT)
        writer.write(_setup())
        sent = 0
        try:
            while sent < total:
                writer.write(fragment)
                sent += len(fragment)
                await asyncio.wait_for(writer.drain(), TIMEOUT)
        except (ConnectionError, OSError, TimeoutError):
            pass  # the proxy closed it (at its limit)
        writer.close()

    async def all_of_them() -> None:
        await asyncio.gather(*(one() for _ in range(count)))

    asyncio.run(all_of_them())


def main(argv: list[str] | None = None) -> dict[str, float]:
    if argv and argv[0] == "many":
        many(*argv[1:])
        return {}
    if argv and argv[0] == "clients":
        clients(argv[1], int(argv[2]), int(argv[3]), int(argv[4]))
        return {}
    print(f"the proxy on loopback, RSocket ({PROFILE}), one connection each, best of {REPEATS} "
          "(benchmarks/bench_proxy.py)")
    stream, large = _payloads(FRAMES, 64), _payloads(LARGE_FRAMES, LARGE)
    figures = {
        "stream MB/s": len(stream) / 2**20 / best(lambda: _bulk(stream)),
        "large MB/s": len(large) / 2**20 / best(lambda: _bulk(large)),
        "ping-pong round trips/s": ROUND_TRIPS / best(lambda: _ping_pong(ROUND_TRIPS)),
    }
    print(f"   stream: {FRAMES:,} PAYLOAD frames of 64 bytes ({len(stream) / 2**20:.1f} MB): "
          f"{figures['stream MB/s']:.1f} MB/s")
    print(f"   large: {LARGE_FRAMES} PAYLOAD frames of {LARGE >> 20} MiB: {figures['large MB/s']:.1f} MB/s")
    print(f"   ping-pong: {ROUND_TRIPS:,} round trips of REQUEST_N 1 / PAYLOAD: "
          f"{figures['ping-pong round trips/s']:,.0f} round trips/s")
    return figures


if __name__ == "__main__":
    main(sys.argv[1:])
