"""``walker.ConnectionWalker`` (the offline judge's walk in Arrow's buffers) held to ``framing.judge_rows``.

The walker finds where chunks begin with ``pyarrow.compute`` and takes a chunk's bytes as one span of the data
column's buffer; a connection may straddle batches.  On any rows (those of ``test_pipeline_judge_rows``: frames,
empty and missing data, undecodable bytes, eofs and resets of either direction anywhere) of several connections,
cut into batches anywhere, it must report each connection's findings exactly as ``judge_rows`` does on its rows.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st
from test_pipeline_judge_rows import CLIENT_FRAMES, ROW, SERVER_FRAMES

from rsio_tck.pipeline.framing import EOF, RESET, judge_rows
from rsio_tck.pipeline.judge import judge_table

COLUMNS = ("run_id", "scenario", "connection", "direction", "type", "t", "data")
ROWS = st.lists(ROW | st.tuples(st.sampled_from(("c2s", "s2c")), st.just(b""), st.just(RESET)), max_size=30)


def _table(connections: list[list[tuple[str, bytes | None, str]]], step: float, large: bool) -> pa.Table:
    columns: dict[str, list[Any]] = {name: [] for name in COLUMNS}
    for number, rows in enumerate(connections):
        for seq, (direction, data, kind) in enumerate(rows):
            values = ("run", f"s{number}", number, direction, kind, seq * step, data)
            for name, value in zip(COLUMNS, values):
                columns[name].append(value)
    schema = pa.schema([("run_id", pa.string()), ("scenario", pa.string()), ("connection", pa.int64()),
                        ("direction", pa.string()), ("type", pa.string()), ("t", pa.float64()),
                        ("data", pa.large_binary() if large else pa.binary())])
    return pa.table(columns, schema=schema)


def _expected(connections: list[list[tuple[str, bytes | None, str]]], step: float) -> list[tuple[Any, ...]]:
    found = []
    for number, rows in enumerate(connections):
        directions, data, kinds = ([row[i] for row in rows] for i in range(3))
        times = [seq * step for seq in range(len(rows))]
        found += [(number, f.rule, f.side and str(f.side), f.message, f.t)
                  for f in judge_rows(directions, data, times, kinds, "rsocket-1.0", "rsocket")]
    return found


def _walked(table: pa.Table, cuts: list[int]) -> tuple[list[tuple[Any, ...]], int]:
    """judge_table over ``table`` cut into batches at ``cuts`` (row numbers, any order, repeats allowed)."""
    bounds = sorted({0, table.num_rows, *(c % (table.num_rows + 1) for c in cuts)})
    batches = [batch for a, b in zip(bounds, bounds[1:]) for batch in table.slice(a, b - a).to_batches()]
    found, judged = judge_table(pa.Table.from_batches(batches, schema=table.schema),
                                {"run": "rsocket-1.0"}, {"run": "rsocket"})
    return [tuple(row.values()) for row in found.select(["connection", "rule", "side", "message", "t"]).to_pylist()], \
        judged


@settings(max_examples=300, deadline=None)
@given(connections=st.lists(ROWS.filter(bool), min_size=1, max_size=4), cuts=st.lists(st.integers(0, 200)),
       large=st.booleans(), step=st.sampled_from((0.0, 0.25)))
def test_the_walk_in_arrow_buffers_finds_what_judge_rows_finds(connections: list[list[tuple[str, bytes | None, str]]],
                                                                cuts: list[int], large: bool, step: float) -> None:
    found, judged = _walked(_table(connections, step, large), cuts)
    assert judged == len(connections)
    assert found == _expected(connections, step)


def test_a_connection_cut_in_every_row_is_judged_whole_with_its_findings_at_their_frames() -> None:
    """A stream of five elements beyond a demand of three, with the requester's eof and an empty row between
    them, every row a batch of its own: the two elements beyond the demand are found at their rows' times."""
    rows: list[tuple[str, bytes | None, str]] = [("c2s", CLIENT_FRAMES[0], "FRAME"), ("c2s", CLIENT_FRAMES[1], "FRAME")]
    rows += [("s2c", frame, "FRAME") for frame in SERVER_FRAMES[:3]] + [("s2c", None, "FRAME")]
    rows += [("s2c", frame, "FRAME") for frame in SERVER_FRAMES[3:5]] + [("c2s", b"", EOF)]
    table = _table([rows], 0.5, False)
    found, judged = _walked(table, list(range(len(rows))))
    flow = [(rule, t) for _, rule, _, _, t in found if rule == "RS-FLOW-2"]
    assert judged == 1 and flow == [("RS-FLOW-2", 3.0), ("RS-FLOW-2", 3.5)]
    assert found == _expected([rows], 0.5)
