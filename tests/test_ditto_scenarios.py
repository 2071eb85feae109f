"""Ditto's scenarios (contract + scenarios/ditto-*.yaml) against the test-only publisher of ditto_publisher.py.

The publisher uses a target's legal freedoms (random subscriptionIds, any chunking, a
failed answering requests on unknown ids), so every scenario is shown to pass under
them; the coordinator runs the same suite against the reference peer.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from ditto_publisher import FAULTS, running_publisher

from rsio_tck.binding import get_binding
from rsio_tck.scenarios import RunConfig, Verdict, load_directory, run_suite


def run(profile: str, faults: frozenset[str] = frozenset()) -> list[Any]:
    scenarios = load_directory(binding="ditto")

    async def go() -> list[Any]:
        async with running_publisher(faults=faults) as port:
            config = RunConfig(target=f"tcp://127.0.0.1:{port}", codec=profile, binding="ditto")
            return await run_suite(scenarios, config, jobs=4)

    return asyncio.run(go())


PASSED: set[str] = set()


@pytest.mark.parametrize("profile", ["streaming", "search"])
def test_the_ditto_suite_passes_on_a_correct_publisher(profile: str) -> None:
    results = run(profile)
    bad = [f"{r.id}: {r.verdict.value} {r.reason} {[(f.rule, f.got) for f in r.failures]} "
           f"{[f.message for f in r.findings]}"
           for r in results if r.verdict not in (Verdict.PASS, Verdict.SKIP)]
    assert not bad, "\n".join(bad)
    ran = [r for r in results if r.verdict is Verdict.PASS]
    print(f"{profile}: {len(ran)} passed, {len(results) - len(ran)} skipped")
    assert len(ran) >= (50 if profile == "streaming" else 15)
    PASSED.update(r.id for r in ran)
    owned = set(get_binding("ditto").rules())
    assert all(f.rule in owned for r in results for f in r.findings)


def test_at_least_60_scenarios_run_against_a_ditto_target() -> None:
    """Counted over both profiles by the suite test above (pytest runs it first, in file order)."""
    if not PASSED:
        pytest.skip("run with test_the_ditto_suite_passes_on_a_correct_publisher")
    assert len(PASSED) >= 60


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_each_fault_of_the_publisher_fails_scenarios_citing_its_rule(fault: str) -> None:
    profile = "search" if fault == "big-pages" else "streaming"
    results = run(profile, frozenset({fault}))
    failed = [r for r in results if r.verdict is Verdict.FAIL]
    cited = {f.rule for r in failed for f in r.findings} | {f.rule for r in failed for f in r.failures}
    assert FAULTS[fault] in cited, sorted(cited)
