"""The step language: each step kind is one function over a ``StepContext``.

A step that does not see what it expects raises ``StepFailed`` with the rule it
checks, the expectation and what arrived instead.  Waiting is always bounded:
``signal_timeout`` for what must arrive, ``silence_window`` for what must not.
The signal timeout measures silence: bytes that keep arriving stretch a wait,
within the scenario's budget (``clock``); the failure text says which ran out.

This module holds the step context, the frame and event helpers, and the steps
that send one thing or expect one thing; ``flow_steps`` the steps over a flow of
elements (drain, consume, feed_parts); ``script`` the table of step kinds and the
steps that run other steps (repeat, retry, when).
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field
from typing import Any

from . import clock
from .clock import Nothing
from .events import CONN, Event, Key
from .kit_session import KitSession
from .values import ELEMENT, ELEMENT_VALUE, matches, resolve, show
from .waits import VerdictCertain

# What a step got when the target sent nothing in time (``describe_event(None, timeout)``): a failure that
# says this ended on a time-out, after which the runner may ask whether the target still answers at all.
NOTHING_WITHIN = "nothing within"


class StepFailed(Exception):
    def __init__(self, rule: str, expectation: str, got: str) -> None:
        super().__init__(f"[{rule}] expected {expectation}; got {got}")
        self.rule, self.expectation, self.got = rule, expectation, got

    @property
    def timed_out(self) -> bool:
        """The step waited for the target in vain: nothing arrived within its timeout."""
        return self.got.startswith(NOTHING_WITHIN)

    @property
    def out_of_budget(self) -> bool:
        """The step waited while bytes kept coming until the scenario's budget ran out: the kit's own time
        ended, which proves nothing against the target (the runner reports it not judged)."""
        return self.got.startswith(clock.BUDGET_RAN_OUT)


class StepSkipped(Exception):
    """The scenario cannot judge this target (the message says why): it reports skip."""


class StepInconclusive(Exception):
    """The step ran out of the kit's own time (the scenario's budget) before the target had done anything a
    rule forbids (the message says what was still going on): the scenario is not judged (error), unless the
    monitor found a rule broken before.  The budget bounds the kit's time, not the target's."""


@dataclass
class StepContext:
    session: KitSession
    default_rule: str
    signal_timeout: float = 2.0
    silence_window: float = 0.05
    variables: dict[str, Any] = field(default_factory=dict)
    index: int = 0  # the step being run, for messages
    target: str = ""  # for steps that open a second connection
    codec: str | None = None  # the session's wire profile, for a second connection (None: the binding's default)
    options: dict[str, Any] = field(default_factory=dict)  # the adapter options, for a second connection

    def __post_init__(self) -> None:
        # ``{int: N}`` values are the binding's test-publisher element bytes (values.ELEMENT).
        self.variables.setdefault(ELEMENT, self.session.adapter.element)
        self.variables.setdefault(ELEMENT_VALUE, self.session.adapter.element_value)


def build_frames(session: KitSession, spec: dict[str, Any], variables: dict[str, Any]) -> list[Any]:
    """The frames of one ``send:`` entry, through the session's binding."""
    (name, fields), = spec.items()
    values = {k: resolve(v, variables) for k, v in (fields or {}).items()}
    try:
        return session.adapter.frames(name, values)
    except (ValueError, TypeError) as exc:
        raise StepFailed("TCK-6", f"a valid {name} in the scenario", f"scenario error: {exc}") from None


def build_frame(spec: dict[str, Any], variables: dict[str, Any], binding: str | None = None) -> Any:
    """One frame of a ``send:`` entry, in ``binding``'s default profile (None: the default binding's), for
    tools that build frames without a session (the fuzzer's tests)."""
    from ..binding import DEFAULT_BINDING, get_binding

    (name, fields), = spec.items()
    values = {k: resolve(v, variables) for k, v in (fields or {}).items()}
    chosen = get_binding(binding or DEFAULT_BINDING)
    adapter = chosen.scenario_adapter(chosen.profiles[0], {})
    try:
        (frame,) = adapter.frames(name, values)
    except (ValueError, TypeError) as exc:
        raise StepFailed("TCK-6", f"a valid {name} in the scenario", f"scenario error: {exc}") from None
    return frame


