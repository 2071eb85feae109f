"""The kit checking itself against its own reference peer, binding by binding.

Correct peer: every scenario passes (or skips with a reason), over every profile.
Faulty peer: each fault must fail at least one scenario that cites the rule the
fault breaks.  The share of faults caught is the mutation score.  The binding's
peer (the module ``Binding.peer_module`` names) names its faults and the SHOULD rules it
departs from on purpose; the embedded peer serves the binding given.

A fault is tried on the binding's profiles in order until caught: the default
profile first, the others only for a fault it misses (a fault of the draft's own
wire, RS-DRAFT-*, shows only there), so a fault-free run costs one profile.  A
fault that names the profiles it shows on (``fault.profiles``: Ditto's search-only
and streaming-only faults) is tried on those alone.
A fault of the peer's client role (its name starts ``client-``) is run through
listen mode instead: the kit serves the peer's client program
(``Binding.client_program``) with the fault on, and a client test case citing the
fault's rule must fail.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from .binding import DEFAULT_BINDING, get_binding
from .embedded import EmbeddedPeer
from .scenarios import RunConfig, Scenario, ScenarioResult, Verdict, load_directory, run_suite

# Faults whose rule no scenario can force a target to exercise (SPEC.md says so under the
# rule); the reference peer's own tests show these faults change its behaviour.
NOT_FORCEABLE: dict[str, str] = {
    "BYE-3": "only a target that starts an orderly goodbye on its own can break it; no scenario can make it",
}

CLIENT_FAULT_PREFIX = "client-"
FAULT_WORKERS = 4  # faults checked at once (each against a peer process of its own)
WINDOW_TRIES = 3  # more runs of a time-window fault's citing scenarios, one at a time, before it counts as missed


@dataclass(frozen=True, slots=True)
class FaultOutcome:
    fault: str
    rule: str
    caught_by: tuple[str, ...]  # failing scenarios that cite the fault's rule
    failed: tuple[str, ...]  # every failing scenario

    @property
    def caught(self) -> bool:
        return bool(self.caught_by)

    @property
    def forceable(self) -> bool:
        return self.rule not in NOT_FORCEABLE


def _peer(binding: str) -> Any:
    from rsio_tck.reference_peer.peer_binding import get_peer_binding

    return get_peer_binding(binding)


def freedom_only(result: ScenarioResult, binding: str = DEFAULT_BINDING) -> bool:
    """A warning caused only by a SHOULD the peer departs from on purpose (RS-IO's wide integers):
    the correct peer's expected outcome, where a failure of the same rule would be a regression."""
    target = {f.rule for f in result.findings if str(f.side) == "server"}
    return (result.verdict is Verdict.WARN and not result.failures and bool(target)
            and target <= frozenset(_peer(binding).deliberate_warnings))


def run_against_peer(scenarios: list[Scenario], codec: str | None = None, faults: tuple[str, ...] = (),
                     jobs: int = 8, *, binding: str = DEFAULT_BINDING, extra: tuple[str, ...] = (),
                     stop_when: Callable[[ScenarioResult], bool] | None = None) -> list[ScenarioResult]:
    """The scenarios against the binding's embedded peer.  ``extra``: more of the peer's flags
    (``--tiny-writes 7``).  ``stop_when``: once a result satisfies it, the scenarios still running are
    cancelled, and only the finished ones are returned."""
    profile = codec or get_binding(binding).profiles[0]
    with EmbeddedPeer(binding=binding, profile=profile, faults=faults, extra=extra) as url:
        config = RunConfig(target=url, codec=profile, binding=binding)
        if stop_when is None:
            return asyncio.run(run_suite(scenarios, config, jobs=jobs))
        return asyncio.run(_until(scenarios, config, jobs, stop_when))


async def _until(scenarios: list[Scenario], config: RunConfig, jobs: int,
                 stop_when: Callable[[ScenarioResult], bool]) -> list[ScenarioResult]:
    finished: list[ScenarioResult] = []
    enough = asyncio.Event()

    def note(result: ScenarioResult) -> None:
        finished.append(result)
        if stop_when(result):
            enough.set()

    suite = asyncio.ensure_future(run_suite(scenarios, config, jobs=jobs, on_result=note))
    waiter = asyncio.ensure_future(enough.wait())
    await asyncio.wait({suite, waiter}, return_when=asyncio.FIRST_COMPLETED)
    waiter.cancel()
    if not suite.done():
        suite.cancel()  # each scenario's connection closes as its task unwinds
        with contextlib.suppress(asyncio.CancelledError):
            await suite
    return finished


def run_client_faults(faults: tuple[str, ...], profile: str, *, binding: str,
                      rule: str | None = None) -> list[ScenarioResult]:
    """Listen mode against the peer's client program with ``faults`` on: every client test case, or
    only those citing ``rule`` when one does (the others cannot catch a fault of that rule)."""
    import sys

    from .listen.cases import client_tests
    from .listen.cli import serving_peer_factory
    from .listen.runner import run_client_tests

    cases = list(client_tests(binding))
    cases = [case for case in cases if rule in case.rules] or cases
    command = f"{sys.executable} -m {get_binding(binding).client_program} --profile {profile}"
    command += "".join(f" --fault {name}" for name in faults)
    return asyncio.run(run_client_tests(cases, command, "tcp://127.0.0.1:0", get_binding(binding),
                                        profile, serving_peer_factory(binding, profile), timeout=20.0))


def is_client_fault(fault: str, binding: str) -> bool:
    return fault.startswith(CLIENT_FAULT_PREFIX) and get_binding(binding).client_program is not None


def check_fault(fault: str, rule: str, scenarios: list[Scenario], codec: str | None = None, *,
                binding: str = DEFAULT_BINDING, profiles: tuple[str, ...] = ()) -> FaultOutcome:
    """Run the suite against the peer with ``fault`` switched on, on ``codec`` or else on each profile
    of the binding in turn until the fault is caught.

    Only the scenarios (client test cases, for a client fault) that cite the fault's rule can catch
    it (``caught_by``), so only they are run: the rest of the suite could not change the outcome, and
    running it for each of some 150 faults was most of ``make test``.  For a fault they miss, the whole
    suite runs once more on the first profile, so ``failed`` shows every scenario the fault disturbs.
    ``profiles``: the only profiles the fault shows on (empty: every profile)."""
    profiles = (codec,) if codec else profiles or tuple(get_binding(binding).profiles)
    # A result cites the binding's own IDs of its scenario's rules (RSocket says RS-ERROR-4 for a contract rule).
    cited = get_binding(binding).contract_rule
    citing = [scenario for scenario in scenarios if rule in {cited(r) for r in scenario.rules}]
    failed: list[str] = []

    def failing(results: list[ScenarioResult]) -> list[ScenarioResult]:
        # A warning the peer's own freedoms cause (wide integers) is no sign of the fault.
        return [r for r in results if r.verdict in (Verdict.FAIL, Verdict.WARN) and not freedom_only(r, binding)]

    for profile in profiles:
        if is_client_fault(fault, binding):
            results = run_client_faults((fault,), profile, binding=binding, rule=rule)
        elif citing:
            # The first citing scenario that fails decides: the rest (a flood that never stops may take
            # a minute to be called "still sending") cannot change the outcome.
            results = run_against_peer(citing, profile, (fault,), jobs=8, binding=binding,
                                       stop_when=lambda r: bool(failing([r])) and rule in r.rules)
        else:
            continue  # no scenario cites the rule: nothing can catch the fault
        bad = failing(results)
        failed += [r.id for r in bad if r.id not in failed]
        caught = tuple(r.id for r in bad if rule in r.rules)
        if caught:
            return FaultOutcome(fault, rule, caught, tuple(failed))
    if not is_client_fault(fault, binding):
        # Missed: which scenarios the fault disturbs at all is what a reader needs to find out why.
        results = run_against_peer(scenarios, profiles[0], (fault,), jobs=8, binding=binding)
        bad = failing(results)
        failed += [r.id for r in bad if r.id not in failed]
        # A citing scenario that fails here catches the fault too.  Some faults show only within a time
        # window (hs-stream-before-hello: HS-2 sees the early frames only if they arrive before the kit's
        # clientHello), and under load, with other faults checked beside it, the peer can miss the window
        # in the first run; this is a second run of the same scenarios, not a looser judgement.
        caught = tuple(r.id for r in bad if rule in r.rules)
        if caught:
            return FaultOutcome(fault, rule, caught, tuple(failed))
        if citing and getattr(_peer(binding).faults.get(fault), "window", False):
            # A fault that shows only within a time window (Fault.window) was missed twice, by a starved
            # peer: its citing scenarios run again one at a time, the peer's only load, up to WINDOW_TRIES.
            for _ in range(WINDOW_TRIES):
                results = run_against_peer(citing, profiles[0], (fault,), jobs=1, binding=binding)
                caught = tuple(r.id for r in failing(results) if rule in r.rules)
                if caught:
                    return FaultOutcome(fault, rule, caught, tuple(failed))
    return FaultOutcome(fault, rule, (), tuple(failed))


def mutation_score(outcomes: list[FaultOutcome]) -> float:
    """Share of the faults a scenario can force that the suite caught."""
    counted = [o for o in outcomes if o.forceable]
    return sum(o.caught for o in counted) / max(len(counted), 1)


def check_all_faults(scenarios: list[Scenario] | None = None, codec: str | None = None,
                     on_outcome: Callable[[FaultOutcome], None] | None = None, *,
                     binding: str = DEFAULT_BINDING, workers: int = FAULT_WORKERS) -> list[FaultOutcome]:
    """Every fault of the binding's peer, ``workers`` at a time: each has a peer process of its own, and
    most of a check is the kit waiting on a silence window, so checks overlap well even on two cores.
    ``on_outcome`` sees the outcomes in the faults' order."""
    faults = _peer(binding).faults
    chosen = scenarios if scenarios is not None else load_directory(binding=binding)

    def check(item: tuple[str, Any]) -> FaultOutcome:
        name, fault = item
        return check_fault(name, fault.rule, chosen, codec, binding=binding,
                           profiles=tuple(getattr(fault, "profiles", ())))

    outcomes = []
    with ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="selfcheck") as pool:
        for outcome in pool.map(check, sorted(faults.items())):
            outcomes.append(outcome)
            if on_outcome is not None:
                on_outcome(outcome)
    return outcomes


