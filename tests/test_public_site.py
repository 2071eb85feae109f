"""The published site's words, scorecards, rule pages and landing page, from hand-made run directories.

No Spark here: ``public`` and ``public_pages`` read the runs' own files, so each fact a page states can be
set up line by line and checked against what a reader must see.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jinja2 import Environment, PackageLoader, select_autoescape

from rsio_tck.pipeline.evidence import excerpt, reproduce_command
from rsio_tck.pipeline.landing import LandingError, write_landing
from rsio_tck.pipeline.public import WORD_ORDER, WORDS, Known, read_results, rule_outcomes, run_views, scorecard
from rsio_tck.pipeline.public_pages import public_view, write_public_pages
from rsio_tck.reader_words import SHOWN_WORDS
from rsio_tck.report.html import shown_counts
from rsio_tck.report.html import word as report_word
from rsio_tck.scenarios.result import Verdict

FLOW = "RS-FLOW-2"  # MUST
SHOULD_RULE = "RS-FLOW-3"  # SHOULD


def _result(scenario: str, verdict: str, rules: list[str], broken: tuple[str, ...] | list[str] = ()) -> dict[str, Any]:
    return {"id": scenario, "title": f"title of {scenario}", "rules": rules, "level": "MUST", "verdict": verdict,
            "violations": [{"rule": r, "message": f"[{r}] broken", "source": "monitor", "side": "server"}
                           for r in broken]}


def _run(root: Path, name: str, results: list[dict[str, Any]], *, started: float = 1.8e9, role: str = "server",
         transcripts: dict[str, str] | None = None) -> dict[str, Any]:
    run_dir = root / name
    (run_dir / "transcripts").mkdir(parents=True)
    (run_dir / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in results))
    (run_dir / "run.json").write_text(json.dumps({"target_role": role}))
    for scenario, text in (transcripts or {}).items():
        (run_dir / "transcripts" / f"{scenario}.txt").write_text(text)
    return {"run_id": name, "target": "impl", "target_version": "1.0", "kit_version": "0.1.0", "started": started,
            "path": str(run_dir), "binding": "rsocket", "fuzz": False}


def test_a_known_failure_is_a_failure_and_a_known_failure_that_did_not_show_is_a_pass() -> None:
    assert WORDS["xfail"] == WORDS["fail"] == "fail"
    assert WORDS["xpass"] == WORDS["pass"] == "pass"
    assert {WORDS["warn"], WORDS["skip"], WORDS["error"]} == {"warning", "not run", "not judged"}


def test_the_site_the_run_report_and_the_grid_speak_the_same_words() -> None:
    # One mapping (reader_words) for every page: the site's, the run report's and the grid's words agree.
    for outcome in Verdict:
        assert report_word(outcome.value) == WORDS[outcome.value]
    assert set(SHOWN_WORDS) == set(WORDS.values()) == set(WORD_ORDER)
    assert shown_counts({"xfail": 2, "fail": 1, "warn": 1, "error": 1}) == {
        "pass": 0, "fail": 3, "warning": 1, "not run": 0, "not judged": 1}


def test_a_failure_is_charged_to_the_rule_its_violations_name_not_to_the_rules_its_scenario_cites(
        tmp_path: Path) -> None:
    row = _run(tmp_path, "r1", [_result("ID-001", "xfail", ["RS-STREAMID-3"], broken=[FLOW]),
                                _result("RSFLOW-001", "pass", [FLOW])])
    outcomes = rule_outcomes(run_views([row])[0], {("impl", "ID-001"): Known(findings=("F1",))})
    assert outcomes[FLOW].word == "fail" and outcomes[FLOW].broken_by == ["ID-001"]
    assert outcomes[FLOW].known and outcomes[FLOW].findings == ["F1"] and not outcomes[FLOW].flaky
    assert outcomes["RS-STREAMID-3"].word == "not judged"  # its scenario stopped at another rule's failure


def test_a_failure_without_violations_is_charged_to_the_rules_its_scenario_cites(tmp_path: Path) -> None:
    row = _run(tmp_path, "r1", [_result("RSUNX-001", "fail", ["RS-IGNORE-1"])])
    outcomes = rule_outcomes(run_views([row])[0])
    assert outcomes["RS-IGNORE-1"].word == "fail" and not outcomes["RS-IGNORE-1"].known


def test_a_rule_is_flaky_only_when_every_scenario_that_broke_it_is(tmp_path: Path) -> None:
    row = _run(tmp_path, "r1", [_result("A", "xfail", [FLOW], [FLOW]), _result("B", "xfail", [FLOW], [FLOW])])
    view = run_views([row])[0]
    one = {("impl", "A"): Known(("F1",), flaky=True), ("impl", "B"): Known(("F1",))}
    both = {("impl", "A"): Known(("F1",), flaky=True), ("impl", "B"): Known(("F1",), flaky=True)}
    assert not rule_outcomes(view, one)[FLOW].flaky
    assert rule_outcomes(view, both)[FLOW].flaky


def test_an_xpass_is_a_pass_that_names_the_known_failure_that_did_not_show(tmp_path: Path) -> None:
    row = _run(tmp_path, "r1", [_result("A", "xpass", [FLOW])])
    outcome = rule_outcomes(run_views([row])[0], {("impl", "A"): Known(("F1",), flaky=True)})[FLOW]
    assert (outcome.word, outcome.unshown) == ("pass", ["F1"])


def test_the_scorecard_counts_rules_in_the_readers_words(tmp_path: Path) -> None:
    row = _run(tmp_path, "r1", [
        _result("A", "xfail", [FLOW], [FLOW]),  # a known failure: counts as broken
        _result("B", "pass", ["RS-STREAM-3"]),
        _result("C", "warn", [SHOULD_RULE], [SHOULD_RULE]),
        _result("D", "skip", ["RS-PUSH-1"]),
        _result("E", "error", ["RS-RR-1"]),
    ])
    run = run_views([row])[0]
    card = scorecard(run, rule_outcomes(run, {("impl", "A"): Known(("F1",))}), live=frozenset({"F1"}))
    assert (card.must_tested, card.must_broken, card.should_tested, card.should_warnings) == (2, 1, 1, 1)
    assert (card.not_judged, card.findings, card.role, card.binding) == (1, ("F1",), "server", "RSocket")
    assert card.badge_message == "1 of 2 MUST rules broken"


def test_a_listen_run_is_scored_as_a_client_and_reproduced_in_listen_mode(tmp_path: Path) -> None:
    row = _run(tmp_path, "r1", [_result("CLIENT-rsocket-metadata-push", "fail", ["RS-FRAME-9"])], role="client")
    assert run_views([row])[0].target_role == "client"
    command = reproduce_command("rsocket", "client", "CLIENT-rsocket-metadata-push")
    assert "--listen tcp://127.0.0.1:7878" in command and command.endswith("--client-test metadata-push")
    assert reproduce_command("rsocket", "server", "RSFRAG-012") == (
        "rsio-tck run --binding rsocket --target tcp://HOST:PORT -k RSFRAG-012")


TRANSCRIPT = """DEM-011: one-by-one requests  [xfail]  rules RS-FLOW-2
  monitor: [RS-FLOW-2] server as responder sent PAYLOAD on stream 1: 1 element(s) delivered with outstanding demand 0 (MUST, frame #3)
  transcript (>> kit to target, << target to kit):
        54.3ms #0    >> SETUP(...)  [00]
        59.6ms #1    >> REQUEST_STREAM(stream_id=1, initial_request_n=1)  [00]
        64.8ms #2    << PAYLOAD(stream_id=1, next=True, data=30)  [00]
        64.8ms #3    << PAYLOAD(stream_id=1, next=True, data=31)  [00]
        64.8ms #4    << PAYLOAD(stream_id=1, complete=True)  [00]
        66.3ms       >> (kit closes)  []
"""


def test_the_excerpt_highlights_the_frames_the_rules_findings_name() -> None:
    statements, lines, elided = excerpt(TRANSCRIPT.splitlines(), FLOW)
    assert [line.text.split()[1] for line in lines if line.highlighted] == ["#3"]
    assert len(lines) == 6 and not elided and statements[0].startswith("monitor: [RS-FLOW-2]")
    assert excerpt(TRANSCRIPT.splitlines(), "RS-STREAM-3")[0] == ()


def test_a_failed_expectation_highlights_the_targets_last_frame() -> None:
    text = """RSUNX-001: ...  [xfail]  rules RS-IGNORE-1
  [RS-IGNORE-1] (step 2) expected no signal for 0.1 s; got 1 signal(s), last the target closed the connection
  transcript (>> kit to target, << target to kit):
         0.4ms #0    >> SETUP(...)  [00]
         2.2ms       >> raw bytes (9)  [00000600000000fa00]
         6.5ms       << (target closed)  []
         7.4ms       >> (kit closes)  []
"""
    statements, lines, _ = excerpt(text.splitlines(), "RS-IGNORE-1")
    assert [line.text for line in lines if line.highlighted] == ["6.5ms       << (target closed)  []"]
    assert statements == ("[RS-IGNORE-1] (step 2) expected no signal for 0.1 s; got 1 signal(s), last the target "
                          "closed the connection",)


def test_a_results_file_with_a_bad_line_keeps_the_good_ones(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    (tmp_path / "results.jsonl").write_text('{"id": "A", "verdict": "pass"}\nnot json\n{"id": "B", "verdict": "odd"}\n')
    assert [r["id"] for r in read_results(tmp_path)] == ["A"]
    assert "line 2: not a result" in caplog.text and "line 3: not a result" in caplog.text


def _env() -> Environment:
    return Environment(loader=PackageLoader("rsio_tck.pipeline", "templates"), autoescape=select_autoescape(["html"]))


def test_a_failing_rule_gets_a_page_with_the_rule_the_frames_and_the_command(tmp_path: Path) -> None:
    older = _run(tmp_path, "r0", [_result("DEM-011", "pass", [FLOW])], started=1.7e9)
    row = _run(tmp_path, "r1", [_result("DEM-011", "fail", [FLOW], [FLOW])], transcripts={"DEM-011": TRANSCRIPT})
    view = public_view(run_views([row, older]))
    (target,) = view.targets
    page = target.pages[FLOW]
    assert (page.failed_runs, page.judged_runs) == (1, 2)  # the rate over the runs the site holds
    common = {"generated": "g", "kit_version": "k", "runs": [row, older], "has_grid": False, "protocols": "RSocket"}
    write_public_pages(_env(), tmp_path / "site", view, None, common)
    text = (tmp_path / "site" / page.path).read_text()
    assert "rsio-tck run --binding rsocket --target tcp://HOST:PORT -k DEM-011" in text
    assert '<span class="hit">64.8ms #3' in text and "flaky: failed in 1 of 2 runs" in text
    assert "Elements (PAYLOADs with N" in text  # SPEC.md's statement of the rule
    assert 'href="../../spec.html#rs-flow-2-must-' in text
    spec = (tmp_path / "site" / "spec.html").read_text()
    assert 'id="rs-flow-2-must-' in spec
    badge = (tmp_path / "site" / target.badge).read_text()
    assert "1 of 1 MUST rules broken" in badge and "<svg" in badge
    for word in ("xfail", "xpass", "None"):
        assert word not in text


def _site_json(root: Path, folder: str, cards: list[dict[str, Any]], grid: list[dict[str, Any]] | None) -> None:
    (root / folder).mkdir(parents=True)
    data: dict[str, Any] = {"scorecards": cards, "runs": [{}]}
    if grid:
        data["grid_cells"] = grid
    (root / folder / "site.json").write_text(json.dumps(data))


CARD = {"target": "impl", "role": "server", "version": "1.0", "kit_version": "0.1.0", "binding": "RSocket",
        "run_id": "r1", "date": "2026-11-27", "must_tested": 40, "must_broken": 3, "should_tested": 4,
        "should_warnings": 1, "not_judged": 0, "findings": ["F1"], "badge": "badges/impl-1.0.svg",
        "page": "targets/impl.html", "badge_message": "3 of 40 MUST rules broken", "rule_pages": {}}


def test_the_landing_page_has_a_scorecard_per_implementation_and_role_and_the_grid(tmp_path: Path) -> None:
    cell = {"client": "impl", "server": "impl", "word": "fail", "passed": 8, "failed": 1, "findings": ["F7"],
            "page": "grid/impl--impl.html"}
    _site_json(tmp_path, "server", [CARD], [cell])
    _site_json(tmp_path, "client", [dict(CARD, role="client", must_broken=0, findings=[])], None)
    page = write_landing(tmp_path, [("servers", "server"), ("clients", "client")], "RSocket").read_text()
    assert page.count('<tr data-target="impl"') == 2
    assert 'href="server/targets/impl.html"' in page and 'src="server/badges/impl-1.0.svg"' in page
    assert 'href="server/findings/F1.html"' in page and 'href="server/grid/impl--impl.html">1 of 9 fail' in page
    assert 'name="viewport"' in page


@pytest.mark.parametrize("content", ["not json", "[]", '{"runs": []}'])
def test_a_site_without_scorecards_is_one_line(tmp_path: Path, content: str) -> None:
    (tmp_path / "server").mkdir()
    (tmp_path / "server" / "site.json").write_text(content)
    with pytest.raises(LandingError) as raised:
        write_landing(tmp_path, [("servers", "server")], "RSocket")
    assert "\n" not in str(raised.value) and "site.json" in str(raised.value)
