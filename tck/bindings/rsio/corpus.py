"""RS-IO synthetic corpora for the pipeline (``RsioBinding.synthetic_corpus()``): many targets, versions, runs, connections and frames, deterministic by seed.

Theory of operation: a ``TargetProfile`` says how a synthetic target talks
(codec, packed or split element traffic, how often it breaks demand, which
scenarios flake).  ``synthetic_connection`` scripts one conforming connection
from the kit's side: handshake, subscribe, request/element batches, complete,
goodbye, both ends closing; each frame is encoded with the real codec, so every
row is real wire bytes.  A planted fault adds one ``onNext`` beyond demand,
which the monitor must report.  The random source of each connection is seeded
from (seed, connection number), so any slice of a corpus can be generated
alone (this is how Spark generates the benchmark corpus in parallel).

``write_run_dirs`` lays a small corpus out as real run directories
(run.json, results.jsonl, traces/) following notes/rundir.md, for the tests
and for demonstrating ``rsio-tck publish``.
"""

from __future__ import annotations

import json
import random
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ...errors import Side
from ...monitor.trace import DIRECTIONS, TraceRecord, write_trace
from ...pipeline.framing import ELEMENT_TYPES, PART_TYPES, FrameRow
from .rows import element_load
from .wire import Frame, get_codec
from .wire.frames import (
    ClientHello,
    Goodbye,
    OnComplete,
    OnNext,
    OnNextLastPart,
    OnNextPacked,
    OnNextPart,
    OnSubscribe,
    Request,
    ServerHello,
    Subscribe,
)

PUBLISHER = "synthetic/feed"
ELEMENT_SIZE = 8


@dataclass(frozen=True)
class TargetProfile:
    name: str
    versions: tuple[str, ...] = ("1.0",)
    codec: str = "msgpack"
    packed: bool = False  # fixed-size stream, elements sent as onNextPacked
    split: bool = False  # variable-size stream, every element sent as two parts
    fault_rate: float = 0.0  # share of connections with one onNext beyond demand
    flaky: dict[str, float] = field(default_factory=dict)  # scenario id -> probability that it fails
    failing: frozenset[str] = frozenset()  # scenario ids that always fail


DEFAULT_TARGETS = (
    TargetProfile("alpha", versions=("1.0", "1.1")),
    TargetProfile("beta", versions=("2.0",), packed=True, flaky={"demand-batch": 0.5}),
    TargetProfile("gamma", versions=("0.9",), codec="varint", split=True, fault_rate=0.5,
                  failing=frozenset({"demand-overflow"})),
)

SCENARIOS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("handshake-basic", ("HS-1", "HS-2")),
    ("demand-batch", ("DEM-1",)),
    ("demand-overflow", ("DEM-1", "DEM-3")),
    ("packing-basic", ("PACK-1",)),
    ("goodbye-basic", ("BYE-1",)),
)


