"""Per-subscription states and the transition table of the Reactive Streams contract.

Theory of operation: a subscription is identified by the subscriber's Id within
the subscriber's Id space.  Every signal, from either end, looks up
``TRANSITIONS[(state, signal)]``.  The entry says what the signal means in that
state: allowed (``OK``), tolerated without effect (``IGNORED``: frames that
crossed a cancel or a terminal signal in flight, requests for finished Ids), or
a violation by the sender (``VIOLATION``), and which rule says so.  Some entries
name an *action*: a small function below that updates demand, split progress or
owed ``onSubscribe`` frames, and may itself find a violation (for example a
delivery beyond demand).  Every state x signal pair has an entry, and a test walks
the table.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

from ..errors import ProtocolViolation, Side
from .demand import UNBOUNDED, Demand
from .signals import Signal


class StreamState(Enum):
    IDLE = "idle"  # never subscribed
    SUBSCRIBING = "subscribing"  # subscribe sent, onSubscribe not yet received
    RESUBSCRIBING = "resubscribing"  # Id reused after cancel: the old subscription's frames may still arrive
    ACTIVE = "active"
    PART = "part"  # a split element is in progress
    CANCELLED = "cancelled"  # cancel sent; frames in flight may still arrive
    DONE = "done"  # onComplete or onError received


class Verdict(Enum):
    OK = "ok"
    IGNORED = "ignored"
    VIOLATION = "violation"


@dataclass(frozen=True, slots=True)
class Transition:
    verdict: Verdict
    rule: str
    next: StreamState | None = None  # None: stay
    action: str | None = None
    why: str = ""


class StreamRecord:
    """What the model knows of one subscription Id."""

    __slots__ = ("state", "demand", "element", "owed_on_subscribes", "owes_3_9", "element_size", "requested",
                 "incarnation")

    def __init__(self, ceiling: int = UNBOUNDED) -> None:
        self.state = StreamState.IDLE
        self.demand = Demand(0, ceiling)  # the ceiling stays with the record when it is (re)opened
        self.element: int | None = None  # split element Id in progress
        self.owed_on_subscribes = 0  # onSubscribe frames still due for cancelled subscriptions
        # The rule that makes an onError naming 3.9 due (DEM-3 for a request <= 0,
        # DEM-4 for a negative initialDemand), or None.
        self.owes_3_9: str | None = None
        self.element_size = 0
        self.requested = False  # a request arrived: demand is no longer initialDemand alone
        self.incarnation = 0  # how many subscriptions this Id has had

    def __repr__(self) -> str:
        return f"StreamRecord({self.state.name}, {self.demand!r}, element={self.element})"


@dataclass(slots=True)
class SignalArgs:
    """The fields of one signal that the actions read."""

    count: int = 1  # elements carried (onNextPacked carries several)
    packed: bool = False
    amount: int = 0  # initialDemand of subscribe, demand of request
    element: int | None = None  # split element Id
    element_size: int = 0  # of onSubscribe
    text: str = ""  # onError text


S, G, V = StreamState, Signal, Verdict
OK, IGN, BAD = V.OK, V.IGNORED, V.VIOLATION
PUBLISHER_SIGNALS = (G.ON_SUBSCRIBE, G.ON_NEXT, G.PART, G.LAST_PART, G.ON_COMPLETE, G.ON_ERROR)


def _row(state: StreamState, entries: dict[Signal, Transition]) -> dict[tuple[StreamState, Signal], Transition]:
    return {(state, signal): t for signal, t in entries.items()}


_NOT_SUBSCRIBED = Transition(BAD, "STR-4", why="signal for an Id that was never subscribed")
_AFTER_TERMINAL = Transition(BAD, "STR-3", why="signal after a terminal signal")
_BEFORE_ON_SUBSCRIBE = Transition(BAD, "STR-1", why="signal before onSubscribe")
_DUPLICATE = Transition(BAD, "ID-1", why="subscribe for an Id that is still active")
_ADD_DEMAND = Transition(OK, "DEM-2", action="add_demand")
_STALE = Transition(IGN, "ID-4", why="frame of the cancelled subscription this Id had before")

TRANSITIONS: dict[tuple[StreamState, Signal], Transition] = {
    **_row(S.IDLE, {
        G.SUBSCRIBE: Transition(OK, "ID-1", S.SUBSCRIBING, "open"),
        G.REQUEST: Transition(IGN, "STR-7", why="request for an unknown Id"),
        G.CANCEL: Transition(IGN, "STR-7", why="cancel for an unknown Id"),
        **{g: _NOT_SUBSCRIBED for g in PUBLISHER_SIGNALS},
    }),
    **_row(S.SUBSCRIBING, {
        G.SUBSCRIBE: _DUPLICATE,
        G.REQUEST: _ADD_DEMAND,
        G.CANCEL: Transition(OK, "STR-6", S.CANCELLED, "cancel_before_on_subscribe"),
        G.ON_SUBSCRIBE: Transition(OK, "STR-1", S.ACTIVE, "on_subscribe"),
        **{g: _BEFORE_ON_SUBSCRIBE for g in PUBLISHER_SIGNALS[1:]},
    }),
    **_row(S.RESUBSCRIBING, {
        G.SUBSCRIBE: _DUPLICATE,
        G.REQUEST: _ADD_DEMAND,
        G.CANCEL: Transition(OK, "STR-6", S.CANCELLED, "cancel_before_on_subscribe"),
        G.ON_SUBSCRIBE: Transition(OK, "ID-3", None, "stale_or_new_on_subscribe"),
        **{g: _STALE for g in PUBLISHER_SIGNALS[1:]},
    }),
    **_row(S.ACTIVE, {
        G.SUBSCRIBE: _DUPLICATE,
        G.REQUEST: _ADD_DEMAND,
        G.CANCEL: Transition(OK, "STR-6", S.CANCELLED),
        G.ON_SUBSCRIBE: Transition(BAD, "STR-1", why="a second onSubscribe for one subscribe"),
        G.ON_NEXT: Transition(OK, "DEM-1", None, "deliver"),
        G.PART: Transition(OK, "SPLIT-3", S.PART, "begin_element"),
        G.LAST_PART: Transition(OK, "SPLIT-3", None, "whole_element"),
        G.ON_COMPLETE: Transition(OK, "STR-3", S.DONE, "complete"),
        G.ON_ERROR: Transition(OK, "STR-3", S.DONE, "error"),
    }),
    **_row(S.PART, {
        G.SUBSCRIBE: _DUPLICATE,
        G.REQUEST: _ADD_DEMAND,
        G.CANCEL: Transition(OK, "STR-6", S.CANCELLED),
        G.ON_SUBSCRIBE: Transition(BAD, "STR-1", why="a second onSubscribe for one subscribe"),
        G.ON_NEXT: Transition(BAD, "SPLIT-2", why="a whole element while a split element is in progress"),
        G.PART: Transition(OK, "SPLIT-2", None, "same_element"),
        G.LAST_PART: Transition(OK, "SPLIT-2", S.ACTIVE, "end_element"),
        G.ON_COMPLETE: Transition(BAD, "SPLIT-2", why="onComplete while a split element is in progress"),
        G.ON_ERROR: Transition(OK, "SPLIT-6", S.DONE, "error"),
    }),
    **_row(S.CANCELLED, {
        G.SUBSCRIBE: Transition(OK, "ID-3", S.RESUBSCRIBING, "reopen"),
        G.REQUEST: Transition(IGN, "STR-7", why="request after cancel"),
        G.CANCEL: Transition(IGN, "STR-7", why="cancel after cancel"),
        G.ON_SUBSCRIBE: Transition(OK, "STR-1", None, "owed_on_subscribe"),
        G.ON_NEXT: Transition(OK, "STR-6", None, "deliver_in_flight"),
        G.PART: Transition(IGN, "STR-6", why="part in flight after cancel"),
        G.LAST_PART: Transition(IGN, "STR-6", why="part in flight after cancel"),
        G.ON_COMPLETE: Transition(OK, "STR-6", S.DONE, "terminal_in_flight"),
        G.ON_ERROR: Transition(OK, "STR-6", S.DONE, "terminal_in_flight"),
    }),
    **_row(S.DONE, {
        G.SUBSCRIBE: Transition(OK, "ID-3", S.SUBSCRIBING, "open"),
        G.REQUEST: Transition(IGN, "STR-7", why="request after a terminal signal"),
        G.CANCEL: Transition(IGN, "STR-7", why="cancel after a terminal signal"),
        **{g: _AFTER_TERMINAL for g in PUBLISHER_SIGNALS},
    }),
}


# -- actions --------------------------------------------------------------------
# Each returns the next state when it decides it (else None: the table's ``next``),
# and raises ProtocolViolation for what it finds wrong.  ``warn`` collects SHOULD
# deviations, which never stop a signal.

Warn = Callable[[str, str], None]


class Broken(Exception):
    """Raised by an action: the signal breaks ``rule``; ``step`` adds who, what and where."""

    def __init__(self, rule: str, why: str) -> None:
        self.rule, self.why = rule, why


Action = Callable[[StreamRecord, SignalArgs, int, Warn], "StreamState | None"]


def violation(side: Side, sid: int, signal: Signal, state: StreamState, rule: str, why: str) -> ProtocolViolation:
    role = "subscriber" if signal.from_subscriber else "publisher"
    return ProtocolViolation(
        rule=rule,
        side=side,
        message=f"{side} as {role} sent {signal.value} for Id {sid} in state {state.name}: {why}",
    )


def _open(rec: StreamRecord, args: SignalArgs, sid: int, warn: Warn) -> StreamState | None:
    rec.demand = Demand(args.amount, rec.demand.ceiling)
    rec.element = None
    rec.element_size = 0
    rec.owes_3_9 = "DEM-4" if args.amount < 0 else None
    rec.requested = False
    rec.incarnation += 1
    if args.amount < 0:
        warn("DEM-6", f"subscribe for Id {sid} with negative initialDemand {args.amount}")
    return None


def _reopen(rec: StreamRecord, args: SignalArgs, sid: int, warn: Warn) -> StreamState | None:
    # owed_on_subscribes carries over: those onSubscribe frames are stale now.
    return _open(rec, args, sid, warn)


def _add_demand(rec: StreamRecord, args: SignalArgs, sid: int, warn: Warn) -> StreamState | None:
    rec.requested = True
    if args.amount <= 0:
        rec.owes_3_9 = rec.owes_3_9 or "DEM-3"
        warn("DEM-6", f"request({sid}, {args.amount}): demand must be positive")
    else:
        rec.demand.add(args.amount)
    return None


def _cancel_before_on_subscribe(rec: StreamRecord, args: SignalArgs, sid: int, warn: Warn) -> StreamState | None:
    rec.owed_on_subscribes += 1  # the cancelled subscription still gets its onSubscribe
    return None


def _on_subscribe(rec: StreamRecord, args: SignalArgs, sid: int, warn: Warn) -> StreamState | None:
    rec.element_size = args.element_size
    return None


def _stale_or_new_on_subscribe(rec: StreamRecord, args: SignalArgs, sid: int, warn: Warn) -> StreamState | None:
    if rec.owed_on_subscribes:
        rec.owed_on_subscribes -= 1  # answers a subscription that was cancelled
        return StreamState.RESUBSCRIBING
    rec.element_size = args.element_size
    return StreamState.ACTIVE


def _owed_on_subscribe(rec: StreamRecord, args: SignalArgs, sid: int, warn: Warn) -> StreamState | None:
    if not rec.owed_on_subscribes:
        raise Broken("STR-1", "a second onSubscribe for one subscribe")
    rec.owed_on_subscribes -= 1
    return None


def _deliver(rec: StreamRecord, args: SignalArgs, sid: int, warn: Warn) -> StreamState | None:
    if not rec.demand.take(args.count):
        # Beyond a demand made of initialDemand alone, the initialDemand was ignored
        # (DEM-5), or, on a reused Id, the old subscription's demand was kept (ID-3).
        if args.packed:
            rule = "PACK-3"
        elif rec.requested:
            rule = "DEM-1"
        else:
            rule = "ID-3" if rec.incarnation > 1 else "DEM-5"
        raise Broken(rule, f"{args.count} element(s) delivered with outstanding demand {rec.demand.outstanding}")
    return None


def _deliver_in_flight(rec: StreamRecord, args: SignalArgs, sid: int, warn: Warn) -> StreamState | None:
    if rec.owed_on_subscribes:
        raise Broken("STR-1", "element before the onSubscribe of the cancelled subscription")
    return _deliver(rec, args, sid, warn)


def _begin_element(rec: StreamRecord, args: SignalArgs, sid: int, warn: Warn) -> StreamState | None:
    rec.element = args.element
    if rec.element_size:
        raise Broken("PACK-5", f"split element on a fixed-size stream (elementSize {rec.element_size})")
    if not rec.demand.take(1):
        raise Broken("SPLIT-3", "first part of a split element sent without outstanding demand")
    return None


def _whole_element(rec: StreamRecord, args: SignalArgs, sid: int, warn: Warn) -> StreamState | None:
    _begin_element(rec, args, sid, warn)
    rec.element = None
    return None


def _same_element(rec: StreamRecord, args: SignalArgs, sid: int, warn: Warn) -> StreamState | None:
    if args.element != rec.element:
        raise Broken("SPLIT-2", f"part of element {args.element} while element {rec.element} is in progress")
    return None


def _end_element(rec: StreamRecord, args: SignalArgs, sid: int, warn: Warn) -> StreamState | None:
    _same_element(rec, args, sid, warn)
    rec.element = None
    return None


def _complete(rec: StreamRecord, args: SignalArgs, sid: int, warn: Warn) -> StreamState | None:
    if rec.owes_3_9:
        raise Broken(rec.owes_3_9, "onComplete where onError naming rule 3.9 was due (demand <= 0)")
    return None


def _error(rec: StreamRecord, args: SignalArgs, sid: int, warn: Warn) -> StreamState | None:
    rec.element = None
    if rec.owes_3_9 and "3.9" not in args.text:
        raise Broken(rec.owes_3_9, f"onError text {args.text!r} does not name rule 3.9 (demand <= 0)")
    return None


def _terminal_in_flight(rec: StreamRecord, args: SignalArgs, sid: int, warn: Warn) -> StreamState | None:
    if rec.owed_on_subscribes:
        raise Broken("STR-1", "terminal signal before the onSubscribe of the cancelled subscription")
    rec.element = None
    return None


ACTIONS: dict[str, Action] = {
    "open": _open,
    "reopen": _reopen,
    "add_demand": _add_demand,
    "cancel_before_on_subscribe": _cancel_before_on_subscribe,
    "on_subscribe": _on_subscribe,
    "stale_or_new_on_subscribe": _stale_or_new_on_subscribe,
    "owed_on_subscribe": _owed_on_subscribe,
    "deliver": _deliver,
    "deliver_in_flight": _deliver_in_flight,
    "begin_element": _begin_element,
    "whole_element": _whole_element,
    "same_element": _same_element,
    "end_element": _end_element,
    "complete": _complete,
    "error": _error,
    "terminal_in_flight": _terminal_in_flight,
}


# -- the fast path ----------------------------------------------------------------
# Element frames dominate traffic, so judges take the entries of the table that
# only take demand without building SignalArgs or looking the table up.  This is
# the one copy of that shortcut; ``tests/test_semantics.py`` holds it to ``step``
# with a property test.


def takes_elements(rec: StreamRecord | None) -> bool:
    """Whether an onNext for ``rec`` takes an entry of the table that only takes demand:
    (ACTIVE, ON_NEXT) ``deliver``, or (CANCELLED, ON_NEXT) ``deliver_in_flight`` with no
    onSubscribe still owed.  Neither entry changes the state."""
    return rec is not None and (
        rec.state is StreamState.ACTIVE or (rec.state is StreamState.CANCELLED and not rec.owed_on_subscribes)
    )


def deliver_fast(rec: StreamRecord | None, count: int) -> bool:
    """Apply those entries for ``count`` elements; True when applied.  False changes nothing:
    the caller judges the frame with ``step`` (which finds what is wrong, if anything)."""
    # takes_elements, written out: this runs once per element frame.
    if rec is None:
        return False
    state = rec.state
    return (state is _ACTIVE or (state is _CANCELLED and not rec.owed_on_subscribes)) and rec.demand.take(count)


_ACTIVE, _CANCELLED = StreamState.ACTIVE, StreamState.CANCELLED


@dataclass(frozen=True, slots=True)
class StreamOptions:
    """How a binding's wire differs from RS-IO's where the contract allows it (the defaults are RS-IO's)."""

    on_subscribe_frame: bool = True  # False: a subscribe opens the stream ACTIVE (RSocket's requests)
    reuse_ids: bool = True  # False: a subscribe on a cancelled or finished Id is ID-3, not a new subscription
    demand_ceiling: int = UNBOUNDED  # where demand saturates; give it to StreamRecord(ceiling=...)


RSIO_OPTIONS = StreamOptions()

_NEVER_REUSED = Transition(BAD, "ID-3", why="subscribe reusing an Id that was already used; Ids are never reused here")


@functools.cache
def transitions_for(options: StreamOptions) -> dict[tuple[StreamState, Signal], Transition]:
    """The table with the options' overlay: the entries they change, and every other entry as is."""
    table = dict(TRANSITIONS)
    if not options.on_subscribe_frame:
        for key, transition in TRANSITIONS.items():
            if transition.next in (S.SUBSCRIBING, S.RESUBSCRIBING):
                table[key] = Transition(transition.verdict, transition.rule, S.ACTIVE, transition.action, transition.why)
    if not options.reuse_ids:
        table[(S.CANCELLED, G.SUBSCRIBE)] = _NEVER_REUSED
        table[(S.DONE, G.SUBSCRIBE)] = _NEVER_REUSED
    return table


def step(side: Side, sid: int, rec: StreamRecord, signal: Signal, args: SignalArgs, warn: Warn,
         options: StreamOptions = RSIO_OPTIONS) -> Transition:
    """Apply one signal to one subscription; raises ProtocolViolation for a violation."""
    state = rec.state
    transition = (TRANSITIONS if options is RSIO_OPTIONS else transitions_for(options))[(state, signal)]
    if transition.verdict is Verdict.VIOLATION:
        raise violation(side, sid, signal, state, transition.rule, transition.why)
    next_state = transition.next
    if transition.action is not None:
        try:
            decided = ACTIONS[transition.action](rec, args, sid, warn)
        except Broken as broken:
            # The signal still happened: a terminal signal still ends the stream,
            # a part still begins its element, so later frames are judged in context.
            if next_state is not None:
                rec.state = next_state
            raise violation(side, sid, signal, state, broken.rule, broken.why) from None
        if decided is not None:
            next_state = decided
    if next_state is not None:
        rec.state = next_state
    return transition
