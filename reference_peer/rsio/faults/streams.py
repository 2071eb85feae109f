"""Faults of streams: lifecycle (STR), demand (DEM), Id reuse (ID), packing (PACK), splitting (SPLIT)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgpack

from rsio_tck.bindings.rsio.wire.frames import (
    ID_MAX,
    Cancel,
    OnComplete,
    OnError,
    OnNext,
    OnNextLastPart,
    OnNextPacked,
    OnNextPart,
    Request,
    Subscribe,
)
from rsio_tck.semantics.demand import saturating_add

from ...sources import End, LargeSource
from ..config import UNBOUNDED
from ..policy import Policy
from ..publishers import Rejected
from .declare import Base, _element, _once, fault

if TYPE_CHECKING:
    from ..connection import RsioConnection
    from ..flows import Outflow



# -- stream lifecycle (STR) ----------------------------------------------------------------

next_first = fault("str-next-before-subscribe", "STR-1", "sends an onNext before the onSubscribe of a subscription")


@next_first.on("send_on_subscribe")
def _next_first(p: Policy, base: Base, s: RsioConnection, flow: Outflow) -> None:
    s.send_unchecked(OnNext(subscriber=flow.sid, element=_element(flow)))
    base(s, flow)


unknown_goodbye = fault("str-unknown-goodbye", "STR-2", "answers a subscribe to an unknown publisher with goodbye")


@unknown_goodbye.on("reject")
def _unknown_goodbye(p: Policy, base: Base, s: RsioConnection, sid: int, rejected: Rejected) -> None:
    if rejected.unknown:
        s.goodbye(rejected.reason)
        return
    base(s, sid, rejected)


after_complete = fault("str-next-after-complete", "STR-3", "sends one more onNext after onComplete")


@after_complete.on("finish")
def _after_complete(p: Policy, base: Base, s: RsioConnection, flow: Outflow, end: End) -> None:
    base(s, flow, end)
    if end.error is None:
        s.send_unchecked(OnNext(subscriber=flow.sid, element=msgpack.packb(0)))


unsubscribed = fault("str-signal-unsubscribed", "STR-4", "after completing a stream, signals onComplete for an Id never subscribed")


@unsubscribed.on("finish")
def _unsubscribed(p: Policy, base: Base, s: RsioConnection, flow: Outflow, end: End) -> None:
    base(s, flow, end)
    s.send_unchecked(OnComplete(subscriber=ID_MAX - 7))


ignore_cancel = fault("str-ignore-cancel", "STR-6", "ignores cancel: keeps sending for as long as demand lasts")


@ignore_cancel.on("on_cancel")
def _ignore_cancel(p: Policy, base: Base, s: RsioConnection, flow: Outflow) -> None:
    pass


own_space = fault("str-cancel-in-own-space", "STR-9",
                  "reads a cancel in its own Id space too: it also cancels its own subscription with that number")


@own_space.on("on_cancel")
def _own_space(p: Policy, base: Base, s: RsioConnection, flow: Outflow) -> None:
    base(s, flow)
    s.subscriptions.cancel(flow.sid)  # the wrong space: this peer's own subscription, if any


# -- demand (DEM) ----------------------------------------------------------------------------

answer_stale = fault("str-answer-stale", "STR-7",
                    "answers a request or cancel for an Id it does not publish (unknown, cancelled, ended) with onError")


@answer_stale.on("on_stale_signal")
def _answer_stale(p: Policy, base: Base, s: RsioConnection, frame: Request | Cancel) -> None:
    s.send_unchecked(OnError(subscriber=frame.subscriber, error=f"no subscription {frame.subscriber} here"))


beyond_demand = fault("dem-beyond-demand", "DEM-1", "sends one element beyond the demand requested")


@beyond_demand.on("sendable")
def _beyond_demand(p: Policy, base: Base, s: RsioConnection, flow: Outflow) -> int:
    demand: int = base(s, flow)
    if demand == 0 and flow.requested and _once(flow, "beyond"):
        return 1
    return demand


overflow_error = fault("dem-overflow-error", "DEM-2", "treats a total demand beyond 2^63-1 as an error instead of saturating")


@overflow_error.on("add_demand")
def _overflow_error(p: Policy, base: Base, s: RsioConnection, flow: Outflow, n: int) -> None:
    if n > UNBOUNDED or (flow.demand < UNBOUNDED and saturating_add(flow.demand, n) < flow.demand + n):
        s.end_flow(flow, End(error=f"demand overflow: {flow.demand} + {n}"))
        return
    base(s, flow, n)


ignore_zero = fault("dem-ignore-zero-request", "DEM-3", "ignores request(0) instead of signalling onError (rule 3.9)")


@ignore_zero.on("on_bad_request")
def _ignore_zero(p: Policy, base: Base, s: RsioConnection, flow: Outflow, n: int) -> None:
    if n != 0:
        base(s, flow, n)


error_text = fault("dem-error-without-rule", "DEM-3", "answers request(n <= 0) with an onError that does not name rule 3.9")


@error_text.on("on_bad_request")
def _error_text(p: Policy, base: Base, s: RsioConnection, flow: Outflow, n: int) -> None:
    s.end_flow(flow, End(error=f"bad request {n}"))


negative_initial = fault("dem-accept-negative-initial", "DEM-4", "accepts a negative initialDemand silently (as 0)")


@negative_initial.on("on_negative_initial_demand")
def _negative_initial(p: Policy, base: Base, s: RsioConnection, flow: Outflow, initial: int) -> None:
    flow.demand = 0


ignore_initial = fault("dem-ignore-initial-demand", "DEM-5", "ignores initialDemand: sends nothing until a request")


@ignore_initial.on("initial_demand")
def _ignore_initial(p: Policy, base: Base, s: RsioConnection, flow: Outflow, initial: int) -> int:
    return 0


# -- Id reuse (ID) ---------------------------------------------------------------------------

duplicate = fault("id-duplicate-accepted", "ID-2", "accepts a subscribe for an active Id as a new subscription",
                  tolerate=("ID-1",))


@duplicate.on("on_duplicate_subscribe")
def _duplicate(p: Policy, base: Base, s: RsioConnection, frame: Subscribe) -> None:
    s.stop_flow(s.outflows[frame.subscriber])
    s.handle_subscribe(frame)


keeps_demand = fault("id-reuse-keeps-demand", "ID-3", "a subscribe reusing an Id inherits the demand left by its last subscription")


@keeps_demand.on("finish")
def _keeps_demand_finish(p: Policy, base: Base, s: RsioConnection, flow: Outflow, end: End) -> None:
    p.state.setdefault("leftover", {})[flow.sid] = flow.demand
    base(s, flow, end)


@keeps_demand.on("on_cancel")
def _keeps_demand_cancel(p: Policy, base: Base, s: RsioConnection, flow: Outflow) -> None:
    p.state.setdefault("leftover", {})[flow.sid] = flow.demand
    base(s, flow)


@keeps_demand.on("initial_demand")
def _keeps_demand(p: Policy, base: Base, s: RsioConnection, flow: Outflow, initial: int) -> int:
    leftover: int = p.state.setdefault("leftover", {}).pop(flow.sid, 0)
    return saturating_add(int(base(s, flow, initial)), leftover)  # connection caps an initial demand at UNBOUNDED


# -- fixed-size and packed (PACK) -------------------------------------------------------------

wrong_size = fault("pack-wrong-size", "PACK-1", "sends a fixed-size onNext of elementSize + 1 bytes (the receiver desyncs)")


@wrong_size.on("emit_fixed")
def _wrong_size(p: Policy, base: Base, s: RsioConnection, flow: Outflow, data: bytes) -> None:
    size = flow.element_size
    if _once(flow, "wrong-size"):
        s.send_unchecked(OnNext(subscriber=flow.sid, element=data[:size] + b"\x00"))
        data = data[size:]
    if data:
        base(s, flow, data)


packed_variable = fault("pack-on-variable", "PACK-2", "sends onNextPacked on a variable-size stream")


@packed_variable.on("emit_variable")
def _packed_variable(p: Policy, base: Base, s: RsioConnection, flow: Outflow, elements: list[bytes]) -> None:
    s.send_unchecked(OnNextPacked(subscriber=flow.sid, count=len(elements), data=b"".join(elements)))


packed_beyond = fault("pack-beyond-demand", "PACK-3", "an onNextPacked carries one element more than the outstanding demand")


@packed_beyond.on("emit_fixed")
def _packed_beyond(p: Policy, base: Base, s: RsioConnection, flow: Outflow, data: bytes) -> None:
    if flow.demand == 0 and flow.source.available() and _once(flow, "packed-beyond"):
        data += flow.source.take_packed(1)
        flow.take_demand(1)
    s.send_unchecked(OnNextPacked(subscriber=flow.sid, count=len(data) // flow.element_size, data=data))


split_fixed = fault("pack-split-fixed", "PACK-5", "splits an element of a fixed-size stream into parts")


@split_fixed.on("emit_fixed")
def _split_fixed(p: Policy, base: Base, s: RsioConnection, flow: Outflow, data: bytes) -> None:
    size = flow.element_size
    if _once(flow, "split-fixed"):
        s.send_unchecked(OnNextPart(subscriber=flow.sid, element=0, data=data[: size // 2]))
        s.send_unchecked(OnNextLastPart(subscriber=flow.sid, element=0, data=data[size // 2 : size]))
        data = data[size:]
    if data:
        base(s, flow, data)


# -- split elements (SPLIT) -----------------------------------------------------------------

interleave = fault("split-interleave", "SPLIT-2", "sends a whole element between the parts of a split element")


@interleave.on("emit_variable")
def _interleave(p: Policy, base: Base, s: RsioConnection, flow: Outflow, elements: list[bytes]) -> None:
    if len(elements) >= 2 and _once(flow, "interleave"):
        first, second = elements[0], elements[1]
        s.send_unchecked(OnNextPart(subscriber=flow.sid, element=1, data=first[: len(first) // 2]))
        s.send_unchecked(OnNext(subscriber=flow.sid, element=second))
        s.send_unchecked(OnNextLastPart(subscriber=flow.sid, element=1, data=first[len(first) // 2 :]))
        elements = elements[2:]
    if elements:
        base(s, flow, elements)


part_without_demand = fault("split-without-demand", "SPLIT-3", "starts a split element (tck/large) without outstanding demand")


@part_without_demand.on("sendable")
def _part_without_demand(p: Policy, base: Base, s: RsioConnection, flow: Outflow) -> int:
    demand: int = base(s, flow)
    if demand <= 0 and isinstance(flow.source, LargeSource) and flow.sent and _once(flow, "no-demand"):
        return 1
    return demand
