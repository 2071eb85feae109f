"""Nothing lost on the way in: what the run directories hold, checked against what was ingested.

Theory of operation: executors read the run directories, and an executor that
cannot read a file (on a cluster, a path that is not on storage every executor
sees at the same place) skips it with a warning in its own log, which the
driver never sees.  So the driver lists, before ingesting, what must come out:
every run with a non-empty ``results.jsonl`` must give scenario results, and
every recorded connection with bytes (a trace, or a pcap without one) must give
frames.  After ingesting, ``check`` compares; anything missing is ``LostData``,
one line naming the runs, which the CLI turns into exit 3 instead of a green
report over empty tables.  ``table_checksums`` sums a 64-bit hash of every row
of a table (independent of partitioning and row order), so two pipelines over
the same run directories, on any master, can be compared exactly.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

NAMED_RUNS = 5  # runs named in a LostData message; the rest are counted


class LostData(ValueError):
    """Run directories gave fewer rows than they hold (the executors could not read them)."""


@dataclass
class Expected:
    """What the run directories must give, listed on the driver."""

    results: set[str] = field(default_factory=set)  # run_ids with a non-empty results.jsonl
    connections: set[tuple[str, str]] = field(default_factory=set)  # (run_id, scenario) with recorded bytes

    def add_run(self, run_dir: Path, run_id: str, work: list[tuple[str, str, str, int, str, str, str]]) -> None:
        results = run_dir / "results.jsonl"
        if results.is_file() and results.stat().st_size > 0:
            self.results.add(run_id)
        for _kind, path, _run, _number, scenario, _codec, _binding in work:
            if Path(path).stat().st_size > 0:
                self.connections.add((run_id, scenario))


def _keys(frame: DataFrame, *columns: str) -> set[tuple[str, ...]]:
    return {tuple(row) for row in frame.select(*columns).distinct().collect()}


def check(expected: Expected, scenario_results: DataFrame, frames: DataFrame) -> None:
    """LostData when a run's results or a connection's frames did not arrive."""
    got_results = {key[0] for key in _keys(scenario_results, "run_id")}
    got_frames = _keys(frames, "run_id", "scenario")
    lost_results = sorted(expected.results - got_results)
    lost_connections = sorted(expected.connections - got_frames)
    if not lost_results and not lost_connections:
        return
    runs = sorted(set(lost_results) | {run for run, _ in lost_connections})
    shown = ", ".join(runs[:NAMED_RUNS]) + (f" and {len(runs) - NAMED_RUNS} more" if len(runs) > NAMED_RUNS else "")
    parts = []
    if lost_results:
        parts.append(f"the results of {len(lost_results)} run(s)")
    if lost_connections:
        parts.append(f"the frames of {len(lost_connections)} of {len(expected.connections)} recorded connection(s)")
    raise LostData(f"{' and '.join(parts)} did not arrive (runs {shown}): the executors could not read them; "
                   "on a cluster, run directories must be on storage every executor reads at the same path")


def table_checksums(frame: DataFrame) -> dict[str, Any]:
    """{"rows": n, "checksum": 16 hex digits}: the sum mod 2^64 of each row's xxhash64, order-free."""
    hashed = frame.select(F.xxhash64(*frame.columns).alias("h"))
    row = hashed.agg(F.count(F.lit(1)).alias("n"),
                     F.sum(F.col("h").cast("decimal(38,0)")).alias("s")).collect()[0]
    total = int(row["s"] or 0) % (1 << 64)
    return {"rows": int(row["n"]), "checksum": f"{total:016x}"}
