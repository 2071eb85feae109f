"""The steps over a flow of elements: ``drain`` (until delivery has stopped), ``consume`` and ``feed_parts``.

Theory of operation: these steps take or send many elements in one step, so they take in bulk
(``Inbox.take_elements``) rather than one await per element, and each is bounded twice: by a count
(``max``) and by time (``within``, the signal timeout, the scenario's budget), so a target that
floods or never stops ends the step with a verdict rather than a hang.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from . import clock
from .clock import Nothing
from .steps import StepContext, StepFailed, StepInconclusive, describe_event
from .values import resolve

MAX_DRAIN = 10_000_000
# What ``feed_parts`` sends at most before it concludes the target has no reassembly limit:
# twice the default limit of the kit and the reference peer (SPEC.md Decision n).
FEED_MAX = 128 * 1024 * 1024

# A drain ends on this many silence windows with no bytes from the target: a flood still in flight pauses
# longer than one window when the machine is loaded (a target writing a few bytes at a time, starved of its
# core for 50-60 ms under `make test`'s four workers, was taken for stopped), while a window that proves
# absence (``expect_silence``) is a total and is not shortened by a pause.
DRAIN_QUIET_WINDOWS = 4


async def step_drain(ctx: StepContext, step: dict[str, Any]) -> None:
    """Take the elements still arriving on a subscription (after a cancel) until delivery has stopped.

    Stopped is proven, where the binding has one, with a barrier: the kit sends ``adapter.barrier``
    and takes elements until its answer; a round from one answer to the next with no element shows
    that the target had nothing more to write (an answer that overtakes queued elements only adds a
    round).  Without a barrier, stopped is a quiet spell of ``DRAIN_QUIET_WINDOWS`` silence windows: no bytes
    at all from the target for that long (a partial element restarts it; ``clock``).  Either way the step fails when more
    than ``max`` elements arrive, when delivery goes on past ``within`` seconds, or when the scenario's
    budget runs out while bytes still arrive (said as such)."""
    spec = step["drain"]
    rule = step.get("rule", "STR-6")
    sid = resolve(spec["subscriber"], ctx.variables)
    limit = int(spec.get("max", MAX_DRAIN))
    # within: how long delivery may take to stop, a total bound by design (bytes still arriving at it
    # are the failure); a flood under an unbounded grant has a socket send buffer of small frames in
    # flight (megabytes), more than the default bound drains on a loaded machine.
    deadline = time.monotonic() + float(spec.get("within", 5 * ctx.signal_timeout))
    session = ctx.session
    key = session.adapter.kit_key(sid)
    until_terminal = bool(spec.get("until_terminal"))
    counted = {"drained": 0}

    def still_sending() -> StepFailed:
        return StepFailed(rule, f"delivery on subscriber {sid} to stop (at most {limit} more elements)",
                          f"{counted['drained']} elements and still sending")

    def take() -> bool:
        """Take what is buffered in bulk (a flood in flight after a cancel can be hundreds of thousands
        of elements, and one await per element would dominate); True when a terminal signal or another
        event is next, left for the next step."""
        counted["drained"] += session.inbox.take_elements(key)
        if counted["drained"] > limit or time.monotonic() > deadline:
            raise still_sending()
        return bool(session.inbox.queues.get(key))

    def ended(nothing: Nothing | None) -> None:
        """A wait of the drain came back empty: delivery stopped, unless a bound came while bytes were
        still arriving (``within``: still sending; the scenario's budget: said as such)."""
        if nothing is None or nothing.why in (clock.SILENCE, clock.EOF, clock.GOODBYE):
            return
        if nothing.why == clock.DEADLINE:
            if nothing.recent:
                raise still_sending()
            return  # quiet when the bound came, if for less than a whole timeout: nothing still coming
        if nothing.why == clock.BUDGET:
            # Elements still arriving then are, as far as anyone can tell, still the ones in flight at the
            # cancel (a loaded machine reads a send buffer of small frames slowly): the scenario's ``within``
            # is the bound on the target; the budget, which came first, is only the kit's.
            raise StepInconclusive(f"delivery on subscriber {sid} was still draining when the scenario's budget "
                                   f"ran out ({counted['drained']} elements after the cancel so far, "
                                   f"{nothing.describe()}); a larger --scenario-budget judges it")
        raise StepFailed(rule, f"delivery on subscriber {sid} to stop (at most {limit} more elements)",
                         f"{counted['drained']} elements, then {nothing.describe()}")

    barrier_frames = [] if until_terminal else session.adapter.barrier(_drain_token(1))
    if barrier_frames:
        ended(await _drain_with_barrier(ctx, barrier_frames, take, counted, deadline))
    else:
        # until_terminal: the target owes a terminal signal, so wait for it (each gap up to the
        # signal timeout) instead of taking a quiet spell as the end; a large element can take
        # longer than the silence window to arrive.  Either gap is silence of bytes, not of whole
        # elements: every read from the target restarts it (a partial element, tiny writes), so an
        # element still arriving is never taken for a quiet spell.
        gap = ctx.signal_timeout if until_terminal else DRAIN_QUIET_WINDOWS * ctx.silence_window
        while not take():
            event = await session.next_event(key, gap, until=deadline)
            if event is None:
                ended(session.nothing)
                break
            if event.kind != "onNext":
                session.inbox.put_back(key, event)
                break
            counted["drained"] += 1
    if "bind" in spec:
        ctx.variables[spec["bind"]] = counted["drained"]


def _drain_token(round_number: int) -> bytes:
    """The data of a drain's barrier round (the answer echoes it)."""
    return f"rsio-tck drain {round_number}".encode("ascii")


async def _drain_with_barrier(ctx: StepContext, frames: list[Any], take: Callable[[], bool],
                             counted: dict[str, int], deadline: float) -> Nothing | None:
    """Barrier rounds until one brings no element; returns None then, or why a wait for an answer came
    back empty (the caller judges it).  A wait for the answer measures silence as every wait does
    (``clock``): it ends when nothing came from the target for the signal timeout since the barrier
    went or since its last bytes (it has stopped; an unanswered barrier is the monitor's business,
    RS-KEEPALIVE-3); bytes that keep coming restart it, within the scenario's budget and ``deadline``
    (``within``).  The target's own quiet frames (its keepalives) wake the wait but do not restart it."""
    session = ctx.session
    rounds = 1
    token = _drain_token(rounds)  # the caller's first barrier
    await session.send_frames(frames)
    before = counted["drained"]
    sent = time.monotonic()  # the round's silence is counted from its barrier
    while not take():
        if session.adapter.barrier_answered(token):
            if counted["drained"] == before:
                return None  # a whole round with nothing: the target had nothing left to write
            rounds += 1
            token = _drain_token(rounds)
            frames = session.adapter.barrier(token)
            if not frames:
                return None  # the kit is closing: no more barriers
            before = counted["drained"]
            await session.send_frames(frames)
            sent = time.monotonic()
            continue
        if session.eof:
            return None
        if not await session.arrival(ctx.signal_timeout, since=sent, until=deadline):
            return session.nothing
    return None


async def step_consume(ctx: StepContext, step: dict[str, Any]) -> None:
    spec = step["consume"]
    rule = step.get("rule", ctx.default_rule)
    sid = resolve(spec["subscriber"], ctx.variables)
    count = int(resolve(spec["count"], ctx.variables))
    each = spec.get("request_each")
    session = ctx.session
    key = session.adapter.kit_key(sid)
    for position in range(count):
        event = await session.next_event(key, ctx.signal_timeout)
        if event is None or event.kind != "onNext":
            raise StepFailed(rule, f"element {position + 1} of {count} on subscriber {sid}",
                             describe_event(event, ctx.session.nothing))
        if each and position + 1 < count:
            await session.send_signal("request", {"subscriber": sid, "demand": int(each)})
    if spec.get("cancel_after"):
        await session.send_signal("cancel", {"subscriber": sid})


async def step_feed_parts(ctx: StepContext, step: dict[str, Any]) -> None:
    """Send parts of one split element on the target's Id until the target cancels it.

    The cancel is left in the inbox for the next step.  The target fails the step's rule
    if it takes ``max`` bytes without a cancel, or ends the connection instead.
    """
    spec = step["feed_parts"]
    rule = step.get("rule", ctx.default_rule)
    session = ctx.session
    sid = resolve(spec["subscriber"], ctx.variables)
    element = int(resolve(spec.get("element", 1), ctx.variables))
    size = int(resolve(spec.get("part", 1 << 20), ctx.variables))
    most = int(resolve(spec.get("max", FEED_MAX), ctx.variables))
    data = bytes(size)
    sent = 0

    target_key = session.adapter.target_key(sid)

    def cancelled() -> bool:
        return any(event.kind == "cancel" for event in session.inbox.queues.get(target_key, ()))

    while not cancelled():
        if session.goodbye is not None or session.eof:
            raise StepFailed(rule, f"cancel for Id {sid} once the split element is over the target's limit",
                             f"{'goodbye' if session.goodbye is not None else 'close'} after {sent} bytes of parts")
        if sent >= most:
            raise StepFailed(rule, f"cancel for Id {sid} within {most} bytes of one split element",
                             f"{sent} bytes of parts taken without a cancel")
        await session.send_signal("onNextPart", {"subscriber": sid, "element": element, "data": data})
        sent += size
        await asyncio.sleep(0)  # let the reader sort what has arrived
