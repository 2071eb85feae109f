"""The RSocket judge's fast paths held to the frame-by-frame path, and the contract translation.

A ``PayloadRun`` is taken whole (one demand take) when its stream is plainly ACTIVE and its
demand covers ``count``; otherwise it is judged ``to_frames()`` one by one.  A single plain
PAYLOAD(N) takes the inlined (ACTIVE, onNext) path.  Whatever the grouping, the findings (rule,
side, frame index) and the state (every stream's state, outstanding and delivered demand, frames
counted per side) must be those of judging every frame through the whole path.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_rsocket_judge import SETUP

from rsio_tck.binding import get_binding
from rsio_tck.bindings.rsocket import judge as judge_module
from rsio_tck.bindings.rsocket.frames import (
    CONNECTION_ERROR,
    Cancel,
    Error,
    Keepalive,
    MetadataPush,
    Payload,
    RequestN,
    RequestStream,
)
from rsio_tck.bindings.rsocket.interactions import CONTRACT_RULES, contract_rule
from rsio_tck.bindings.rsocket.judge import RSocketJudge
from rsio_tck.bindings.rsocket.model import ConnectionModel, KeepaliveOwed
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


# -- keepalives -----------------------------------------------------------------------------------------------
# A plain party's KEEPALIVE skips ``_frame`` (a keepalive storm's path, and its report's re-judgement), and the
# model's ``tick`` stops reading the queue of owed answers at the first not yet overdue while their times are in
# order.  Both are held to the full path: every frame through ``_frame`` (no party plain), the whole queue read.

KEEPALIVE = st.builds(lambda respond, data, sid, position: Keepalive(stream_id=sid, respond=respond, data=data,
                                                                     last_received_position=position),
                      st.booleans(), st.sampled_from([b"", b"a", b"b"]), st.sampled_from([0, 0, 0, 1]),
                      st.integers(0, 20))
# Frames that leave a party not plain: a METADATA_PUSH owes an answer, an ERROR on stream 0 ends the connection
OTHER = st.sampled_from([MetadataPush(metadata=b"m"), Error(stream_id=0, error_code=CONNECTION_ERROR)])
# (sender, its frames, the time of the batch): the max lifetime is 5 s; a time of 0 is one unknown
KEEPALIVE_BATCH = st.tuples(st.sampled_from([C, S]), st.lists(KEEPALIVE | OTHER, min_size=1, max_size=4)
                            .filter(lambda frames: sum(type(f) is not Keepalive for f in frames) <= 1),
                            st.sampled_from([0.0, 1.0, 2.0, 3.0, 5.5, 7.0, 9.0, 12.0, 13.0, 15.0, 20.0]))
# The SETUP: plain, with resumption (KEEPALIVE positions judged), or of a major version the server owes a refusal
SETUPS = st.sampled_from([{}, {"resume_token": b"tok"}, {"major_version": 2}])


def _judge_keepalives(batches: list[tuple[Side, list[Any], float]], *, setup: dict[str, Any],
                      accepted: bool) -> tuple[Any, ...]:
    """A connection (max lifetime 5 s) whose server has answered a request or not, then ``batches``; the findings
    with their messages, and each party's frames counted, keepalives owed, last position and last keepalive."""
    judge = RSocketJudge("rsocket-1.0")
    found: list[tuple[str, Side | None, int | None, str]] = []

    def report(violation: ProtocolViolation, index: int | None, frame: Any) -> None:
        found.append((violation.rule, violation.side, index, violation.message))

    index = judge.judge(C, [replace(SETUP, max_lifetime=5_000, **setup), RequestStream(stream_id=1, initial_request_n=5)], 0.1, 0, report)
    if accepted:
        index = judge.judge(S, [Payload(stream_id=1, next=True, data=b"e")], 0.1, index, report)
    for side, frames, t in batches:
        index = judge.judge(side, frames, t, index, report)
    for side in Side:
        found += [(v.rule, v.side, None, v.message) for v in judge.close(side)]
    parties = {side: (p.frames_sent, [(o.data, o.t, o.reported) for o in p.keepalive_owed], p.last_position,
                      p.last_alive_t) for side, p in judge.model.parties.items()}
    return found, parties, index


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(batches=st.lists(KEEPALIVE_BATCH, max_size=30), in_order=st.booleans(), setup=SETUPS, accepted=st.booleans())
def test_keepalives_judge_as_the_full_path(monkeypatch: pytest.MonkeyPatch,
                                           batches: list[tuple[Side, list[Any], float]], in_order: bool,
                                           setup: dict[str, Any], accepted: bool) -> None:
    if in_order:  # as a live connection has them; otherwise as any trace or capture may
        times = sorted(t for _, _, t in batches)
        batches = [(side, frames, t) for (side, frames, _), t in zip(batches, times)]
    judged = _judge_keepalives(batches, setup=setup, accepted=accepted)
    with monkeypatch.context() as patched:
        def nothing_plain(self: RSocketJudge) -> None:
            self._plain.update(dict.fromkeys(Side, False))

        def owe_out_of_order(party: Any, data: bytes, t: float) -> None:
            party.owed_in_order = False
            party.keepalive_owed.append(KeepaliveOwed(data, t))

        patched.setattr(RSocketJudge, "_refresh", nothing_plain)
        patched.setattr(ConnectionModel, "_owe", staticmethod(owe_out_of_order))
        assert judged == _judge_keepalives(batches, setup=setup, accepted=accepted)


