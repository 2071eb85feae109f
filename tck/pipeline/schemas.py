"""The pipeline's tables: their names, Spark schemas and where they live under a warehouse directory.

Tables are tidy: one row per observation, keys repeated, no nested verdict
summaries.  ``frames`` holds each frame's own bytes (``data``), so the offline
judge can replay any connection from the table alone.  ``violations`` holds
every source of evidence side by side, told apart by ``source``: ``scenario``
and ``monitor`` (from results.jsonl) and ``offline`` (the pipeline's judge).
"""

from __future__ import annotations

from pathlib import Path

from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    DoubleType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
)


def _schema(*fields: tuple[str, object, bool]) -> StructType:
    return StructType([StructField(name, kind, nullable) for name, kind, nullable in fields])  # type: ignore[arg-type]


RUNS = _schema(
    ("run_id", StringType(), False), ("target", StringType(), False), ("target_version", StringType(), False),
    ("kit_version", StringType(), False), ("spec_version", StringType(), True), ("codec", StringType(), False),
    ("target_url", StringType(), True), ("started", DoubleType(), False), ("finished", DoubleType(), True),
    ("host", StringType(), True), ("seed", LongType(), True), ("scenarios", IntegerType(), True),
    ("fuzz", BooleanType(), False), ("path", StringType(), True),
    ("binding", StringType(), True),  # the wire binding (null in run directories older than the field: rsio)
    # A signal cut the run short (run.json's interrupted): its results are those that finished, never a complete
    # run.  False for run directories older than the field; null when run.json is missing (the run never ended).
    ("interrupted", BooleanType(), True),
)

SCENARIO_RESULTS = _schema(
    ("run_id", StringType(), False), ("scenario", StringType(), False), ("title", StringType(), True),
    ("rules", ArrayType(StringType()), False), ("level", StringType(), True), ("verdict", StringType(), False),
    ("duration", DoubleType(), True), ("reason", StringType(), True),
)

VIOLATIONS = _schema(
    ("run_id", StringType(), False), ("scenario", StringType(), True), ("connection", LongType(), True),
    ("source", StringType(), False), ("rule", StringType(), False), ("level", StringType(), True),
    ("side", StringType(), True), ("message", StringType(), True), ("signature", StringType(), False),
    ("t", DoubleType(), True),
)

FRAMES = _schema(
    ("run_id", StringType(), False), ("scenario", StringType(), True), ("connection", LongType(), False),
    ("origin", StringType(), False), ("seq", IntegerType(), False), ("direction", StringType(), False),
    ("type", StringType(), False), ("id", LongType(), True), ("size", IntegerType(), False),
    ("payload", IntegerType(), False), ("elements", IntegerType(), False), ("t", DoubleType(), False),
    ("data", BinaryType(), True),
)

FUZZ_FINDINGS = _schema(
    ("run_id", StringType(), False), ("rule", StringType(), False), ("signature", StringType(), False),
    ("side", StringType(), True), ("message", StringType(), True), ("scenario_file", StringType(), True),
    ("count", IntegerType(), False),
)

BASE_TABLES = {
    "runs": RUNS, "scenario_results": SCENARIO_RESULTS, "violations": VIOLATIONS, "frames": FRAMES,
    "fuzz_findings": FUZZ_FINDINGS,
}

DERIVED_TABLES = (
    "matrix_history", "matrix_latest", "run_summary", "flakiness", "violations_by_rule", "violations_by_signature",
    "fuzz_dedup", "wire_stats", "frame_types", "latency",
)


def table_path(warehouse: Path, name: str) -> str:
    return str(warehouse / name)
