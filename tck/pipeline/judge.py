"""Offline conformance at scale: the monitor applied to every recorded connection, in parallel.

Theory of operation: the frames table is shuffled so that all rows of one
connection (run_id, connection) land in one partition, and sorted there by
(run_id, connection, seq).  ``mapInArrow`` then walks each partition's Arrow
batches once: rows of one connection are contiguous, so the function collects
a connection's chunks until the key changes (a connection may straddle
batches; the partial one is carried over), replays it through
``rsio_tck.monitor.Monitor`` (``walker.ConnectionWalker``, in Arrow's buffers) and emits
one violation row per finding.  This avoids building a pandas frame per group, which is what
``groupBy().applyInPandas`` would do for each of millions of small groups.

When the frames table is known to be clustered -- every connection's rows in
one Parquet file, in seq order, which is how the pipeline's own writers lay it
out -- ``judge_files`` skips the shuffle and the sort: Spark only schedules the
files over executors, and each task reads its files with pyarrow and walks
them.  ``judge_table`` is that walk over an in-process Arrow table: the
single-process baseline of the benchmark, and a check of the Spark job.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession

from ..binding import DEFAULT_BINDING
from . import schemas
from .walker import OUTPUT_FIELDS, ConnectionWalker, arrow_schema

JUDGE_COLUMNS = ("run_id", "scenario", "connection", "seq", "direction", "type", "t", "data")
CLUSTERED = "_CLUSTERED"  # marker: each connection's rows lie in one file, in seq order


def mark_clustered(frames_dir: Path) -> None:
    """Written by the pipeline's own frame writers, which keep connections whole and ordered."""
    (frames_dir / CLUSTERED).write_text("each connection's rows lie in one Parquet file, in seq order\n")


def _judge_partition(batches: Iterator[pa.RecordBatch], codecs: dict[str, str],
                     bindings: dict[str, str] | None = None) -> Iterator[pa.RecordBatch]:
    walker = ConnectionWalker(codecs, bindings)
    for batch in batches:
        walker.add_batch(batch)
        out = walker.take()
        if out is not None:
            yield out
    walker.flush()
    out = walker.take()
    if out is not None:
        yield out


def judge_frames(frames: DataFrame, runs: DataFrame, partitions: int | None = None) -> DataFrame:
    """Violation rows (source ``offline``) for every connection of ``frames``.

    The codec of each run travels to the workers in the function's closure (the
    runs table is small), so the shuffled rows carry only what the walk reads.
    """
    codecs, bindings = run_wires(runs)
    keyed = frames.select(*JUDGE_COLUMNS)
    count = partitions or int(frames.sparkSession.conf.get("spark.sql.shuffle.partitions") or "8")
    ordered = keyed.repartition(count, "run_id", "connection").sortWithinPartitions("run_id", "connection", "seq")

    def judge_partition(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        return _judge_partition(batches, codecs, bindings)

    return ordered.mapInArrow(judge_partition, schemas.VIOLATIONS)  # type: ignore[arg-type]


def run_wires(runs: DataFrame) -> tuple[dict[str, str], dict[str, str]]:
    """(run_id -> codec, run_id -> binding) of the runs table (the default binding where the column is null)."""
    columns = ["run_id", "codec"] + (["binding"] if "binding" in runs.columns else [])
    rows = runs.select(*columns).collect()
    return ({row["run_id"]: row["codec"] for row in rows},
            {row["run_id"]: (row["binding"] if "binding" in columns else None) or DEFAULT_BINDING for row in rows})


def judge_table(table: pa.Table, codecs: dict[str, str] | None = None,
                bindings: dict[str, str] | None = None) -> tuple[pa.Table, int]:
    """(violations, connections judged) of an Arrow frames table already sorted by run, connection, seq.

    The codec comes from a ``codec`` column, else from ``codecs`` by run_id, else msgpack; the
    binding from ``bindings`` by run_id, else rsio.
    """
    walker = ConnectionWalker(codecs, bindings)
    pieces = []
    for batch in table.to_batches(max_chunksize=65536):
        walker.add_batch(batch)
        out = walker.take()
        if out is not None:
            pieces.append(out)
    walker.flush()
    out = walker.take()
    if out is not None:
        pieces.append(out)
    return pa.Table.from_batches(pieces, schema=arrow_schema()), walker.connections


def judge_files(spark: SparkSession, frames_dir: Path, codecs: dict[str, str], tasks: int | None = None,
                bindings: dict[str, str] | None = None) -> DataFrame:
    """Violation rows for a clustered frames table (see the module doc), without a shuffle."""
    if not (frames_dir / CLUSTERED).is_file():
        raise ValueError(f"{frames_dir} is not marked clustered ({CLUSTERED}); use judge_frames")
    files = sorted(str(path) for path in frames_dir.glob("*.parquet"))
    count = max(1, min(len(files), tasks or spark.sparkContext.defaultParallelism * 4))

    def judge_some(paths: Iterable[str]) -> Iterator[tuple[object, ...]]:
        import pyarrow.parquet as pq

        for path in paths:
            table = pq.read_table(path, columns=list(JUDGE_COLUMNS))
            found, _ = judge_table(table, codecs, bindings)
            yield from zip(*(found.column(name).to_pylist() for name in OUTPUT_FIELDS))

    rows = spark.sparkContext.parallelize(files, count).mapPartitions(judge_some)
    return spark.createDataFrame(rows, schemas.VIOLATIONS)