def _key(session: KitSession, name: str, fields: dict[str, Any], variables: dict[str, Any]) -> Key:
    resolved = {k: resolve(v, variables) for k, v in fields.items() if k in ("subscriber", "stream_id")}
    try:
        return session.adapter.key(name, resolved)
    except ValueError as exc:
        raise StepFailed("TCK-6", f"{name} with a known subscriber", f"scenario error: {exc}") from None


def describe_pattern(name: str, fields: dict[str, Any]) -> str:
    inner = ", ".join(f"{k}={v!r}" for k, v in (fields or {}).items())
    return f"{name}({inner})"


def describe_event(event: Event | None, why: Nothing | float | None) -> str:
    """What a step got: ``event``, or, for None, why the wait came back empty (the session's
    ``nothing``; a number is a plain timeout)."""
    if event is None:
        if isinstance(why, Nothing):
            return why.describe()
        return f"{NOTHING_WITHIN} {why:g} s" if why is not None else "nothing"
    if event.kind == "close":
        return "the target closed the connection"
    # An absent field (RSocket's metadata, say) is left out rather than shown as None.
    inner = ", ".join(f"{k}={show(v)}" for k, v in event.fields.items() if v is not None)
    via = f" via {event.via}" if event.via and event.via != "onNext" else ""
    return f"{event.kind}({inner}){via} (frame #{event.index})"


def _event_matches(name: str, fields: dict[str, Any], event: Event, variables: dict[str, Any]) -> bool:
    if event.kind != name and event.frame != name:
        return False
    trial = dict(variables)
    for key, pattern in (fields or {}).items():
        if key == "via":
            if event.via != pattern:
                return False
            continue
        if key not in event.fields or not matches(pattern, event.fields[key], trial):
            return False
    variables.update(trial)
    return True


async def _expect_one(ctx: StepContext, spec: dict[str, Any], rule: str, timeout: float) -> Event:
    (name, fields), = spec.items()
    fields = fields or {}
    key = _key(ctx.session, name, fields, ctx.variables)
    event = await ctx.session.next_event(key, timeout)
    if event is None or not _event_matches(name, fields, event, ctx.variables):
        raise StepFailed(rule, describe_pattern(name, fields), describe_event(event, ctx.session.nothing))
    return event


MAX_BURST = 100_000  # frames sets one ``send`` may repeat (``times``), as ``repeat`` allows


async def step_send(ctx: StepContext, step: dict[str, Any]) -> None:
    specs = step["send"] if isinstance(step["send"], list) else [step["send"]]
    frames = []
    # ``times: N`` (``var: i`` = 0, 1, ...): the frames N times over, still in one write (a burst).
    times = int(resolve(step.get("times", 1), ctx.variables))
    if times > MAX_BURST:
        # The schema bounds a literal count, so this one comes from a value the target chose (a lease's
        # number of requests, say): a legal choice the kit cannot follow with one burst, not a failure.
        raise StepSkipped(f"the burst would repeat its frames {times} times, from a value the target chose; "
                          f"the kit sends at most {MAX_BURST} in one write, so it cannot judge this target here")
    if times < 1:
        raise StepFailed(ctx.default_rule, f"a burst of 1 to {MAX_BURST} times",
                         f"scenario error: times is {times} (from a value the target sent?)")
    for i in range(times):
        if "var" in step:
            ctx.variables[step["var"]] = i
        frames += [frame for spec in specs for frame in build_frames(ctx.session, spec, ctx.variables)]
    try:
        await ctx.session.send_frames(frames, step.get("chunk", 0))
    except ValueError as exc:  # a frame the wire profile cannot carry (the encoder says which)
        raise StepFailed(ctx.default_rule, "frames the wire profile can encode", f"scenario error: {exc}") from None


