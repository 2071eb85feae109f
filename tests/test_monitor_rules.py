"""For every rule the monitor judges: a conforming trace (no finding) and a violating one."""

from __future__ import annotations

import pytest
from traces import (
    CLOSE,
    C,
    S,
    Step,
    bye,
    cancel,
    done,
    err,
    hello,
    judge,
    last,
    nxt,
    onsub,
    packed,
    part,
    req,
    rules_of,
    sub,
)

from rsio_tck.bindings.rsio.wire.frames import ClientHello, OnSubscribe, ServerHello
from rsio_tck.catalogue import RULES, Level
from rsio_tck.errors import Side

MAX = 2**63 - 1

# (rule, side that breaks it, conforming trace, violating trace)
CASES: list[tuple[str, Side, list[Step], list[Step]]] = [
    ("HS-1", C,
     [(C, ClientHello(version=0)), sub(1, 1), (S, ServerHello(version=0)), onsub(1), nxt(1)],
     [sub(1, 1), (C, ClientHello(version=0))]),
    ("HS-1", S,
     [(S, ServerHello(version=0)), (C, ClientHello(version=0)), sub(1), onsub(1)],
     [(C, ClientHello(version=0)), sub(1), onsub(1)]),
    ("HS-2", S,
     [(S, ServerHello(version=0)), (C, ClientHello(version=0)), sub(1, 1), onsub(1), nxt(1)],
     [(S, ServerHello(version=0)), (S, OnSubscribe(subscriber=1, element_size=0))]),
    ("HS-3", C,
     [*hello(), sub(1)],
     [*hello(), (C, ClientHello(version=0))]),
    ("HS-3", S,
     [*hello(), sub(1), onsub(1)],
     [*hello(), (S, ServerHello(version=0))]),
    ("HS-4", C,
     hello(),
     [(C, ServerHello(version=0))]),
    ("HS-4", S,
     hello(),
     [(C, ClientHello(version=0)), (S, ClientHello(version=0))]),
    ("HS-5", S,
     [(C, ClientHello(version=7)), bye(S, "unsupported version 7"), (S, CLOSE)],
     [(C, ClientHello(version=7)), (S, ServerHello(version=0)), (S, CLOSE)]),
    ("HS-6", S,
     hello(),
     [(C, ClientHello(version=0)), (S, ServerHello(version=1))]),
    ("EXT-2", S,
     [*hello(), sub(1), onsub(1)],
     [*hello(), (S, b"\x41\x00")]),
    ("EXT-3", C,
     [*hello(), (S, b"\x41\x00"), bye(C, "undeclared extension type 0x41"), (C, CLOSE)],
     [*hello(), (S, b"\x41\x00"), (C, CLOSE)]),
    ("STR-1", S,
     [*hello(), sub(1, 1), onsub(1), nxt(1)],
     [*hello(), sub(1, 1), nxt(1)]),
    ("STR-1", S,
     [*hello(), sub(1, 1), cancel(1), onsub(1), sub(1, 1), onsub(1), nxt(1)],
     [*hello(), sub(1, 1), onsub(1), onsub(1)]),
    ("STR-1", S,
     [*hello(), sub(1), cancel(1), onsub(1), done(1)],
     [*hello(), sub(1), cancel(1), done(1)]),
    ("STR-3", S,
     [*hello(), sub(1, 5), onsub(1), nxt(1), done(1), req(1, 3)],
     [*hello(), sub(1, 5), onsub(1), done(1), nxt(1)]),
    ("STR-3", S,
     [*hello(), sub(1, 5), onsub(1), err(1), cancel(1)],
     [*hello(), sub(1, 5), onsub(1), err(1), err(1)]),
    ("STR-4", S,
     [*hello(), sub(3), onsub(3)],
     [*hello(), sub(3), onsub(4)]),
    ("DEM-1", S,
     [*hello(), sub(1, 1), onsub(1), nxt(1), req(1, 2), nxt(1), nxt(1)],
     [*hello(), sub(1, 1), onsub(1), nxt(1), req(1, 1), nxt(1), nxt(1)]),
    ("DEM-1", S,  # after cancel, frames in flight still count against demand
     [*hello(), sub(1, 2), onsub(1), cancel(1), nxt(1), nxt(1)],
     [*hello(), sub(1), req(1, 2), onsub(1), cancel(1), nxt(1), nxt(1), nxt(1)]),
    ("DEM-3", S,
     [*hello(), sub(1, 1), onsub(1), req(1, 0), err(1, "rule 3.9: non-positive request")],
     [*hello(), sub(1, 1), onsub(1), req(1, -5), done(1)]),
    ("DEM-3", S,
     [*hello(), sub(1, 1), onsub(1), req(1, -1), nxt(1), err(1, "§3.9 violated")],
     [*hello(), sub(1, 1), onsub(1), req(1, 0), err(1, "bad request")]),
    ("DEM-4", S,
     [*hello(), sub(1, -1), onsub(1), err(1, "3.9: negative demand")],
     [*hello(), sub(1, -1), onsub(1), done(1)]),
    ("DEM-5", S,
     [*hello(), sub(1, 2), onsub(1), nxt(1), nxt(1), done(1)],
     [*hello(), sub(1, 0), onsub(1), nxt(1)]),
    ("ID-1", C,
     [*hello(), sub(1, 1), onsub(1), nxt(1), done(1), sub(1, 1), onsub(1)],
     [*hello(), sub(1, 1), sub(1, 1)]),
    ("ID-2", S,
     [*hello(), sub(1), sub(1), bye(S, "subscribe for active Id 1"), (S, CLOSE)],
     [*hello(), sub(1), onsub(1), sub(1), (S, CLOSE)]),
    ("ID-3", S,  # the reused Id has fresh demand: old demand does not carry over
     [*hello(), sub(1, 5), onsub(1), nxt(1), cancel(1), nxt(1), sub(1, 1), nxt(1), onsub(1), nxt(1)],
     [*hello(), sub(1, 5), onsub(1), nxt(1), done(1), sub(1, 1), onsub(1), nxt(1), nxt(1)]),
    ("PACK-2", S,
     [*hello(), sub(1, 5), onsub(1, 4), packed(1, 3, 4)],
     [*hello(), sub(1, 5), onsub(1), (S, b"\x0b\x01\x01\x00\x00\x00\x00")]),
    ("PACK-3", S,
     [*hello(), sub(1, 3), onsub(1, 2), packed(1, 2, 2), nxt(1, b"ab"), done(1)],
     [*hello(), sub(1, 3), onsub(1, 2), packed(1, 4, 2)]),
    ("PACK-5", S,
     [*hello(), sub(1, 3), onsub(1, 2), nxt(1, b"ab"), packed(1, 2, 2)],
     [*hello(), sub(1, 3), onsub(1, 2), part(1, 0, b"a"), last(1, 0, b"b")]),
    ("SPLIT-2", S,
     [*hello(), sub(1, 2), sub(2, 2), onsub(1), onsub(2), part(1, 7), part(2, 7), last(1, 7), last(2, 7), nxt(2),
      part(1, 7), err(1)],
     [*hello(), sub(1, 2), onsub(1), part(1, 7), nxt(1)]),
    ("SPLIT-2", S,
     [*hello(), sub(1, 2), onsub(1), part(1, 7), last(1, 7), part(1, 7), last(1, 7)],
     [*hello(), sub(1, 2), onsub(1), part(1, 7), part(1, 8)]),
    ("SPLIT-2", S,
     [*hello(), sub(1, 2), onsub(1), part(1, 7), last(1, 7), done(1)],
     [*hello(), sub(1, 2), onsub(1), part(1, 7), done(1)]),
    ("SPLIT-3", S,
     [*hello(), sub(1, 1), onsub(1), part(1, 1), part(1, 1), last(1, 1), done(1)],
     [*hello(), sub(1, 1), onsub(1), part(1, 1), last(1, 1), part(1, 2)]),
    ("BYE-1", C,
     [*hello(), sub(1, 1), bye(C), onsub(1), bye(S), (S, CLOSE), (C, CLOSE)],
     [*hello(), bye(C), sub(1)]),
    ("BYE-2", S,
     [*hello(), bye(C), bye(S), (S, CLOSE)],
     [*hello(), bye(C), (S, CLOSE)]),
    ("BYE-3", S,
     [*hello(), bye(S), bye(C), (S, CLOSE)],
     [*hello(), bye(S), (S, CLOSE)]),
    ("BYE-4", S,
     [*hello(), bye(C), bye(S), (C, CLOSE), (S, CLOSE)],
     [*hello(), bye(C), bye(S), bye(S)]),
    ("BYE-6", S,
     [*hello(), bye(C), sub(2), bye(S), (S, CLOSE)],
     [*hello(), bye(C), sub(2), onsub(2)]),
    ("ERR-1", S,
     [*hello(), (C, b"\x0e"), bye(S, "reserved type 0x0e"), (S, CLOSE)],
     [*hello(), (C, b"\x0e"), (S, CLOSE)]),
    ("ERR-2", S,
     [*hello(), (C, b"\x0e"), bye(S, "reserved type 0x0e"), (S, CLOSE)],
     [*hello(), (C, b"\x0e"), bye(S, " "), (S, CLOSE)]),
    ("ERR-4", C, [*hello(), sub(1)], [*hello(), (C, b"\x04\x01\x01\x00")]),
    ("ERR-5", C, [*hello(), sub(1, name="tck/ünïcode")], [*hello(), (C, b"\x04\xa2\xc3\x28\x01\x00")]),
    ("ERR-6", C, [*hello(), sub(1), (C, CLOSE)], [*hello(), (C, b"\x04\xa1"), (C, CLOSE)]),
    ("ERR-7", S, [*hello(), sub(1), onsub(1)], [*hello(), (S, b"\x3f")]),
    ("ERR-8", S, [*hello(), sub(1, 1), onsub(1), nxt(1)], [*hello(), (S, b"\x08\x01\xc6\xff\xff\xff\xff")]),
    ("ERR-9", C, [*hello(), sub(MAX)], [*hello(), (C, b"\x06\xcf\x80\x00\x00\x00\x00\x00\x00\x00")]),
]

