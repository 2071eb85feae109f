"""A partition's frame rows walked connection by connection, in Arrow's buffers, for the offline judge.

Theory of operation: the rows of one connection (run_id, connection) are contiguous and in ``seq`` order; a
connection may straddle batches, and its partial chunk is carried over.  The monitor is fed a connection's chunks
(``framing.judge_chunks``): consecutive rows of one direction at once, each eof or reset row alone, each chunk at
the time of its first row with bytes.  Where chunks begin is computed by ``pyarrow.compute`` over whole columns,
and a chunk's bytes are one span of the data column's buffer, so the walk makes no Python object per row: on
interleaved RSocket streams those objects (``to_pylist`` of every column, a join of every row's bytes) cost more
than half of what the judging itself costs.  The rows' own values are read only for a connection with a finding
(``frame_times``).  ``framing.judge_rows`` is the same walk over Python lists, and the specification this one is
held to (tests/test_pipeline_walker.py).
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from ..binding import DEFAULT_BINDING
from . import schemas
from .framing import ENDS, frame_times, judge_chunks
from .sources import signature

OUTPUT_FIELDS = schemas.VIOLATIONS.fieldNames()
_ENDS = pa.array(sorted(ENDS))


def arrow_schema() -> pa.Schema:
    """The violation rows' Arrow schema (schemas.VIOLATIONS)."""
    kinds = {"connection": pa.int64(), "t": pa.float64()}
    return pa.schema([(name, kinds.get(name, pa.string())) for name in OUTPUT_FIELDS])


def _changed(column: pa.Array) -> pa.Array:
    """Whether each row but the first differs from the row before it."""
    return pc.fill_null(pc.not_equal(column.slice(1), column.slice(0, len(column) - 1)), True)


class ConnectionWalker:
    """Collects each connection's chunks and judges the connection when it ends."""

    def __init__(self, codecs: dict[str, str] | None = None, bindings: dict[str, str] | None = None) -> None:
        self.codecs = codecs or {}  # run_id -> codec, when the rows carry no codec column
        self.bindings = bindings or {}  # run_id -> binding (the default binding when not given)
        self.binding = DEFAULT_BINDING
        self.key: tuple[str, int] | None = None
        self.scenario: str | None = None
        self.codec = "msgpack"
        # [direction, kind of its first row, time of its first row with bytes (None: none yet), [its byte spans]]
        self.chunks: list[list[Any]] = []
        self.rows: list[pa.RecordBatch] = []  # the connection's rows, read only for its frames' times
        self.out: dict[str, list[Any]] = {name: [] for name in OUTPUT_FIELDS}
        self.connections = 0

    def add_batch(self, batch: pa.RecordBatch) -> None:
        count = batch.num_rows
        if not count:
            return
        schema = batch.schema

        def column(name: str) -> Any:
            return batch.column(schema.get_field_index(name))

        runs, conns, directions, kinds, times, data = (
            column(name) for name in ("run_id", "connection", "direction", "type", "t", "data"))
        if data.null_count:
            data = pc.fill_null(data, b"")  # a null row made empty: a chunk's bytes are then one span of the buffer
        ends = pc.fill_null(pc.is_in(kinds, value_set=_ENDS), False)
        begins = pc.or_(pc.or_(_changed(conns), _changed(runs)),
                        pc.or_(_changed(directions), pc.or_(ends.slice(1), ends.slice(0, count - 1))))
        starts = [0, *(i + 1 for i in pc.indices_nonzero(begins).to_pylist())]
        first_rows = pa.array(starts, pa.int64())
        firsts = (pc.take(c, first_rows).to_pylist() for c in (runs, conns, directions, kinds))
        index = schema.get_field_index("codec")
        codecs = pc.take(batch.column(index), first_rows).to_pylist() if index >= 0 else None
        scenarios = pc.take(column("scenario"), first_rows).to_pylist()
        offsets = memoryview(data.buffers()[1]).cast("q" if pa.types.is_large_binary(data.type) else "i")
        offsets = offsets[data.offset : data.offset + count + 1]
        buffer = data.buffers()[2]
        spans = memoryview(buffer) if buffer is not None else memoryview(b"")
        segment = 0  # where this batch's rows of the current connection begin
        for n, (run, conn, direction, kind) in enumerate(zip(*firsts)):
            start = starts[n]
            stop = starts[n + 1] if n + 1 < len(starts) else count
            if (run, conn) != self.key:
                if self.key is not None:
                    self.rows.append(batch.slice(segment, start - segment))
                    self.flush()
                self.key, self.scenario, segment = (run, conn), scenarios[n], start
                self.codec = codecs[n] if codecs is not None else self.codecs.get(run, "msgpack")
                self.binding = self.bindings.get(run) or DEFAULT_BINDING
            row = start  # the chunk's first row with bytes, if any
            while row < stop and offsets[row + 1] == offsets[row]:
                row += 1
            t = times[row if row < stop else start].as_py() if row < stop or kind in ENDS else None
            piece = spans[offsets[start] : offsets[stop]]
            last = self.chunks[-1] if self.chunks else None
            if (start == 0 and last is not None and last[0] == direction and last[1] not in ENDS
                    and kind not in ENDS):  # the chunk the last batch ended in goes on
                last[3].append(piece)
                if last[2] is None:
                    last[2] = t
            else:
                self.chunks.append([direction, kind, t, [piece]])
        self.rows.append(batch.slice(segment, count - segment))

    def flush(self) -> None:
        """Judge the connection collected so far."""
        if self.key is None:
            return
        chunks = ((direction, kind, t, b"".join(pieces)) for direction, kind, t, pieces in self.chunks
                  if t is not None)
        findings = judge_chunks(chunks, self._frame_times, self.codec or None, self.binding)
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
        self.chunks, self.rows = [], []

    def _frame_times(self) -> list[float]:
        found: list[float] = []
        for rows in self.rows:
            schema = rows.schema
            kinds, times, data = (rows.column(schema.get_field_index(name)) for name in ("type", "t", "data"))
            found += frame_times(times.to_pylist(), pc.binary_length(data).to_pylist(), kinds.to_pylist())
        return found

    def take(self) -> pa.RecordBatch | None:
        if not self.out["rule"]:
            return None
        batch = pa.RecordBatch.from_pydict(self.out, schema=arrow_schema())
        self.out = {name: [] for name in OUTPUT_FIELDS}
        return batch
