"""The kit as publisher, through ``tck/subscribe`` (rsio-v0 section 8): one fuzz episode.

The kit subscribes to ``tck/subscribe?to=kit/NAME&request=STRATEGY``; the target
subscribes back to the kit's publisher ``kit/NAME``.  The kit then serves drawn
elements as plain ``onNext``, as ``onNextPacked`` (a fixed-size stream), or split
into parts at a drawn boundary, never beyond the demand the strategy grants (it
waits for each promised ``request`` or ``cancel``), and ends with ``onComplete``,
``onError`` right away, or ``onError`` cutting a split element short.  The
expected reports on the outer stream follow from what was sent: one per element
(only the first N for ``cancel:N``), the terminal signal unless the target
cancelled, then the outer ``onComplete``.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from hypothesis import strategies as st

from .ids import free_id

STRATEGIES = ("all", "one", "batch:2", "cancel:1", "cancel:2", "batch:3")
ERROR = "kit publisher failed"


def _initial(strategy: str) -> Any:
    if strategy in ("all",) or strategy.startswith("cancel:"):
        return "${MAX}"
    return 1 if strategy == "one" else int(strategy.split(":")[1])


def _subscribe_back(outer: int, name: str, tid_var: str, strategy: str) -> list[dict[str, Any]]:
    """Subscribe to tck/subscribe with ``outer``; expect its onSubscribe and the target's subscribe
    back to ``name`` (its Id bound to ``tid_var``) with the strategy's initialDemand."""
    return [
        {"send": {"subscribe": {"publisher": f"tck/subscribe?to={quote(name, safe='')}&request={strategy}",
                                "subscriber": outer, "initialDemand": "${MAX}"}}},
        {"expect": {"onSubscribe": {"subscriber": outer}}, "rule": "STR-1"},
        {"expect": {"subscribe": {"publisher": name, "subscriber": {"bind": tid_var},
                                  "initialDemand": _initial(strategy)}}, "rule": "DEM-7"},
    ]


def _element_frames(tid: str, element: bytes, mode: str, part: int, element_id: int) -> list[dict[str, Any]]:
    if mode != "split":
        return [{"onNext": {"subscriber": tid, "element": {"hex": element.hex()}}}]
    pieces = [element[i : i + part] for i in range(0, len(element), part)] or [b""]
    frames: list[dict[str, Any]] = [
        {"onNextPart": {"subscriber": tid, "element": element_id, "data": {"hex": p.hex()}}} for p in pieces[:-1]
    ]
    frames.append({"onNextLastPart": {"subscriber": tid, "element": element_id, "data": {"hex": pieces[-1].hex()}}})
    return frames


def publisher_episode(draw: Any, state: Any) -> list[dict[str, Any]]:
    outer = free_id(draw, state)
    strategy = draw(st.sampled_from(STRATEGIES))
    mode = draw(st.sampled_from(("onNext", "packed", "split")))
    size = 2 if mode == "packed" else 0
    elements = draw(st.lists(st.binary(min_size=size, max_size=size or 6), max_size=4))
    part = draw(st.integers(1, 4))
    element_id = draw(st.sampled_from((0, 1, 2**63 - 1)))
    ending = draw(st.sampled_from(("onComplete", "onError", "cut") if mode == "split" else ("onComplete", "onError")))
    name = state.var("kit/fz")
    tid_var = state.var("tid")
    tid = "${" + tid_var + "}"
    steps = _subscribe_back(outer, name, tid_var, strategy)
    pending: list[dict[str, Any]] = [{"onSubscribe": {"subscriber": tid, "elementSize": size}}]
    packed: list[bytes] = []
    batch = 1 if strategy == "one" else int(strategy.split(":")[1]) if strategy.startswith("batch") else 0
    cancel_at = int(strategy.split(":")[1]) if strategy.startswith("cancel") else 0
    outstanding = batch
    reports: list[Any] = []
    cancelled = False

    def flush() -> None:
        pack_out()
        if pending:
            steps.append({"send": list(pending)})
            pending.clear()

    def pack_out() -> None:
        if packed:
            if len(packed) == 1:
                pending.append({"onNext": {"subscriber": tid, "element": {"hex": packed[0].hex()}}})
            else:
                pending.append({"onNextPacked": {"subscriber": tid, "count": len(packed),
                                                 "data": {"hex": b"".join(packed).hex()}}})
            packed.clear()

    for index, element in enumerate(elements):
        if mode == "packed":
            packed.append(element)
            if len(packed) == 2:
                flush()
        else:
            pending.extend(_element_frames(tid, element, mode, part, element_id))
        reports.append({"msgpack": {"signal": "onNext", "element": {"hex": element.hex()}}})
        if cancel_at and index + 1 == cancel_at:
            flush()
            steps.append({"expect": {"cancel": {"subscriber": tid}}, "rule": "TCK-6"})
            cancelled = True
            break
        if batch:
            outstanding -= 1
            if outstanding == 0:
                flush()
                steps.append({"expect": {"request": {"subscriber": tid, "demand": batch}}, "rule": "DEM-7"})
                outstanding = batch
    if not cancelled:
        pack_out()
        if ending == "cut" and (not batch or outstanding > 0):
            pending.append({"onNextPart": {"subscriber": tid, "element": element_id, "data": {"hex": "ff"}}})
        if ending == "onComplete":
            pending.append({"onComplete": {"subscriber": tid}})
            reports.append({"msgpack": {"signal": "onComplete"}})
        else:
            pending.append({"onError": {"subscriber": tid, "error": ERROR}})
            reports.append({"msgpack": {"signal": "onError", "error": ERROR}})
    flush()
    steps.append({"expect_elements": {"subscriber": outer, "elements": reports, "then": "onComplete"},
                  "rule": "TCK-6"})
    return steps


