"""Hypothesis strategies that write fuzz programs as scenarios (the YAML step language).

Theory of operation.  A program is one scenario: a handshake variant, a few
*episodes*, and an ending.  Each episode is a self-contained piece of protocol
whose every expectation holds for a conforming target, so any failed step or
monitor finding is the target's fault:

- the kit as subscriber: ``tck/range``, ``tck/infinite`` (+ cancel), ``tck/fixed``,
  ``tck/large`` (split), ``tck/error``, unknown names, demand of 0 / negative /
  beyond 2^63-1, requests and cancels for unknown Ids, legal Id reuse, also
  while the old subscription still has demand outstanding (bounded or 2^63-1);
- the kit as publisher through ``tck/subscribe``: onNext, packed or split
  elements, requested per strategy, terminal signals right after onSubscribe or
  cutting a split element short, and the reports the target must send back;
  also two subscribe-backs at once whose parts interleave, and -- when the
  target's reassembly limit is known (the embedded peer's) -- one split element
  one byte below, at, or one byte past that limit.

The ending is an orderly goodbye, a transport that ends without one (reset or
half-close; then a fresh connection must still work, ERR-11), or something
illegal (malformed bytes from ``mutate``, a subscribe for an active Id,
a second clientHello, a bad hello version): then the oracle is "goodbye, close,
and a fresh connection still works" (``liveness``).  The state threaded through
episodes is only which Ids are active; Ids are drawn from a small pool with edge
values, so reuse is common.

Because programs are plain data drawn by hypothesis, they shrink (fewer
episodes, smaller values) and the shrunk program *is* the regression scenario.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from ....semantics.demand import saturating_add
from ..wire.frames import ID_MAX
from .ids import free_id
from .mutate import malformed_input

OVER = 2**63
DEMANDS = (1, 0, 2, 3, 5, ID_MAX, OVER)
Draw = Any


@dataclass
class ProgramState:
    codec: str
    reassembly_limit: int | None = None  # the target's, when known: split elements are drawn around it
    active: set[int] = field(default_factory=set)
    names: int = 0  # counter for unique variable names

    def var(self, stem: str) -> str:
        self.names += 1
        return f"{stem}{self.names}"


def _demand_value(value: int) -> Any:
    return "${OVER}" if value == OVER else "${MAX}" if value == ID_MAX else value


def _elements_then(sid: int, count: int, patterns: list[Any] | None, then: str, rule: str) -> dict[str, Any]:
    spec: dict[str, Any] = {"subscriber": sid}
    if patterns is not None and len(patterns) == count:
        spec["elements"] = patterns
    else:
        spec["count"] = count
    if then:
        spec["then"] = then
    return {"expect_elements": spec, "rule": rule}


def _bounded_stream(draw: Draw, state: ProgramState, publisher: str, total: int, patterns: list[Any] | None,
                    rule: str, terminal: str = "onComplete", element_size: int | None = None) -> list[dict[str, Any]]:
    """subscribe to a publisher of ``total`` elements and follow it through a demand plan."""
    sid = free_id(draw, state)
    demands = [draw(st.sampled_from(DEMANDS))] + draw(st.lists(st.sampled_from(DEMANDS[:1] + DEMANDS[2:]), max_size=2))
    steps: list[dict[str, Any]] = [{"send": {"subscribe": {"publisher": publisher, "subscriber": sid,
                                                           "initialDemand": _demand_value(demands[0])}}}]
    on_subscribe: dict[str, Any] = {"subscriber": sid}
    if element_size is not None:
        on_subscribe["elementSize"] = element_size
    steps.append({"expect": {"onSubscribe": on_subscribe}, "rule": "STR-1"})
    delivered, demand = 0, 0
    for index, amount in enumerate(demands):
        if index:
            steps.append({"send": {"request": {"subscriber": sid, "demand": _demand_value(amount)}}})
        demand = saturating_add(demand, amount)
        now = min(total, demand)
        done = now == total
        chunk = None if patterns is None else patterns[delivered:now]
        then = terminal if done else "nothing"
        if now > delivered or done or index == len(demands) - 1:
            steps.append(_elements_then(sid, now - delivered, chunk, then, rule))
        delivered = now
        if done:
            return steps
    if draw(st.booleans()):
        steps += [{"send": {"cancel": {"subscriber": sid}}}, {"expect_silence": {"subscriber": sid}, "rule": "STR-6"}]
    else:
        state.active.add(sid)
    return steps


def ep_range(draw: Draw, state: ProgramState) -> list[dict[str, Any]]:
    start = draw(st.sampled_from((0, 1, -5, 1000, 2**40)))
    count = draw(st.integers(0, 12))
    patterns = [{"msgpack": start + i} for i in range(count)]
    return _bounded_stream(draw, state, f"tck/range?start={start}&count={count}", count, patterns, "TCK-1")


def ep_fixed(draw: Draw, state: ProgramState) -> list[dict[str, Any]]:
    size, count = draw(st.sampled_from((1, 2, 3, 8))), draw(st.integers(0, 9))
    patterns = [{"hex": (i % 256**size).to_bytes(size, "big").hex()} for i in range(count)]
    return _bounded_stream(draw, state, f"tck/fixed?size={size}&count={count}", count, patterns, "TCK-3",
                           element_size=size)


def ep_large(draw: Draw, state: ProgramState) -> list[dict[str, Any]]:
    size, count = draw(st.sampled_from((1, 5, 300, 5000))), draw(st.integers(0, 3))
    part = draw(st.sampled_from((0, 1, 2, 100, 4096)))
    name = f"tck/large?size={size}&count={count}" + (f"&part={part}" if part else "")
    patterns = [{"hex": bytes((i + j) % 256 for j in range(size)).hex()} for i in range(count)]
    return _bounded_stream(draw, state, name, count, patterns, "TCK-4")


def ep_error(draw: Draw, state: ProgramState) -> list[dict[str, Any]]:
    after = draw(st.integers(0, 4))
    message = draw(st.sampled_from(("failed", "boom", "a b")))
    name = f"tck/error?after={after}" + ("" if message == "failed" else f"&message={message.replace(' ', '%20')}")
    steps = _bounded_stream(draw, state, name, after, [{"msgpack": i} for i in range(after)], "TCK-5",
                            terminal="onError")
    last = steps[-1].get("expect_elements")
    if last is not None and last.get("then") == "onError":
        last["error"] = message
    return steps


def ep_infinite_cancel(draw: Draw, state: ProgramState) -> list[dict[str, Any]]:
    """Bounded demand, cancel, then a request that must be ignored: nothing beyond the demand may follow."""
    sid, start = free_id(draw, state), draw(st.sampled_from((0, 7, 2**62)))
    demand = draw(st.sampled_from((1, 2, 3, 5)))
    take = draw(st.integers(0, demand))
    steps: list[dict[str, Any]] = [
        {"send": {"subscribe": {"publisher": f"tck/infinite?start={start}", "subscriber": sid,
                                "initialDemand": demand}}},
        {"expect": {"onSubscribe": {"subscriber": sid}}, "rule": "STR-1"},
    ]
    if take:
        steps.append(_elements_then(sid, take, [{"msgpack": start + i} for i in range(take)], "", "TCK-2"))
    steps.append({"send": {"cancel": {"subscriber": sid}}})
    if draw(st.booleans()):
        steps.append({"send": {"request": {"subscriber": sid, "demand": draw(st.sampled_from((1, 5, ID_MAX)))}}})
    return steps + [{"drain": {"subscriber": sid, "max": demand - take}, "rule": "STR-6"},
                    {"expect_silence": {"subscriber": sid, "window": 0.1}, "rule": "STR-6"}]


def ep_reuse_outstanding(draw: Draw, state: ProgramState) -> list[dict[str, Any]]:
    """Cancel a subscription whose demand is not used up and reuse its Id in the same write (ID-3):
    whatever of the old one is still in flight comes before the new onSubscribe, and the new
    subscription gets exactly its own initialDemand, nothing of the old demand."""
    sid = free_id(draw, state)
    demand = draw(st.sampled_from((4, 50, 1000, ID_MAX)))
    fresh, start = draw(st.sampled_from((0, 1, 2))), draw(st.sampled_from((0, 100, 2**40)))
    old = {"subscribe": {"publisher": "tck/infinite", "subscriber": sid, "initialDemand": _demand_value(demand)}}
    new = {"subscribe": {"publisher": f"tck/infinite?start={start}", "subscriber": sid, "initialDemand": fresh}}
    cancel = {"cancel": {"subscriber": sid}}
    drain: dict[str, Any] = {"subscriber": sid, "until_terminal": True}
    if demand == ID_MAX:
        # All in one write: the unbounded demand is outstanding at the cancel, with no flood in flight.
        steps: list[dict[str, Any]] = [{"send": [old, cancel, new]},
                                       {"expect": {"onSubscribe": {"subscriber": sid}}, "rule": "STR-1"}]
    else:
        taken = draw(st.integers(0, 3))
        steps = [{"send": old}, {"expect": {"onSubscribe": {"subscriber": sid}}, "rule": "STR-1"}]
        if taken:
            steps.append(_elements_then(sid, taken, [{"msgpack": i} for i in range(taken)], "", "TCK-2"))
        steps.append({"send": [cancel, new]})
        drain["max"] = demand - taken
    steps += [
        {"drain": drain, "rule": "STR-6"},
        {"expect": {"onSubscribe": {"subscriber": sid, "elementSize": 0}}, "rule": "ID-3"},
        _elements_then(sid, fresh, [{"msgpack": start + i} for i in range(fresh)], "nothing", "ID-3"),
        {"send": {"request": {"subscriber": sid, "demand": 1}}},
        _elements_then(sid, 1, [{"msgpack": start + fresh}], "nothing", "ID-3"),
    ]
    state.active.add(sid)
    return steps


def ep_bad_demand(draw: Draw, state: ProgramState) -> list[dict[str, Any]]:
    sid = free_id(draw, state)
    negative = (-1, -(2**63)) if state.codec == "msgpack" else ()
    how = draw(st.sampled_from(("request", "initial") if negative else ("request",)))
    value = draw(st.sampled_from((0, *negative))) if how == "request" else draw(st.sampled_from(negative))
    initial = value if how == "initial" else draw(st.sampled_from((0, 1)))
    steps: list[dict[str, Any]] = [
        {"send": {"subscribe": {"publisher": "tck/infinite", "subscriber": sid, "initialDemand": initial}}},
        {"expect": {"onSubscribe": {"subscriber": sid}}, "rule": "STR-1"},
    ]
    rule = "DEM-4" if how == "initial" else "DEM-3"
    if how == "request":
        if initial:
            steps.append(_elements_then(sid, initial, None, "", "DEM-5"))
        steps.append({"send": {"request": {"subscriber": sid, "demand": value}}})
    steps.append({"expect": {"onError": {"subscriber": sid, "error": {"contains": "3.9"}}}, "rule": rule})
    return steps


def ep_unknown(draw: Draw, state: ProgramState) -> list[dict[str, Any]]:
    sid = free_id(draw, state)
    name = draw(st.sampled_from(("tck/nothing", "tck/range?count=x", "other/name", "tck/fixed?size=-1")))
    return [
        {"send": {"subscribe": {"publisher": name, "subscriber": sid, "initialDemand": 1}}},
        {"expect": {"onSubscribe": {"subscriber": sid}}, "rule": "STR-2"},
        {"expect": {"onError": {"subscriber": sid}}, "rule": "TCK-7"},
    ]


def ep_stray(draw: Draw, state: ProgramState) -> list[dict[str, Any]]:
    sid = free_id(draw, state)
    frame = draw(st.sampled_from(({"cancel": {"subscriber": sid}}, {"request": {"subscriber": sid, "demand": 3}})))
    return [{"send": frame}, {"expect_silence": {}, "rule": "STR-7"}]


def ep_publisher(draw: Draw, state: ProgramState) -> list[dict[str, Any]]:
    from .publisher import publisher_episode

    return publisher_episode(draw, state)


def ep_publisher_pair(draw: Draw, state: ProgramState) -> list[dict[str, Any]]:
    from .publisher import publisher_pair_episode

    return publisher_pair_episode(draw, state)


def ep_near_reassembly_limit(draw: Draw, state: ProgramState) -> list[dict[str, Any]]:
    from .publisher import near_limit_episode

    return near_limit_episode(draw, state)


EPISODES = (ep_range, ep_stray, ep_infinite_cancel, ep_bad_demand, ep_unknown, ep_fixed, ep_large, ep_error,
            ep_publisher, ep_publisher_pair, ep_reuse_outstanding)
LIMIT_EPISODES = (ep_near_reassembly_limit,)  # drawn only when the target's reassembly limit is known


@st.composite
def _episode(draw: Draw, state: ProgramState) -> list[dict[str, Any]]:
    # One list element per episode: st.lists' shrinker deletes whole elements, and the
    # state the episodes thread (active Ids, variable names) is rebuilt on each replay.
    episodes = EPISODES + (LIMIT_EPISODES if state.reassembly_limit else ())
    steps: list[dict[str, Any]] = draw(st.sampled_from(episodes))(draw, state)
    return steps


def _illegal_ending(draw: Draw, state: ProgramState) -> tuple[list[dict[str, Any]], list[str]]:
    kinds = ("reuse-active", "malformed", "second-hello") if state.active else ("malformed", "second-hello")
    kind = draw(st.sampled_from(kinds))
    if kind == "reuse-active":
        sid = draw(st.sampled_from(sorted(state.active)))
        sent: list[dict[str, Any]] = [{"send": {"subscribe": {"publisher": "tck/range?count=1", "subscriber": sid,
                                                              "initialDemand": 1}}}]
        violated = ["ID-1", "ID-2"]
    elif kind == "malformed":
        data, incomplete, rule = malformed_input(draw, state.codec)
        sent = [{"send_hex": data.hex()}] + ([{"close": "write"}] if incomplete else [])
        violated = [rule]
    else:
        sent = [{"send": {"clientHello": {"version": 0, "extensions": []}}}]
        violated = ["HS-3"]
    # A missing goodbye is ERR-1; the step reports an empty reason as ERR-2 on its own.
    return sent + [{"expect_goodbye": {"reason": {"nonempty": True}}, "rule": "ERR-1"},
                   {"expect_close": {}, "rule": "ERR-1"}, {"liveness": {}}], violated


@st.composite
def programs(draw: Draw, codec: str = "msgpack", reassembly_limit: int | None = None) -> dict[str, Any]:
    """One fuzz program: a scenario dict (without id/title) ready for the scenario loader.

    ``reassembly_limit``: the target's limit on one split element, when known; only then are
    elements drawn at and just past it (a target's limit is its own, Decision n)."""
    state = ProgramState(codec, reassembly_limit)
    scenario: dict[str, Any] = {"level": "MUST", "handshake": "auto", "goodbye": "auto", "codecs": [codec]}
    steps: list[dict[str, Any]] = []
    opening = draw(st.sampled_from(("auto", "extensions", "bad-version", "late-hello")))
    if opening == "late-hello":
        # The kit holds its clientHello back: until it arrives the target may send serverHello only (HS-2).
        scenario["handshake"] = "manual"
        steps += [{"expect_silence": {"window": 0.1}, "rule": "HS-2"},
                  {"send": {"clientHello": {"version": 0, "extensions": []}}},
                  {"expect": {"serverHello": {"version": 0}}, "rule": "HS-1"}]
    elif opening == "extensions":
        scenario["handshake"] = "manual"
        extensions = draw(st.lists(st.sampled_from((1, 64, 1000, ID_MAX)), min_size=1, max_size=3))
        steps += [{"send": {"clientHello": {"version": 0, "extensions": extensions}}},
                  {"expect": {"serverHello": {"version": 0}}, "rule": "EXT-1"}]
    elif opening == "bad-version":
        version = draw(st.sampled_from((1, 2, 255)))
        scenario.update(handshake="manual", goodbye="none", kit_violations=[])
        scenario["steps"] = [{"send": {"clientHello": {"version": version, "extensions": []}}},
                             {"expect_goodbye": {"reason": {"nonempty": True}}, "rule": "HS-5"},
                             {"expect_close": {}, "rule": "HS-5"}, {"liveness": {}}]
        return scenario
    # One to four episodes, each one block the shrinker can delete (see _episode).
    for block in draw(st.lists(_episode(state), min_size=1, max_size=4)):
        steps += block
    ending_kind = draw(st.integers(0, 4))
    if ending_kind == 3:
        ending, violated = _illegal_ending(draw, state)
        steps += ending
        scenario.update(goodbye="none", kit_violations=violated)
    elif ending_kind == 4:
        # The transport ends without goodbye (reset or half-close): the target must go on
        # serving other connections (ERR-11), which a fresh connection checks.
        steps += [{"close": draw(st.sampled_from(("abort", "write")))}, {"liveness": {}, "rule": "ERR-11"}]
        scenario.update(goodbye="none")
    scenario["steps"] = steps
    return scenario
