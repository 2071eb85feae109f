"""Ditto in the pipeline (without Spark): frame rows from a recorded connection, and the judge on them.

Rows of a direction concatenate to exactly its bytes, whatever the chunking; their types
are the contract's signal names (derive.py's element tables read them); replaying the rows
through the monitor finds what the monitor finds on the trace.
"""

from __future__ import annotations

import random

from rsio_tck.bindings.ditto import (
    StreamingComplete,
    StreamingCreated,
    StreamingNext,
    StreamingRequest,
    SubscribeForPersistedEvents,
    Target,
    encode_line,
)
from rsio_tck.errors import Side
from rsio_tck.monitor import Monitor, TraceRecord
from rsio_tck.pipeline.framing import frame_rows, judge_rows

C, S = Side.CLIENT, Side.SERVER
RANGE = Target(namespace="tck", entity_name="range")


def connection(extra: bool) -> list[TraceRecord]:
    rng = random.Random(3)
    kit = encode_line(SubscribeForPersistedEvents(target=RANGE, headers={"correlation-id": "c"}, from_revision=0,
                                                  to_revision=2))
    target = encode_line(StreamingCreated(target=RANGE, headers={"correlation-id": "c"}, subscription_id="x-1"))
    request = encode_line(StreamingRequest(target=RANGE, subscription_id="x-1", demand=2))
    items = b"".join(encode_line(StreamingNext(target=RANGE, subscription_id="x-1", item={"revision": i}))
                     for i in range(3 if extra else 2))
    records = [TraceRecord(t=0.0, sender=C, data=kit), TraceRecord(t=0.1, sender=S, data=target),
               TraceRecord(t=0.2, sender=C, data=request)]
    cut = rng.randrange(1, len(items))
    records += [TraceRecord(t=0.3, sender=S, data=items[:cut]), TraceRecord(t=0.4, sender=S, data=items[cut:])]
    if not extra:
        records.append(TraceRecord(t=0.45, sender=C, data=encode_line(
            StreamingRequest(target=RANGE, subscription_id="x-1", demand=1))))
        records.append(TraceRecord(t=0.46, sender=S, data=encode_line(
            StreamingNext(target=RANGE, subscription_id="x-1", item={"revision": 2}))
            + encode_line(StreamingComplete(target=RANGE, subscription_id="x-1"))))
    return records + [TraceRecord(t=0.5, sender=C, data=None), TraceRecord(t=0.5, sender=S, data=None)]


def columns(rows: list) -> tuple:  # type: ignore[type-arg]
    return ([r.direction for r in rows], [r.data for r in rows], [r.t for r in rows], [r.type for r in rows])


def test_rows_concatenate_to_the_bytes_and_name_the_contract_signals() -> None:
    records = connection(extra=False)
    rows = list(frame_rows(records, "streaming", "ditto"))
    for direction, sender in (("c2s", C), ("s2c", S)):
        sent = b"".join(r.data for r in records if r.sender is sender and r.data)
        assert b"".join(row.data for row in rows if row.direction == direction) == sent
    assert [r.type for r in rows if r.direction == "s2c"] == ["onSubscribe", "onNext", "onNext", "onNext",
                                                              "onComplete", "eof"]
    nexts = [r for r in rows if r.type == "onNext"]
    assert all(r.elements == 1 and r.payload > 0 for r in nexts) and len({r.id for r in nexts}) == 1
    assert judge_rows(*columns(rows), codec="streaming", binding="ditto") == []


def test_the_judge_on_rows_finds_what_the_monitor_finds() -> None:
    records = connection(extra=True)
    expected = Monitor("streaming", binding="ditto").replay(records)
    found = judge_rows(*columns(list(frame_rows(records, "streaming", "ditto"))), codec="streaming", binding="ditto")
    assert [(f.rule, f.side) for f in found] == [(f.rule, f.side) for f in expected]
    assert ("DITTO-DEM-1", S) in [(f.rule, f.side) for f in found]
