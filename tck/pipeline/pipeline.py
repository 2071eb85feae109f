"""The whole pipeline: ingest run directories, judge their connections offline, derive, store as Parquet.

Theory of operation: ``run_pipeline`` writes the base tables first and reads
them back, so the (expensive) decoding of traces happens once and every later
step works from Parquet.  The offline judge's violations go into the same
``violations`` table, partitioned by ``source``: a re-judge overwrites only the
``source=offline`` partition (dynamic partition overwrite).  The derived tables
are small and are written as single files.  All of them are written into a
staging directory and replace the warehouse's old tables only once all are
written and checked (``warehouse``), so a full disk or lost data leaves the
old tables whole.  ``collect_tables`` brings derived
tables to the driver as lists of dicts for the publisher.
"""

from __future__ import annotations

import logging
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, SparkSession

from .completeness import check, table_checksums
from .derive import derive_all
from .ingest import ingest, read_table, write_table
from .judge import CLUSTERED, judge_files, judge_frames, mark_clustered, run_wires
from .schemas import BASE_TABLES, DERIVED_TABLES, table_path
from .warehouse import commit, staged

log = logging.getLogger(__name__)

CHECKSUMMED = ("runs", "scenario_results", "violations", "frames")
# Columns that say where the pipeline ran, not what the runs hold: left out of the checksums.
MACHINE_COLUMNS: dict[str, tuple[str, ...]] = {"runs": ("path",)}


@dataclass
class PipelineReport:
    warehouse: Path
    runs: int = 0
    frames: int = 0
    connections_judged: int = 0
    offline_violations: int = 0
    seconds: dict[str, float] = field(default_factory=dict)
    # rows and an order-free checksum per table: equal on every master for the same run directories
    tables: dict[str, dict[str, Any]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # what was ingested only in part, as expected (completeness)

    def to_json(self) -> dict[str, Any]:
        return {"warehouse": str(self.warehouse), "runs": self.runs, "frames": self.frames,
                "offline_violations": self.offline_violations, "tables": self.tables, "seconds": self.seconds,
                "notes": self.notes}


def load_tables(spark: SparkSession, warehouse: Path, names: tuple[str, ...] | list[str]) -> dict[str, DataFrame]:
    return {name: read_table(spark, warehouse, name) for name in names}


def judge_warehouse(spark: SparkSession, warehouse: Path) -> int:
    """Judge every connection of the frames table; returns the number of offline violations written."""
    tables = load_tables(spark, warehouse, ("runs", "frames"))
    frames_dir = Path(table_path(warehouse, "frames"))
    if (frames_dir / CLUSTERED).is_file():
        codecs, bindings = run_wires(tables["runs"])
        found = judge_files(spark, frames_dir, codecs, bindings=bindings)
    else:
        found = judge_frames(tables["frames"], tables["runs"])
    # dynamic partition overwrite replaces source=offline only if the judge found something: clear it first
    shutil.rmtree(Path(table_path(warehouse, "violations")) / "source=offline", ignore_errors=True)
    write_table(found, warehouse, "violations", partition_by=["source"])
    return read_table(spark, warehouse, "violations").filter("source = 'offline'").count()


def derive_warehouse(spark: SparkSession, warehouse: Path) -> None:
    derived = derive_all(load_tables(spark, warehouse, list(BASE_TABLES)))
    for name, frame in derived.items():
        write_table(frame.coalesce(1), warehouse, name)


def run_pipeline(spark: SparkSession, run_dirs: list[Path], warehouse: Path, *, judge: bool = True) -> PipelineReport:
    """Ingest, judge and derive ``run_dirs`` into ``warehouse``; LostData when the executors gave fewer results
    or frames than the run directories hold.  The tables are written beside the warehouse's old ones and
    replace them only once all are written and checked (``warehouse.staged``): LostData, or an ``OSError``
    naming the warehouse for a full disk, leaves the old tables as they were."""
    warehouse = warehouse.resolve()  # Spark resolves a relative path on whichever side writes it
    report = PipelineReport(warehouse=warehouse)
    with staged(warehouse) as staging:
        _write_tables(spark, run_dirs, staging, report, judge)
        commit(staging, warehouse)
    log.info("pipeline: %d runs, %d frames, %d offline violations", report.runs, report.frames,
             report.offline_violations)
    return report


def _write_tables(spark: SparkSession, run_dirs: list[Path], warehouse: Path, report: PipelineReport,
                  judge: bool) -> None:
    started = time.perf_counter()
    ingested = ingest(spark, run_dirs)
    base = ingested.as_dict()
    files = max(1, spark.sparkContext.defaultParallelism)
    for name, frame in base.items():  # few files: many tiny ones make every later query slow
        write_table(frame.coalesce(files), warehouse, name, partition_by=["source"] if name == "violations" else None)
    mark_clustered(Path(table_path(warehouse, "frames")))  # one task per connection, partitions only merged
    report.seconds["ingest"] = time.perf_counter() - started
    # The frames table is written by now, so every frame task has reported what it read.
    report.notes = check(ingested.expected, ingested.reads.value, read_table(spark, warehouse, "scenario_results"),
                         read_table(spark, warehouse, "frames"))
    report.runs = read_table(spark, warehouse, "runs").count()
    report.frames = read_table(spark, warehouse, "frames").count()
    if judge:
        mark = time.perf_counter()
        report.offline_violations = judge_warehouse(spark, warehouse)
        report.seconds["judge"] = time.perf_counter() - mark
    mark = time.perf_counter()
    derive_warehouse(spark, warehouse)
    report.seconds["derive"] = time.perf_counter() - mark
    for name in CHECKSUMMED:
        report.tables[name] = table_checksums(read_table(spark, warehouse, name).drop(*MACHINE_COLUMNS.get(name, ())))


def collect_tables(spark: SparkSession, warehouse: Path,
                   names: tuple[str, ...] = DERIVED_TABLES + ("runs", "scenario_results")) -> dict[str, list[dict[str, Any]]]:
    """Small tables as plain rows, for the publisher."""
    out = {}
    for name in names:
        rows = read_table(spark, warehouse, name).collect()
        out[name] = [row.asDict(recursive=True) for row in rows]
    return out
