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
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

from rsio_tck.binding import get_binding
from rsio_tck.bindings.rsocket import get_profile
from rsio_tck.bindings.rsocket.frames import Payload, RequestN, RequestStream, Setup

PROFILE = "rsocket-1.0"
FRAMES = 300_000
LARGE_FRAMES = 24
LARGE = 4 * 1024 * 1024
ROUND_TRIPS = 3_000
WRITE = 256 * 1024
REPEATS = 3
TIMEOUT = 120.0


def _opening() -> bytes:
    encoder = get_profile(PROFILE).encoder()
    setup = Setup(major_version=1, keepalive_interval=30_000, max_lifetime=90_000,
                  metadata_mime=b"application/octet-stream", data_mime=b"text/plain")
    request = RequestStream(stream_id=1, initial_request_n=2**31 - 1, data=b"bench")
    return encoder.encode(setup) + encoder.encode(request)


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


def main() -> dict[str, float]:
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
    main()
