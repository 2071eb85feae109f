"""The kit checking itself against its own reference peer.

Correct peer: every scenario passes (or skips with a reason), over both codecs.
Faulty peer: each fault must fail at least one scenario that cites the rule the
fault breaks.  The share of faults caught is the mutation score.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from .embedded import EmbeddedPeer
from .scenarios import RunConfig, Scenario, ScenarioResult, Verdict, load_directory, run_suite


@dataclass(frozen=True, slots=True)
class FaultOutcome:
    fault: str
    rule: str
    caught_by: tuple[str, ...]  # failing scenarios that cite the fault's rule
    failed: tuple[str, ...]  # every failing scenario

    @property
    def caught(self) -> bool:
        return bool(self.caught_by)


def run_against_peer(scenarios: list[Scenario], codec: str = "msgpack", faults: tuple[str, ...] = (),
                     jobs: int = 8) -> list[ScenarioResult]:
    with EmbeddedPeer(codec=codec, faults=faults) as url:
        return asyncio.run(run_suite(scenarios, RunConfig(target=url, codec=codec), jobs=jobs))


def check_fault(fault: str, rule: str, scenarios: list[Scenario], codec: str = "msgpack") -> FaultOutcome:
    """Run the scenarios citing ``rule`` (and their area) against the peer with ``fault`` on."""
    area = rule.rsplit("-", 1)[0]
    chosen = [s for s in scenarios if rule in s.rules or s.area == area] or scenarios
    results = run_against_peer(chosen, codec, (fault,))
    failed = tuple(r.id for r in results if r.verdict in (Verdict.FAIL, Verdict.WARN))
    caught = tuple(r.id for r in results if r.verdict in (Verdict.FAIL, Verdict.WARN) and rule in r.rules
                   or any(v["rule"] == rule for v in r.violations))
    return FaultOutcome(fault, rule, caught, failed)


def main() -> None:
    scenarios = load_directory()
    for codec in ("msgpack", "varint"):
        results = run_against_peer(scenarios, codec)
        bad = [r for r in results if r.verdict not in (Verdict.PASS, Verdict.SKIP)]
        print(f"{codec}: {len(results) - len(bad)}/{len(results)} pass or skip")
        for result in bad:
            print(result.explain())


if __name__ == "__main__":
    main()