async def step_send_hex(ctx: StepContext, step: dict[str, Any]) -> None:
    await ctx.session.send_bytes(bytes.fromhex(step["send_hex"].replace(" ", "")), step.get("chunk", 0))


async def step_expect(ctx: StepContext, step: dict[str, Any]) -> None:
    await _expect_one(ctx, step["expect"], step.get("rule", ctx.default_rule), step.get("timeout", ctx.signal_timeout))


async def step_expect_set(ctx: StepContext, step: dict[str, Any]) -> None:
    rule = step.get("rule", ctx.default_rule)
    pending = [dict(spec) for spec in step["expect_set"]]
    while pending:
        spec = pending[0]
        (name, fields), = spec.items()
        event = await ctx.session.next_event(_key(ctx.session, name, fields or {}, ctx.variables), ctx.signal_timeout)
        if event is None:
            raise StepFailed(rule, "all of " + "; ".join(describe_pattern(*next(iter(s.items()))) for s in pending),
                             describe_event(None, ctx.session.nothing))
        for candidate in pending:
            (cname, cfields), = candidate.items()
            if _event_matches(cname, cfields or {}, event, ctx.variables):
                pending.remove(candidate)
                break
        else:
            raise StepFailed(rule, "one of " + "; ".join(describe_pattern(*next(iter(s.items()))) for s in pending),
                             describe_event(event, ctx.session.nothing))


async def step_expect_elements(ctx: StepContext, step: dict[str, Any]) -> None:
    spec = step["expect_elements"]
    rule = step.get("rule", ctx.default_rule)
    sid = resolve(spec["subscriber"], ctx.variables)
    patterns = spec.get("elements")
    count = len(patterns) if patterns is not None else int(resolve(spec.get("count", 0), ctx.variables))
    key = ctx.session.adapter.kit_key(sid)
    inbox = ctx.session.inbox
    position = 0
    while position < count:
        if patterns is None:
            # Elements already here are only counted: taken in bulk (a packed frame's thousands at once).
            position += inbox.take_elements(key, count - position)
            if position == count:
                break
        event = await ctx.session.next_event(key, ctx.signal_timeout)
        if event is None or event.kind != "onNext":
            raise StepFailed(rule, f"element {position + 1} of {count} on subscriber {sid}",
                             describe_event(event, ctx.session.nothing))
        if patterns is not None and not matches(patterns[position], event.fields["element"], ctx.variables):
            raise StepFailed(rule, f"element {position + 1} matching {patterns[position]!r}",
                             describe_event(event, ctx.session.nothing))
        position += 1
    then = spec.get("then")
    if then in ("onComplete", "onError"):
        fields: dict[str, Any] = {"subscriber": sid}
        if then == "onError" and "error" in spec:
            fields["error"] = spec["error"]
        await _expect_one(ctx, {then: fields}, rule, ctx.signal_timeout)
    elif then == "nothing":
        await step_expect_silence(ctx, {"expect_silence": {"subscriber": sid}, "rule": rule})