def _script(rng: random.Random, profile: TargetProfile, frames: int, faulty: bool) -> list[tuple[Side, Frame]]:
    """The frames of one connection, about ``frames`` of them, in order."""
    c, s = Side.CLIENT, Side.SERVER
    sid = rng.randrange(1, 1000)
    out: list[tuple[Side, Frame]] = [
        (c, ClientHello(version=0)), (s, ServerHello(version=0)),
        (c, Subscribe(publisher=PUBLISHER, subscriber=sid, initial_demand=0)),
        (s, OnSubscribe(subscriber=sid, element_size=ELEMENT_SIZE if profile.packed else 0)),
    ]
    budget = max(0, frames - len(out) - 3)  # onComplete and two goodbyes close the connection
    counter = 0
    while budget > 1:
        batch = min(rng.randrange(1, 17), budget - 1 if not profile.split else max(1, (budget - 1) // 2))
        out.append((c, Request(subscriber=sid, demand=batch)))
        budget -= 1
        if profile.packed:
            first = rng.randrange(1, batch + 1)
            for count in (first, batch - first):
                if count:
                    data = b"".join((counter + i).to_bytes(ELEMENT_SIZE, "big") for i in range(count))
                    out.append((s, OnNextPacked(subscriber=sid, count=count, data=data)))
                    counter += count
                    budget -= 1
            continue
        for _ in range(batch):
            element = counter.to_bytes(rng.randrange(1, 24), "big", signed=False) if counter else b"\x00"
            counter += 1
            if profile.split:
                half = max(1, len(element) // 2)
                out.append((s, OnNextPart(subscriber=sid, element=counter, data=element[:half])))
                out.append((s, OnNextLastPart(subscriber=sid, element=counter, data=element[half:])))
                budget -= 2
            else:
                out.append((s, OnNext(subscriber=sid, element=element)))
                budget -= 1
    if faulty:
        extra = b"\x00" * ELEMENT_SIZE if profile.packed else b"\xff"
        out.append((s, OnNext(subscriber=sid, element=extra)))
    out += [(s, OnComplete(subscriber=sid)), (c, Goodbye(reason="done")), (s, Goodbye(reason="done"))]
    return out


def synthetic_connection(seed: int, number: int, profile: TargetProfile, frames: int = 100,
                         t0: float = 0.0) -> tuple[list[FrameRow], bool]:
    """(rows, faulty) of connection ``number``; rows end with an eof per direction."""
    rng = random.Random(seed * 1_000_003 + number)
    faulty = rng.random() < profile.fault_rate
    codec = get_codec(profile.codec)
    encoders = {Side.CLIENT: codec.encoder(), Side.SERVER: codec.encoder()}
    rows: list[FrameRow] = []
    t = t0
    for seq, (sender, frame) in enumerate(_script(rng, profile, frames - 2, faulty)):
        t += rng.expovariate(2000.0)
        data = encoders[sender].encode(frame)
        payload, elements = element_load(frame)
        rows.append(FrameRow(seq, DIRECTIONS[sender], frame.wire_name, getattr(frame, "subscriber", None),
                             len(data), payload, elements, round(t, 6), data))
    for sender in (Side.CLIENT, Side.SERVER):
        t += 0.0001
        rows.append(FrameRow(len(rows), DIRECTIONS[sender], "eof", None, 0, 0, 0, round(t, 6), b""))
    return rows, faulty


def trace_records(rows: list[FrameRow]) -> Iterator[TraceRecord]:
    """The trace a connection's rows came from: one record per frame, eof as eof."""
    for row in rows:
        sender = Side.CLIENT if row.direction == "c2s" else Side.SERVER
        yield TraceRecord(t=row.t, sender=sender, data=None if row.type == "eof" else row.data)


@dataclass
class CorpusSummary:
    """What a written corpus holds, for tests to check numbers against."""

    runs: list[Path] = field(default_factory=list)
    faulty_connections: int = 0
    connections: int = 0
    verdicts: dict[tuple[str, str, str], list[str]] = field(default_factory=dict)  # (target, version, scenario)
    wire: dict[str, Counter[str]] = field(default_factory=dict)  # target -> totals, from the encoder's side

    def count(self, target: str, rows: list[FrameRow]) -> None:
        totals = self.wire.setdefault(target, Counter())
        totals["connections"] += 1
        for row in rows:
            if row.type == "eof":
                continue
            totals["frames"] += 1
            totals["bytes"] += row.size
            if row.type in ELEMENT_TYPES:
                totals["element_frame_bytes"] += row.size
                totals["payload_bytes"] += row.payload
                totals["elements"] += row.elements
                totals["packed_bytes"] += row.size if row.type == "onNextPacked" else 0
                totals["split_bytes"] += row.size if row.type in PART_TYPES else 0


def write_run_dirs(root: Path, *, seed: int = 1, targets: tuple[TargetProfile, ...] = DEFAULT_TARGETS,
                   runs_per_version: int = 2, frames: int = 40, kit_version: str = "0.1.0",
                   start: float = 1_790_000_000.0) -> CorpusSummary:
    """Write run directories for every target version, ``runs_per_version`` runs each."""
    summary = CorpusSummary()
    rng = random.Random(seed)
    number = 0
    for target in targets:
        for version in target.versions:
            for _run in range(runs_per_version):
                started = start + number * 60
                run_id = time.strftime("%Y%m%dT%H%M%S", time.gmtime(started)) + f"{number % 1000:03d}Z"
                directory = root / run_id
                (directory / "traces").mkdir(parents=True, exist_ok=True)
                lines = []
                counts: dict[str, int] = {}
                for scenario, rules in SCENARIOS:
                    number += 1
                    rows, faulty = synthetic_connection(seed, number, target, frames, t0=started)
                    summary.connections += 1
                    summary.count(target.name, rows)
                    summary.faulty_connections += faulty
                    with (directory / "traces" / f"{scenario}.trace").open("wb") as stream:
                        write_trace(stream, trace_records(rows))
                    failed = scenario in target.failing or rng.random() < target.flaky.get(scenario, 0.0)
                    verdict = "fail" if failed else "pass"
                    summary.verdicts.setdefault((target.name, version, scenario), []).append(verdict)
                    counts[verdict] = counts.get(verdict, 0) + 1
                    violations = [{"rule": rules[-1], "message": f"expected demand {number % 7}; got more",
                                   "source": "scenario"}] if failed else []
                    lines.append(json.dumps({
                        "id": scenario, "title": scenario.replace("-", " "), "rules": list(rules), "level": "MUST",
                        "verdict": verdict, "duration": 0.01, "violations": violations, "reason": "",
                        "target": f"tcp://{target.name}:9000", "codec": target.codec, "kit_version": kit_version,
                    }))
                (directory / "results.jsonl").write_text("\n".join(lines) + "\n")
                (directory / "run.json").write_text(json.dumps({
                    "schema": "rsio-tck/run/v1", "run_id": run_id, "kit_version": kit_version,
                    "spec_version": "rsio-v0/1", "target": f"tcp://{target.name}:9000", "codec": target.codec,
                    "seed": seed, "started": started, "finished": started + 30, "host": "synthetic",
                    "scenarios": len(SCENARIOS), "counts": counts, "implementation": target.name,
                    "fingerprint": {"hello": None, "capabilities": {
                        "implementation": target.name, "version": version, "tokens": []}},
                }, indent=2))
                summary.runs.append(directory)
    return summary
