"""Synthetic corpora at scale: the runs and frames tables written straight to Parquet by Spark.

Theory of operation: run directories are the right input for thousands of
connections, not for millions.  ``write_bulk_corpus`` skips them: connection
numbers 0..N-1 are spread over Spark tasks, each task generates its
connections with ``corpus.synthetic_connection`` (seeded per connection, so
the result does not depend on how the range is split) and yields Arrow
batches of frame rows.  Connection ``n`` belongs to target ``n mod T`` and to
run ``n // connections_per_run`` of that target.  Rows leave each task sorted
by (run_id, connection, seq), so a reader can walk connections file by file.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
from pyspark.sql import SparkSession

from ..binding import DEFAULT_BINDING, get_binding, hooks_of
from . import schemas
from .judge import mark_clustered

CORPUS_BINDING = DEFAULT_BINDING  # the binding whose synthetic corpus the bulk runs are
# The synthetic corpus is a binding's optional hook (``binding.synthetic_corpus()``); the default binding has one.
_CORPUS = hooks_of(get_binding(CORPUS_BINDING)).synthetic_corpus()
DEFAULT_TARGETS = _CORPUS.DEFAULT_TARGETS
synthetic_connection = _CORPUS.synthetic_connection
TargetProfile = Any  # the corpus's TargetProfile (name, versions, codec, ...)

ARROW_FRAMES = pa.schema([
    ("run_id", pa.string()), ("scenario", pa.string()), ("connection", pa.int64()), ("origin", pa.string()),
    ("seq", pa.int32()), ("direction", pa.string()), ("type", pa.string()), ("id", pa.int64()),
    ("size", pa.int32()), ("payload", pa.int32()), ("elements", pa.int32()), ("t", pa.float64()),
    ("data", pa.binary()),
])


@dataclass(frozen=True)
class BulkSpec:
    connections: int
    frames_per_connection: int = 100
    seed: int = 1
    connections_per_run: int = 1000
    targets: tuple[TargetProfile, ...] = DEFAULT_TARGETS

    def run_of(self, number: int) -> tuple[TargetProfile, str]:
        target = self.targets[number % len(self.targets)]
        run = number // (self.connections_per_run * len(self.targets))
        return target, f"{target.name}-{run:05d}"


def connection_batches(spec: BulkSpec, numbers: list[int], batch_rows: int = 65536) -> Iterator[pa.RecordBatch]:
    """Arrow batches of the frame rows of connections ``numbers`` (in order)."""
    columns: dict[str, list[object]] = {name: [] for name in ARROW_FRAMES.names}
    for number in numbers:
        target, run_id = spec.run_of(number)
        rows, _ = synthetic_connection(spec.seed, number, target, spec.frames_per_connection)
        for row in rows:
            for name, value in (("run_id", run_id), ("scenario", "synthetic"), ("connection", number),
                                ("origin", "synthetic"), ("seq", row.seq), ("direction", row.direction),
                                ("type", row.type), ("id", row.id), ("size", row.size), ("payload", row.payload),
                                ("elements", row.elements), ("t", row.t), ("data", row.data)):
                columns[name].append(value)
        if len(columns["seq"]) >= batch_rows:
            yield pa.RecordBatch.from_pydict(columns, schema=ARROW_FRAMES)
            columns = {name: [] for name in ARROW_FRAMES.names}
    if columns["seq"]:
        yield pa.RecordBatch.from_pydict(columns, schema=ARROW_FRAMES)


def write_bulk_corpus(spark: SparkSession, warehouse: Path, spec: BulkSpec, partitions: int = 16) -> dict[str, int]:
    """Write ``runs`` and ``frames`` for ``spec`` under ``warehouse``; returns row counts."""
    chunk = -(-spec.connections // partitions)
    ranges = [(start, min(spec.connections, start + chunk)) for start in range(0, spec.connections, chunk)]

    seeds = spark.createDataFrame([(s, e) for s, e in ranges], "start long, stop long").repartition(len(ranges))

    def generate_arrow(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for start, stop in zip(batch.column(0).to_pylist(), batch.column(1).to_pylist()):
                yield from connection_batches(spec, list(range(start, stop)))

    frames = seeds.mapInArrow(generate_arrow, schemas.FRAMES)  # type: ignore[arg-type]
    frames.write.mode("overwrite").parquet(schemas.table_path(warehouse, "frames"))
    mark_clustered(warehouse / "frames")  # each task generates whole connections, in order
    run_rows: dict[str, tuple[TargetProfile, int]] = {}
    for number in range(spec.connections):
        target, run_id = spec.run_of(number)
        run_rows.setdefault(run_id, (target, number))
    runs = [
        {"run_id": run_id, "target": target.name, "target_version": target.versions[0], "kit_version": "0.1.0",
         "spec_version": "rsio-v0/1", "codec": target.codec, "target_url": f"tcp://{target.name}:9000",
         "started": 1_790_000_000.0 + first, "finished": None, "host": "synthetic", "seed": spec.seed,
         "scenarios": 0, "fuzz": False, "path": None, "binding": CORPUS_BINDING, "interrupted": False}
        for run_id, (target, first) in sorted(run_rows.items())
    ]
    fields = schemas.RUNS.fieldNames()
    spark.createDataFrame([tuple(r[f] for f in fields) for r in runs], schemas.RUNS).coalesce(1).write.mode(
        "overwrite").parquet(schemas.table_path(warehouse, "runs"))
    counts = {"runs": len(runs), "frames": spark.read.parquet(schemas.table_path(warehouse, "frames")).count()}
    (warehouse / "bulk.json").write_text(json.dumps({"spec": {
        "connections": spec.connections, "frames_per_connection": spec.frames_per_connection, "seed": spec.seed,
        "connections_per_run": spec.connections_per_run}, "counts": counts}))
    return counts
