"""RSocket decode, and decode + monitor, against a bare length-prefix split over the same bytes.

Traces, each ``FRAMES`` frames fed in 64 KiB chunks:
- ``payload``: a request-stream's elements: PAYLOAD (N) frames on one stream with
  small decimal data (``rsocket-1.0``; RESPONSE frames in ``reactivesocket-draft``),
  what a stream of elements looks like on the wire;
- ``interleaved``: the same frames dealt round-robin to four streams, where no
  run can form (the frame-by-frame path);
- ``mixed``: PAYLOAD with metadata, REQUEST_N, KEEPALIVE, ERROR in turn: the
  general path (header tuple, one reader per frame type).

Each trace is decoded three ways: ``feed`` (one frame object per frame),
``feed_runs`` (plain NEXT frames on one stream as ``PayloadRun`` values), and
decode + monitor: ``Monitor(profile, binding="rsocket").observe`` over the
server's bytes after the client's SETUP and REQUEST_STREAM (initial N 2^31-1;
the request data names no test publisher, so the contract judge stays idle),
which is what issue 14 asks to run at >= 1 M frames/s.

The baseline walks the same bytes reading only each frame's length prefix: the
floor for any frame-by-frame decoder in Python.  The ratio is the kit's time
over that floor's (below 1: faster than a frame-by-frame split).
Run: ``.venv/bin/python -m benchmarks.bench_rsocket`` (part of ``make bench``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial

from rsio_tck.bindings.rsocket import Decoded, get_profile
from rsio_tck.bindings.rsocket.frames import (
    APPLICATION_ERROR,
    Error,
    Keepalive,
    Payload,
    RequestN,
    RequestStream,
    Setup,
)
from rsio_tck.errors import Side

FRAMES = 200_000
CHUNK = 64 * 1024
REPEATS = 3
STREAMS = 4
GOAL = 1_000_000  # frames/s, decode + monitor (issue 14)


def trace(profile: str, kind: str) -> bytes:
    encoder = get_profile(profile).encoder()
    if kind == "payload":
        return b"".join(encoder.encode(Payload(stream_id=1, next=True, data=str(i).encode())) for i in range(FRAMES))
    if kind == "interleaved":
        return b"".join(encoder.encode(Payload(stream_id=1 + 2 * (i % STREAMS), next=True, data=str(i).encode()))
                        for i in range(FRAMES))
    cycle: list[Decoded] = [
        Payload(stream_id=1, next=True, metadata=b"m", data=b"42"),
        RequestN(stream_id=1, request_n=8),
        Keepalive(respond=True, data=b"ka"),
        Error(stream_id=3, error_code=APPLICATION_ERROR, data=b"boom"),
    ]
    if profile != "rsocket-1.0":
        cycle = cycle[:2]  # the draft's KEEPALIVE and ERROR differ; PAYLOAD with metadata and REQUEST_N suffice
    return b"".join(encoder.encode(cycle[i % len(cycle)]) for i in range(FRAMES))


def client_preamble(profile: str, streams: int) -> bytes:
    encoder = get_profile(profile).encoder()
    draft = profile != "rsocket-1.0"
    setup = Setup(major_version=0 if draft else 1, keepalive_interval=30_000, max_lifetime=90_000,
                  metadata_mime=b"application/octet-stream", data_mime=b"text/plain")
    requests = [RequestStream(stream_id=1 + 2 * k, initial_request_n=2**31 - 1, data=b"bench") for k in range(streams)]
    return b"".join(encoder.encode(frame) for frame in [setup, *requests])


def best(fn: Callable[[], int]) -> float:
    fastest = float("inf")
    for _ in range(REPEATS):
        started = time.perf_counter()
        count = fn()
        fastest = min(fastest, time.perf_counter() - started)
        assert count == FRAMES, count
    return fastest


def decode(profile: str, data: bytes, method: str) -> int:
    decoder = get_profile(profile).decoder()
    feed = getattr(decoder, method)
    count = 0
    for start in range(0, len(data), CHUNK):
        for item in feed(data[start : start + CHUNK]):
            count += getattr(item, "count", 1)
    decoder.eof()
    return count


def monitored(profile: str, preamble: bytes, data: bytes) -> int:
    from rsio_tck.monitor import Monitor

    monitor = Monitor(profile, binding="rsocket")
    monitor.observe(Side.CLIENT, preamble)
    before = monitor.frame_count
    observe = monitor.observe
    for start in range(0, len(data), CHUNK):
        observe(Side.SERVER, data[start : start + CHUNK])
    assert not monitor.findings, monitor.findings[:3]
    return monitor.frame_count - before


def split(profile: str, data: bytes) -> int:
    prefix = get_profile(profile).prefix_size
    extra = prefix if profile == "rsocket-1.0" else 0  # the draft's length counts its own prefix
    pos = count = 0
    end = len(data)
    while pos < end:
        pos += int.from_bytes(data[pos : pos + prefix], "big") + extra
        count += 1
    return count


def monitor_available() -> str | None:
    """None when the rsocket binding has a judge; else why decode + monitor cannot run."""
    try:
        from rsio_tck.binding import get_binding

        get_binding("rsocket")
    except (AttributeError, ImportError, ValueError) as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


def main() -> dict[str, float]:
    print(f"RSocket, {FRAMES:,} frames per trace in {CHUNK // 1024} KiB chunks, best of {REPEATS} "
          "(benchmarks/bench_rsocket.py); ratio = time / bare length-prefix split's time")
    missing = monitor_available()
    if missing:
        print(f"   decode + monitor not available: {missing}")
    figures: dict[str, float] = {}
    for profile in ("rsocket-1.0", "reactivesocket-draft"):
        for kind in ("payload", "interleaved", "mixed"):
            data = trace(profile, kind)
            floor = best(partial(split, profile, data))
            paths = {
                "feed": partial(decode, profile, data, "feed"),
                "feed_runs": partial(decode, profile, data, "feed_runs"),
            }
            if not missing and kind != "mixed":
                preamble = client_preamble(profile, STREAMS if kind == "interleaved" else 1)
                paths["monitor"] = partial(monitored, profile, preamble, data)
            line = f"   {profile:<21} {kind:<11} split {FRAMES / floor / 1e6:5.2f} M/s"
            for name, fn in paths.items():
                seconds = best(fn)
                figures[f"{profile}/{kind}/{name}_frames_per_s"] = FRAMES / seconds
                figures[f"{profile}/{kind}/{name}_ratio"] = seconds / floor
                line += f" | {name} {FRAMES / seconds / 1e6:5.2f} M/s ({seconds / floor:4.2f}x)"
            print(line, flush=True)
    if not missing:
        worst = min(figures[f"{p}/payload/monitor_frames_per_s"] for p in ("rsocket-1.0", "reactivesocket-draft"))
        print(f"   decode + monitor of a stream's elements: {worst / 1e6:.2f} M frames/s at worst "
              f"(goal: >= {GOAL / 1e6:.0f} M frames/s) {'met' if worst >= GOAL else 'NOT met'}")
    return figures


if __name__ == "__main__":
    main()
