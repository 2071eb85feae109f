"""The run directory (``reports/<run-id>/``): writing it as results arrive, and reading it back.

``RunRecorder`` is what a run holds while scenarios finish in any order: each
``add(result)`` appends a line to ``results.jsonl`` and writes the scenario's
trace, pcap and transcript at once, so an interrupted run still leaves what it
judged.  ``finish`` writes ``run.json`` with the target's fingerprint: its
serverHello, taken from the first trace that holds one (no extra connection),
and the capabilities it claims.  ``RunFiles`` reads a directory back; the
report is built from it alone.  The layout is in ``notes/rundir.md``.

Bounds: what is written is what the session kept, so a trace file holds at
most ``session.TRACE_MAX_BYTES`` (then a truncation marker), a transcript at
most ``session.MAX_TRANSCRIPT`` lines, and a pcap at most
``pcap.PCAP_MAX_PACKETS`` packets; a results.jsonl line carries ``truncated``
(store -> where it was cut) when any of them, or the monitor's findings, was cut.
"""

from __future__ import annotations

import io
import json
import multiprocessing
import os
import platform
import re
import time
from collections import Counter
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import SPEC_VERSION, __version__
from ..binding import DEFAULT_BINDING, get_binding
from ..errors import ProtocolViolation, Side
from ..interruption import Interruption, ignore_signals
from ..monitor.trace import TraceCut, TraceRecord, read_trace, read_whole, whole_records, write_trace
from ..output_files import ResultsLog, result_lines, write_bytes, write_text
from .pcap import target_port, write_pcap

SAFE_ID = re.compile(r"[^A-Za-z0-9_.-]")


def run_id() -> str:
    """A run directory's name, sortable by time (run.schema.json's run_id): 20261122T203300123Z."""
    now = time.time()
    return time.strftime("%Y%m%dT%H%M%S", time.gmtime(now)) + f"{int(now * 1000) % 1000:03d}Z"


def is_run_dir(path: Path) -> bool:
    """A run directory holds run.json or results.jsonl (an interrupted run may lack run.json)."""
    return (path / "run.json").is_file() or (path / "results.jsonl").is_file()


