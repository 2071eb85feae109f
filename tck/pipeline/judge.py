"""Offline conformance at scale: the monitor applied to every recorded connection, in parallel.

Theory of operation: the frames table is shuffled so that all rows of one
connection (run_id, connection) land in one partition, and sorted there by
(run_id, connection, seq).  ``mapInArrow`` then walks each partition's Arrow
batches once: rows of one connection are contiguous, so the function collects
a connection's columns until the key changes (a connection may straddle
batches; the partial one is carried over), replays it through
``tck.monitor.Monitor`` (``framing.judge_rows``) and emits one violation row per
finding.  This avoids building a pandas frame per group, which is what
``groupBy().applyInPandas`` would do for each of millions of small groups.

``judge_table`` is the same walk over an in-process Arrow table: the
single-process baseline of the benchmark, and a check of the Spark job.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from . import schemas
from .framing import judge_rows
from .sources import signature

JUDGE_COLUMNS = ("run_id", "scenario", "connection", "seq", "direction", "type", "t", "data", "codec")
OUTPUT_FIELDS = schemas.VIOLATIONS.fieldNames()


def _arrow_schema() -> pa.Schema:
    kinds = {"connection": pa.int64(), "t": pa.float64()}
    return pa.schema([(name, kinds.get(name, pa.string())) for name in OUTPUT_FIELDS])


class ConnectionWalker:
    """Collects contiguous rows per connection and judges each connection when it ends."""

    def __init__(self) -> None:
        self.key: tuple[str, int] | None = None
        self.scenario: str | None = None
        self.codec = "msgpack"
        self.columns: tuple[list[Any], list[Any], list[Any], list[Any]] = ([], [], [], [])
        self.out: dict[str, list[Any]] = {name: [] for name in OUTPUT_FIELDS}
        self.connections = 0

    def add_batch(self, batch: pa.RecordBatch) -> None:
        runs, scenarios, conns, directions, kinds, times, data, codecs = (
            batch.column(batch.schema.get_field_index(name)).to_pylist()
            for name in ("run_id", "scenario", "connection", "direction", "type", "t", "data", "codec")
        )
        start, count = 0, len(runs)
        for i in range(count):
            key = (runs[i], conns[i])
            if key != self.key:
                if self.key is not None:
                    self._extend(directions, kinds, times, data, start, i)
                    self.flush()
                self.key, self.scenario, self.codec, start = key, scenarios[i], codecs[i], i
        if self.key is not None:
            self._extend(directions, kinds, times, data, start, count)

    def _extend(self, directions: list[Any], kinds: list[Any], times: list[Any], data: list[Any],
                start: int, stop: int) -> None:
        d, k, t, b = self.columns
        d.extend(directions[start:stop])
        k.extend(kinds[start:stop])
        t.extend(times[start:stop])
        b.extend(data[start:stop])

    def flush(self) -> None:
        """Judge the connection collected so far."""
        if self.key is None:
            return
        directions, kinds, times, data = self.columns
        findings = judge_rows(directions, data, times, kinds, self.codec or "msgpack")
        self.connections += 1
        run_id, connection = self.key
        out = self.out
        for finding in findings:
            message = finding.message
            row = {
                "run_id": run_id, "scenario": self.scenario, "connection": connection, "source": "offline",
                "rule": finding.rule, "level": finding.level.value,
                "side": str(finding.side) if finding.side is not None else None, "message": message,
                "signature": signature(finding.rule, message), "t": finding.t,
            }
            for name in OUTPUT_FIELDS:
                out[name].append(row[name])
        self.key = None
        self.columns = ([], [], [], [])

    def take(self) -> pa.RecordBatch | None:
        if not self.out["rule"]:
            return None
        batch = pa.RecordBatch.from_pydict(self.out, schema=_arrow_schema())
        self.out = {name: [] for name in OUTPUT_FIELDS}
        return batch


def _judge_partition(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    walker = ConnectionWalker()
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
    """Violation rows (source ``offline``) for every connection of ``frames``."""
    keyed = frames.join(F.broadcast(runs.select("run_id", "codec")), "run_id", "left").select(*JUDGE_COLUMNS)
    keyed = keyed.fillna({"codec": "msgpack"})
    count = partitions or int(frames.sparkSession.conf.get("spark.sql.shuffle.partitions") or "8")
    ordered = keyed.repartition(count, "run_id", "connection").sortWithinPartitions("run_id", "connection", "seq")
    return ordered.mapInArrow(_judge_partition, schemas.VIOLATIONS)  # type: ignore[arg-type]


def judge_table(table: pa.Table, codec: str = "msgpack") -> tuple[pa.Table, int]:
    """(violations, connections judged) of an Arrow frames table already sorted by run, connection, seq."""
    if "codec" not in table.column_names:
        table = table.append_column("codec", pa.array([codec] * table.num_rows, pa.string()))
    walker = ConnectionWalker()
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
    return pa.Table.from_batches(pieces, schema=_arrow_schema()), walker.connections