def main() -> None:
    """``python -m rsio_tck.selfcheck [BINDING]``: the correct peer on every profile, then every fault."""
    import sys

    binding = sys.argv[1] if len(sys.argv) > 1 else DEFAULT_BINDING
    try:
        get_binding(binding)
        _peer(binding)
    except ValueError as exc:  # a binding the kit or its reference peer does not have: one line, no traceback
        print(f"selfcheck: {exc}", file=sys.stderr)
        sys.exit(2)
    scenarios = load_directory(binding=binding)
    for codec in get_binding(binding).profiles:
        results = run_against_peer(scenarios, codec, jobs=16, binding=binding)
        bad = [r for r in results if r.verdict not in (Verdict.PASS, Verdict.SKIP) and not freedom_only(r, binding)]
        print(f"{binding}/{codec}: {len(results) - len(bad)}/{len(results)} pass or skip")
        for result in bad:
            print(result.explain())

    def show(o: FaultOutcome) -> None:
        mark = "caught" if o.caught else "MISSED"
        print(f"{mark:6s} {o.fault:36s} {o.rule:8s} by {', '.join(o.caught_by[:4]) or '-'}"
              f"{'' if o.caught else f'  (failed: {chr(44).join(o.failed[:6]) or chr(45)})'}", flush=True)

    outcomes = check_all_faults(scenarios, on_outcome=show, binding=binding)
    counted = [o for o in outcomes if o.forceable]
    print(f"mutation score: {sum(o.caught for o in counted)}/{len(counted)} faults caught "
          f"({100 * mutation_score(outcomes):.0f}%); not forceable by any scenario: "
          f"{', '.join(o.fault for o in outcomes if not o.forceable) or 'none'}")


if __name__ == "__main__":
    main()