MONITOR_JUDGED = sorted({case[0] for case in CASES})


def _ids(case: tuple[str, Side, list[Step], list[Step]]) -> str:
    return f"{case[0]}-{case[1]}"


@pytest.mark.parametrize("case", CASES, ids=[_ids(c) for c in CASES])
@pytest.mark.parametrize("codec", ["msgpack"])
def test_conforming_trace_has_no_finding(case: tuple[str, Side, list[Step], list[Step]], codec: str) -> None:
    # Receiver-side rules need the other side to break something first: only the
    # side under test must come out clean.
    _, side, good, _ = case
    assert [f for f in judge(good, codec) if f.side is side] == []


@pytest.mark.parametrize("case", CASES, ids=[_ids(c) for c in CASES])
def test_violating_trace_is_judged_with_its_rule(case: tuple[str, Side, list[Step], list[Step]]) -> None:
    rule, side, _, bad = case
    found = rules_of(judge(bad))
    by_side = [f for f in found if f[1] is side]
    assert by_side, f"no finding against {side} for a trace that breaks {rule}: {found}"
    assert by_side[0] == (rule, side), f"first finding against {side} is {by_side[0]}, expected {rule}; all: {found}"


@pytest.mark.parametrize("case", CASES, ids=[_ids(c) for c in CASES])
def test_judgement_does_not_depend_on_chunking(case: tuple[str, Side, list[Step], list[Step]]) -> None:
    _, _, good, bad = case
    assert rules_of(judge(good, chunk=1)) == rules_of(judge(good))
    assert rules_of(judge(bad, chunk=1)) == rules_of(judge(bad))


