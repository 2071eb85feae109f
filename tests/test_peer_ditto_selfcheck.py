"""The Ditto self-check: the kit's Ditto suite passes the Ditto reference peer on both profiles and catches
each of its faults with a scenario citing the fault's rule (issue 17: 100 %).

Both need the Ditto binding (judge, rules, scenarios) in the kit's registry; until it is there
the tests skip, saying so.  ``python -m rsio_tck.selfcheck ditto`` prints the same.
"""

from __future__ import annotations

import pytest

from rsio_tck.binding import get_binding
from rsio_tck.reference_peer.ditto import FAULTS
from rsio_tck.scenarios import Verdict, load_directory
from rsio_tck.selfcheck import check_all_faults, freedom_only, mutation_score, run_against_peer


def _ditto() -> None:
    try:
        get_binding("ditto")
    except ValueError as exc:
        pytest.skip(f"the Ditto binding is not in the kit yet: {exc}")


@pytest.mark.no_cover
@pytest.mark.parametrize("profile", ["streaming", "search"])
def test_the_correct_ditto_peer_fails_no_scenario(profile: str) -> None:
    _ditto()
    scenarios = load_directory(binding="ditto")
    results = run_against_peer(scenarios, profile, jobs=8, binding="ditto")
    assert results, "no Ditto scenario ran"
    bad = [r.explain() for r in results
           if r.verdict not in (Verdict.PASS, Verdict.SKIP) and not freedom_only(r, "ditto")]
    assert not bad, "\n\n".join(bad)


@pytest.mark.timeout(1800)
def test_every_ditto_fault_fails_a_scenario_that_cites_its_rule(capsys: pytest.CaptureFixture[str]) -> None:
    _ditto()
    outcomes = check_all_faults(binding="ditto")
    assert sorted(o.fault for o in outcomes) == sorted(FAULTS)
    missed = [f"{o.fault} ({o.rule}); failing: {', '.join(o.failed) or 'none'}"
              for o in outcomes if o.forceable and not o.caught]
    with capsys.disabled():
        print(f"\nDitto mutation score: {sum(o.caught for o in outcomes if o.forceable)}/"
              f"{sum(o.forceable for o in outcomes)} faults caught ({100 * mutation_score(outcomes):.0f}%)")
    assert not missed, "Ditto faults no scenario citing their rule caught:\n" + "\n".join(missed)
    assert mutation_score(outcomes) == 1.0


def test_an_unknown_binding_is_one_line() -> None:
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "rsio_tck.selfcheck", "nope"], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2 and "unknown binding 'nope'" in done.stderr and "Traceback" not in done.stderr
