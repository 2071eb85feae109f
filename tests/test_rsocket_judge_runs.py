"""The RSocket judge's fast paths held to the frame-by-frame path, and the contract translation.

A ``PayloadRun`` is taken whole (one demand take) when its stream is plainly ACTIVE and its
demand covers ``count``; otherwise it is judged ``to_frames()`` one by one.  A single plain
PAYLOAD(N) takes the inlined (ACTIVE, onNext) path.  Whatever the grouping, the findings (rule,
side, frame index) and the state (every stream's state, outstanding and delivered demand, frames
counted per side) must be those of judging every frame through the whole path.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_rsocket_judge import SETUP

from rsio_tck.binding import get_binding
from rsio_tck.bindings.rsocket import judge as judge_module
from rsio_tck.bindings.rsocket.frames import Cancel, Keepalive, Payload, RequestN, RequestStream
from rsio_tck.bindings.rsocket.interactions import CONTRACT_RULES, contract_rule
from rsio_tck.bindings.rsocket.judge import RSocketJudge
from rsio_tck.bindings.rsocket.runs import PayloadRun
from rsio_tck.catalogue import RULES
from rsio_tck.errors import ProtocolViolation, Side
from rsio_tck.semantics.streams import ACTIONS, TRANSITIONS, StreamState

C, S = Side.CLIENT, Side.SERVER
SIDS = (1, 3, 5)

# One step of a trace: ("run", sid, count) is a run of the server's plain PAYLOADs; the rest are single frames.
Op = tuple[str, int, int]
OPS = st.one_of(
    st.tuples(st.just("run"), st.sampled_from(SIDS), st.integers(min_value=1, max_value=12)),
    st.tuples(st.just("request_n"), st.sampled_from(SIDS), st.integers(min_value=0, max_value=8)),
    st.tuples(st.just("cancel"), st.sampled_from(SIDS), st.just(0)),
    st.tuples(st.just("complete"), st.sampled_from(SIDS), st.just(0)),
    st.tuples(st.just("keepalive"), st.just(0), st.just(0)),
    st.tuples(st.just("fragment"), st.sampled_from(SIDS), st.just(0)),
)


# Test publishers the requests may name (the contract then watches the streams): a range that runs out, an
# infinite one, and one that fails, whose elements the fast paths hand to the contract (``RStream.counted``).
WATCHED = ("tck/range?count=9", "tck/infinite?start=0", "tck/error?after=4")


def _items(ops: list[Op], initial: list[int], *, watched: bool = False) -> list[tuple[Side, Any]]:
    """The trace of ``ops``; ``watched``: the requests name ``WATCHED`` and each stream's runs go on counting
    (0, 1, 2, ...), so they match the publisher until it runs out or fails."""
    items: list[tuple[Side, Any]] = [(C, SETUP)]
    names = WATCHED if watched else ("",) * len(SIDS)
    items += [(C, RequestStream(stream_id=sid, initial_request_n=n, data=name.encode()))
              for sid, n, name in zip(SIDS, initial, names)]
    sent = dict.fromkeys(SIDS, 0)
    for kind, sid, n in ops:
        if kind == "run":
            first = sent[sid] if watched else 0
            sent[sid] = first + n
            items.append((S, PayloadRun(sid, n, tuple(str(i).encode() for i in range(first, first + n)))))
        elif kind == "request_n":
            items.append((C, RequestN(stream_id=sid, request_n=n)))
        elif kind == "cancel":
            items.append((C, Cancel(stream_id=sid)))
        elif kind == "complete":
            items.append((S, Payload(stream_id=sid, complete=True)))
        elif kind == "keepalive":
            items.append((C, Keepalive(respond=True)))
        else:  # a fragmented element, which never takes the fast path
            items.append((S, Payload(stream_id=sid, next=True, follows=True, data=b"a")))
            items.append((S, Payload(stream_id=sid, next=True, data=b"b")))
    return items


def _judge(items: list[tuple[Side, Any]], *, whole_runs: bool, keep: bool = False) -> tuple[Any, ...]:
    calls = [(side, [item] if whole_runs or not isinstance(item, PayloadRun) else item.to_frames())
             for side, item in items]
    return _judge_calls(calls, keep=keep)


def _judge_calls(calls: list[tuple[Side, list[Any]]], *, keep: bool = False) -> tuple[Any, ...]:
    """One ``judge`` call per (side, frames); the findings, every stream's state, the frames counted per side,
    the next index and the indices ``keep`` saw."""
    kept: list[int] = []
    judge = RSocketJudge("rsocket-1.0", keep=(lambda index, side, t, frame: kept.append(index)) if keep else None)
    found: list[tuple[str, Side | None, int | None]] = []

    def report(violation: ProtocolViolation, index: int | None, frame: Any) -> None:
        found.append((violation.rule, violation.side, index))

    index = 0
    for side, frames in calls:
        index = judge.judge(side, frames, 0.0, index, report)
    for side in Side:
        found += [(v.rule, v.side, None) for v in judge.close(side)]
    streams = {sid: (s.out.state, s.out.demand.outstanding, s.out.demand.delivered)
               for sid, s in judge.streams.streams.items()}
    frames_sent = {side: party.frames_sent for side, party in judge.model.parties.items()}
    return found, streams, frames_sent, index, kept


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=st.lists(OPS, max_size=25), initial=st.lists(st.integers(min_value=0, max_value=10), min_size=3,
                                                         max_size=3))
def test_runs_taken_whole_judge_as_frame_by_frame(ops: list[Op], initial: list[int]) -> None:
    items = _items(ops, initial)
    assert _judge(items, whole_runs=True) == _judge(items, whole_runs=False)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=st.lists(OPS, max_size=20), initial=st.lists(st.integers(min_value=0, max_value=10), min_size=3,
                                                         max_size=3))
def test_keeping_frames_changes_no_judgement(ops: list[Op], initial: list[int]) -> None:
    items = _items(ops, initial)
    with_keep = _judge(items, whole_runs=True, keep=True)
    assert with_keep[:4] == _judge(items, whole_runs=False)[:4]
    assert with_keep[4] == list(range(with_keep[3]))  # every frame shown once, in order


def test_a_run_within_demand_is_taken_whole_and_one_beyond_is_judged_frame_by_frame() -> None:
    items = [(C, SETUP), (C, RequestStream(stream_id=1, initial_request_n=5)),
             (S, PayloadRun(1, 5, (b"0",) * 5)), (S, PayloadRun(1, 2, (b"5", b"6")))]
    found, streams, frames_sent, index, _ = _judge(items, whole_runs=True)
    assert [(rule, side) for rule, side, _ in found] == [("RS-FLOW-2", S), ("RS-FLOW-2", S)]
    assert [i for _, _, i in found] == [7, 8]  # each frame of the second run, numbered as on the wire
    assert streams[1][1:] == (0, 5) and frames_sent[S] == 7 and index == 9


# -- a PAYLOAD crossing the requester's CANCEL --------------------------------------------------------------------
# The fast paths take a responder's plain PAYLOAD(N) wherever ``deliver_fast`` does: on an ACTIVE stream, and on
# one whose requester's CANCEL it crossed (CANCELLED).  Whatever path it takes, the judgement must be that of the
# full path, frame by frame: with ``deliver_fast`` declining every frame, nothing takes a shortcut.


def _judge_without_shortcuts(monkeypatch: pytest.MonkeyPatch, items: list[tuple[Side, Any]]) -> tuple[Any, ...]:
    with monkeypatch.context() as patched:
        patched.setattr(judge_module, "deliver_fast", lambda rec, count: False)
        return _judge(items, whole_runs=False)


def _crossing(single: bool) -> list[tuple[Side, Any]]:
    """The server's elements after the client's CANCEL crossed them: within the demand left, then one beyond it,
    then the completion, all in flight; as single frames or as runs."""
    def elements(count: int) -> list[tuple[Side, Any]]:
        if single:
            return [(S, Payload(stream_id=1, next=True, data=b"e"))] * count
        return [(S, PayloadRun(1, count, (b"e",) * count))]

    return [(C, SETUP), (S, Keepalive(respond=False)),  # the server has spoken: its frames may take the fast path
            (C, RequestStream(stream_id=1, initial_request_n=5)), *elements(2), (C, Cancel(stream_id=1)),
            *elements(3), *elements(1), (S, Payload(stream_id=1, complete=True))]


@pytest.mark.parametrize("single", [True, False], ids=["single frames", "runs"])
def test_payloads_crossing_a_cancel_are_judged_as_frame_by_frame(monkeypatch: pytest.MonkeyPatch,
                                                                 single: bool) -> None:
    items = _crossing(single)
    judged = _judge(items, whole_runs=True)
    assert judged == _judge_without_shortcuts(monkeypatch, items)
    found, streams, frames_sent, _, _ = judged
    assert [(rule, side) for rule, side, _ in found] == [("RS-FLOW-2", S)]  # the one element beyond the demand
    assert streams[1] == (StreamState.DONE, 0, 5)  # in flight after the CANCEL, the elements took the demand left


@pytest.mark.parametrize("single", [True, False], ids=["single frame", "run"])
def test_a_server_whose_first_answer_is_an_element_has_accepted_the_connection(monkeypatch: pytest.MonkeyPatch,
                                                                               single: bool) -> None:
    """A server's first frame other than KEEPALIVE accepts the connection, even an element the fast paths could
    take; a setup error after it breaks RS-ERROR-4 on every path (the fast paths skipped that once)."""
    from rsio_tck.bindings.rsocket.frames import INVALID_SETUP, Error

    element: Any = Payload(stream_id=1, next=True, data=b"e") if single else PayloadRun(1, 2, (b"e", b"f"))
    items = [(C, SETUP), (S, Keepalive(respond=False)), (C, RequestStream(stream_id=1, initial_request_n=5)),
             (S, element), (S, Error(stream_id=0, error_code=INVALID_SETUP, data=b"late"))]
    judged = _judge(items, whole_runs=True)
    assert ("RS-ERROR-4", S) in [(rule, side) for rule, side, _ in judged[0]]
    assert judged == _judge_without_shortcuts(monkeypatch, items)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(ops=st.lists(OPS, max_size=25), initial=st.lists(st.integers(min_value=0, max_value=10), min_size=3,
                                                         max_size=3))
def test_the_fast_paths_judge_as_the_full_path(monkeypatch: pytest.MonkeyPatch, ops: list[Op],
                                               initial: list[int]) -> None:
    """Every grouping and every crossing of the fast paths (runs whole, single PAYLOADs inlined) against the
    full path, frame by frame, the server having spoken first so that its PAYLOADs may take them."""
    for watched in (False, True):
        items = _items(ops, initial, watched=watched)
        items.insert(1, (S, Keepalive(respond=False)))
        assert _judge(items, whole_runs=True) == _judge_without_shortcuts(monkeypatch, items)


def test_elements_of_a_watched_stream_take_the_fast_path_and_are_still_judged(monkeypatch: pytest.MonkeyPatch) -> None:
    """A run of tck/range's elements goes whole; one beyond its count, or a wrong value, is found at its own
    frame, on every path."""
    items = [(C, SETUP), (S, Keepalive(respond=False)),
             (C, RequestStream(stream_id=1, initial_request_n=20, data=b"tck/range?count=5")),
             (S, PayloadRun(1, 4, (b"0", b"1", b"2", b"3"))), (S, PayloadRun(1, 3, (b"4", b"9", b"5")))]
    judged = _judge(items, whole_runs=True)
    assert judged == _judge_without_shortcuts(monkeypatch, items)
    assert [(rule, index) for rule, _, index in judged[0]] == [("RS-TCK-1", 8), ("RS-TCK-1", 9)]


# -- the contract translation --------------------------------------------------------------------

def _table_rules() -> set[str]:
    """Every rule ID the contract's stream table can raise: its entries' and its actions'."""
    rules = {transition.rule for transition in TRANSITIONS.values()}
    source = "".join(__import__("inspect").getsource(action) for action in ACTIONS.values())
    rules |= {word.strip("\"'") for word in source.replace("(", " ").replace(",", " ").split()
              if word.strip("\"'") in RULES}
    return rules