def test_a_keepalive_storm_skips_the_frame_path_and_is_still_judged(monkeypatch: pytest.MonkeyPatch) -> None:
    """The client's KEEPALIVEs with R, 1,000 a batch, and the server's answers: none goes through ``_frame`` once
    both parties are plain; an answer with the wrong data, an answer owed past the max lifetime, and the client's
    silence past it are found at their frames."""
    batches = [(C, [Keepalive(respond=True, data=b"a")] * 1000, 1.0 + k) for k in range(3)]
    batches += [(S, [Keepalive(data=b"a")] * 2999 + [Keepalive(data=b"x")], 5.5), (C, [Keepalive(respond=True)], 8.0),
                (S, [Keepalive(respond=True, data=b"a")], 14.0)]
    calls: list[Any] = []
    original = RSocketJudge._frame
    monkeypatch.setattr(RSocketJudge, "_frame", lambda self, sender, frame, t: (calls.append(frame),
                                                                                 original(self, sender, frame, t)))
    found, parties, index = _judge_keepalives(batches, setup={}, accepted=True)
    assert len(calls) == 3 and index == 6005  # only the opening (SETUP, request, the server's answer)
    assert [(rule, side, i) for rule, side, i, _ in found] == [
        ("RS-KEEPALIVE-3", S, 6002),  # the last answer echoes "x", not the "a" it answers
        ("RS-KEEPALIVE-2", C, 6004),  # at 14.0 s: nothing from the client since 8.0 s,
        ("RS-KEEPALIVE-3", S, 6004)]  # nor the server's answer to the client's KEEPALIVE of 8.0 s
    assert "6.000 s" in found[2][3] and parties[S][1] == [(b"", 8.0, True)] and parties[C][1] == [(b"a", 14.0, False)]
    assert parties[C][0] == 3003 and parties[S][0] == 3002


# Where the shortcuts must give way: owed answers whose times are out of order, or were unknown when owed (the
# queue is then read whole at every tick), and a KEEPALIVE after the sender's ERROR on stream 0 (not plain).
ASK, ANSWER = Keepalive(respond=True), Keepalive()
GIVING_WAY = {
    "out of order": ([(C, [ASK], 12.0), (C, [ASK], 1.0), (S, [ANSWER], 13.0)],
                     [("RS-KEEPALIVE-3", S, 5)]),  # the second ask, 12 s old at 13.0 s, behind a fresh one
    "time unknown": ([(C, [ASK], 5.5), (S, [ANSWER], 5.5), (C, [ASK], 0.0), (C, [ASK], 5.5), (S, [ASK], 9.0),
                      (S, [ASK], 12.0)], [("RS-KEEPALIVE-3", S, 8)]),  # the ask of 5.5 s, behind one timed at 9.0
    "after an ERROR": ([(C, [Error(stream_id=0, error_code=CONNECTION_ERROR), ASK], 1.0)], [("RS-ERROR-5", C, 4)]),
}


@pytest.mark.parametrize("case", sorted(GIVING_WAY))
def test_keepalives_where_the_shortcuts_give_way_are_judged_frame_by_frame(case: str) -> None:
    batches, wanted = GIVING_WAY[case]
    found, _, _ = _judge_keepalives(batches, setup={}, accepted=True)
    # (Not the client's silence, RS-KEEPALIVE-2: these clients ask late, to set the times.)
    assert [(rule, side, index) for rule, side, index, _ in found if rule != "RS-KEEPALIVE-2"] == wanted, found


def test_answers_owed_past_the_bound_are_counted_and_the_order_of_answers_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past ``MAX_KEEPALIVES_OWED`` (4 here) the asks are only counted, and so are the ones after them until the
    count is paid: the answers keep their order (an ask remembered while older ones are counted would take the
    answer to an older one), and the echo is judged again after.  The record never holds more than the bound."""
    from rsio_tck.bindings.rsocket import model as model_module

    monkeypatch.setattr(model_module, "MAX_KEEPALIVES_OWED", 4)
    judge = RSocketJudge("rsocket-1.0")
    found: list[tuple[str, int | None]] = []

    def report(violation: ProtocolViolation, index: int | None, frame: Any) -> None:
        found.append((violation.rule, index))

    server = judge.model.parties[S]
    index = judge.judge(C, [replace(SETUP, max_lifetime=5_000), RequestStream(stream_id=1, initial_request_n=5)],
                        0.1, 0, report)
    index = judge.judge(S, [Payload(stream_id=1, next=True, data=b"e")], 0.1, index, report)
    index = judge.judge(C, [Keepalive(respond=True, data=b"%d" % n) for n in range(10)], 0.2, index, report)
    assert len(server.keepalive_owed) == 4 and server.owed_uncounted == 6
    index = judge.judge(S, [Keepalive(data=b"%d" % n) for n in range(4)], 0.3, index, report)  # the ones remembered
    index = judge.judge(C, [Keepalive(respond=True, data=b"10")], 0.4, index, report)  # counted: six are still owed
    assert len(server.keepalive_owed) == 0 and server.owed_uncounted == 7
    index = judge.judge(S, [Keepalive(data=b"zz")] * 6 + [Keepalive(data=b"10")], 0.5, index, report)
    assert found == [] and server.owed_uncounted == 0
    index = judge.judge(C, [Keepalive(respond=True, data=b"11")], 0.6, index, report)
    index = judge.judge(S, [Keepalive(data=b"xx")], 0.7, index, report)
    assert found == [("RS-KEEPALIVE-3", index - 1)] and len(server.keepalive_owed) == 0
