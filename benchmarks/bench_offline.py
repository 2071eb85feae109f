"""Offline judging at scale (issue 29, part 4): recorded traffic judged per binding, against a bare decode.

The corpus is built here, from files only (no socket): per binding, run directories
(run.json, results.jsonl, traces/, pcaps/) of synthetic connections whose frames are
encoded with the binding's own encoder, each written as a trace and as the pcap a run
writes (``report.pcap.write_pcap``):

- RSocket (``rsocket-1.0``): a request-stream of ``tck/range`` served in one run of
  elements; four ``tck/infinite`` streams served interleaved; a stream cancelled with
  elements in flight after the CANCEL; a plain stream (no test publisher) with one element
  beyond its demand (a planted RS-FLOW-2).  Most of the interop runs' traffic looks like
  the first three.
- Ditto (``streaming``): subscriptions to persisted events, requests in batches, items,
  completion; some with one item beyond the demand (DITTO-DEM-1).
- RS-IO (``msgpack``): ``rsio_tck.bindings.rsio.corpus.synthetic_connection``, the pipeline's
  own synthetic connections, some with a planted DEM-1.

Each binding's traffic is measured four ways, in frames per second of the same frames,
alternating the measurements ``--repeats`` times (the best of each is printed):

- bare decode: each trace's bytes through the binding's decoder alone (``feed_runs`` where
  the decoder has it, as the monitor calls it; else ``feed``), no judging: the baseline;
- check-pcap: what ``rsio-tck check-pcap`` does per capture, in process: read and
  reassemble the pcap (``report.pcap.read_connections``), replay each connection through
  the ``Monitor``;
- pipeline judge: the pipeline's offline judge over the frames table (``pipeline.judge.judge_table``,
  the walk every Spark task does), the table made once beforehand from the traces;
- pipeline ingest + judge: the same, with the frame rows made from the traces
  (``pipeline.framing.frame_rows``, what the ingest tasks do) inside the timing.

Each is printed with its ratio to the bare decode and the goal, and every judge must find
the planted violations (the same count on each path).  Bounded: a fixed corpus (about
400,000 frames by default, ``--scale`` multiplies it) and repeats.  ``--run-dirs DIR...``
measures recorded run directories instead (every ``run.json`` below each DIR, grouped by
binding and profile), e.g. a ``make interop`` run's ``reports/interop``.

    python -m benchmarks bench_offline [--scale 1.0] [--repeats 3] [--run-dirs DIR ...]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rsio_tck.errors import Side
from rsio_tck.monitor import TraceRecord, write_trace

C, S = Side.CLIENT, Side.SERVER
CHUNK = 64 * 1024  # bytes per trace record, as a reader of a busy socket gets them
# Goals: judged frames/s as a share of the bare decode's, per path, for every binding (issue 29 part 4).  The
# ingest (frame rows cut by re-encoding every frame, then Spark) is reported: it is not judging, and cutting rows
# without re-encoding needs each decoder to give its frames' sizes.
GOALS: dict[str, float | None] = {"check-pcap": 0.50, "pipeline judge": 0.50, "pipeline ingest + judge": None}


@dataclass
class Connection:
    scenario: str
    records: list[TraceRecord]
    faulty: bool


def _chunked(sender: Side, data: bytes, t: float) -> Iterator[TraceRecord]:
    for start in range(0, len(data), CHUNK):
        yield TraceRecord(t=t, sender=sender, data=data[start : start + CHUNK])


def _ended(records: list[TraceRecord], t: float) -> list[TraceRecord]:
    return records + [TraceRecord(t=t, sender=C, data=None), TraceRecord(t=t, sender=S, data=None)]


# -- RSocket ---------------------------------------------------------------------------------------------------------

def rsocket_connections(scale: float) -> list[Connection]:
    from rsio_tck.bindings.rsocket import get_profile
    from rsio_tck.bindings.rsocket.frames import Cancel, Payload, RequestStream, Setup

    encode = get_profile("rsocket-1.0").encoder().encode
    setup = encode(Setup(major_version=1, keepalive_interval=30_000, max_lifetime=90_000,
                         metadata_mime=b"application/octet-stream", data_mime=b"text/plain"))
    n = max(10, int(40_000 * scale))
    out = []
    for copy in range(2):
        request = encode(RequestStream(stream_id=1, initial_request_n=2**31 - 1, data=f"tck/range?count={n}".encode()))
        elements = b"".join(encode(Payload(stream_id=1, next=True, data=str(i).encode())) for i in range(n))
        done = encode(Payload(stream_id=1, complete=True))
        out.append(Connection(f"RANGE-{copy}", _ended([TraceRecord(t=0.0, sender=C, data=setup + request),
                                                       *_chunked(S, elements + done, 0.1)], 0.2), False))
        sids = (1, 3, 5, 7)
        requests = b"".join(encode(RequestStream(stream_id=sid, initial_request_n=2**31 - 1, data=b"tck/infinite"))
                            for sid in sids)
        dealt = b"".join(encode(Payload(stream_id=sid, next=True, data=str(i).encode()))
                         for i in range(n // 4) for sid in sids)
        out.append(Connection(f"INTERLEAVED-{copy}", _ended([TraceRecord(t=0.0, sender=C, data=setup + requests),
                                                             *_chunked(S, dealt, 0.1)], 0.2), False))
        infinite = encode(RequestStream(stream_id=1, initial_request_n=2**31 - 1, data=b"tck/infinite"))
        before = b"".join(encode(Payload(stream_id=1, next=True, data=str(i).encode())) for i in range(10))
        after = b"".join(encode(Payload(stream_id=1, next=True, data=str(i).encode())) for i in range(10, n))
        out.append(Connection(f"CANCEL-{copy}", _ended([TraceRecord(t=0.0, sender=C, data=setup + infinite),
                                                        TraceRecord(t=0.1, sender=S, data=before),
                                                        TraceRecord(t=0.2, sender=C, data=encode(Cancel(stream_id=1))),
                                                        *_chunked(S, after, 0.3)], 0.4), False))
        plain = encode(RequestStream(stream_id=1, initial_request_n=n // 2, data=b"app/feed"))
        beyond = b"".join(encode(Payload(stream_id=1, next=True, data=b"x" * 16)) for _ in range(n // 2 + 1))
        out.append(Connection(f"BEYOND-{copy}", _ended([TraceRecord(t=0.0, sender=C, data=setup + plain),
                                                        *_chunked(S, beyond, 0.1)], 0.2), True))
    return out


# -- Ditto -----------------------------------------------------------------------------------------------------------

def ditto_connections(scale: float) -> list[Connection]:
    from rsio_tck.bindings.ditto import (
        StreamingComplete,
        StreamingCreated,
        StreamingNext,
        StreamingRequest,
        SubscribeForPersistedEvents,
        Target,
        encode_line,
    )

    target = Target(namespace="tck", entity_name="range")
    items = max(20, int(500 * scale))
    out = []
    for number in range(40):
        sub = f"s-{number}"
        faulty = number % 8 == 0
        records = [TraceRecord(t=0.0, sender=C, data=encode_line(SubscribeForPersistedEvents(
                       target=target, headers={"correlation-id": sub}, from_revision=0, to_revision=items))),
                   TraceRecord(t=0.01, sender=S, data=encode_line(StreamingCreated(
                       target=target, headers={"correlation-id": sub}, subscription_id=sub)))]
        sent = 0
        t = 0.02
        while sent < items:
            batch = min(100, items - sent)
            records.append(TraceRecord(t=t, sender=C, data=encode_line(
                StreamingRequest(target=target, subscription_id=sub, demand=batch))))
            extra = 1 if faulty and sent + batch >= items else 0
            data = b"".join(encode_line(StreamingNext(target=target, subscription_id=sub, item={"revision": i}))
                            for i in range(sent, sent + batch + extra))
            records += _chunked(S, data, t + 0.001)
            sent += batch
            t += 0.01
        records.append(TraceRecord(t=t, sender=S, data=encode_line(StreamingComplete(target=target,
                                                                                     subscription_id=sub))))
        out.append(Connection(f"STREAM-{number}", _ended(records, t + 0.01), faulty))
    return out


# -- RS-IO -----------------------------------------------------------------------------------------------------------

def rsio_connections(scale: float) -> list[Connection]:
    from rsio_tck.bindings.rsio.corpus import TargetProfile, synthetic_connection

    profile = TargetProfile("bench", fault_rate=0.2)
    frames = 240  # the corpus's element counter must fit its sizes: more connections, not longer ones
    out = []
    for number in range(max(10, int(400 * scale))):
        rows, faulty = synthetic_connection(7, number, profile, frames)
        streams: dict[str, bytearray] = {"c2s": bytearray(), "s2c": bytearray()}
        records: list[TraceRecord] = []
        last = None
        for row in rows:  # consecutive frames of one direction as one record, as a socket read gets them
            if row.type == "eof":
                continue
            if last is not None and last != row.direction and streams[last]:
                records += _chunked(C if last == "c2s" else S, bytes(streams[last]), row.t)
                streams[last].clear()
            streams[row.direction] += row.data
            last = row.direction
        for direction, data in streams.items():
            records += _chunked(C if direction == "c2s" else S, bytes(data), rows[-1].t)
        out.append(Connection(f"SYN-{number}", _ended(records, rows[-1].t + 0.001), faulty))
    return out


WIRES = {"rsocket": ("rsocket-1.0", rsocket_connections), "ditto": ("streaming", ditto_connections),
         "rsio": ("msgpack", rsio_connections)}


# -- the corpus on disk ----------------------------------------------------------------------------------------------

def write_run_dir(root: Path, binding: str, profile: str, connections: list[Connection]) -> Path:
    from rsio_tck.report.pcap import write_pcap

    run_id = f"20261128T000000000Z-{binding}"
    directory = root / run_id
    (directory / "traces").mkdir(parents=True)
    (directory / "pcaps").mkdir()
    lines = []
    for conn in connections:
        with (directory / "traces" / f"{conn.scenario}.trace").open("wb") as stream:
            write_trace(stream, conn.records)
        write_pcap(directory / "pcaps" / f"{conn.scenario}.pcap", conn.records, max_packets=10**9)
        lines.append(json.dumps({"id": conn.scenario, "title": conn.scenario, "rules": [], "level": "MUST",
                                 "verdict": "fail" if conn.faulty else "pass", "duration": 0.01, "violations": []}))
    (directory / "results.jsonl").write_text("\n".join(lines) + "\n")
    (directory / "run.json").write_text(json.dumps({
        "run_id": run_id, "binding": binding, "codec": profile, "target": f"tcp://bench-{binding}:9000",
        "target_name": f"bench-{binding}", "target_version": "1", "kit_version": "bench", "started": 0.0,
        "finished": 1.0, "scenarios": len(connections), "interrupted": False}))
    return directory


# -- the measurements ------------------------------------------------------------------------------------------------

def bare_decode(binding_name: str, profile: str, traces: list[list[TraceRecord]]) -> int:
    from rsio_tck.binding import get_binding
    from rsio_tck.bindings.rsio.wire.runs import StridedRun, VariableRun
    from rsio_tck.bindings.rsocket.runs import PayloadRun
    from rsio_tck.errors import ProtocolViolation

    ELEMENT_RUNS = (StridedRun, VariableRun)  # noqa: N806
    binding = get_binding(binding_name)
    frames = 0
    for records in traces:
        decoders = {side: binding.decoder(profile) for side in Side}
        feeds = {side: getattr(d, "feed_runs", d.feed) for side, d in decoders.items()}
        for record in records:
            if record.data is None:
                continue
            try:
                items = feeds[record.sender](record.data)
            except ProtocolViolation:
                feeds[record.sender] = lambda data: []
                continue
            frames += len(items)
            for item in items:  # a run stands for its frames (RSocket's PayloadRun, RS-IO's ElementRun)
                kind = type(item)
                if kind is PayloadRun:
                    frames += item.count - 1
                elif kind in ELEMENT_RUNS:
                    frames += item.frames - 1
    return frames


def check_pcap(binding_name: str, profile: str, pcaps: list[Path]) -> tuple[int, int]:
    from rsio_tck.monitor import Monitor
    from rsio_tck.report.pcap import read_connections
    from rsio_tck.websocket import framing_for
    from rsio_tck.websocket.link import is_websocket_trace, unwrap_trace

    frames = violations = 0
    for path in pcaps:
        for conn in read_connections(path):
            monitor = Monitor(profile, binding=binding_name)
            records = conn.records
            if is_websocket_trace(records):  # as check-pcap: the binding's stream inside the messages
                records, _ = unwrap_trace(records, lambda: framing_for(binding_name, profile))
            monitor.replay(records)
            frames += monitor.frame_count
            violations += len(monitor.violations(Side.SERVER))
    return frames, violations


def frames_table(binding_name: str, profile: str, traces: list[list[TraceRecord]]) -> Any:
    import pyarrow as pa

    from rsio_tck.pipeline.framing import frame_rows

    columns: dict[str, list[Any]] = {name: [] for name in
                                     ("run_id", "scenario", "connection", "seq", "direction", "type", "t", "data")}
    for number, records in enumerate(traces):
        for row in frame_rows(records, profile, binding_name):
            for name, value in (("run_id", "bench"), ("scenario", "x"), ("connection", number), ("seq", row.seq),
                                ("direction", row.direction), ("type", row.type), ("t", row.t), ("data", row.data)):
                columns[name].append(value)
    return pa.table(columns)


def pipeline_judge(binding_name: str, profile: str, table: Any) -> int:
    from rsio_tck.pipeline.judge import judge_table

    found, _ = judge_table(table, {"bench": profile}, {"bench": binding_name})
    return sum(1 for level, side in zip(found.column("level").to_pylist(), found.column("side").to_pylist())
               if level == "MUST" and side == "server")


def _best(fn: Callable[[], Any], times: list[float]) -> Any:
    started = time.perf_counter()
    result = fn()
    times.append(time.perf_counter() - started)
    return result


def measure(binding_name: str, root: Path, scale: float, repeats: int) -> dict[str, Any]:
    """The figures of ``binding_name`` over a corpus built here, whose planted violations every path must find."""
    profile, build = WIRES[binding_name]
    connections = build(scale)
    directory = write_run_dir(root, binding_name, profile, connections)
    return timed(binding_name, profile, [directory], repeats, sum(conn.faulty for conn in connections))


def timed(binding_name: str, profile: str, directories: list[Path], repeats: int,
          planted: int | None = None) -> dict[str, Any]:
    """Frames/s of each path over the traces and pcaps of ``directories``, alternating them ``repeats`` times.
    Every path must find the same violations of the target (at least ``planted``, when known)."""
    from rsio_tck.monitor.trace import read_whole

    traces = [read_whole(path)[0] for directory in directories for path in sorted((directory / "traces").glob("*.trace"))]
    pcaps = [path for directory in directories for path in sorted((directory / "pcaps").glob("*.pcap"))]
    table = frames_table(binding_name, profile, traces)
    times: dict[str, list[float]] = {"bare decode": [], "check-pcap": [], "pipeline judge": [],
                                     "pipeline ingest + judge": []}
    frames = found = 0
    for _ in range(repeats):  # alternating, so a burst of load on the machine falls on every measurement alike
        frames = _best(lambda: bare_decode(binding_name, profile, traces), times["bare decode"])
        judged, found = _best(lambda: check_pcap(binding_name, profile, pcaps), times["check-pcap"])
        offline = _best(lambda: pipeline_judge(binding_name, profile, table), times["pipeline judge"])
        again = _best(lambda: pipeline_judge(binding_name, profile, frames_table(binding_name, profile, traces)),
                      times["pipeline ingest + judge"])
        if planted is not None:  # a corpus of our own: every path sees every frame and finds what was planted
            assert judged == frames, (binding_name, judged, frames)
            assert found >= planted and (found > 0) == (planted > 0), (binding_name, found, planted)
            assert offline == again == found, (binding_name, offline, again, found)
    return {"frames": frames, "connections": len(traces), "violations": found,
            "rates": {what: frames / min(seconds) for what, seconds in times.items()}}


def _args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bench_offline")
    parser.add_argument("--scale", type=float, default=1.0, help="multiplies the corpus (1.0: about 320,000 frames)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--bindings", default="rsocket,ditto,rsio")
    parser.add_argument("--run-dirs", nargs="*", type=Path, default=[],
                        help="measure these run directories (or directories holding them, at any depth) instead")
    return parser.parse_known_args(argv)[0]


def main(argv: list[str] | None = None) -> None:
    args = _args(sys.argv[1:] if argv is None else argv)
    if args.run_dirs:
        wires: dict[tuple[str, str], list[Path]] = {}
        for root in args.run_dirs:
            for run_json in sorted(root.glob("**/run.json")):
                run = json.loads(run_json.read_text())
                wires.setdefault((run.get("binding") or "rsio", run.get("codec") or "msgpack"), []).append(run_json.parent)
        for (binding_name, profile), directories in sorted(wires.items()):
            _show(binding_name, timed(binding_name, profile, directories, args.repeats),
                  f"{len(directories)} run directories ({profile})")
        return
    with tempfile.TemporaryDirectory(prefix="rsio-bench-offline-") as tmp:
        for binding_name in args.bindings.split(","):
            _show(binding_name, measure(binding_name, Path(tmp), args.scale, args.repeats), "planted, found on every path")


def _show(binding_name: str, result: dict[str, Any], what: str) -> None:
    rates = result["rates"]
    base = rates["bare decode"]
    print(f"   {binding_name}: {result['frames']:,} frames in {result['connections']} connections, "
          f"{result['violations']} violation(s) of the target ({what})", flush=True)
    print(f"     {'bare decode':<24} {base / 1e3:8.0f} k frames/s   (baseline)")
    for path, goal in GOALS.items():
        ratio = rates[path] / base
        verdict = "reported" if goal is None else f"goal >= {goal:.0%}: {'met' if ratio >= goal else 'NOT MET'}"
        print(f"     {path:<24} {rates[path] / 1e3:8.0f} k frames/s   {ratio:5.0%} of bare decode ({verdict})",
              flush=True)


if __name__ == "__main__":
    main()