def test_every_contract_rule_translates_to_an_rsocket_rule() -> None:
    binding = get_binding("rsocket")
    raised = _table_rules()
    assert {"STR-3", "DEM-1", "ID-1", "ID-3", "DEM-6"} <= raised
    for rule in raised:
        translated = binding.contract_rule(rule)
        assert translated.startswith("RS-") and translated in RULES, rule
    assert set(CONTRACT_RULES.values()) <= set(binding.rules())


def test_translation_depends_on_the_interaction_and_the_direction() -> None:
    from rsio_tck.bindings.rsocket.interactions import Kind

    assert contract_rule("STR-3") == "RS-STREAM-3"
    assert contract_rule("STR-3", Kind.RESPONSE) == "RS-RR-1"
    assert contract_rule("STR-3", Kind.FNF) == "RS-FNF-1"
    assert contract_rule("STR-3", Kind.CHANNEL, inbound=True) == "RS-CHANNEL-2"
    assert contract_rule("DEM-1", Kind.CHANNEL, inbound=True) == "RS-CHANNEL-1"
    assert contract_rule("DEM-1", Kind.CHANNEL) == "RS-FLOW-2"
    assert contract_rule("TCK-1") == "RS-TCK-1" and contract_rule("TCK-5") == "RS-TCK-3"
    assert contract_rule("TCK-9") == "TCK-9"  # no RSocket form: scenarios citing it do not apply