async def step_expect_silence(ctx: StepContext, step: dict[str, Any]) -> None:
    """Nothing from the target (on one subscriber, or at all) for the silence window, or until it answers a
    barrier.

    Where the binding has a barrier (``adapter.barrier``: RSocket's KEEPALIVE with R) and the connection is
    in a state where sending one changes nothing (the adapter says so by returning frames), the kit sends
    one at the step's start, and the window ends early once it is answered: a target that writes in the
    order it reads and produces has written before that answer whatever it would have sent, so waiting out
    the rest of the window proves nothing more; a frame it sends later is still judged by the monitor for
    the rest of the scenario.  ``barrier: false`` keeps the whole window, for a scenario whose window paces
    a target allowed to act later (RSIM-011: a fire-and-forget counted after an answer on another stream).
    Without a barrier, the window is waited out (``silence_window``)."""
    spec = step["expect_silence"]
    window = float(spec.get("window", ctx.silence_window))
    rule = step.get("rule", ctx.default_rule)
    session = ctx.session
    started = time.monotonic()
    # A binding whose cancel lets events already in flight arrive at any time (Ditto: the judge counts them
    # against the demand granted before the cancel) names them; silence is not broken by them.
    in_flight = getattr(session.adapter, "in_flight", None)
    before = session.signals
    first = session.monitor.frame_count
    open_before = not session.eof
    token = _silence_token()
    barrier = session.adapter.barrier(token) if spec.get("barrier", True) else []
    if barrier:
        await session.send_frames(barrier)
    key = session.adapter.kit_key(resolve(spec["subscriber"], ctx.variables)) if "subscriber" in spec else None
    while True:
        # One window from the step's start (total: a silence window is not stretched by arriving bytes).
        if session.end_when_certain and session.verdict_certain.is_set():
            raise VerdictCertain
        if key is not None:
            event = session.inbox.pop(key)
            if event is not None:
                if in_flight is None or not in_flight(key, event):
                    raise StepFailed(rule, f"nothing on subscriber {spec['subscriber']} for {window:g} s",
                                     describe_event(event, window))
                continue
        if barrier and session.adapter.barrier_answered(token):
            break
        if not await session.arrival(window, since=started, until=started + window):
            break
    if key is not None:
        return
    # allow_close: the target may end the connection in the window (a close is not a frame it sent).
    closed = 1 if spec.get("allow_close") and open_before and session.eof else 0
    late = 0 if in_flight is None else sum(1 for k, q in session.inbox.queues.items() for e in q
                                           if e.index >= first and in_flight(k, e))
    if session.signals - closed - late != before:
        quiet = session.adapter.quiet_kinds
        arrived = [e for q in session.inbox.queues.values() for e in q if e.kind not in quiet]
        got = describe_event(arrived[-1], window) if arrived else "a signal"
        raise StepFailed(rule, f"no signal for {window:g} s", f"{session.signals - before} signal(s), last {got}")


_SILENCE_TOKENS = itertools.count(1)


def _silence_token() -> bytes:
    """The data of a silence step's barrier (the answer echoes it): unique in the process, so never one a
    scenario or another step sent on the connection."""
    return f"rsio-tck silence {next(_SILENCE_TOKENS)}".encode("ascii")


async def step_send_credited(ctx: StepContext, step: dict[str, Any]) -> None:
    """Send frames on a stream the target grants credits for (a channel's requester direction):
    each element frame waits, if need be, for the target's next ``request`` (REQUEST_N) on that
    stream; other frames (a completion) go at once.  Credits carry over between steps."""
    spec = step["send_credited"]
    rule = step.get("rule", ctx.default_rule)
    session = ctx.session
    sid = resolve(spec["stream"], ctx.variables)
    key = session.adapter.target_key(sid)
    credit_name = f"credit {sid}"  # not a valid ${name}: no scenario can bind or read it
    for spec_frame in spec["frames"]:
        frames = build_frames(session, spec_frame, ctx.variables)
        elements = sum(1 for frame in frames if getattr(frame, "next", False) and not getattr(frame, "follows", False))
        while ctx.variables.get(credit_name, 0) < elements:
            event = await session.next_event(key, ctx.signal_timeout)
            if event is None or event.kind != "request":
                raise StepFailed(rule, f"a credit (REQUEST_N) for stream {sid}", describe_event(event, ctx.session.nothing))
            ctx.variables[credit_name] = ctx.variables.get(credit_name, 0) + int(event.fields["demand"])
        ctx.variables[credit_name] = ctx.variables.get(credit_name, 0) - elements
        await session.send_frames(frames)


async def step_expect_goodbye(ctx: StepContext, step: dict[str, Any]) -> None:
    rule = step.get("rule", "ERR-1")
    fields = step["expect_goodbye"] or {}
    goodbyes = ctx.session.adapter.goodbye_kinds
    since = time.monotonic()  # a quiet event (a hello) does not restart the clock
    while True:
        event = await ctx.session.next_event(CONN, ctx.signal_timeout, since=since)
        if event is not None and event.kind in ctx.session.adapter.quiet_kinds:
            continue  # a loose handshake may put the hello first
        if event is not None and event.kind in goodbyes and not _event_matches(event.kind, fields, event, ctx.variables):
            # The goodbye came; only its reason is wrong, which is ERR-2's business, not the
            # obligation to say goodbye at all (the step's rule).
            raise StepFailed("ERR-2", describe_pattern("goodbye", fields), describe_event(event, ctx.session.nothing))
        if event is None or event.kind not in goodbyes or not _event_matches(event.kind, fields, event, ctx.variables):
            raise StepFailed(rule, describe_pattern("goodbye", fields), describe_event(event, ctx.session.nothing))
        return


