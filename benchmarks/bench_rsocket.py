"""RSocket decode (no monitor yet) against a bare length-prefix split over the same bytes.

Traces, each ``FRAMES`` frames fed in 64 KiB chunks:
- ``payload``: PAYLOAD (N) frames of a request-stream, small decimal elements; on
  ``rsocket-1.0`` these take the decoder's fast path;
- ``mixed``: PAYLOAD with metadata, REQUEST_N, KEEPALIVE, ERROR in turn: the
  general path (header tuple, one reader per frame type);
- the ``payload`` trace in the ``reactivesocket-draft`` profile (RESPONSE frames).

The baseline walks the same bytes reading only each frame's length prefix: the
floor for any decoder in Python.  The ratio is decode time over that floor.
Issue 14 asks for decode + monitor at >= 1 M frames/s later; this is the decode half.
Run: ``.venv/bin/python -m benchmarks.bench_rsocket``.
"""

from __future__ import annotations

import time

from rsio_tck.bindings.rsocket import Decoded, get_profile
from rsio_tck.bindings.rsocket.frames import APPLICATION_ERROR, Error, Keepalive, Payload, RequestN

FRAMES = 200_000
CHUNK = 64 * 1024
REPEATS = 3


def trace(profile: str, kind: str) -> bytes:
    encoder = get_profile(profile).encoder()
    if kind == "payload":
        return b"".join(encoder.encode(Payload(stream_id=1, next=True, data=str(i).encode())) for i in range(FRAMES))
    cycle: list[Decoded] = [
        Payload(stream_id=1, next=True, metadata=b"m", data=b"42"),
        RequestN(stream_id=1, request_n=8),
        Keepalive(respond=True, data=b"ka"),
        Error(stream_id=3, error_code=APPLICATION_ERROR, data=b"boom"),
    ]
    return b"".join(encoder.encode(cycle[i % len(cycle)]) for i in range(FRAMES))


def decode_time(profile: str, data: bytes) -> float:
    best = float("inf")
    for _ in range(REPEATS):
        started = time.perf_counter()
        decoder = get_profile(profile).decoder()
        count = 0
        for start in range(0, len(data), CHUNK):
            count += len(decoder.feed(data[start : start + CHUNK]))
        decoder.eof()
        best = min(best, time.perf_counter() - started)
        assert count == FRAMES
    return best


def split_time(profile: str, data: bytes) -> float:
    prefix = get_profile(profile).prefix_size
    extra = prefix if profile == "rsocket-1.0" else 0  # the draft's length counts its own prefix
    best = float("inf")
    for _ in range(REPEATS):
        started = time.perf_counter()
        pos = count = 0
        end = len(data)
        while pos < end:
            pos += int.from_bytes(data[pos : pos + prefix], "big") + extra
            count += 1
        best = min(best, time.perf_counter() - started)
        assert count == FRAMES
    return best


def main() -> None:
    for profile, kind in (("rsocket-1.0", "payload"), ("rsocket-1.0", "mixed"), ("reactivesocket-draft", "payload")):
        data = trace(profile, kind)
        decode, split = decode_time(profile, data), split_time(profile, data)
        print(
            f"   {profile:<21} {kind:<8} decode {FRAMES / decode:>10,.0f} frames/s   "
            f"bare split {FRAMES / split:>10,.0f} frames/s   ratio {decode / split:5.1f}x"
        )


if __name__ == "__main__":
    main()