# -- plain PAYLOADs of several streams interleaved, judged in one batch -----------------------------------------
# A responder serving several streams at once interleaves their elements, so the decoder forms no run; a stretch
# of them in one batch is taken stream by stream (``RSocketJudge._take_segment``) when every stream takes all
# of its elements whole.  Whatever the interleaving, the judgement must be the full path's, frame by frame.


def _interleaved(items: list[tuple[Side, Any]], draw: st.DrawFn) -> list[list[tuple[Side, Any]]]:
    """``items`` as batches, one per stretch of one side's consecutive items: runs expanded to their frames, and
    the server's shuffled across streams (each stream's own order kept)."""
    batches: list[list[tuple[Side, Any]]] = []
    for side, item in items:
        frames = item.to_frames() if isinstance(item, PayloadRun) else [item]
        if batches and batches[-1][0][0] is side:
            batches[-1] += [(side, frame) for frame in frames]
        else:
            batches.append([(side, frame) for frame in frames])
    mixed = []
    for batch in batches:
        if batch[0][0] is C:  # the requester's frames as they were (its stream ids in order, SETUP first)
            mixed.append(batch)
            continue
        queues: dict[Any, list[tuple[Side, Any]]] = {}
        for side, frame in batch:  # a stream's frames stay in order; frames of other kinds keep their stream's
            queues.setdefault(getattr(frame, "stream_id", None), []).append((side, frame))
        out = []
        while queues:
            key = draw(st.sampled_from(sorted(queues, key=str)))
            out.append(queues[key].pop(0))
            if not queues[key]:
                del queues[key]
        mixed.append(out)
    return mixed


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(ops=st.lists(OPS, max_size=25), initial=st.lists(st.integers(min_value=0, max_value=10), min_size=3,
                                                         max_size=3), data=st.data())