async def step_expect_close(ctx: StepContext, step: dict[str, Any]) -> None:
    rule = step.get("rule", "ERR-1")
    since = time.monotonic()  # a goodbye or a quiet event on the way does not restart the clock; bytes do
    while True:
        event = await ctx.session.next_event(CONN, ctx.signal_timeout, since=since)
        if event is None:
            raise StepFailed(rule, "the target to close the connection", describe_event(None, ctx.session.nothing))
        if event.kind == "close":
            return
        if event.kind not in ctx.session.adapter.goodbye_kinds and event.kind not in ctx.session.adapter.quiet_kinds:
            raise StepFailed(rule, "the target to close the connection", describe_event(event, ctx.session.nothing))


async def step_liveness(ctx: StepContext, step: dict[str, Any]) -> None:
    """A fresh connection must still open and serve a short stream (ERR-3)."""
    from ..transport import TargetError, open_target

    rule = step.get("rule", "ERR-3")
    try:
        reader, writer = await open_target(ctx.target, max(10.0, ctx.signal_timeout * 2),
                                           binding=ctx.session.binding, profile=ctx.codec,
                                           limits=ctx.session.limits)
    except TargetError as exc:
        raise StepFailed(rule, "a fresh connection to keep working", str(exc)) from None
    session = ctx.session
    probe = KitSession(reader, writer, ctx.codec, binding=session.binding, options=ctx.options,
                       budget=session.budget)
    probe.start()
    adapter = probe.adapter
    try:
        await probe.send_frames(adapter.opening())
        if adapter.opens_with_reply:
            event = await probe.next_event(CONN, ctx.signal_timeout)
            if adapter.check_opening(event) is not None:
                raise StepFailed(rule, "the opening answered on a fresh connection",
                                 describe_event(event, probe.nothing))
        await probe.send_signal("subscribe", {"publisher": "tck/range?count=3", "subscriber": 1, "initialDemand": 3})
        for want in ("onSubscribe", "onNext", "onNext", "onNext", "onComplete"):
            event = await probe.next_event(adapter.kit_key(1), ctx.signal_timeout)
            if event is None or event.kind != want:
                raise StepFailed(rule, f"{want} on a fresh connection", describe_event(event, probe.nothing))
        farewell = adapter.goodbye("liveness checked")
        if farewell:
            await probe.send_frames(farewell)
        if adapter.reply_awaited:
            event = await probe.next_event(CONN, ctx.signal_timeout)
            if event is None or event.kind not in adapter.goodbye_kinds:
                raise StepFailed(rule, "goodbye on a fresh connection", describe_event(event, probe.nothing))
    finally:
        await probe.close("write")
        await probe.shutdown()


async def step_skip_if_target_extensions(ctx: StepContext, step: dict[str, Any]) -> None:
    """Skip the rest when the target's serverHello listed extension ids: the kit cannot tell
    which extension-range codes they declare (SPEC.md Decision f)."""
    listed = ctx.session.adapter.target_extensions(ctx.session.monitor.model)
    if listed:
        raise StepSkipped(f"the target's serverHello lists extension ids {list(listed)[:8]}; version 0 maps no id "
                          "to an extension-range code, so the kit cannot tell an undeclared code from a declared one")


async def step_set(ctx: StepContext, step: dict[str, Any]) -> None:
    for name, value in step["set"].items():
        ctx.variables[name] = resolve(value, ctx.variables)


async def step_close(ctx: StepContext, step: dict[str, Any]) -> None:
    await ctx.session.close(step["close"])
