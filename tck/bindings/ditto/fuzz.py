"""Ditto fuzz programs: hypothesis strategies over what a Ditto client sends, legal and with one mutation.

Theory of operation.  A *program* (``fuzz_programs(profile)``) is a scenario dict the
binding-neutral fuzz engine (``rsio_tck.fuzz``) runs against a live target: a few
*episodes*, each one subscription whose every expectation holds for a conforming
publisher of the test publishers (bindings.md §3, SPEC.md decision DITTO-i), with
the demand split into random requests, then an *ending*.

Streaming episodes: ``tck/range`` S..S+N-1 consumed by random requests then
``complete``; ``tck/infinite`` with bounded demand then ``cancel`` (events in flight
drained); ``tck/error`` after N items then ``failed``; demand <= 0 answered by
``failed`` 400 (the kit declares its DITTO-DEM-3); an unknown thing answered by
``failed`` after the first request.  Search episodes: the collection
``eq(attributes/tck,N)`` with ``size(s)`` consumed page by page as far as the fewest
pages it can come in, then read to its ``complete`` (a page may be short: SPEC.md
decision DITTO-d).  Revisions are never relative (decision DITTO-k): S >= 1, and an
empty range has no ``toHistoricalRevision``.  All drawn values are plain data, so
hypothesis shrinks them.

Endings: ``quiet`` (the connection just ends) or ``mutation``: one raw line that
breaks exactly one codec rule (``MUTATIONS``), declared as the kit's violation.
How a target answers malformed input is not a rule (Ditto answers an error response
or closes), so the oracle is that it breaks no rule in answering, and that a fresh
connection still serves (``liveness``).
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

from ...semantics.demand import UNBOUNDED, saturating_add

Draw = Any
LIVENESS_RULE = "DITTO-TCK-1"  # the fresh connection's tck/range must still stream

_SUB = "tck/range/things/twin/streaming/subscribeForPersistedEvents"
# One raw line breaking exactly one codec rule, and that rule.
MUTATIONS: dict[str, tuple[str, str]] = {
    "not-json": ('{"topic": "' + _SUB, "DITTO-ENV-1"),
    "not-an-object": ('["topic"]', "DITTO-ENV-2"),
    "no-topic": ('{"headers": {}, "path": "/", "value": {}}', "DITTO-ENV-3"),
    "headers-array": (json.dumps({"topic": _SUB, "headers": [], "path": "/", "value": {}}), "DITTO-ENV-4"),
    "bad-path": (json.dumps({"topic": _SUB, "path": "value", "value": {}}), "DITTO-ENV-5"),
    "no-value": (json.dumps({"topic": _SUB, "path": "/"}), "DITTO-ENV-7"),
    "duplicate-header": (json.dumps({"topic": _SUB, "headers": {"a": "1", "A": "2"}, "path": "/", "value": {}}),
                         "DITTO-HDR-1"),
    "bad-group": (json.dumps({"topic": "tck/range/devices/twin/streaming/subscribeForPersistedEvents",
                              "path": "/", "value": {}}), "DITTO-TOPIC-2"),
    "bad-action": (json.dumps({"topic": "tck/range/things/twin/streaming/subscribe", "path": "/", "value": {}}),
                   "DITTO-TOPIC-5"),
    "schema": (json.dumps({"topic": _SUB, "path": "/", "value": {"fromHistoricalRevision": "1"}}), "DITTO-STREAM-1"),
    "fractional-demand": (json.dumps({"topic": "tck/range/things/twin/streaming/request", "path": "/",
                                      "value": {"subscriptionId": "x", "demand": 1.5}}), "DITTO-STREAM-2"),
}


def _requests(draw: Draw, total: int) -> list[int]:
    """Demands summing to at least ``total``, in 1 to 4 requests (the last may overshoot)."""
    parts: list[int] = []
    left = total
    while left > 0 and len(parts) < 3:
        n = draw(st.integers(min_value=1, max_value=left))
        parts.append(n)
        left -= n
    if left > 0 or not parts:
        parts.append(saturating_add(max(left, 1), draw(st.sampled_from((0, 0, 1, 5, UNBOUNDED)))))
    return parts


def _revisions(sub: int, thing: str, first: int, count: int) -> dict[str, Any]:
    """The subscribe of revisions first .. first+count-1 (no toHistoricalRevision for none: decision DITTO-k)."""
    subscribe: dict[str, Any] = {"subscriber": sub, "thing": thing, "from": first}
    if count > 0:
        subscribe["to"] = first + count - 1
    return {"send": {"subscribeForPersistedEvents": subscribe}}


def _range(draw: Draw, sub: int) -> list[dict[str, Any]]:
    first = draw(st.integers(min_value=1, max_value=1000))
    count = draw(st.integers(min_value=0, max_value=12))
    steps: list[dict[str, Any]] = [
        _revisions(sub, "tck/range", first, count),
        {"expect": {"created": {"subscriber": sub}}, "rule": "DITTO-SUB-1"}]
    due = first
    for demand in _requests(draw, count):
        steps.append({"send": {"request": {"subscriber": sub, "demand": demand}}})
        take = min(demand, first + count - due)
        if take:
            steps.append({"expect_elements": {"subscriber": sub, "elements": [{"int": v} for v in range(due, due + take)]},
                          "rule": "DITTO-TCK-1"})
        due += take
        if due == first + count:
            steps.append({"expect": {"complete": {"subscriber": sub}}, "rule": "DITTO-TCK-1"})
            break
    return steps


def _infinite(draw: Draw, sub: int) -> list[dict[str, Any]]:
    first = draw(st.integers(min_value=0, max_value=10**6))
    demand = draw(st.integers(min_value=1, max_value=20))
    return [
        {"send": {"subscribeForPersistedEvents": {"subscriber": sub, "thing": "tck/infinite", "from": first}}},
        {"expect": {"created": {"subscriber": sub}}, "rule": "DITTO-SUB-1"},
        {"send": {"request": {"subscriber": sub, "demand": demand}}},
        {"expect_elements": {"subscriber": sub, "elements": [{"int": v} for v in range(first, first + demand)],
                             "then": "nothing"}, "rule": "DITTO-DEM-1"},
        {"send": {"cancel": {"subscriber": sub}}},
        {"drain": {"subscriber": sub, "max": 0}, "rule": "DITTO-CAN-1"},
    ]


def _error(draw: Draw, sub: int) -> list[dict[str, Any]]:
    after = draw(st.integers(min_value=0, max_value=5))
    return [
        _revisions(sub, "tck/error", 1, after),
        {"expect": {"created": {"subscriber": sub}}, "rule": "DITTO-SUB-1"},
        {"send": {"request": {"subscriber": sub, "demand": after + draw(st.integers(min_value=1, max_value=3))}}},
        {"expect_elements": {"subscriber": sub, "count": after, "then": "onError"}, "rule": "DITTO-TCK-3"},
    ]


def _bad_demand(draw: Draw, sub: int) -> list[dict[str, Any]]:
    demand = draw(st.sampled_from((0, -1, -UNBOUNDED)))
    return [
        {"send": {"subscribeForPersistedEvents": {"subscriber": sub, "thing": "tck/infinite", "from": 0}}},
        {"expect": {"created": {"subscriber": sub}}, "rule": "DITTO-SUB-1"},
        {"send": {"request": {"subscriber": sub, "demand": demand}}},
        {"expect": {"failed": {"subscriber": sub, "status": 400}}, "rule": "DITTO-DEM-2"},
    ]


def _unknown(draw: Draw, sub: int) -> list[dict[str, Any]]:
    thing = draw(st.sampled_from(("tck/no-such-thing", "elsewhere/thing")))
    return [
        {"send": {"subscribeForPersistedEvents": {"subscriber": sub, "thing": thing, "from": 1, "to": 2}}},
        {"expect": {"created": {"subscriber": sub}}, "rule": "DITTO-SUB-1"},
        {"send": {"request": {"subscriber": sub, "demand": 1}}},
        {"expect": {"failed": {"subscriber": sub}}, "rule": "DITTO-TCK-5"},
    ]


def _search(draw: Draw, sub: int) -> list[dict[str, Any]]:
    total = draw(st.integers(min_value=0, max_value=40))
    size = draw(st.sampled_from((None, 1, 2, 3, 7, 25, 200)))
    fewest = -(-total // (size or 25))  # pages due whatever their sizes: each holds at most size things
    subscribe: dict[str, Any] = {"subscriber": sub, "filter": f"eq(attributes/tck,{total})"}
    if size is not None:
        subscribe["options"] = f"size({size})"
    steps: list[dict[str, Any]] = [{"send": {"searchSubscribe": subscribe}},
                                   {"expect": {"created": {"subscriber": sub}}, "rule": "DITTO-SUB-1"}]
    got = 0
    for demand in _requests(draw, fewest) if fewest > 1 else []:
        if got + demand >= fewest:
            break
        steps += [{"send": {"request": {"subscriber": sub, "demand": demand}}},
                  {"expect_elements": {"subscriber": sub, "count": demand, "then": "nothing"}, "rule": "DITTO-DEM-1"}]
        got += demand
    rest = max(total - got, 1)  # at most this many pages remain (each holds a thing); an empty search takes one
    steps += [{"send": {"request": {"subscriber": sub, "demand": rest}}},
              {"drain": {"subscriber": sub, "max": rest, "until_terminal": True}, "rule": "DITTO-DEM-1"},
              {"expect": {"complete": {"subscriber": sub}}, "rule": "DITTO-TCK-4"}]
    return steps


STREAMING_EPISODES = (_range, _infinite, _error, _bad_demand, _unknown)
SEARCH_EPISODES = (_search,)


@st.composite
def _episode(draw: Draw, profile: str) -> list[dict[str, Any]]:
    kind = draw(st.sampled_from(SEARCH_EPISODES if profile == "search" else STREAMING_EPISODES))
    steps: list[dict[str, Any]] = kind(draw, 0)
    return steps


@st.composite
def programs(draw: Draw, profile: str = "streaming") -> dict[str, Any]:
    scenario: dict[str, Any] = {"level": "MUST", "handshake": "auto", "goodbye": "auto", "binding": "ditto",
                                "profiles": [profile]}
    steps: list[dict[str, Any]] = []
    declared: set[str] = set()
    for sub, block in enumerate(draw(st.lists(_episode(profile), min_size=1, max_size=4)), start=1):
        block = _renumber(block, sub)
        if any("demand" in s.get("send", {}).get("request", {}) and s["send"]["request"]["demand"] <= 0
               for s in block):
            declared.add("DITTO-DEM-3")
        steps += block
    if draw(st.sampled_from(("quiet", "mutation"))) == "mutation":
        text, rule = MUTATIONS[draw(st.sampled_from(sorted(MUTATIONS)))]
        steps += [{"send": {"json": {"text": text}}}, {"liveness": {}, "rule": LIVENESS_RULE}]
        declared.add(rule)
    if declared:
        scenario["kit_violations"] = sorted(declared)
    scenario["steps"] = steps
    return scenario


def fuzz_programs(profile: str = "streaming") -> Any:
    """The engine's hook: the strategy of programs for ``profile``."""
    return programs(profile)


def _renumber(block: list[dict[str, Any]], sub: int) -> list[dict[str, Any]]:
    def fix(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: (sub if k == "subscriber" else fix(v)) for k, v in value.items()}
        if isinstance(value, list):
            return [fix(v) for v in value]
        return value

    return [fix(step) for step in block]
