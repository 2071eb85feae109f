"""The kit checks itself: the suite passes the reference peer and catches each of its faults."""

from __future__ import annotations

import pytest

from rsio_tck.catalogue import RULES
from rsio_tck.reference_peer.rsio.faults import FAULTS
from rsio_tck.scenarios import Verdict, load_directory
from rsio_tck.selfcheck import NOT_FORCEABLE, check_all_faults, freedom_only, mutation_score, run_against_peer


@pytest.mark.no_cover
@pytest.mark.parametrize("codec", ["msgpack", "varint"])
def test_the_correct_peer_fails_no_scenario(codec: str) -> None:
    results = run_against_peer(load_directory(), codec, jobs=8)
    bad = [r.explain() for r in results if r.verdict not in (Verdict.PASS, Verdict.SKIP) and not freedom_only(r)]
    assert not bad, "\n\n".join(bad)
    # Skips only for codec restrictions: the reference peer claims every capability.
    assert all("codec" in r.reason for r in results if r.verdict is Verdict.SKIP)


@pytest.mark.timeout(900)
def test_every_fault_fails_a_scenario_that_cites_its_rule(capsys: pytest.CaptureFixture[str]) -> None:
    outcomes = check_all_faults()
    assert len(outcomes) == len(FAULTS) >= 20
    missed = [f"{o.fault} ({o.rule}); failing scenarios: {', '.join(o.failed) or 'none'}"
              for o in outcomes if o.forceable and not o.caught]
    with capsys.disabled():
        print(f"\nmutation score: {sum(o.caught for o in outcomes if o.forceable)}/"
              f"{sum(o.forceable for o in outcomes)} faults caught ({100 * mutation_score(outcomes):.0f}%)")
    assert not missed, "faults no scenario citing their rule caught:\n" + "\n".join(missed)
    assert mutation_score(outcomes) == 1.0


def test_exemptions_name_real_rules_that_spec_calls_unforceable() -> None:
    from pathlib import Path

    spec = (Path(__file__).resolve().parents[1] / "SPEC.md").read_text()
    for rule in NOT_FORCEABLE:
        assert rule in RULES
        section = spec.split(f"### {rule} ", 1)[1].split("\n### ", 1)[0]
        assert "no scenario can force" in section


@pytest.mark.timeout(900)
def test_every_rsocket_fault_fails_a_scenario_or_client_test_case_that_cites_its_rule(
        capsys: pytest.CaptureFixture[str]) -> None:
    """RSocket's mutation score is 100 %: each fault of the RSocket reference peer (its client faults
    through listen mode, the draft's on the draft profile) fails a scenario or client test case citing its rule."""
    from rsio_tck.reference_peer.rsocket import FAULTS as RSOCKET_FAULTS

    outcomes = check_all_faults(binding="rsocket")
    assert sorted(o.fault for o in outcomes) == sorted(RSOCKET_FAULTS)
    assert any(o.fault.startswith("client-") and o.caught_by[0].startswith("CLIENT-rsocket-") for o in outcomes)
    missed = [f"{o.fault} ({o.rule}); failing: {', '.join(o.failed) or 'none'}"
              for o in outcomes if o.forceable and not o.caught]
    with capsys.disabled():
        print(f"\nRSocket mutation score: {sum(o.caught for o in outcomes if o.forceable)}/"
              f"{sum(o.forceable for o in outcomes)} faults caught ({100 * mutation_score(outcomes):.0f}%)")
    assert not missed, "RSocket faults no scenario or client test case citing their rule caught:\n" + "\n".join(missed)
    assert mutation_score(outcomes) == 1.0
