"""Running scenarios against a target: one connection per scenario, judged on every frame.

A scenario's verdict joins two judges: its own steps (what it scripted) and
the conformance monitor (every rule on every frame, so a violation nobody
scripted still fails the scenario, under its own rule ID).

Once the target has broken a MUST rule the verdict is certain (fail, or xfail
against a baseline; the kit's own later findings cannot turn it into an error),
so the steps are cancelled at once and the connection closed: a flooding or
otherwise runaway target costs a scenario milliseconds, not its timeouts.  The
session's caps (see ``bounds``) and the monitor's are copied into the
result's ``truncated`` map wherever they cut a record.

A step that waits while the target's bytes keep coming until the scenario's budget runs out
proves nothing against the target: the scenario is ``error`` (not judged), unless the monitor
found a rule broken.  With ``RunConfig.probe_timeout`` set (``rsio-tck run`` and the pytest
plugin set it), a scenario that ends on a time-out, or out of its budget, makes the run's
``liveness.TargetWatch`` ask a fresh connection whether the target still answers (in time);
once it does not, the scenarios after it are ``error``, not run (see ``liveness``).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Coroutine, Iterable
from dataclasses import dataclass, field
from typing import Any

from .. import __version__
from ..binding import DEFAULT_BINDING, get_binding, profile_of
from ..capabilities import Capabilities
from ..catalogue import RULES, Level
from ..errors import Side
from ..monitor.monitor import MAX_FINDINGS, MAX_FINDINGS_PER_RULE
from ..transport import TargetError, open_target
from .bounds import MAX_TRANSCRIPT, session_limits
from .clock import DEFAULT_BUDGET, Budget
from .events import CONN
from .kit_session import KitSession
from .liveness import TargetWatch, watch_of
from .loader import Scenario, applies_to
from .result import Failure, ScenarioResult, Verdict, apply_baseline
from .script import run_steps
from .steps import StepContext, StepFailed, StepInconclusive, StepSkipped, describe_event
from .waits import VerdictCertain

# Obligations the kit cannot meet once the target misbehaved first (it then
# owes a goodbye it may never get the chance to send): not kit bugs.
_KIT_OBLIGATIONS = {"ERR-1", "BYE-2", "BYE-3", "HS-5", "EXT-3", "ID-2"}


@dataclass
class RunConfig:
    target: str
    codec: str | None = None  # the binding's wire profile (RS-IO: the codec); None: the binding's default
    # What the target claims (its capabilities file); None: no file, so every capability is claimed.
    capabilities: Capabilities | None = None
    strict: bool = False
    signal_timeout: float = 2.0  # seconds of silence before "nothing within" (arriving bytes restart it)
    silence_window: float = 0.05
    # Seconds of a scenario within which arriving bytes may stretch a wait past its signal timeout (clock.py).
    scenario_budget: float = DEFAULT_BUDGET
    baseline: frozenset[str] = frozenset()
    limits: Any = None
    keep_trace: bool = False
    binding: str = DEFAULT_BINDING
    options: dict[str, Any] = field(default_factory=dict)  # the binding's scenario adapter options
    # Seconds the liveness probe after a time-out may take (``liveness.probe_timeout``); None: never probe
    # (the library's default: the self-check and mutation runs judge scenarios one by one, faults and all).
    probe_timeout: float | None = None

    def __post_init__(self) -> None:
        if self.codec is None:
            self.codec = get_binding(self.binding).profiles[0]

    @property
    def profile(self) -> str:
        return str(self.codec)


def _answer_after_half_close(steps: tuple[dict[str, Any], ...]) -> bool:
    """Whether the steps expect the target to send something after the kit's ``close: write``."""
    closed = False
    for step in steps:
        if step.get("close") == "write":
            closed = True
        elif closed and any(key.startswith("expect_") and key != "expect_close" for key in step):
            return True
    return False


def skip_reason(scenario: Scenario, config: RunConfig) -> str | None:
    not_here = applies_to(scenario, config.binding)
    if not_here is not None:
        return not_here
    if config.target.startswith(("ws://", "wss://")) and _answer_after_half_close(scenario.steps):
        return ("WebSocket has no half-close: after the kit's Close frame the target may send no more data "
                "(RFC 6455 5.5.1), so an answer after the kit's close cannot be asked for")
    profiles = scenario.profiles
    if profiles and config.profile not in profiles:
        word = get_binding(config.binding).profile_word
        return f"scenario runs only over {word} {', '.join(profiles)}, not {config.profile}"
    if config.capabilities is None:
        return None  # no capabilities file: everything is claimed
    missing = config.capabilities.missing(list(scenario.requires) + [f"codec:{config.profile}"])
    if missing:
        return f"target does not claim capability {', '.join(missing)}"
    return None