def publisher_pair_episode(draw: Any, state: Any) -> list[dict[str, Any]]:
    """Two subscribe-backs at once whose split elements' parts interleave (SPLIT-4).

    Both inner streams use the same element Ids, and the parts go out alternating
    between the streams in a drawn order; each outer stream must report its own
    joined elements, then onComplete.
    """
    first = free_id(draw, state)
    state.active.add(first)  # only so the second outer Id differs; released below
    second = free_id(draw, state)
    state.active.discard(first)
    element_id = draw(st.sampled_from((0, 1, 2**63 - 1)))
    steps: list[dict[str, Any]] = []
    queues: list[list[dict[str, Any]]] = []
    expected: list[tuple[int, list[Any]]] = []
    for outer in (first, second):
        name, tid_var = state.var("kit/fz"), state.var("tid")
        tid = "${" + tid_var + "}"
        steps += _subscribe_back(outer, name, tid_var, "all")
        elements = draw(st.lists(st.binary(min_size=1, max_size=6), min_size=1, max_size=3))
        part = draw(st.integers(1, 3))
        frames = [frame for element in elements for frame in _element_frames(tid, element, "split", part, element_id)]
        queues.append([{"onSubscribe": {"subscriber": tid, "elementSize": 0}}, *frames,
                       {"onComplete": {"subscriber": tid}}])
        expected.append((outer, [*({"msgpack": {"signal": "onNext", "element": {"hex": e.hex()}}} for e in elements),
                                 {"msgpack": {"signal": "onComplete"}}]))
    # The interleaving: at each step take the next frame of a drawn stream (either, while both have some).
    order = draw(st.lists(st.integers(0, 1), min_size=sum(map(len, queues)), max_size=sum(map(len, queues))))
    sent: list[dict[str, Any]] = []
    for pick in order:
        queue = queues[pick] if queues[pick] else queues[1 - pick]
        sent.append(queue.pop(0))
    steps.append({"send": sent})
    for outer, reports in expected:
        steps.append({"expect_elements": {"subscriber": outer, "elements": reports, "then": "onComplete"},
                      "rule": "TCK-6"})
    return steps


def near_limit_episode(draw: Any, state: Any) -> list[dict[str, Any]]:
    """One split element of the target's reassembly limit L, minus one, exactly, or plus one byte (SPLIT-5).

    Up to L the target must join and report it (SPLIT-1); past L it must cancel its inner
    subscription, and the connection stays up: the outer stream still completes, as in
    SPLIT-012.  Parts are large, so the element goes out in a few frames.
    """
    limit = state.reassembly_limit
    size = limit + draw(st.sampled_from((-1, 0, 1)))
    part = draw(st.sampled_from((65536, 100_000, limit // 3 + 1)))
    element_id = draw(st.sampled_from((0, 1, 2**63 - 1)))
    outer, name, tid_var = free_id(draw, state), state.var("kit/fz"), state.var("tid")
    tid = "${" + tid_var + "}"
    steps = _subscribe_back(outer, name, tid_var, "all")
    frames: list[dict[str, Any]] = [{"onSubscribe": {"subscriber": tid, "elementSize": 0}}]
    for offset in range(0, size, part):
        length = min(part, size - offset)
        kind = "onNextLastPart" if offset + length >= size else "onNextPart"
        frames.append({kind: {"subscriber": tid, "element": element_id, "data": {"large": [0, offset, length]}}})
    frames.append({"onComplete": {"subscriber": tid}})
    steps.append({"send": frames})
    if size <= limit:
        reports = [{"msgpack": {"signal": "onNext", "element": {"large": [0, 0, size]}}},
                   {"msgpack": {"signal": "onComplete"}}]
        steps.append({"expect_elements": {"subscriber": outer, "elements": reports, "then": "onComplete"},
                      "rule": "SPLIT-1"})
    else:
        steps += [{"expect": {"cancel": {"subscriber": tid}}, "rule": "SPLIT-5"},
                  {"drain": {"subscriber": outer, "max": 2, "until_terminal": True}, "rule": "SPLIT-5"},
                  {"expect": {"onComplete": {"subscriber": outer}}, "rule": "SPLIT-5"}]
    return steps
