"""Decode + monitor over a trace of onNext frames, against msgpack's bare C unpacker.

Three traces of onNext traffic on one subscription with unbounded demand:
variable-size (small MessagePack ints), fixed-size (8-byte raw elements) and
packed (onNextPacked of 16 x 8 bytes), and all three together.  For each, the
kit's path (``Monitor.observe``: incremental decoding and judging every frame)
is timed against msgpack's C ``Unpacker`` going over the same bytes with no
frames and no checks: iterating bare objects where the bytes are all
MessagePack objects (variable-size), and the minimal unpack/read_bytes loop
where raw element bytes make that impossible (fixed-size, packed).

``Monitor.observe`` decodes runs of element frames in bulk (``tck/bindings/rsio/wire/runs.py``),
which is what these three traces are.  Two more show other traffic:
``interleaved``, variable-size onNext frames dealt round-robin to four Ids (runs
over several Ids), and ``fixed-mixed``, fixed-size onNext frames dealt the same
way, where no run can form (each frame's header differs from the last): the
frame-by-frame path, the floor for any traffic.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import msgpack

from rsio_tck.bindings.rsio.wire import FrameEncoder, get_codec
from rsio_tck.bindings.rsio.wire.frames import ClientHello, OnNext, OnNextPacked, OnSubscribe, ServerHello, Subscribe
from rsio_tck.errors import Side
from rsio_tck.monitor import Monitor
from rsio_tck.semantics.demand import UNBOUNDED

CHUNK = 64 * 1024
PACK = 16


INTERLEAVED_IDS = 4


def _setup(sids: range, size: int) -> tuple[bytes, bytes, FrameEncoder]:
    enc = {s: get_codec("msgpack").encoder() for s in Side}
    client = enc[Side.CLIENT].encode(ClientHello(version=0)) + b"".join(
        enc[Side.CLIENT].encode(Subscribe(publisher="bench", subscriber=sid, initial_demand=UNBOUNDED))
        for sid in sids)
    server = enc[Side.SERVER].encode(ServerHello(version=0)) + b"".join(
        enc[Side.SERVER].encode(OnSubscribe(subscriber=sid, element_size=size)) for sid in sids)
    return client, server, enc[Side.SERVER]


def trace(kind: str, frames: int) -> tuple[bytes, bytes, bytes]:
    """(client bytes, server preamble, server onNext bytes) for ``frames`` onNext frames."""
    size = 0 if kind in ("variable", "interleaved") else 8
    mixed = kind in ("interleaved", "fixed-mixed")
    client, server, encoder = _setup(range(1, 1 + (INTERLEAVED_IDS if mixed else 1)), size)
    if kind == "fixed-mixed":
        body = b"".join(encoder.encode(OnNext(subscriber=1 + i % INTERLEAVED_IDS, element=i.to_bytes(8, "big")))
                        for i in range(frames))
    elif kind == "interleaved":
        body = b"".join(encoder.encode(OnNext(subscriber=1 + i % INTERLEAVED_IDS, element=msgpack.packb(i % 100000)))
                        for i in range(frames))
    elif kind == "variable":
        body = b"".join(encoder.encode(OnNext(subscriber=1, element=msgpack.packb(i % 100000))) for i in range(frames))
    elif kind == "fixed":
        body = b"".join(encoder.encode(OnNext(subscriber=1, element=i.to_bytes(8, "big"))) for i in range(frames))
    else:
        body = b"".join(encoder.encode(OnNextPacked(subscriber=1, count=PACK, data=bytes(8 * PACK)))
                        for _ in range(frames))
    return client, server, body


def short_runs(frames: int, period: int = 9) -> tuple[bytes, bytes, bytes]:
    """The run finder's worst case: runs of ``period`` frames, each ended by a legal onNext whose Id
    is written wider than needed (so every run is found, checked and cut short)."""
    client, server, encoder = _setup(range(1, 2), 0)
    wide = b"\x08\xcf" + (1).to_bytes(8, "big") + msgpack.packb(b"x")
    body = b"".join(wide if i % (period + 1) == period else encoder.encode(OnNext(subscriber=1, element=b"el"))
                    for i in range(frames))
    return client, server, body


def kit_path(client: bytes, server: bytes, body: bytes, runs: bool = True) -> int:
    monitor = Monitor("msgpack")
    if not runs:  # the frame-by-frame path alone, for comparison
        for decoder in monitor._decoders.values():
            decoder.feed_runs = decoder.feed  # type: ignore[method-assign, assignment]
    monitor.observe(Side.CLIENT, client)
    monitor.observe(Side.SERVER, server)
    observe = monitor.observe
    for start in range(0, len(body), CHUNK):
        observe(Side.SERVER, body[start : start + CHUNK])
    assert not monitor.findings, monitor.findings[:3]
    return monitor.frame_count


def bare_objects(body: bytes) -> int:
    unpacker = msgpack.Unpacker()
    count = 0
    for start in range(0, len(body), CHUNK):
        unpacker.feed(body[start : start + CHUNK])
        for _ in unpacker:
            count += 1
    return count


def bare_frames(body: bytes, raw: int) -> int:
    """The least a decoder must do with the C unpacker when elements are raw bytes."""
    unpacker = msgpack.Unpacker(max_buffer_size=len(body) + 1)
    unpack, read_bytes = unpacker.unpack, unpacker.read_bytes
    unpacker.feed(body)  # all at once: the baseline pays no resumption cost
    frames = 0
    try:
        while True:
            code = unpack()
            unpack()  # subscriber
            if code == 0x0B:
                count = unpack()
                read_bytes(count * raw)
            else:
                read_bytes(raw)
            frames += 1
    except msgpack.OutOfData:
        return frames


def best_of(runs: int, fn: Callable[[], int]) -> tuple[float, int]:
    best, result = float("inf"), 0
    for _ in range(runs):
        started = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - started)
    return best, result


def main(frames: int = 1_000_000, runs: int = 3) -> dict[str, float]:
    print(f"decode + monitor, {frames:,} onNext frames per trace, best of {runs} (benchmarks/bench_core.py)")
    figures: dict[str, float] = {}
    total_frames = 0
    total_kit = 0.0
    for kind in ("variable", "fixed", "packed", "interleaved", "fixed-mixed"):
        client, server, body = trace(kind, frames)
        kit_s, decoded = best_of(runs, lambda c=client, s=server, b=body: kit_path(c, s, b))  # type: ignore[misc]
        if kind in ("variable", "interleaved"):
            bare_s, objects = best_of(runs, lambda b=body: bare_objects(b))  # type: ignore[misc]
            baseline = f"bare Unpacker iteration ({objects:,} objects)"
        else:
            bare_s, _ = best_of(runs, lambda b=body: bare_frames(b, 8))  # type: ignore[misc]
            baseline = "bare unpack/read_bytes loop"
        kit_rate = frames / kit_s
        bare_rate = frames / bare_s
        figures[f"{kind}_frames_per_s"] = kit_rate
        figures[f"{kind}_ratio"] = kit_rate / bare_rate
        if kind in ("variable", "fixed", "packed"):
            total_frames += frames
            total_kit += kit_s
        elif kind == "interleaved":
            print(f"  other traffic: {INTERLEAVED_IDS} Ids round-robin; fixed-mixed forms no runs (frame by frame)")
        print(f"  {kind:11s} {kit_rate / 1e6:6.2f} M frames/s  ({len(body) / kit_s / 1e6:6.1f} MB/s); "
              f"{baseline}: {bare_rate / 1e6:6.2f} M frames/s; ratio {kit_rate / bare_rate:5.1%}")
        assert decoded >= frames
    client, server, body = short_runs(frames)
    with_runs, _ = best_of(runs, lambda: kit_path(client, server, body))
    without, _ = best_of(runs, lambda: kit_path(client, server, body, runs=False))
    figures["short_runs_cost"] = with_runs / without
    print(f"  short runs  {frames / with_runs / 1e6:6.2f} M frames/s (runs of 9, each cut by a legal wider encoding: "
          f"the finder's worst case); frame by frame alone: {frames / without / 1e6:.2f} M frames/s; "
          f"cost {with_runs / without:.2f}x")
    figures["overall_frames_per_s"] = total_frames / total_kit
    slowest = min(figures[f"{kind}_ratio"] for kind in ("variable", "fixed", "packed"))
    print(f"  variable + fixed + packed: {figures['overall_frames_per_s'] / 1e6:.2f} M frames/s, lowest ratio "
          f"{slowest:.1%} (goal: >= 1 M frames/s, >= 40% of bare)")
    return figures


if __name__ == "__main__":
    main()