def test_interleaved_streams_judged_in_one_batch_judge_as_the_full_path(monkeypatch: pytest.MonkeyPatch,
                                                                        ops: list[Op], initial: list[int],
                                                                        data: st.DataObject) -> None:
    monkeypatch.setattr(judge_module, "SEGMENT_MIN", 2)  # every stretch of two plain PAYLOADs is a segment
    for watched in (False, True):
        items = _items(ops, initial, watched=watched)
        items.insert(1, (S, Keepalive(respond=False)))
        batches = _interleaved(items, data.draw)
        with monkeypatch.context() as patched:  # the full path, frame by frame, as _judge_without_shortcuts
            patched.setattr(judge_module, "deliver_fast", lambda rec, count: False)
            full = _judge_calls([(side, [frame]) for batch in batches for side, frame in batch])
        assert _judge_calls([(batch[0][0], [frame for _, frame in batch]) for batch in batches]) == full


def test_four_interleaved_streams_within_their_demand_are_taken_stream_by_stream(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Three tck/infinite streams interleaved, as the offline corpus has them: the server's first frame goes the
    whole way alone (it accepts the connection), the rest of the stretch in bulk (the frame-by-frame path is never
    asked).  A stretch where one stream, not the first, lacks the demand or sends what its publisher does not is
    judged frame by frame, and each finding is at its frame."""
    requests = [RequestStream(stream_id=sid, initial_request_n=10, data=b"tck/infinite?start=0") for sid in SIDS]
    frames = [Payload(stream_id=sid, next=True, data=str(i).encode()) for i in range(10) for sid in SIDS]
    judge = RSocketJudge("rsocket-1.0")
    found: list[tuple[str, int | None]] = []

    def report(violation: ProtocolViolation, index: int | None, frame: Any) -> None:
        found.append((violation.rule, index))

    index = judge.judge(C, [SETUP, *requests], 0.0, 0, report)
    singles: list[int] = []
    original = judge_module.RSocketJudge._judge

    def counting(self: Any, sender: Side, batch: Any, *args: Any) -> int:
        singles.append(len(list(batch)))
        return original(self, sender, batch, *args)

    monkeypatch.setattr(judge_module.RSocketJudge, "_judge", counting)
    index = judge.judge(S, frames, 0.0, index, report)
    assert singles == [1] and found == [] and index == 4 + len(frames)
    assert all(judge.streams.streams[sid].out.demand.delivered == 10 for sid in SIDS)
    # Six more of each: the first two streams have the demand, the last none, so the stretch is judged frame by
    # frame (nothing of it taken, though the first streams could be) and each of the last's elements breaks RS-FLOW-2.
    index = judge.judge(C, [RequestN(stream_id=sid, request_n=6) for sid in SIDS[:2]], 0.0, index, report)
    singles.clear()
    more = [Payload(stream_id=sid, next=True, data=str(i).encode()) for i in range(10, 16) for sid in SIDS]
    first = index
    index = judge.judge(S, more, 0.0, index, report)
    assert singles == [18]
    assert found == [("RS-FLOW-2", first + 2 + 3 * k) for k in range(6)]
    assert [judge.streams.streams[sid].out.demand.delivered for sid in SIDS] == [16, 16, 10]
    # Demand for all, but the second stream's elements are not its publisher's: nothing is taken in bulk, and the
    # contract finds the first of them.
    index = judge.judge(C, [RequestN(stream_id=sid, request_n=20) for sid in SIDS], 0.0, index, report)
    singles.clear()
    found.clear()
    wrong = [Payload(stream_id=sid, next=True, data=b"99" if sid == SIDS[1] else str(i).encode())
             for i in range(16, 24) for sid in SIDS[:2]]  # 16 frames: a stretch (SEGMENT_MIN)
    first = index
    index = judge.judge(S, wrong, 0.0, index, report)
    assert singles == [16] and found[:1] == [("RS-TCK-2", first + 1)]
