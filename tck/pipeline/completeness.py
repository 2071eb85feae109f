"""Nothing lost on the way in: what the run directories hold, checked against what was ingested.

Theory of operation: executors read the run directories, and an executor that
cannot read a file (on a cluster, a path that is not on storage every executor
sees at the same place) skips it with a warning in its own log, which the
driver never sees.  So the driver lists, before ingesting, what must come out
(``Expected``): every run with a non-empty ``results.jsonl`` must give scenario
results, and every trace or pcap it plans a task for must be read whole.  The
frame tasks report each file they read (``Reads``, an accumulator: the frames
are streamed to Parquet, never kept, so the tally has to travel beside them):
how many frame rows it gave, why it stopped early, if it did, and whether the
trace file ended inside a record (its last record cut part-way: the rows of the
whole records before it are ingested).  After the base tables are written,
``check`` compares the three: a run without its results, a file not read whole,
or a connection with fewer rows in the frames table than its file gave is
``LostData``, one line naming the runs, which the CLI turns into exit 3 instead
of a green report over empty tables.  A cut last record is expected of a run
that did not run to its end (run.json says interrupted, or there is none): it
is a note; of any other run it is lost data, named by run and file.

``table_checksums`` sums a 64-bit hash of every row of a table (independent of
partitioning and row order), so two pipelines over the same run directories,
on any master, can be compared exactly.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pyspark.accumulators import AccumulatorParam
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from . import sources

NAMED_RUNS = 5  # runs named in a LostData message; the rest are counted
HINT = "on a cluster, run directories must be on storage every executor reads at the same path"

# path of a trace or pcap -> (frame rows it gave, why its reading stopped early or "", where the file was cut
# inside its last record or "")
ReadTally = dict[str, tuple[int, str, str]]


class LostData(ValueError):
    """Run directories gave fewer rows than they hold (the executors could not read them)."""


class Reads(AccumulatorParam[ReadTally]):
    """Merges the frame tasks' tallies; a retried task reports the same file again, so merging is a union."""

    def zero(self, value: ReadTally) -> ReadTally:
        return {}

    def addInPlace(self, value1: ReadTally, value2: ReadTally) -> ReadTally:  # noqa: N802 (pyspark's name)
        value1.update(value2)
        return value1


@dataclass(frozen=True)
class Expected:
    """What the run directories must give, listed on the driver before any task runs."""

    results: frozenset[str] = frozenset()  # run_ids with a non-empty results.jsonl
    # path of every trace and pcap a frame task reads -> (run_id, scenario)
    connections: dict[str, tuple[str, str]] = field(default_factory=dict)
    ended_early: frozenset[str] = frozenset()  # run_ids of runs that did not run to their end (``sources.ended_early``)


def expected_of(runs: list[tuple[Path, str, list[tuple[str, str, str, int, str, str, str]]]]) -> Expected:
    """``Expected`` of (run directory, run_id, its frame work items from ``sources.connection_work``)."""
    results = set()
    connections = {}
    early = set()
    for run_dir, run_id, work in runs:
        path = run_dir / "results.jsonl"
        if path.is_file() and path.stat().st_size > 0:
            results.add(run_id)
        if sources.ended_early(run_dir):
            early.add(run_id)
        for _kind, file, _run, _number, scenario, _codec, _binding in work:
            connections[file] = (run_id, scenario)
    return Expected(frozenset(results), connections, frozenset(early))


def _named(runs: set[str]) -> str:
    shown = sorted(runs)
    more = len(shown) - NAMED_RUNS
    return ", ".join(shown[:NAMED_RUNS]) + (f" and {more} more" if more > 0 else "")


def check(expected: Expected, reads: ReadTally, scenario_results: DataFrame, frames: DataFrame) -> list[str]:
    """LostData when a run's results, a file's frames or a connection's rows did not arrive whole; the notes
    (one line each) of trace files cut inside their last record in runs that ended early, where that is
    expected."""
    got_results = {row[0] for row in scenario_results.select("run_id").distinct().collect()}
    lost_results = expected.results - got_results
    unread = {path: reads[path][1] if path in reads else "no task reported it"
              for path in expected.connections if path not in reads or reads[path][1]}
    cut = {path: reads[path][2] for path in expected.connections if path in reads and reads[path][2]}
    lost_cut = {path: why for path, why in cut.items() if expected.connections[path][0] not in expected.ended_early}
    notes = [f"run {expected.connections[path][0]} did not run to its end, and its trace {path} was cut with it: "
             f"{why}; ingested up to the cut" for path, why in sorted(cut.items()) if path not in lost_cut]
    read_rows: Counter[tuple[str, str]] = Counter()
    for path, (rows, _problem, _cut) in reads.items():
        if path in expected.connections:
            read_rows[expected.connections[path]] += rows
    stored = {(row[0], row[1]): row[2] for row in frames.groupBy("run_id", "scenario").count().collect()}
    short = {key: rows - stored.get(key, 0) for key, rows in read_rows.items() if stored.get(key, 0) < rows}
    if not lost_results and not unread and not short and not lost_cut:
        return notes
    parts = []
    if lost_results:
        parts.append(f"the results of {len(lost_results)} run(s) did not arrive (runs {_named(set(lost_results))})")
    if unread:
        runs = {expected.connections[path][0] for path in unread}
        first = min(unread)
        parts.append(f"{len(unread)} of {len(expected.connections)} recorded connection(s) could not be read whole "
                     f"(runs {_named(runs)}; {first}: {' '.join(unread[first].split())[:200]})")
    if short:
        parts.append(f"{sum(short.values())} frame row(s) of {len(short)} connection(s) did not reach the frames "
                     f"table (runs {_named({run for run, _ in short})})")
    if lost_cut:
        runs = {expected.connections[path][0] for path in lost_cut}
        first = min(lost_cut)
        parts.append(f"{len(lost_cut)} trace file(s) of run(s) not interrupted end inside a record, the rest of "
                     f"their connection lost (runs {_named(runs)}; {first}: {lost_cut[first]})")
    hint = f"; {HINT}" if lost_results or unread or short else ""
    raise LostData(f"lost data: {'; '.join(parts)}{hint}")


def table_checksums(frame: DataFrame) -> dict[str, Any]:
    """{"rows": n, "checksum": 16 hex digits}: the sum mod 2^64 of each row's xxhash64, order-free."""
    hashed = frame.select(F.xxhash64(*frame.columns).alias("h"))
    row = hashed.agg(F.count(F.lit(1)).alias("n"),
                     F.sum(F.col("h").cast("decimal(38,0)")).alias("s")).collect()[0]
    total = int(row["s"] or 0) % (1 << 64)
    return {"rows": int(row["n"]), "checksum": f"{total:016x}"}