async def _handshake(ctx: StepContext) -> None:
    adapter = ctx.session.adapter
    await ctx.session.send_frames(adapter.opening())
    if not adapter.opens_with_reply:
        return
    event = await ctx.session.next_event(CONN, ctx.signal_timeout)
    wrong = adapter.check_opening(event)
    if wrong is not None:
        raise StepFailed(wrong[0], wrong[1], describe_event(event, ctx.session.nothing))


async def _goodbye(ctx: StepContext) -> None:
    session = ctx.session
    adapter = session.adapter
    if session.eof or session.kit_closed:
        return
    closing = adapter.kit_closing(session.monitor.model)
    if session.goodbye is None and not closing:
        farewell = adapter.goodbye("scenario complete")
        if farewell:
            await session.send_frames(farewell)
        if adapter.reply_awaited:
            since = time.monotonic()  # the silence is counted from here: events on the way do not restart it
            while session.goodbye is None and not session.eof:
                if await session.next_event(CONN, ctx.signal_timeout, since=since) is None:
                    break
            if session.goodbye is None:
                raise StepFailed("BYE-2", "goodbye acknowledging the kit's goodbye",
                                 "the target closed" if session.eof else describe_event(None, session.nothing))
    elif not closing and adapter.reply_awaited:
        await session.send_frames(adapter.goodbye("goodbye acknowledged"))
    await session.close("write")


async def _answer_goodbye(session: KitSession) -> None:
    """Say the goodbye the kit still owes (BYE-2, or ERR-1 after a target's error) before closing.

    A scenario that ends on the target's goodbye (``goodbye: none``) would otherwise close without
    answering it, a kit-side violation no scenario means to commit.  Where the kit's own bytes no
    longer decode (it sent malformed input on purpose), nobody can read this goodbye any more: those
    scenarios declare the BYE-2 that follows in ``kit_violations``.
    """
    if session.kit_closed or session.eof and session.goodbye is None:
        return
    if session.adapter.reply_awaited and session.adapter.kit_owes_goodbye(session.monitor.model):
        await session.send_frames(session.adapter.goodbye("goodbye acknowledged"))


def kit_bugs(scenario: Scenario, findings: list[Any], binding: str) -> list[Any]:
    """The kit's own MUST violations the scenario does not declare (``kit_violations``): kit bugs.

    The obligations the kit cannot meet once the target misbehaved first (``_KIT_OBLIGATIONS``) are
    not among them."""
    chosen = get_binding(binding)
    declared = set(scenario.kit_violations) | {chosen.contract_rule(rule) for rule in scenario.kit_violations}
    return [f for f in findings if f.side is Side.CLIENT and f.level is Level.MUST
            and f.rule not in declared and f.rule not in _KIT_OBLIGATIONS]


def _verdict(scenario: Scenario, result: ScenarioResult, config: RunConfig, failed_at: int | None = None) -> None:
    """Pass, fail, warn or error from the step failures and the monitor's findings.

    A kit bug makes the scenario an error, never a fail, when it came before whatever went wrong on
    the target's side (its first MUST violation, and the step failure, which ``failed_at`` places: the
    number of findings there were when the step failed): what the target did after the kit broke a rule
    judges the kit's bug, not the target (SPEC.md Decision x).  A kit bug after the target had already
    broken a MUST rule, or after a step had already failed, leaves the fail as it is.
    """
    findings = result.findings
    target_must = [f for f in findings if f.side is Side.SERVER and f.level is Level.MUST]
    target_should = [f for f in findings if f.side is Side.SERVER and f.level is Level.SHOULD]
    bugs = kit_bugs(scenario, findings, config.binding)
    if bugs:
        position = {id(f): i for i, f in enumerate(findings)}
        first_bug = position[id(bugs[0])]
        target_first = position[id(target_must[0])] if target_must else len(findings)
        step_first = failed_at if failed_at is not None and result.failures else len(findings)
        if first_bug < target_first and first_bug < step_first:
            result.verdict = Verdict.ERROR
            result.reason = ("kit bug: the kit broke a rule the scenario does not declare, so nothing the target did "
                             "afterwards is held against it: " + "; ".join(f.message for f in bugs))
            return
    # A step failing a SHOULD rule, or any step of a SHOULD scenario, is optional-not-met.
    must_failures = [f for f in result.failures if scenario.level == "MUST" and f.rule in RULES
                     and RULES[f.rule].level is Level.MUST]
    if target_must or must_failures:
        result.verdict = Verdict.FAIL
    elif result.failures or target_should:
        result.verdict = Verdict.FAIL if config.strict else Verdict.WARN
    else:
        result.verdict = Verdict.PASS
    apply_baseline(result, config.baseline)


