"""The report never shows pass for a rule SPEC.md marks untested against a target.

Such a rule (ID-4, BYE-3) is cited by scenarios that pass against every target,
because no scenario can make a target exercise it.  The report reads SPEC.md's
marking through the catalogue; this test reads SPEC.md itself, so a rule marked
there but not in the catalogue (or the other way round) fails here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from test_spec_catalogue import spec

from rsio_tck.catalogue import RULES, UNTESTED_ON_TARGET
from rsio_tck.report.model import report_data
from rsio_tck.report.rundir import RunFiles
from rsio_tck.scenarios import load_directory


def marked_in_spec() -> set[str]:
    return {s.id for s in spec().sections for name, text in s.bullets if name == "Observed" and UNTESTED_ON_TARGET in text}


def _result(scenario_id: str, rules: list[str], verdict: str, violations: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"id": scenario_id, "title": scenario_id, "rules": rules, "level": "MUST", "verdict": verdict,
            "duration": 0.0, "violations": violations or [], "reason": ""}


def _outcomes(tmp_path: Path, results: list[dict[str, Any]]) -> dict[str, str]:
    data = report_data(RunFiles(run_dir=tmp_path, run={}, results=results, fuzz=None))
    return {row["id"]: row["outcome"] for area in data["areas"] for row in area["rules"]}


def test_spec_and_catalogue_mark_the_same_rules_untested_against_a_target() -> None:
    marked = marked_in_spec()
    assert {"ID-4", "BYE-3"} <= marked
    assert marked == {rule for rule, r in RULES.items() if r.untested_on_target}


def test_a_whole_suite_of_passes_shows_no_pass_for_an_untested_rule(tmp_path: Path) -> None:
    results = [_result(s.id, list(s.rules), "pass") for s in load_directory()]
    outcomes = _outcomes(tmp_path, results)
    cited = {rule for r in results for rule in r["rules"]}
    shown_passing = sorted(rule for rule in marked_in_spec() if outcomes[rule] == "pass")
    assert shown_passing == [], f"the report shows pass for rules SPEC.md marks untested against a target: {shown_passing}"
    assert all(outcomes[rule] == "untested" for rule in marked_in_spec())
    assert all(outcomes[rule] == "pass" for rule in cited - marked_in_spec())


def test_a_broken_untested_rule_still_fails(tmp_path: Path) -> None:
    violation = {"rule": "BYE-3", "message": "closed before the goodbye", "source": "monitor", "side": "server",
                 "level": "MUST"}
    outcomes = _outcomes(tmp_path, [_result("BYE-001", ["BYE-2", "BYE-3"], "fail", [violation]),
                                    _result("STR-009", ["STR-8", "ID-4"], "pass")])
    assert outcomes["BYE-3"] == "fail"
    assert outcomes["ID-4"] == "untested"
    assert outcomes["STR-8"] == "pass"
