"""The RSocket endpoint's receive path (the reference peer's side) against a bare decode of the same bytes.

A client endpoint that asked for 2^31-1 elements on one stream takes ``FRAMES`` PAYLOAD (N) frames, fed
in 64 KiB chunks: each frame is decoded, judged by the endpoint's judge (which owns the stream's
lifecycle and credit, issue 28) and handled against its stream as the judge had it before the frame.
The baseline, measured in the same run, is the profile's incremental decoder alone over the same
chunks (``feed``: one frame object per frame).  The ratio is the endpoint's time over the decoder's.
Run: ``.venv/bin/python -m benchmarks.bench_endpoint`` (part of ``make bench``).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from rsio_tck.bindings.rsocket import get_profile
from rsio_tck.bindings.rsocket.endpoint import Endpoint
from rsio_tck.bindings.rsocket.frames import Payload, RequestStream
from rsio_tck.errors import Side

FRAMES = 100_000
CHUNK = 64 * 1024
REPEATS = 5


def chunks() -> list[bytes]:
    encoder = get_profile("rsocket-1.0").encoder(None, length_prefix=True)
    body = b"".join(encoder.encode(Payload(stream_id=1, next=True, data=b"%d" % i)) for i in range(FRAMES))
    return [body[i:i + CHUNK] for i in range(0, len(body), CHUNK)]


def endpoint_receive(pieces: list[bytes]) -> int:
    client = Endpoint(Side.CLIENT)
    client.send(RequestStream(stream_id=client.new_stream_id(), initial_request_n=2**31 - 1))
    client.data_to_send()
    return sum(len(client.receive_data(piece)) for piece in pieces)


def bare_decode(pieces: list[bytes]) -> int:
    decoder = get_profile("rsocket-1.0").decoder(None, length_prefix=True)
    return sum(len(decoder.feed(piece)) for piece in pieces)


def best(fn: Callable[[list[bytes]], int], pieces: list[bytes]) -> float:
    fastest = float("inf")
    for _ in range(REPEATS):
        started = time.perf_counter()
        count = fn(pieces)
        fastest = min(fastest, time.perf_counter() - started)
        assert count == FRAMES, count
    return fastest


def main() -> dict[str, float]:
    pieces = chunks()
    kit, bare = best(endpoint_receive, pieces), best(bare_decode, pieces)
    print(f"RSocket endpoint receive, {FRAMES:,} PAYLOAD (N) frames on one stream in {CHUNK // 1024} KiB chunks, "
          f"best of {REPEATS} (benchmarks/bench_endpoint.py)")
    print(f"   endpoint {FRAMES / kit / 1e3:6.0f} k frames/s; decoder alone {FRAMES / bare / 1e3:6.0f} k frames/s; "
          f"ratio {kit / bare:.2f}x the decoder's time")
    return {"endpoint_frames_per_s": FRAMES / kit, "decode_frames_per_s": FRAMES / bare, "ratio": kit / bare}


if __name__ == "__main__":
    main()