async def _script(ctx: StepContext, scenario: Scenario) -> None:
    if scenario.handshake == "auto":
        await _handshake(ctx)
    await run_steps(ctx, scenario.steps)
    if scenario.goodbye == "auto":
        await _goodbye(ctx)


async def _until_verdict_certain(script: Coroutine[Any, Any, None], session: KitSession, ctx: StepContext,
                                 result: ScenarioResult) -> None:
    """Run the scenario's steps, but no longer than until the target has broken a MUST rule."""
    steps = asyncio.ensure_future(script)
    certain = asyncio.ensure_future(session.verdict_certain.wait())
    try:
        await asyncio.wait({steps, certain}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        certain.cancel()
        if not steps.done():
            steps.cancel()
            with contextlib.suppress(asyncio.CancelledError, VerdictCertain):
                await steps
        elif not steps.cancelled():
            steps.exception()  # retrieved, so a scenario cancelled from outside (the self-check) logs nothing
    cancelled = steps.cancelled()
    failure = None if cancelled else steps.exception()
    # Raised from here, the failure's traceback holds this frame: were ``steps`` (which holds the failure) still
    # one of its locals, the three would make a cycle that keeps the whole session (a 16 MiB partial frame, the
    # trace) alive until a full collection, which large bytes objects never trigger (1.2 GB against a target
    # that sent random bytes, two dozen finished sessions held).
    del steps
    # A step that failed once the verdict was certain failed on what the kit did then (it stopped reading, closed):
    # the rule the target broke is the verdict's, and the step's rule, not broken, is not cited beside it.
    if cancelled or isinstance(failure, VerdictCertain) or (isinstance(failure, StepFailed)
                                                            and session.verdict_certain.is_set()):
        broken = next((f for f in session.monitor.findings if f.side is Side.SERVER and f.level is Level.MUST), None)
        rule = broken.rule if broken is not None else "a MUST rule"
        where = f"at step {ctx.index}" if ctx.index else "in the handshake"
        result.truncated["steps"] = f"ended {where}: the target broke {rule}, so the verdict was certain"
        return
    if failure is not None:
        try:
            raise failure  # a step's failure (StepFailed), as if awaited directly
        finally:
            del failure


async def run_scenario(scenario: Scenario, config: RunConfig, watch: TargetWatch | None = None) -> ScenarioResult:
    """Run one scenario.  ``watch``: the run's watch on the target (``liveness``): a scenario is not run once
    the target stopped answering, and one that ends on a time-out is followed by a probe."""
    binding = get_binding(config.binding)
    rules = tuple(binding.contract_rule(rule) for rule in scenario.rules)  # contract IDs as the binding says them
    result = ScenarioResult(id=scenario.id, title=scenario.title, rules=rules, level=scenario.level,
                            verdict=Verdict.PASS, target=config.target, codec=config.profile, kit_version=__version__)
    reason = skip_reason(scenario, config)
    if reason is not None:
        result.verdict, result.reason = Verdict.SKIP, reason
        return result
    if watch is None:
        return await _run(scenario, config, result)
    if watch.stop is not None:
        watch.not_run(result)
        return result
    watch.running.add(scenario.id)
    try:
        await _run(scenario, config, result)
        await watch.settle(result)
    finally:
        watch.running.discard(scenario.id)
    return result


async def _run(scenario: Scenario, config: RunConfig, result: ScenarioResult) -> ScenarioResult:
    binding = get_binding(config.binding)
    rules = result.rules
    started = time.monotonic()
    try:
        reader, writer = await open_target(config.target, timeout=max(10.0, config.signal_timeout * 2),
                                           binding=binding, profile=config.profile,
                                           limits=session_limits(binding, profile_of(binding, config.profile),
                                                                 config.limits, config.options))
    except TargetError as exc:
        result.verdict, result.reason, result.timed_out = Verdict.ERROR, str(exc), exc.timed_out
        return result
    session = KitSession(reader, writer, config.profile, config.limits, end_when_certain=True, binding=binding,
                         options=config.options, budget=Budget.starting(config.scenario_budget, started))
    session.start()
    ctx = StepContext(session, rules[0], config.signal_timeout, config.silence_window,
                      target=config.target, codec=config.profile, options=config.options)
    failed_at: int | None = None  # how many findings there were when a step failed
    inconclusive = ""  # a step ran out of the kit's budget before anything was proven (StepInconclusive)
    try:
        await _until_verdict_certain(_script(ctx, scenario), session, ctx, result)
    except StepFailed as failed:
        if failed.out_of_budget:  # bytes kept coming until the kit's own time ran out: nothing proven
            inconclusive = f"not judged: step {ctx.index} expected {failed.expectation}; got {failed.got}"
            result.out_of_budget = True
        elif session.kit_limit is None:  # else the kit closed at its own limit: what could not come is not owed
            failed_at = len(session.monitor.findings)
            result.failures.append(Failure(binding.contract_rule(failed.rule), failed.expectation, failed.got,
                                           ctx.index))
            result.timed_out = failed.timed_out
    except StepSkipped as skipped:
        result.reason = str(skipped)
    except StepInconclusive as unjudged:
        inconclusive = f"not judged: {unjudged}"
        result.out_of_budget = True
    except (OSError, RuntimeError) as exc:
        failed_at = len(session.monitor.findings)
        result.failures.append(Failure(rules[0], "a working connection", f"{type(exc).__name__}: {exc}"))
    finally:
        if session.kit_limit is not None and not result.failures:
            inconclusive = inconclusive or f"not judged: the kit closed the connection at a limit of its own " \
                f"({session.kit_limit})"
        elif session.error and not result.failures and not session.monitor.must_seen[Side.SERVER]:
            # (a MUST rule the target broke is the verdict's: the error it caused is no second rule broken)
            failed_at = len(session.monitor.findings)
            result.failures.append(Failure(rules[0], "a target the kit can follow", session.error))
        await _answer_goodbye(session)
        await session.close("write")
        # Give the target a moment to close so its last obligations are judged, then stop.
        # (Once the verdict is certain the read loop reads a last few bytes, then stops; the
        # target's close itself can make it certain, which ends this wait too.)
        with contextlib.suppress(TimeoutError, VerdictCertain):
            if session.verdict_certain.is_set():
                await asyncio.wait_for(session.reading_done.wait(), config.silence_window)
            else:
                await session.next_event(("eof", None), config.silence_window if not session.eof else 0, total=True)
        await session.shutdown()
    result.duration = time.monotonic() - started
    # A frame trickled in for longer than a signal may take (over WebSocket, the message that carried it).
    slowest = max(session.slowest_frame, getattr(session.writer, "slowest_message", 0.0))
    if slowest > config.signal_timeout:
        result.stretched = slowest
    result.findings = list(session.monitor.findings)
    result.transcript = [line.render() for line in session.transcript]
    result.truncated.update(session.truncated)
    if session.transcript_dropped:
        result.transcript.insert(len(result.transcript) // 2, f"... {session.transcript_dropped} lines omitted ...")
        result.truncated["transcript"] = (f"{session.transcript_dropped} lines omitted after the first "
                                          f"{MAX_TRANSCRIPT // 2} (MAX_TRANSCRIPT = {MAX_TRANSCRIPT})")
    dropped = session.monitor.findings_dropped
    if dropped:
        counts = ", ".join(f"{rule} x{count}" for rule, count in dropped.most_common())
        result.truncated["findings"] = (f"{sum(dropped.values())} more findings counted, not kept (at most "
                                        f"{MAX_FINDINGS}, {MAX_FINDINGS_PER_RULE} per rule): {counts}")
    if config.keep_trace:
        result.trace = session.trace
        result.wire_trace = session.wire_trace  # ws://: the raw bytes (HTTP upgrade, WebSocket frames) for the pcap
    if result.reason and not result.failures:
        result.verdict = Verdict.SKIP  # a step found the scenario cannot judge this target
        return result
    _verdict(scenario, result, config, failed_at)
    if inconclusive and result.verdict not in (Verdict.FAIL, Verdict.XFAIL):
        result.verdict, result.reason = Verdict.ERROR, inconclusive  # nothing proven either way
    return result


async def run_suite(
    scenarios: Iterable[Scenario],
    config: RunConfig,
    jobs: int = 8,
    on_result: Callable[[ScenarioResult], None] | None = None,
    watch: TargetWatch | None = None,
    on_start: Callable[[Scenario], None] | None = None,
) -> list[ScenarioResult]:
    """Run scenarios concurrently over separate connections, ``jobs`` at a time.  ``watch``: the run's watch
    on the target (default: one when ``config.probe_timeout`` is set, see ``liveness``); ``on_start``: told
    of each scenario as it starts (what is in flight, should the run be interrupted)."""
    gate = asyncio.Semaphore(max(jobs, 1))
    watch = watch if watch is not None else watch_of(config)

    async def one(scenario: Scenario) -> ScenarioResult:
        async with gate:
            if on_start is not None:
                on_start(scenario)
            result = await run_scenario(scenario, config, watch)
        if on_result is not None:
            on_result(result)
        return result

    tasks = [asyncio.ensure_future(one(s)) for s in scenarios]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:
        # The first failure (results that cannot be written: a full disk) or a cancellation (an interrupted
        # run) ends the suite: the other scenarios stop, and their own failures (the same full disk) are
        # retrieved here rather than printed by asyncio as unhandled at shutdown.
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


def rule_level(rule: str) -> str:
    return RULES[rule].level.value