def test_saturated_demand_is_unbounded() -> None:
    trace = [*hello(), sub(1), onsub(1), req(1, MAX), req(1, MAX), *[nxt(1)] * 5, req(1, 2**64 - 1), nxt(1)]
    assert judge(trace) == []
    assert judge(trace, "varint") == []


def test_every_case_cites_a_known_rule() -> None:
    for rule, *_ in CASES:
        assert rule in RULES


def test_should_deviation_is_a_warning_not_a_violation() -> None:
    findings = judge([*hello(), sub(1, 1), onsub(1), req(1, 0), err(1, "3.9 says no")])
    assert [(f.rule, f.level) for f in findings] == [("DEM-6", Level.SHOULD)]


def test_monitor_goes_on_after_a_violation() -> None:
    findings = judge([*hello(), sub(1, 0), onsub(1), nxt(1), nxt(1), done(1), nxt(1)])
    assert [f.rule for f in findings] == ["DEM-5", "DEM-5", "STR-3"]
    assert [f.frame_index for f in findings] == [4, 5, 7]


def test_undecodable_direction_stops_but_the_other_is_still_judged() -> None:
    findings = judge([*hello(), sub(1, 1), (C, b"\x0e"), onsub(1), nxt(1), nxt(1), (S, CLOSE)])
    assert rules_of(findings) == [("ERR-7", C), ("DEM-5", S), ("ERR-1", S)]


def test_frames_crossing_a_cancel_in_flight_are_tolerated() -> None:
    trace = [*hello(), sub(1, MAX), onsub(1), nxt(1), cancel(1), *[nxt(1)] * 20, part(1, 3), last(1, 3), done(1),
             req(1, 5), cancel(1)]
    assert judge(trace) == []


def test_reuse_before_the_first_on_subscribe_counts_owed_on_subscribes() -> None:
    trace = [*hello(), sub(1, 1), cancel(1), sub(1, 1), cancel(1), sub(1, 2),
             onsub(1), onsub(1), onsub(1), nxt(1), nxt(1)]
    assert judge(trace) == []
    assert rules_of(judge([*trace, nxt(1)])) == [("ID-3", S)]


def test_every_violation_the_tables_can_raise_has_a_case() -> None:
    from rsio_tck.bindings.rsio.handshake import HANDSHAKE
    from rsio_tck.semantics.streams import TRANSITIONS, Verdict

    raised = {t.rule for t in TRANSITIONS.values() if t.verdict is Verdict.VIOLATION}
    raised |= {step.rule for step in HANDSHAKE.values() if not step.ok}
    assert sorted(raised - set(MONITOR_JUDGED)) == []