def _json(path: Path, text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as exc:
        raise ValueError(f"{path}: not valid JSON: {exc}") from None


def file_stem(scenario_id: str) -> str:
    """A scenario id as a file name (ids are already safe; this guards hand-written ones)."""
    return SAFE_ID.sub("_", scenario_id) or "_"


def server_hello(records: list[TraceRecord], codec: str, binding: str = DEFAULT_BINDING) -> dict[str, Any] | None:
    """The target's fingerprint from its first frame, as the binding reads it (``binding.fingerprint(frame,
    encoder)``; RS-IO: a serverHello's ``{version, extensions, hex}``); None if the binding has no such hook."""
    chosen = get_binding(binding)
    fingerprint = getattr(chosen, "fingerprint", None)
    if fingerprint is None:
        return None
    decoder = chosen.decoder(codec, None)
    encoder = chosen.encoder(codec, None)
    for record in records:
        if record.sender is not Side.SERVER or record.data is None:
            continue
        try:
            frames = decoder.feed(record.data)
        except ProtocolViolation:
            return None
        if frames:
            found: dict[str, Any] | None = fingerprint(frames[0], encoder)
            return found
    return None


# traces/wire/ID.trace: a WebSocket scenario's raw TCP bytes (HTTP upgrade, frames), which its pcap shows;
# traces/ID.trace stays the binding's stream (what the monitor and the pipeline judge).
WIRE_DIR = "wire"


def pcap_from_trace(trace: Path, pcap: Path, port: int, base: float, client_port: int) -> int:
    """Write the pcap of a trace file (a top-level function: it runs in a worker process)."""
    pcap.parent.mkdir(parents=True, exist_ok=True)
    partial = pcap.with_name(f".{pcap.name}.partial")  # a full disk leaves no half pcap behind
    cut: list[TraceCut] = []  # a trace cut inside its last record: the pcap of its whole records (the report says so)
    try:
        count = write_pcap(partial, whole_records(read_trace(trace), cut), server_port=port, base=base,
                           client_port=client_port)
        os.replace(partial, pcap)
    except OSError as exc:
        partial.unlink(missing_ok=True)
        raise OSError(exc.errno, exc.strerror or str(exc), str(pcap)) from None
    return count


def _trace_bytes(records: list[TraceRecord]) -> bytes:
    buffer = io.BytesIO()
    write_trace(buffer, records)
    return buffer.getvalue()


@dataclass
class RunRecorder:
    """Writes one run directory while the run goes on.

    Scapy needs about a millisecond per packet, too slow for the event loop the
    scenarios run on, so pcaps are written by a worker process (``pcap_workers``,
    0 = inline) from the trace files, which are written at once.
    """

    run_dir: Path
    target: str
    codec: str  # the binding's wire profile (RS-IO: its codec)
    started: float
    binding: str = DEFAULT_BINDING
    capabilities: Any = None  # rsio_tck.capabilities.Capabilities
    seed: int | None = None
    pcap_workers: int = 1
    target_name: str | None = None  # --name NAME[@VERSION], for a target without a capabilities file
    target_version: str | None = None
    target_role: str = "server"  # the part the target plays: "client" when the kit listened for it
    counts: Counter[str] = field(default_factory=Counter)
    hello: dict[str, Any] | None = None
    stopped: dict[str, Any] | None = None  # where the target stopped answering (``TargetStop.to_json``), if it did
    problems: list[str] = field(default_factory=list)
    _results: ResultsLog | None = None
    _written: int = 0
    _pool: ProcessPoolExecutor | None = None
    _pending: list[tuple[str, Future[int]]] = field(default_factory=list)

    def __post_init__(self) -> None:
        for sub in ("traces", "pcaps", "transcripts"):
            (self.run_dir / sub).mkdir(parents=True, exist_ok=True)
        self._results = ResultsLog(self.run_dir / "results.jsonl")
        self.port = target_port(self.target)

    def add(self, result: Any) -> None:
        """A ScenarioResult (run with ``keep_trace=True`` for its trace and pcap).  Its transcript and traces
        are written first and its results.jsonl line last: a line there is a scenario whose files are all
        there, even when the disk fills up between them (the pcap follows from the trace)."""
        assert self._results is not None, "add() after close()"
        stem = file_stem(result.id)
        if result.transcript or result.trace:
            write_text(self.run_dir / "transcripts" / f"{stem}.txt", result.explain() + "\n")
        trace = list(result.trace)
        trace_path = self.run_dir / "traces" / f"{stem}.trace"
        if trace:
            write_bytes(trace_path, _trace_bytes(trace))
        wire = list(getattr(result, "wire_trace", None) or ())
        if trace and wire:  # WebSocket: the pcap shows the raw TCP bytes (upgrade, frames); the trace stays the binding's
            trace_path = self.run_dir / "traces" / WIRE_DIR / f"{stem}.trace"
            trace_path.parent.mkdir(exist_ok=True)
            write_bytes(trace_path, _trace_bytes(wire))
        self._results.append(json.dumps(result.to_json()))
        self.counts[result.verdict.value] += 1
        self._written += 1
        stop = getattr(result, "stopped", None)
        if stop is not None and self.stopped is None:
            self.stopped = stop.to_json()
        if not trace:
            return
        if self.hello is None:
            self.hello = server_hello(trace, self.codec, self.binding)
        job = (trace_path, self.run_dir / "pcaps" / f"{stem}.pcap", self.port, self.started, 40000 + self._written % 20000)
        if self.pcap_workers <= 0:
            pcap_from_trace(*job)
            return
        if self._pool is None:
            self._pool = ProcessPoolExecutor(self.pcap_workers, mp_context=multiprocessing.get_context("spawn"),
                                             initializer=ignore_signals)
        self._pending.append((result.id, self._pool.submit(pcap_from_trace, *job)))

    def close(self) -> None:
        """Close results.jsonl and wait for the pcaps."""
        if self._results is not None:
            self._results.close()
            self._results = None
        for scenario_id, future in self._pending:
            try:
                future.result()
            except Exception as exc:  # a pcap that cannot be written must not lose the run
                self.problems.append(f"{scenario_id}: pcap not written: {type(exc).__name__}: {exc}")
        self._pending.clear()
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None

    @property
    def written(self) -> int:
        """Results recorded so far (results.jsonl lines)."""
        return self._written

    def finish(self, finished: float, scenarios: int, interruption: Interruption | None = None) -> dict[str, Any]:
        """Close results.jsonl, wait for the pcaps and write run.json (``interruption``: the signal that cut
        the run short, if one did); returns what was written."""
        self.close()
        caps = self.capabilities
        tokens = sorted(caps.tokens) if caps is not None else []
        implementation = caps.implementation if caps is not None else "unknown"
        record = {
            "schema": "rsio-tck/run/v1", "run_id": self.run_dir.name,
            "kit_version": __version__, "spec_version": SPEC_VERSION, "target": self.target, "codec": self.codec,
            "binding": self.binding, "profile": self.codec,
            "seed": self.seed, "started": self.started, "finished": finished, "host": platform.node(),
            "capabilities": tokens, "implementation": implementation, "scenarios": scenarios,
            "target_name": self.target_name, "target_version": self.target_version,
            "target_role": self.target_role,
            "counts": dict(self.counts),
            "target_stopped": self.stopped,
            "interrupted": interruption is not None,
            "interruption": interruption.to_json() if interruption is not None else None,
            "fingerprint": {"hello": self.hello, "capabilities": {
                "implementation": implementation, "version": getattr(caps, "version", ""), "tokens": tokens}},
        }
        write_text(self.run_dir / "run.json", json.dumps(record, indent=2) + "\n")
        return record


@dataclass
class RunFiles:
    """What a run directory holds, read back."""

    run_dir: Path
    run: dict[str, Any]
    results: list[dict[str, Any]]
    fuzz: dict[str, Any] | None
    # scenario id -> where its trace file was cut inside its last record (read up to it), as ``trace`` found
    cut_traces: dict[str, str] = field(default_factory=dict)

    @classmethod
    def read(cls, run_dir: Path) -> RunFiles:
        run_path, fuzz_path = run_dir / "run.json", run_dir / "fuzz.json"
        run = _json(run_path, run_path.read_text(encoding="utf-8")) if run_path.exists() else {}
        fuzz = _json(fuzz_path, fuzz_path.read_text(encoding="utf-8")) if fuzz_path.exists() else None
        results = []
        results_path = run_dir / "results.jsonl"
        if results_path.exists():
            lines, _ = result_lines(results_path.read_text(encoding="utf-8"))
            for number, line in lines:
                results.append(_json(Path(f"{results_path}:{number}"), line))
        return cls(run_dir=run_dir, run=run, results=results, fuzz=fuzz)

    @property
    def binding(self) -> str:
        """The run's binding (rsio for run directories older than the field)."""
        return str(self.run.get("binding") or DEFAULT_BINDING)

    @property
    def profile(self) -> str:
        """The run's wire profile (``codec`` in older run directories; the binding's default if neither)."""
        return str(self.run.get("profile") or self.run.get("codec") or get_binding(self.binding).profiles[0])

    def path(self, kind: str, scenario_id: str) -> Path:
        suffix = {"traces": "trace", "pcaps": "pcap", "transcripts": "txt"}[kind]
        return self.run_dir / kind / f"{file_stem(scenario_id)}.{suffix}"

    def relative(self, kind: str, scenario_id: str) -> str | None:
        path = self.path(kind, scenario_id)
        return str(path.relative_to(self.run_dir)) if path.exists() else None

    def trace(self, scenario_id: str) -> list[TraceRecord] | None:
        """The scenario's trace: its whole records, if its file was cut inside the last one (noted in
        ``cut_traces``); None without a trace."""
        path = self.path("traces", scenario_id)
        if not path.exists():
            return None
        records, cut = read_whole(path)
        if cut is not None:
            self.cut_traces[scenario_id] = str(cut)
        return records

    def transcript(self, scenario_id: str) -> str | None:
        path = self.path("transcripts", scenario_id)
        return path.read_text(encoding="utf-8") if path.exists() else None

    def restore_pcaps(self) -> int:
        """Write the pcap of every trace that has none; returns how many were written."""
        written = 0
        port = target_port(str(self.run.get("target", "")))
        base = float(self.run.get("started", 0.0))
        for number, result in enumerate(self.results, 1):
            pcap = self.path("pcaps", result["id"])
            trace = self.path("traces", result["id"])
            wire = trace.parent / WIRE_DIR / trace.name
            if trace.exists() and not pcap.exists():
                pcap_from_trace(wire if wire.exists() else trace, pcap, port, base, 40000 + number % 20000)
                written += 1
        return written
