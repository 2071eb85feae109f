"""The Ditto judge on recorded message sequences: every protocol rule fed a violation, legal freedoms pass.

``CASES`` are (rule, side that breaks it, messages): the judge must report that rule
against that side.  ``LEGAL`` are sequences a correct pair may produce (any
subscriptionId, events in flight after cancel, a failed answering a request on an
unknown id): nothing may be reported.  ``tests/test_rule_coverage.py`` counts CASES.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rsio_tck.binding import get_binding
from rsio_tck.bindings.ditto import (
    ErrorInfo,
    SearchComplete,
    SearchCreated,
    SearchFailed,
    SearchNext,
    SearchRequest,
    SearchSubscribe,
    StreamingCancel,
    StreamingComplete,
    StreamingCreated,
    StreamingFailed,
    StreamingNext,
    StreamingRequest,
    SubscribeForPersistedEvents,
    Target,
)
from rsio_tck.errors import ProtocolViolation, Side

C, S = Side.CLIENT, Side.SERVER
RANGE = Target(namespace="tck", entity_name="range")
INFINITE = Target(namespace="tck", entity_name="infinite")
ERROR = Target(namespace="tck", entity_name="error")
PROTOCOL_ERROR = ErrorInfo(status=400, error="streaming.subscription.protocol.error", message="rule 3.9")


def h(cid: str = "c1") -> dict[str, Any]:
    return {"correlation-id": cid}


def sub(target: Target = RANGE, cid: str = "c1", first: int = 0, last: int | None = 2) -> tuple[Side, Any]:
    return C, SubscribeForPersistedEvents(target=target, headers=h(cid), from_revision=first, to_revision=last)


def created(sid: str = "s1", cid: str = "c1", target: Target = RANGE) -> tuple[Side, Any]:
    return S, StreamingCreated(target=target, headers=h(cid), subscription_id=sid)


def req(n: int, sid: str = "s1", target: Target = RANGE) -> tuple[Side, Any]:
    return C, StreamingRequest(target=target, subscription_id=sid, demand=n)


def cancel(sid: str = "s1", target: Target = RANGE) -> tuple[Side, Any]:
    return C, StreamingCancel(target=target, subscription_id=sid)


def nxt(value: int, sid: str = "s1", target: Target = RANGE) -> tuple[Side, Any]:
    return S, StreamingNext(target=target, subscription_id=sid, item={"revision": value, "value": value})


def done(sid: str = "s1", target: Target = RANGE) -> tuple[Side, Any]:
    return S, StreamingComplete(target=target, subscription_id=sid)


def failed(error: ErrorInfo = PROTOCOL_ERROR, sid: str = "s1", target: Target = RANGE) -> tuple[Side, Any]:
    return S, StreamingFailed(target=target, subscription_id=sid, error=error)


def search(filter_: str = "eq(attributes/tck,3)", options: str | None = "size(2)") -> list[tuple[Side, Any]]:
    return [(C, SearchSubscribe(headers=h("q"), filter=filter_, options=options)),
            (S, SearchCreated(headers=h("q"), subscription_id="q1"))]


def search_req(n: int) -> tuple[Side, Any]:
    return C, SearchRequest(subscription_id="q1", demand=n)


SEARCH_DONE = (S, SearchComplete(subscription_id="q1"))
NOT_RQL = "eq(attributes/tck,3"


def unnamed(target: Target = RANGE, first: int = 1, last: int | None = 2) -> tuple[Side, Any]:
    """A subscribe without a correlation-id."""
    return C, SubscribeForPersistedEvents(target=target, headers={}, from_revision=first, to_revision=last)


def string_order(total: int) -> list[int]:
    return sorted(range(total), key=lambda i: f"tck:thing-{i}")


def page(*things: int) -> tuple[Side, Any]:
    return S, SearchNext(subscription_id="q1", items=tuple({"thingId": f"tck:thing-{i}"} for i in things))


OPEN = [sub(), created()]

CASES: list[tuple[str, Side, list[tuple[Side, Any]]]] = [
    ("DITTO-SUB-1", S, [sub(), created(), created()]),
    ("DITTO-SUB-1", S, [sub(), created(cid="other")]),
    ("DITTO-SUB-2", S, [sub(), created(), sub(cid="c2"), created(cid="c2")]),
    ("DITTO-SUB-3", S, [sub(), nxt(0)]),
    ("DITTO-SUB-4", S, [*OPEN, done()]),
    ("DITTO-SUB-4", S, [*OPEN, failed(ErrorInfo(status=500, error="x"))]),
    ("DITTO-SUB-5", S, [*OPEN, req(5), nxt(0), nxt(1), nxt(2), done(), nxt(3)]),
    ("DITTO-SUB-6", S, [*OPEN, req(1), nxt(0, target=INFINITE)]),
    ("DITTO-SUB-6", S, [*OPEN, req(1), (S, SearchNext(subscription_id="s1", items=({"thingId": "a"},)))]),
    ("DITTO-SUB-7", C, [*OPEN, req(1, sid="nope")]),
    ("DITTO-SUB-8", C, [*OPEN, cancel(), req(1)]),
    ("DITTO-SUB-8", C, [*OPEN, req(3), nxt(0), nxt(1), nxt(2), done(), cancel(), req(1)]),
    ("DITTO-SUB-9", S, [*OPEN, req(3), nxt(0), nxt(1), nxt(2), done(), req(1), nxt(3)]),
    ("DITTO-DEM-1", S, [*OPEN, req(1), nxt(0), nxt(1)]),
    ("DITTO-DEM-1", S, [*OPEN, nxt(0)]),
    ("DITTO-DEM-2", S, [*OPEN, req(0), done()]),
    ("DITTO-DEM-2", S, [*OPEN, req(-1), failed(ErrorInfo(status=500, error="boom"))]),
    ("DITTO-DEM-3", C, [*OPEN, req(0)]),
    ("DITTO-DEM-4", S, [sub(target=INFINITE, last=None), created(target=INFINITE), req(2**63 - 1, target=INFINITE),
                        req(5, target=INFINITE), failed(target=INFINITE)]),
    ("DITTO-CAN-1", S, [*OPEN, req(1), cancel(), nxt(0), nxt(1)]),
    ("DITTO-ERR-1", S, [*OPEN, req(1), failed(ErrorInfo(status=200, error="x"))]),
    ("DITTO-ERR-1", S, [*OPEN, req(1), failed(ErrorInfo(status=404))]),
    ("DITTO-SEARCH-6", S, [*search(), (C, SearchRequest(subscription_id="q1", demand=1)), page(0, 1, 2)]),
    ("DITTO-SEARCH-6", S, [*search(), (C, SearchRequest(subscription_id="q1", demand=1)), page()]),
    ("DITTO-SEARCH-6", S, [*search(options=None), (C, SearchRequest(subscription_id="q1", demand=1)),
                           page(*range(26))]),
    ("DITTO-TCK-1", S, [*OPEN, req(5), nxt(0), nxt(2)]),
    ("DITTO-TCK-1", S, [*OPEN, req(5), nxt(0), done()]),
    ("DITTO-TCK-2", S, [sub(target=INFINITE, last=None), created(target=INFINITE), req(1, target=INFINITE),
                        done(target=INFINITE)]),
    ("DITTO-TCK-3", S, [sub(target=ERROR, last=1), created(target=ERROR), req(5, target=ERROR),
                        nxt(0, target=ERROR), nxt(1, target=ERROR), done(target=ERROR)]),
    ("DITTO-TCK-4", S, [*search(), (C, SearchRequest(subscription_id="q1", demand=5)), page(0, 2)]),
    # numeric order where Ditto's default sort(+thingId) orders the thingIds as strings (decision DITTO-l)
    ("DITTO-TCK-4", S, [*search("eq(attributes/tck,12)", None), search_req(1), page(*range(12))]),
    ("DITTO-TCK-4", S, [*search("eq(attributes/tck,3)", "size(1),sort(-thingId)"), search_req(3), page(0)]),
    ("DITTO-TCK-4", S, [*search("eq(attributes/tck,3)", "sort(+attributes/tck)"), search_req(3), page(1), page(1)]),
    ("DITTO-TCK-1", S, [sub(last=None), created(), req(5), nxt(0)]),  # without toHistoricalRevision: no item
    ("DITTO-SEARCH-7", S, [*search(NOT_RQL), search_req(1), page(0)]),
    ("DITTO-SEARCH-7", S, [*search(NOT_RQL), search_req(1), SEARCH_DONE]),
    ("DITTO-SEARCH-7", S, [*search('eq(thingId,"x)'), search_req(1), (S, SearchFailed(
        subscription_id="q1", error=ErrorInfo(status=500, error="x")))]),
    ("DITTO-SUB-1", S, [unnamed(), (S, StreamingCreated(target=RANGE, headers={}, subscription_id="s1")),
                        (S, StreamingCreated(target=RANGE, headers=h("made-up"), subscription_id="s2"))]),
    ("DITTO-TCK-4", S, [*search(), (C, SearchRequest(subscription_id="q1", demand=5)), page(0, 1), (S, SearchComplete(
        subscription_id="q1"))]),
    ("DITTO-TCK-5", S, [sub(target=Target(namespace="tck", entity_name="nothing")),
                        created(target=Target(namespace="tck", entity_name="nothing")),
                        req(1, target=Target(namespace="tck", entity_name="nothing")),
                        done(target=Target(namespace="tck", entity_name="nothing"))]),
]

LEGAL: dict[str, list[tuple[Side, Any]]] = {
    "range in full": [*OPEN, req(3), nxt(0), nxt(1), nxt(2), done()],
    "complete with the last demand": [*OPEN, req(2), nxt(0), nxt(1), req(1), nxt(2), done()],
    "in flight after cancel": [*OPEN, req(3), nxt(0), cancel(), nxt(1), nxt(2), done()],
    "demand 0 answered": [*OPEN, req(0), failed()],
    "demand -5 answered with general: prefix": [*OPEN, req(-5), failed(ErrorInfo(
        status=400, error="general:streaming.subscription.protocol.error"))],
    "unknown id answered by failed": [*OPEN, req(1, sid="ghost"), failed(sid="ghost", error=ErrorInfo(
        status=404, error="x"))],
    "two subscriptions": [sub(), sub(cid="c2", target=INFINITE, last=None), created("b", "c2", INFINITE),
                          created("a"), req(1, "a"), req(2, "b", INFINITE), nxt(0, "b", INFINITE), nxt(0, "a"),
                          nxt(1, "b", INFINITE)],
    "id of an ended subscription again": [*OPEN, req(3), nxt(0), nxt(1), nxt(2), done(), sub(cid="c2"),
                                          created(cid="c2")],
    "unbounded demand": [sub(target=INFINITE, last=None), created(target=INFINITE),
                         req(2**63 - 1, target=INFINITE), req(2**63 - 1, target=INFINITE),
                         *[nxt(i, target=INFINITE) for i in range(5)]],
    "search pages": [*search(), (C, SearchRequest(subscription_id="q1", demand=1)), page(0, 1),
                     (C, SearchRequest(subscription_id="q1", demand=1)), page(2), (S, SearchComplete(
                         subscription_id="q1"))],
    "error publisher": [sub(target=ERROR, first=1, last=1), created(target=ERROR), req(3, target=ERROR),
                        nxt(1, target=ERROR), failed(ErrorInfo(status=500, error="tck:publisher.failed"),
                                                     target=ERROR)],
    # decision DITTO-l: Ditto's default order, short pages, explicit sorts, empty and invalid queries
    "search in Ditto's default order": [*search("eq(attributes/tck,12)", None), search_req(1),
                                        page(*string_order(12)), SEARCH_DONE],
    "short pages": [*search("eq(attributes/tck,3)", "size(2)"), search_req(5), page(0), page(1), page(2), SEARCH_DONE],
    "sort(+thingId) as asked": [*search("eq(attributes/tck,11)", "size(3),sort(+thingId)"), search_req(4),
                                page(0, 1, 10), page(2, 3, 4), page(5, 6, 7), page(8, 9), SEARCH_DONE],
    "sort(-thingId) as asked": [*search("eq(attributes/tck,11)", "sort(-thingId)"), search_req(1),
                                page(*reversed(string_order(11))), SEARCH_DONE],
    "another sort: any order": [*search("eq(attributes/tck,3)", "sort(+_modified)"), search_req(1), page(2, 0, 1),
                                SEARCH_DONE],
    "a valid filter matching nothing": [*search('eq(thingId,"tck:no-such-thing")', None), search_req(1), SEARCH_DONE],
    "a filter that is not RQL refused": [*search(NOT_RQL), search_req(1), (S, SearchFailed(
        subscription_id="q1", error=ErrorInfo(status=400, error="rql.expression.invalid")))],
    # decision DITTO-m: a subscribe without a correlation-id gets created with none, or one made up
    "created without correlation-id": [unnamed(), (S, StreamingCreated(target=RANGE, headers={}, subscription_id="s1")),
                                       req(2), nxt(1), nxt(2), done()],
    "created with a made-up correlation-id": [unnamed(), sub(cid="c2", first=5, last=5),
                                              (S, StreamingCreated(target=RANGE, headers=h("c2"), subscription_id="b")),
                                              (S, StreamingCreated(target=RANGE, headers=h("gen-1"), subscription_id="a")),
                                              req(2, "a"), nxt(1, "a"), nxt(2, "a"), done("a")],
    # decision DITTO-k: without toHistoricalRevision the range is empty; relative revisions are not judged
    "range without toHistoricalRevision": [sub(first=3, last=None), created(), req(5), done()],
    "relative revisions": [sub(first=-3, last=0), created(), req(5), nxt(17), nxt(18), done()],
}


def judged(messages: list[tuple[Side, Any]]) -> list[ProtocolViolation]:
    judge = get_binding("ditto").judge("streaming")
    found: list[ProtocolViolation] = []
    for index, (side, message) in enumerate(messages):
        judge.judge(side, [message], 0.0, index, lambda v, i, f: found.append(v))
    return found


@pytest.mark.parametrize(("rule", "side", "messages"), CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_each_violation_is_reported_with_its_rule_and_side(rule: str, side: Side, messages: list[Any]) -> None:
    found = judged(messages)
    assert any(v.rule == rule and v.side is side for v in found), [f"{v.rule} {v.side}: {v.message}" for v in found]
    assert all("\n" not in v.message for v in found)


@pytest.mark.parametrize("name", sorted(LEGAL))
def test_legal_sequences_pass(name: str) -> None:
    """Nothing against the publisher (some sequences break a subscriber rule on purpose)."""
    assert [f"{v.rule}: {v.message}" for v in judged(LEGAL[name]) if v.side is S] == []


def test_the_publisher_closing_with_a_created_owed_breaks_sub_1() -> None:
    judge = get_binding("ditto").judge("streaming")
    judge.judge(C, [sub()[1]], 0.0, 0, lambda v, i, f: None)
    assert [v.rule for v in judge.close(S)] == ["DITTO-SUB-1"]
    assert judge.close(C) == []


def test_contract_rules_translate_to_ditto_rules_only() -> None:
    binding = get_binding("ditto")
    from rsio_tck.bindings.ditto.judge import CONTRACT_RULES

    assert all(binding.contract_rule(rule) in binding.rules() for rule in CONTRACT_RULES)
    assert binding.contract_rule("DEM-1") == "DITTO-DEM-1"


# -- robustness: any sequence of messages is judged without an exception, batch or one by one ----------

_SIDS = st.sampled_from(("s1", "s2", "ghost"))
_CIDS = st.sampled_from(("c1", "c2", None))
_TARGETS = st.sampled_from((RANGE, INFINITE, ERROR, Target(namespace="x", entity_name="y")))


def _message() -> st.SearchStrategy[tuple[Side, Any]]:
    error = st.builds(ErrorInfo, status=st.sampled_from((None, 200, 400, 500)),
                      error=st.sampled_from((None, "streaming.subscription.protocol.error", "x")))
    return st.one_of(
        st.builds(lambda t, c, a, b: (C, SubscribeForPersistedEvents(target=t, headers={} if c is None else h(c),
                                                                        from_revision=a, to_revision=b)),
                  _TARGETS, _CIDS, st.integers(0, 3), st.none() | st.integers(-1, 5)),
        st.builds(lambda c, f: (C, SearchSubscribe(headers={} if c is None else h(c), filter=f, options="size(2)")),
                  _CIDS, st.sampled_from(("eq(attributes/tck,3)", "x"))),
        st.builds(lambda s, n, t: (C, StreamingRequest(target=t, subscription_id=s, demand=n)), _SIDS,
                  st.sampled_from((-1, 0, 1, 2, 2**63 - 1)), _TARGETS),
        st.builds(lambda s, t: (C, StreamingCancel(target=t, subscription_id=s)), _SIDS, _TARGETS),
        st.builds(lambda s, c, t: (S, StreamingCreated(target=t, headers={} if c is None else h(c),
                                                       subscription_id=s)), _SIDS, _CIDS, _TARGETS),
        st.builds(lambda s, c: (S, SearchCreated(headers={} if c is None else h(c), subscription_id=s)), _SIDS, _CIDS),
        st.builds(lambda s, v, t: (S, StreamingNext(target=t, subscription_id=s, item={"revision": v})), _SIDS,
                  st.integers(0, 4), _TARGETS),
        st.builds(lambda s, n: (S, SearchNext(subscription_id=s, items=tuple({"thingId": f"tck:thing-{i}"}
                                                                            for i in range(n)))), _SIDS, st.integers(0, 3)),
        st.builds(lambda s, t: (S, StreamingComplete(target=t, subscription_id=s)), _SIDS, _TARGETS),
        st.builds(lambda s, e, t: (S, StreamingFailed(target=t, subscription_id=s, error=e)), _SIDS, error, _TARGETS),
    )


@settings(max_examples=300, deadline=None)
@given(messages=st.lists(_message(), max_size=25))
def test_any_sequence_is_judged_the_same_in_one_batch_or_one_by_one(messages: list[tuple[Side, Any]]) -> None:
    one_by_one = judged(messages)
    judge = get_binding("ditto").judge("streaming")
    batched: list[ProtocolViolation] = []
    index = 0
    for side, group in itertools.groupby(messages, key=lambda m: m[0]):
        index = judge.judge(side, [m for _, m in group], 0.0, index, lambda v, i, f: batched.append(v))
    assert [(v.rule, v.side) for v in batched] == [(v.rule, v.side) for v in one_by_one]
    assert all(v.rule.startswith("DITTO-") and "\n" not in v.message for v in one_by_one)
    judge.close(S)
    judge.close(C)


def test_a_request_crossing_the_complete_is_no_violation_of_either_side() -> None:
    """Decision DITTO-j: the subscriber's request may cross the publisher's complete in flight (ditto-client's
    search stream asks for the next page ahead); the publisher may leave it unanswered or answer one failed."""
    crossing = [*OPEN, req(3), nxt(0), nxt(1), nxt(2), done(), req(1), req(2), cancel()]
    assert [f"{v.rule} {v.side}: {v.message}" for v in judged(crossing)] == []
    answered = [*OPEN, req(3), nxt(0), nxt(1), nxt(2), done(), req(1), failed(ErrorInfo(status=404, error="x"))]
    assert [f"{v.rule} {v.side}: {v.message}" for v in judged(answered)] == []


# On an open subscription s1 (to tck/range): requests, items, cancels, completions, and any other message.
_ON_S1 = st.one_of(
    st.builds(req, st.sampled_from((0, 1, 2, 3))), st.builds(nxt, st.integers(0, 6)), st.builds(nxt, st.integers(0, 6)),
    st.just(cancel()), st.just(done()), st.just(failed()), _message(),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(messages=st.lists(_ON_S1, max_size=25).map(lambda rest: [*OPEN, *rest]))
def test_items_taken_by_the_fast_path_are_judged_as_the_full_path(monkeypatch: pytest.MonkeyPatch,
                                                                  messages: list[tuple[Side, Any]]) -> None:
    """An item the table's fast path (``deliver_fast``) takes is judged as the full path (``step``) judges it:
    the same findings and the same subscriptions' states and demand, with ``deliver_fast`` declining every item."""
    from rsio_tck.bindings.ditto import judge as judge_module

    def run() -> tuple[Any, ...]:
        judge = get_binding("ditto").judge("streaming")
        found: list[tuple[str, Side | None, str]] = []
        for index, (side, message) in enumerate(messages):
            judge.judge(side, [message], 0.0, index, lambda v, i, f: found.append((v.rule, v.side, v.message)))
        for side in (S, C):
            found += [(v.rule, v.side, v.message) for v in judge.close(side)]
        subs = {sid: (sub.record.state, sub.record.demand.outstanding, sub.record.demand.delivered)
                for sid, sub in {**judge.model.live, **judge.model.ended}.items()}
        return found, subs

    fast = run()
    with monkeypatch.context() as patched:
        patched.setattr(judge_module, "deliver_fast", lambda rec, count: False)
        assert run() == fast
