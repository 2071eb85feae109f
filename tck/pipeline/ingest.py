"""Ingest: run directories in, the base tables (runs, scenario results, violations, frames, fuzz) out.

Theory of operation: the driver only lists run directories and the trace and
pcap files in them; the reading happens on executors.  One task reads one
run's metadata, results and fuzz summary; one task decodes one connection
(trace or pcap) into frame rows.  The rows become DataFrames with the fixed
schemas of ``schemas.py``.  On a cluster the run directories must be on storage
every executor can read (a shared file system); locally they simply are.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, SparkSession

from ..binding import DEFAULT_BINDING
from . import schemas
from .completeness import Expected, Reads, ReadTally, expected_of
from .sources import connection_frames, connection_work, fuzz_rows, result_rows, run_row


@dataclass
class BaseTables:
    runs: DataFrame
    scenario_results: DataFrame
    violations: DataFrame
    frames: DataFrame
    fuzz_findings: DataFrame
    expected: Expected  # what the run directories must give (completeness.check)
    reads: Any  # an Accumulator[ReadTally]: what the frame tasks read, filled in as the frames table is written

    def as_dict(self) -> dict[str, DataFrame]:
        return {
            "runs": self.runs, "scenario_results": self.scenario_results, "violations": self.violations,
            "frames": self.frames, "fuzz_findings": self.fuzz_findings,
        }


def _read_run(path: str) -> list[tuple[str, dict[str, Any]]]:
    """Tagged rows of one run directory (runs on an executor)."""
    run_dir = Path(path)
    run = run_row(run_dir)
    out: list[tuple[str, dict[str, Any]]] = [("runs", run)]
    for result, violations in result_rows(run_dir, run["run_id"]):
        out.append(("scenario_results", result))
        out.extend(("violations", v) for v in violations)
    out.extend(("fuzz_findings", f) for f in fuzz_rows(run_dir, run["run_id"]))
    return out


def _frame_tuples(item: tuple[str, str, str, int, str, str, str], fields: list[str],
                  reads: Any) -> Iterator[tuple[Any, ...]]:
    """The frame rows of one trace or pcap as tuples (runs on an executor), tallied into ``reads``."""
    problems: list[str] = []
    cut: list[str] = []
    count = 0
    for row in connection_frames(*item, problems=problems, cut=cut):
        count += 1
        yield tuple(row.get(f) for f in fields)
    tally: ReadTally = {item[1]: (count, problems[0] if problems else "", cut[0] if cut else "")}
    reads.add(tally)


def _codec_of(run_dir: Path) -> tuple[str, str, str]:
    """(run_id, codec, binding) from run.json, read on the driver to plan the frame tasks."""
    try:
        run = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        run = {}
    return (str(run.get("run_id") or run_dir.name), str(run.get("codec") or "msgpack"),
            str(run.get("binding") or DEFAULT_BINDING))


def ingest(spark: SparkSession, run_dirs: list[Path]) -> BaseTables:
    """The base tables of ``run_dirs`` (lazy DataFrames; ``write_tables`` stores them)."""
    context = spark.sparkContext
    # Executors get absolute paths: on a cluster their working directory is not the driver's, and a
    # relative path there reads nothing (or another directory's files).
    run_dirs = [p.resolve() for p in run_dirs]
    paths = [str(p) for p in run_dirs]
    slices = max(1, context.defaultParallelism * 2)
    tagged = context.parallelize(paths, max(1, min(len(paths), slices))).flatMap(_read_run).cache()

    def table(name: str) -> DataFrame:
        rows = tagged.filter(lambda item: item[0] == name).map(lambda item: item[1])
        schema = getattr(schemas, name.upper())
        fields = schema.fieldNames()
        return spark.createDataFrame(rows.map(lambda r: tuple(r.get(f) for f in fields)), schema)

    planned = []
    for run_dir in run_dirs:
        run_id, codec, binding = _codec_of(run_dir)
        planned.append((run_dir, run_id, connection_work(run_dir, run_id, codec, binding)))
    work = [item for _run_dir, _run_id, items in planned for item in items]
    fields = schemas.FRAMES.fieldNames()
    reads = context.accumulator({}, Reads())
    frame_rdd = context.parallelize(work, max(1, min(len(work), slices * 4))).flatMap(
        lambda item: _frame_tuples(item, fields, reads)
    )
    return BaseTables(
        runs=table("runs"), scenario_results=table("scenario_results"), violations=table("violations"),
        frames=spark.createDataFrame(frame_rdd, schemas.FRAMES), fuzz_findings=table("fuzz_findings"),
        expected=expected_of(planned), reads=reads,
    )


def write_table(frame: DataFrame, warehouse: Path, name: str, partition_by: list[str] | None = None) -> None:
    writer = frame.write.mode("overwrite")
    if partition_by:
        writer = writer.partitionBy(*partition_by)
    writer.parquet(schemas.table_path(warehouse, name))


def read_table(spark: SparkSession, warehouse: Path, name: str) -> DataFrame:
    """A table; base tables with their fixed schema, so an empty one (no Parquet files) still reads."""
    reader = spark.read
    if name in schemas.BASE_TABLES:
        reader = reader.schema(schemas.BASE_TABLES[name])
    return reader.parquet(schemas.table_path(warehouse, name))
