"""The RSocket judge's fast paths on watched streams (test publishers) held to the frame-by-frame path.

A watched request-stream's plain PAYLOAD(N) frames, alone or as a ``PayloadRun``, are taken at once when the
contract judge finds their data is exactly the publisher's next elements (``ContractJudge.due``) and the demand
covers them; once the requester's CANCEL has ended the watch, they take the plain fast paths.  Whatever path a
frame takes, the findings (rule, side, frame index), every stream's state and demand, the watches' progress and
the frames counted per side must be those of the full path, frame by frame, where ``deliver_fast`` declines
every frame.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_rsocket_judge import SETUP

from rsio_tck.bindings.rsocket import judge as judge_module
from rsio_tck.bindings.rsocket.frames import (
    APPLICATION_ERROR,
    Cancel,
    Error,
    Keepalive,
    Payload,
    RequestN,
    RequestStream,
)
from rsio_tck.bindings.rsocket.judge import RSocketJudge
from rsio_tck.bindings.rsocket.runs import PayloadRun
from rsio_tck.errors import ProtocolViolation, Side

C, S = Side.CLIENT, Side.SERVER
SIDS = (1, 3, 5)
# What each stream asks for: decimal publishers (the fast path's), one it does not take (tck/large), and a name
# that is not watched.
NAMES = (b"tck/range?count=30", b"tck/range?start=-4&count=12", b"tck/infinite?start=7", b"tck/error?after=9",
         b"tck/large?size=3&count=4", b"tck/infinite", b"not-a-publisher")

# ("run", sid, n, shift): n elements as a run; shift 0 is the publisher's next elements, else off by shift (wrong);
# ("one", sid, 1, shift): one PAYLOAD(N); the rest are single frames.
Op = tuple[str, int, int, int]
OPS = st.one_of(
    st.tuples(st.just("run"), st.sampled_from(SIDS), st.integers(min_value=1, max_value=14),
              st.sampled_from((0, 0, 0, 1, -1))),
    st.tuples(st.just("one"), st.sampled_from(SIDS), st.just(1), st.sampled_from((0, 0, 1))),
    st.tuples(st.just("request_n"), st.sampled_from(SIDS), st.integers(min_value=0, max_value=9), st.just(0)),
    st.tuples(st.just("cancel"), st.sampled_from(SIDS), st.just(0), st.just(0)),
    st.tuples(st.just("complete"), st.sampled_from(SIDS), st.just(0), st.just(0)),
    st.tuples(st.just("error"), st.sampled_from(SIDS), st.just(0), st.just(0)),
    st.tuples(st.just("keepalive"), st.just(0), st.just(0), st.just(0)),
    st.tuples(st.just("fragment"), st.sampled_from(SIDS), st.just(0), st.just(0)),
)


def _start(name: bytes) -> int:
    for part in name.partition(b"?")[2].split(b"&"):
        if part.startswith(b"start="):
            return int(part[6:])
    return 0


def _items(ops: list[Op], names: list[bytes], initial: list[int]) -> list[tuple[Side, Any]]:
    items: list[tuple[Side, Any]] = [(C, SETUP), (S, Keepalive(respond=False))]  # the server has spoken
    items += [(C, RequestStream(stream_id=sid, initial_request_n=n, data=name))
              for sid, n, name in zip(SIDS, initial, names)]
    sent = dict.fromkeys(SIDS, 0)  # elements the server sent per stream: the next one's index
    for kind, sid, n, shift in ops:
        first = (_start(names[SIDS.index(sid)]) + sent[sid] + shift) if sid in sent else 0
        datas = tuple(str(first + i).encode() for i in range(n))
        if kind == "run":
            items.append((S, PayloadRun(sid, n, datas)))
            sent[sid] += n
        elif kind == "one":
            items.append((S, Payload(stream_id=sid, next=True, data=datas[0])))
            sent[sid] += 1
        elif kind == "request_n":
            items.append((C, RequestN(stream_id=sid, request_n=n)))
        elif kind == "cancel":
            items.append((C, Cancel(stream_id=sid)))
        elif kind == "complete":
            items.append((S, Payload(stream_id=sid, complete=True)))
        elif kind == "error":
            items.append((S, Error(stream_id=sid, error_code=APPLICATION_ERROR, data=b"failed")))
        elif kind == "keepalive":
            items.append((C, Keepalive(respond=True)))
        else:  # a fragmented element, which never takes a fast path
            items.append((S, Payload(stream_id=sid, next=True, follows=True, data=b"1")))
            items.append((S, Payload(stream_id=sid, next=True, data=b"2")))
            sent[sid] += 1
    return items


def _judge(items: list[tuple[Side, Any]], *, whole_runs: bool) -> tuple[Any, ...]:
    judge = RSocketJudge("rsocket-1.0")
    found: list[tuple[str, Side | None, int | None, str]] = []

    def report(violation: ProtocolViolation, index: int | None, frame: Any) -> None:
        found.append((violation.rule, violation.side, index, str(violation)))

    index = 0
    for side, item in items:
        frames = [item] if whole_runs or not isinstance(item, PayloadRun) else item.to_frames()
        index = judge.judge(side, frames, 0.0, index, report)
    for side in Side:
        found += [(v.rule, v.side, None, str(v)) for v in judge.close(side)]
    streams = {sid: (s.out.state, s.out.demand.outstanding, s.out.demand.delivered, s.watched)
               for sid, s in judge.streams.streams.items()}
    assert judge.contract is not None
    watches = {sid: watch.index for sid, watch in judge.contract.watches.items()}
    frames_sent = {side: party.frames_sent for side, party in judge.model.parties.items()}
    return found, streams, watches, frames_sent, index


def _full_path(monkeypatch: pytest.MonkeyPatch, items: list[tuple[Side, Any]]) -> tuple[Any, ...]:
    with monkeypatch.context() as patched:
        patched.setattr(judge_module, "deliver_fast", lambda rec, count: False)
        return _judge(items, whole_runs=False)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(ops=st.lists(OPS, max_size=30),
       names=st.lists(st.sampled_from(NAMES), min_size=3, max_size=3),
       initial=st.lists(st.integers(min_value=0, max_value=40), min_size=3, max_size=3))
def test_watched_streams_judge_as_the_full_path(monkeypatch: pytest.MonkeyPatch, ops: list[Op], names: list[bytes],
                                                initial: list[int]) -> None:
    items = _items(ops, names, initial)
    assert _judge(items, whole_runs=True) == _full_path(monkeypatch, items)


def test_a_run_of_the_next_elements_is_taken_whole_and_a_wrong_one_is_judged_frame_by_frame(
        monkeypatch: pytest.MonkeyPatch) -> None:
    ops: list[Op] = [("run", 1, 10, 0), ("run", 1, 5, 1), ("run", 1, 20, 0)]
    items = _items(ops, [NAMES[0], NAMES[5], NAMES[6]], [100, 1, 1])
    judged = _judge(items, whole_runs=True)
    found, streams, watches, _, index = judged
    # The shifted run: each of its 5 elements is the wrong one; the last run goes past the publisher's 30.
    assert [rule for rule, *_ in found].count("RS-TCK-1") == 5 + 5
    assert [i for rule, _, i, message in found if "beyond the 30" in message] == list(range(35, 40))
    assert watches[1] == 35 and streams[1][2] == 35 and index == 40
    assert judged == _full_path(monkeypatch, items)


def test_the_fast_path_takes_the_right_elements_without_judging_each(monkeypatch: pytest.MonkeyPatch) -> None:
    """The watched run goes through ``ContractJudge.due`` once, not ``responder_payload`` per frame."""
    calls: list[int] = []
    items = _items([("run", 1, 25, 0), ("one", 1, 1, 0)], [NAMES[2], NAMES[5], NAMES[6]], [2**31 - 1, 1, 1])
    original = judge_module.ContractJudge.responder_payload

    def counted(self: Any, side: Side, sid: int, frame: Payload, complete: bool) -> None:
        calls.append(sid)
        original(self, side, sid, frame, complete)

    monkeypatch.setattr(judge_module.ContractJudge, "responder_payload", counted)
    found, _, watches, _, _ = _judge(items, whole_runs=True)
    assert not found and watches[1] == 26
    assert len(calls) == 1  # the run's first frame, which settles the server as plain; none after it


def test_a_cancel_ends_the_watch_and_the_elements_in_flight_take_the_plain_path(monkeypatch: pytest.MonkeyPatch) -> None:
    items = _items([("run", 1, 10, 0), ("cancel", 1, 0, 0), ("run", 1, 50, 0), ("run", 1, 3, 4)],
                   [NAMES[2], NAMES[5], NAMES[6]], [2**31 - 1, 1, 1])
    judged = _judge(items, whole_runs=True)
    found, streams, watches, _, _ = judged
    assert not found and 1 not in watches and streams[1][3] is False  # no publisher compares what crossed
    assert judged == _full_path(monkeypatch, items)
