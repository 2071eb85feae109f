"""Driving hypothesis against a live target, and turning failures into findings.

Theory of operation.  Each example is one program drawn from the binding's strategy
(``binding.fuzz_programs(profile, reassembly_limit)``; RS-IO's are in
``rsio_tck.bindings.rsio.fuzz``): a scenario, run by the ordinary scenario runner (so the monitor judges every frame
the target returns, and the program's own expectations are scenario steps).  An
example is a *finding* when the target broke a rule: a target-side monitor
finding, or a failed step.  Findings are keyed by (rule, signature), the
signature being a short hash of the rule and the message with numbers blanked.

The search runs in rounds of at most ``ROUND_EXAMPLES``.  In a round hypothesis
generates examples from a seed derived from ``seed`` and the round number; the probe raises only for a key not seen before, so
hypothesis shrinks that failure to a minimal program, which is kept with its
finding.  Known keys only count.  The next round looks for the next new key,
until the example or time budget is spent.  Results are cached per program, so
hypothesis's replays never see a timing-dependent flip (no Flaky errors), and
shrinking stops trying new programs once its own time slice is spent.

A signal (``interruption.SignalCatcher``, held by the command) stops the search as a
spent budget does: the example then running is cancelled (``until_signal``) and not
counted, a finding not yet confirmed is not reported, and both are named in
``FuzzOutcome.running``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import re
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, overload

from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis.errors import HypothesisWarning

from ..binding import DEFAULT_BINDING, get_binding
from ..catalogue import RULES, Level
from ..errors import Side
from ..scenarios.loader import Scenario
from ..scenarios.result import Failure, ScenarioResult, Verdict
from ..scenarios.runner import run_scenario

if TYPE_CHECKING:
    from ..interruption import SignalCatcher


def fuzz_hooks(binding: str) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """(programs strategy, bystander factory) of ``binding``; ValueError (one line) if it has none.

    ``binding.fuzz_programs(profile, reassembly_limit)`` -> a hypothesis strategy of programs
    (scenario dicts: level, steps, handshake, goodbye, codecs, kit_violations);
    ``binding.fuzz_bystander(target, profile, timeout)`` -> an object with ``async open() -> bool``
    and ``async check() -> (rule, why) | None``.
    """
    chosen = get_binding(binding)
    programs = getattr(chosen, "fuzz_programs", None)
    bystander = getattr(chosen, "fuzz_bystander", None)
    if programs is None or bystander is None:
        raise ValueError(f"binding {binding!r} has no fuzz programs")
    return programs, bystander


@dataclass
class FuzzConfig:
    target: str
    codec: str = "msgpack"  # the binding's wire profile (RS-IO: its codec)
    binding: str = DEFAULT_BINDING
    examples: int = 200
    seed: int = 0
    time_budget: float = 60.0
    shrink_budget: float = 20.0  # seconds each new finding may spend shrinking
    signal_timeout: float = 1.0
    silence_window: float = 0.05
    stop_at_first: bool = False
    bystander: bool = True  # watch each example from a second connection (ERR-3)
    confirm: int = 2  # re-runs a new finding must reproduce in at least once (0: trust the first run)
    # Seconds one example may be stretched by bytes that keep coming (its scenario budget): a fuzz example is
    # a short program, and against a target trickling bytes every example would otherwise take 30 s, each one
    # past the time budget as long as the one before.
    example_budget: float = 10.0
    # SHOULD rules whose warnings are not findings: the deviations the reference peer makes on
    # purpose as freedoms (its wide integers, TCK-9), when the fuzzer is pointed at it.
    tolerated: frozenset[str] = frozenset()
    reassembly_limit: int | None = None  # the target's limit on one split element, when known (the embedded peer's)


@dataclass
class FuzzFinding:
    rule: str
    signature: str
    side: str | None
    message: str
    program: dict[str, Any]
    count: int = 1
    scenario_file: str | None = None

    @property
    def key(self) -> tuple[str, str]:
        return self.rule, self.signature

    def to_json(self) -> dict[str, Any]:
        return {"rule": self.rule, "signature": self.signature, "side": self.side, "message": self.message,
                "scenario_file": self.scenario_file, "count": self.count}


@dataclass
class FuzzOutcome:
    examples: int = 0
    elapsed: float = 0.0
    findings: list[FuzzFinding] = field(default_factory=list)
    programs: list[str] = field(default_factory=list)  # every program tried, canonical JSON, in order
    stopped: bool = False  # a signal ended the search before its budgets did
    running: list[str] = field(default_factory=list)  # cut short by the signal, not judged: "example N", a finding


class _NewFinding(Exception):
    pass


def signature(rule: str, message: str) -> str:
    blank = re.sub(r"\b[0-9a-f]{6,}\b|\d+", "#", message)
    return hashlib.sha1(f"{rule}|{blank}".encode()).hexdigest()[:10]


_KIT_OBLIGATIONS = {"ERR-1", "BYE-2", "BYE-3", "HS-5", "EXT-3", "ID-2"}


def judge(result: ScenarioResult, declared: tuple[str, ...] = (),
          tolerated: frozenset[str] = frozenset()) -> tuple[str, str | None, str] | None:
    """(rule, side, message) of what the target broke in this run, or None.

    A run where the kit broke an undeclared rule first is the generator's bug, not a finding.
    """
    must = sorted((f for f in result.findings if f.level is Level.MUST), key=lambda f: f.frame_index or 0)
    if must and must[0].side is Side.CLIENT and must[0].rule not in declared and must[0].rule not in _KIT_OBLIGATIONS:
        return None
    target = [f for f in result.findings if f.side is Side.SERVER
              and not (f.level is Level.SHOULD and f.rule in tolerated)]
    target.sort(key=lambda f: f.level is not Level.MUST)
    if target:
        return target[0].rule, str(Side.SERVER), target[0].message
    if result.failures:
        failure = result.failures[0]
        text = f"expected {failure.expectation}, got {failure.got}"
        return failure.rule if failure.rule in RULES else "ERR-3", str(Side.SERVER), text
    if result.verdict is Verdict.ERROR and "broke a rule" not in (result.reason or ""):
        return "ERR-3", str(Side.SERVER), result.reason or "the target could not be reached"
    return None


def as_scenario(program: dict[str, Any], ident: str = "FUZZ-001", title: str = "fuzz program") -> Scenario:
    rules = sorted({step["rule"] for step in program["steps"] if "rule" in step}) or ["STR-1"]
    # A binding's programs may carry more of the scenario format (binding, role ...): passed on
    # where the loader's Scenario has the field.
    known = {f.name for f in dataclasses.fields(Scenario)}
    extra: dict[str, Any] = {key: tuple(value) if isinstance(value, list) else value
                             for key, value in program.items() if key in known and key in _PASSED_ON}
    return Scenario(id=ident, title=title, rules=tuple(rules), level=program["level"], steps=tuple(program["steps"]),
                    profiles=tuple(program.get("profiles", program.get("codecs", ()))), handshake=program["handshake"], goodbye=program["goodbye"],
                    kit_violations=tuple(program.get("kit_violations", ())), **extra)


_PASSED_ON = ("binding", "role", "requires", "needs")  # profiles: written codecs (RS-IO) or profiles


@overload
def run_program(program: dict[str, Any], config: FuzzConfig, until: float | None = None,
                catcher: None = None) -> ScenarioResult: ...


@overload
def run_program(program: dict[str, Any], config: FuzzConfig, until: float | None,
                catcher: SignalCatcher | None) -> ScenarioResult | None: ...


def run_program(program: dict[str, Any], config: FuzzConfig, until: float | None = None,
                catcher: SignalCatcher | None = None) -> ScenarioResult | None:
    """Run ``program``; with a bystander connection, its breakage is a failed ERR-3 step.  ``until``: a monotonic
    time the run should end by (the search's deadline and its grace): the example's budget shrinks to it, never
    below a few signal timeouts, so the example running when the time budget ends ends soon after.  None when
    ``catcher``'s signal cancelled it."""
    from ..gate import run_config as make_run_config
    from ..interruption import until_signal

    budget = config.example_budget
    if until is not None:
        budget = max(EXAMPLE_BUDGET_MIN * config.signal_timeout, min(budget, until - time.monotonic()))
    run_config = make_run_config(config.binding, config.codec, target=config.target,
                                 signal_timeout=config.signal_timeout, silence_window=config.silence_window,
                                 scenario_budget=budget)
    _, make_bystander = fuzz_hooks(config.binding)

    async def with_bystander() -> ScenarioResult:
        bystander = make_bystander(config.target, config.codec, config.signal_timeout)
        watching = config.bystander and await bystander.open()
        result = await run_scenario(as_scenario(program), run_config)
        problem = await bystander.check() if watching else None
        # Only a closed bystander counts: other misbehaviour on it is found by the programs themselves,
        # whose scenario files replay it.
        if problem is not None and problem[0] == "ERR-3" and not result.failures:
            result.failures.append(Failure(problem[0], "other connections to keep working", problem[1]))
            result.verdict = Verdict.FAIL
        return result

    if catcher is None:
        return asyncio.run(with_bystander())
    return asyncio.run(until_signal(with_bystander(), catcher))


Judgement = tuple[str, str | None, str] | None
ROUND_EXAMPLES = 50  # examples per hypothesis run, so a spent time budget stops the search promptly
EXAMPLE_BUDGET_MIN = 3  # signal timeouts: the least budget an example gets, however late it starts
FINISH_GRACE = 5.0  # seconds past the time budget the example then running, and a finding's confirmation, may take


@dataclass
class _Search:
    config: FuzzConfig
    judge_program: Callable[[dict[str, Any]], Judgement]
    on_example: Callable[[FuzzOutcome], None] | None
    outcome: FuzzOutcome = field(default_factory=FuzzOutcome)
    known: dict[tuple[str, str], FuzzFinding] = field(default_factory=dict)
    cache: dict[str, Judgement] = field(default_factory=dict)
    started: float = field(default_factory=time.monotonic)
    stopped: Callable[[], bool] = lambda: False  # a signal came: try nothing more

    @property
    def deadline(self) -> float:
        return self.started + self.config.time_budget

    def key(self, verdict: Judgement) -> tuple[str, str] | None:
        return None if verdict is None else (verdict[0], signature(verdict[0], verdict[2]))

    def run_once(self, program: dict[str, Any], stop_at: float) -> Judgement:
        """The judgement of ``program`` (cached); None without running once time is up."""
        text = json.dumps(program, sort_keys=True)
        if text in self.cache:
            return self.cache[text]
        if time.monotonic() >= stop_at or self.outcome.examples >= self.config.examples or self.stopped():
            return None
        verdict = self.judge_program(program)
        if self.stopped():  # the signal came while it ran: cancelled, not judged
            self.outcome.running.append(f"example {self.outcome.examples + 1}")
            return None
        self.cache[text] = verdict
        self.outcome.examples += 1
        self.outcome.programs.append(text)
        key = self.key(verdict)
        if key is not None and key in self.known:
            self.known[key].count += 1
        if self.on_example is not None:
            self.outcome.elapsed = time.monotonic() - self.started
            self.on_example(self.outcome)
        return verdict

    def round(self, number: int) -> tuple[dict[str, Any], tuple[str, str | None, str]] | None:
        """One hypothesis run: the shrunk program of the first new (rule, signature), if any."""
        config = self.config
        shrink_until = [float("inf")]
        latest: list[tuple[dict[str, Any], tuple[str, str | None, str]]] = []

        @settings(max_examples=ROUND_EXAMPLES, database=None, deadline=None,
                  derandomize=False, suppress_health_check=list(HealthCheck), phases=[Phase.generate, Phase.shrink],
                  report_multiple_bugs=False, verbosity=Verbosity.quiet, print_blob=False)
        @hypothesis_seed(config.seed * 100_003 + number)
        @given(fuzz_hooks(config.binding)[0](config.codec, config.reassembly_limit))
        def probe(program: dict[str, Any]) -> None:
            verdict = self.run_once(program, min(self.deadline, shrink_until[0]))
            if verdict is None or self.key(verdict) in self.known:
                return
            if shrink_until[0] == float("inf"):
                shrink_until[0] = time.monotonic() + config.shrink_budget
            latest.append((program, verdict))
            raise _NewFinding(verdict[0])

        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", HypothesisWarning)  # large reprs of long programs
                probe()
        except Exception:  # _NewFinding, or hypothesis giving up on a replay
            pass
        return latest[-1] if latest else None


def fuzz(config: FuzzConfig, on_example: Callable[[FuzzOutcome], None] | None = None,
         runner: Callable[[dict[str, Any]], Judgement] | None = None, *, catcher: SignalCatcher | None = None,
         on_finding: Callable[[FuzzFinding, FuzzOutcome], None] | None = None) -> FuzzOutcome:
    """Search for findings; ``runner`` (program -> judgement) replaces the live target in tests.  ``catcher``'s
    signal stops the search (see the module); ``on_finding`` hears of each finding once it is confirmed."""
    started = time.monotonic()
    finish = started + config.time_budget + FINISH_GRACE  # when the example then running, or a confirmation, ends

    def stopped() -> bool:
        return catcher is not None and catcher.caught

    def live(program: dict[str, Any]) -> Judgement:
        result = run_program(program, config, finish, catcher)
        return None if result is None else judge(result, _declared(program), config.tolerated)

    search = _Search(config, runner or live, on_example, started=started, stopped=stopped)
    outcome = search.outcome
    for number in range(10_000):
        if outcome.examples >= config.examples or time.monotonic() >= search.deadline:
            break
        if stopped():
            outcome.stopped = True
            break
        before = outcome.examples
        found_now = search.round(number)
        if stopped() and found_now is not None:  # cut short while shrinking it: not reported, said to be in flight
            rule, _side, message = found_now[1]
            outcome.running.append(f"finding {rule} {signature(rule, message)} (not confirmed)")
        if stopped():
            outcome.stopped = True
            break
        if found_now is None:
            if outcome.examples == before:
                break  # the generator has nothing new left
            continue  # nothing new in this round: the next round draws from the next seed
        program, (rule, side, message) = found_now
        found = FuzzFinding(rule=rule, signature=signature(rule, message), side=side, message=message, program=program)
        search.known[found.key] = found
        confirmed = runner is not None or _confirmed(program, rule, config, finish, catcher)
        if stopped():  # cut short while confirming it: not reported, said to be in flight
            outcome.running.append(f"finding {rule} {found.signature} (not confirmed)")
            outcome.stopped = True
            break
        if not confirmed:
            found.count = 0  # a flake: remembered so it is not chased again, not reported
            continue
        outcome.findings.append(found)
        if on_finding is not None:
            on_finding(found, outcome)
        if config.stop_at_first:
            break
    outcome.elapsed = time.monotonic() - search.started
    return outcome


def _declared(program: dict[str, Any]) -> tuple[str, ...]:
    return tuple(program.get("kit_violations", ()))


def _confirmed(program: dict[str, Any], rule: str, config: FuzzConfig, until: float,
               catcher: SignalCatcher | None = None) -> bool:
    """The shrunk program fails with the same rule again (timing flakes on a loaded machine do not)."""
    if config.confirm <= 0:
        return True
    for _ in range(config.confirm):
        result = run_program(program, config, until, catcher)
        if result is None:  # cancelled by a signal
            return False
        again = judge(result, _declared(program), config.tolerated)
        if again is not None and again[0] == rule:
            return True
    return False
