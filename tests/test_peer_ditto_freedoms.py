"""What real Ditto does is legal (issue 25, part 6): the Ditto reference peer's freedoms, and the faults they
replaced.

First, on the sans-IO session, that each freedom really shows on the wire when it is on: short search pages,
events held back and sent late after a cancel, a made-up correlation-id on the ``created`` of a subscribe that
named none, an empty result's ``complete`` in a later write; and that Ditto's default order of search results,
``sort(+thingId)`` (thingIds as strings), the empty result of a valid filter, the refusal of one that is not RQL
and the empty range of a ``tck/range`` without ``toHistoricalRevision`` are the peer's behaviour with or without
freedoms.  Then that a peer forcing each freedom on every connection passes every Ditto scenario on the
profiles the freedom concerns, and that each fault added with them (each the old habit of the kit or its
peer, or a habit the new scenarios exist to catch) fails the scenario written for it.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from rsio_tck.embedded import EmbeddedPeer
from rsio_tck.reference_peer.ditto import FAULTS
from rsio_tck.reference_peer.ditto.connection import DittoConnection
from rsio_tck.reference_peer.ditto.faults import build_policy
from rsio_tck.reference_peer.ditto.freedoms import FORCEABLE, LATE_SECONDS, Freedoms
from rsio_tck.scenarios import RunConfig, Verdict, load_directory, run_suite
from rsio_tck.selfcheck import check_fault, freedom_only

STREAM = "tck/range/things/twin/streaming/"
SEARCH = "_/_/things/twin/search/"


def session(*forced: str, enabled: bool = True, seed: int = 0) -> DittoConnection:
    return DittoConnection(policy=build_policy(()), freedoms=Freedoms(enabled, seed, 1, forced))


def feed(s: DittoConnection, *objects: dict[str, Any]) -> None:
    s.receive_data(b"".join(json.dumps(o).encode() + b"\n" for o in objects))


def lines(data: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in data.splitlines()]


def out(s: DittoConnection) -> list[dict[str, Any]]:
    return lines(s.data_to_send())


def drain(s: DittoConnection) -> list[dict[str, Any]]:
    """Pump until the session has nothing more to do at once; everything it wrote (not what it holds back)."""
    got = out(s)
    for _ in range(1000):
        more = s.pump(256)
        got += out(s)
        if not more:
            return got
    raise AssertionError("the session never ran out of work")


def search(s: DittoConnection, filter_: str, options: str | None = None, cid: str | None = "q") -> str:
    value: dict[str, Any] = {"filter": filter_}
    if options is not None:
        value["options"] = options
    feed(s, {"topic": SEARCH + "subscribe", "headers": {"correlation-id": cid} if cid else {}, "path": "/",
             "value": value})
    created = out(s)
    assert [m["topic"] for m in created] == [SEARCH + "created"]
    return str(created[0]["value"]["subscriptionId"])


def subscribe(s: DittoConnection, value: dict[str, Any], cid: str | None = "c") -> dict[str, Any]:
    feed(s, {"topic": STREAM + "subscribeForPersistedEvents", "headers": {"correlation-id": cid} if cid else {},
             "path": "/", "value": value})
    created = out(s)
    assert [m["topic"] for m in created] == [STREAM + "created"]
    return created[0]


def request(s: DittoConnection, sid: str, demand: int, *, search_: bool = True) -> None:
    feed(s, {"topic": (SEARCH if search_ else STREAM) + "request", "path": "/",
             "value": {"subscriptionId": sid, "demand": demand}})


def things(messages: list[dict[str, Any]]) -> list[list[str]]:
    return [[t["thingId"] for t in m["value"]["items"]] for m in messages if m["topic"].endswith("/next")]


STRING_ORDER_12 = sorted(f"tck:thing-{i}" for i in range(12))


# -- on the session -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("enabled", [False, True])
def test_search_results_come_in_dittos_default_order_thing_ids_as_strings(enabled: bool) -> None:
    s = session(enabled=enabled)
    sid = search(s, "eq(attributes/tck,12)", "size(5)")
    request(s, sid, 12)
    pages = things(drain(s))
    assert [t for page in pages for t in page] == STRING_ORDER_12
    assert STRING_ORDER_12[:4] == ["tck:thing-0", "tck:thing-1", "tck:thing-10", "tck:thing-11"]
    s = session(enabled=enabled)
    sid = search(s, "eq(attributes/tck,12)", "sort(-thingId)")
    request(s, sid, 1)
    assert [t for page in things(drain(s)) for t in page] == STRING_ORDER_12[::-1]


def test_short_pages_are_a_freedom_and_the_pages_still_hold_the_collection_in_order() -> None:
    short = 0
    for seed in range(10):
        s = session("short-pages", seed=seed)
        sid = search(s, "eq(attributes/tck,12)", "size(5)")
        request(s, sid, 12)
        got = drain(s)
        pages = things(got)
        assert [t for page in pages for t in page] == STRING_ORDER_12
        assert all(1 <= len(page) <= 5 for page in pages) and got[-1]["topic"] == SEARCH + "complete"
        short += any(len(page) < 5 for page in pages[:-1])
    assert short >= 5  # most connections show a short page that is not the last
    full = session(enabled=False)
    sid = search(full, "eq(attributes/tck,12)", "size(5)")
    request(full, sid, 3)
    assert [len(page) for page in things(drain(full))] == [5, 5, 2]


def test_a_subscribe_without_a_correlation_id_gets_created_with_none_or_a_made_up_one() -> None:
    made_up = session("made-up-correlation-id")
    assert str(subscribe(made_up, {"fromHistoricalRevision": 1, "toHistoricalRevision": 2}, cid=None)["headers"]
               ["correlation-id"]).startswith("peer-")
    assert "correlation-id" not in subscribe(session(enabled=False), {"fromHistoricalRevision": 1}, cid=None)["headers"]
    named = subscribe(made_up, {"fromHistoricalRevision": 1}, cid="mine")  # a named subscribe gets its own back
    assert named["headers"]["correlation-id"] == "mine"


def test_an_empty_results_complete_may_come_in_a_later_write() -> None:
    for filter_ in ("eq(attributes/tck,0)", 'eq(thingId,"tck:no-such-thing")'):
        s = session("empty-later")
        sid = search(s, filter_)
        request(s, sid, 1)
        assert s.pump(256) is True and out(s) == []  # the first round holds the complete back
        s.pump(256)
        assert [m["topic"] for m in out(s)] == [SEARCH + "complete"]
        at_once = session(enabled=False)
        sid = search(at_once, filter_)
        request(at_once, sid, 1)
        assert [m["topic"] for m in drain(at_once)] == [SEARCH + "complete"]


def test_late_events_in_flight_after_a_cancel_are_held_back_and_nothing_overtakes_them() -> None:
    held_after_cancel = held_last = 0
    for seed in range(12):
        s = session("late-after-cancel", seed=seed)
        sid = str(subscribe(s, {"fromHistoricalRevision": 0, "toHistoricalRevision": 99})["value"]["subscriptionId"])
        feed(s, {"topic": STREAM + "request", "path": "/", "value": {"subscriptionId": sid, "demand": 5}},
             {"topic": STREAM + "cancel", "path": "/", "value": {"subscriptionId": sid}})
        assert drain(s) == []  # the cancel came with the request: every event is in flight, all held back
        late = s.late_to_send()
        assert late is not None
        delay, data, subs = late
        assert LATE_SECONDS[0] <= delay <= LATE_SECONDS[1]
        nexts = lines(data)
        assert 1 <= len(nexts) <= 2 and [m["value"]["item"]["revision"] for m in nexts] == list(range(len(nexts)))
        held_after_cancel += 1
        # The last item of a demand, held back now and then: the complete waits for it.
        t = session("late-after-cancel", seed=seed)
        sid = str(subscribe(t, {"fromHistoricalRevision": 1, "toHistoricalRevision": 3})["value"]["subscriptionId"])
        request(t, sid, 3, search_=False)
        first = [m["value"].get("item", {}).get("revision") for m in drain(t)]
        held = t.late_to_send()
        if held is not None:
            held_last += 1
            assert first == [1, 2] and [m["value"]["item"]["revision"] for m in lines(held[1])] == [3]
            t.released(held[2])
            assert [m["topic"] for m in drain(t)] == [STREAM + "complete"]
        else:
            assert first[:3] == [1, 2, 3]
    assert held_after_cancel == 12 and 0 < held_last < 12


def test_queries_valid_empty_invalid_and_ranges_without_an_upper_bound() -> None:
    s = session(enabled=False)
    sid = search(s, 'eq(thingId,"tck:no-such-thing")')
    request(s, sid, 1)
    assert [m["topic"] for m in drain(s)] == [SEARCH + "complete"]
    sid = search(s, "eq(attributes/tck,3")
    assert drain(s) == []  # nothing before the first request
    request(s, sid, 1)
    failed = drain(s)
    assert [m["topic"] for m in failed] == [SEARCH + "failed"] and failed[0]["value"]["error"]["status"] == 400
    sid = str(subscribe(s, {"fromHistoricalRevision": 4})["value"]["subscriptionId"])
    request(s, sid, 5, search_=False)
    assert [m["topic"] for m in drain(s)] == [STREAM + "complete"]  # count 0: no item
    sid = str(subscribe(s, {"fromHistoricalRevision": 0, "toHistoricalRevision": -1})["value"]["subscriptionId"])
    request(s, sid, 5, search_=False)
    refused = drain(s)
    assert [m["topic"] for m in refused] == [STREAM + "failed"] and refused[0]["value"]["error"]["status"] == 400


# -- the whole suite against a peer that uses each freedom ----------------------------------------------------

# Each freedom of issue 25 on the profiles where it shows.
FREEDOM_PROFILES = [("short-pages", "search"), ("late-after-cancel", "streaming"), ("late-after-cancel", "search"),
                    ("made-up-correlation-id", "streaming"), ("made-up-correlation-id", "search"),
                    ("empty-later", "streaming"), ("empty-later", "search")]


@pytest.mark.timeout(600)
@pytest.mark.parametrize(("freedom", "profile"), FREEDOM_PROFILES, ids=[f"{f}-{p}" for f, p in FREEDOM_PROFILES])
def test_a_peer_using_the_freedom_passes_every_ditto_scenario(freedom: str, profile: str) -> None:
    import asyncio

    assert freedom in FORCEABLE
    scenarios = load_directory(binding="ditto")
    with EmbeddedPeer(binding="ditto", profile=profile, extra=("--freedom", freedom)) as url:
        results = asyncio.run(run_suite(scenarios, RunConfig(target=url, codec=profile, binding="ditto"), jobs=8))
    bad = [r.explain() for r in results if r.verdict not in (Verdict.PASS, Verdict.SKIP) and not freedom_only(r, "ditto")]
    assert not bad, "\n\n".join(bad)
    ran = {r.id for r in results if r.verdict is Verdict.PASS}
    # The scenarios that meet the freedom ran (they were not skipped).
    assert {"search": {"DITTO-045", "DITTO-055", "DITTO-063", "DITTO-064", "DITTO-065"},
            "streaming": {"DITTO-016", "DITTO-019", "DITTO-030", "DITTO-066", "STR-006"}}[profile] <= ran


# -- the faults the new scenarios exist to catch ---------------------------------------------------------------

NEW_FAULTS = {  # fault -> a scenario that must catch it (citing the fault's rule)
    "search-numeric-order": "DITTO-065",
    "search-invalid-query-completes": "DITTO-062",
    "search-empty-refused": "DITTO-055",
    "search-cancel-ignored": "DITTO-063",
    "created-needs-correlation-id": "DITTO-064",
    "range-empty-refused": "DITTO-019",
}


@pytest.mark.timeout(600)
@pytest.mark.parametrize("fault", sorted(NEW_FAULTS))
def test_each_new_fault_fails_the_scenario_written_for_it(fault: str) -> None:
    spec = FAULTS[fault]
    scenarios = [s for s in load_directory(binding="ditto") if s.id == NEW_FAULTS[fault]]
    outcome = check_fault(fault, spec.rule, scenarios, binding="ditto", profiles=tuple(getattr(spec, "profiles", ())))
    assert outcome.caught_by == (NEW_FAULTS[fault],), outcome
