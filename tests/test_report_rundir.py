"""The run directory and the compliance report: schemas, fingerprint, matrix, rebuilding from files."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from report_run import CHOSEN, shared_run
from typer.testing import CliRunner

from rsio_tck.binding import get_binding
from rsio_tck.catalogue import RULES
from rsio_tck.cli import app
from rsio_tck.report import build
from rsio_tck.report.model import spec_anchor
from rsio_tck.report.schema import NAMES, check_run_dir, load_schema, problems


@pytest.fixture(scope="module")
def run_dir() -> Path:
    return shared_run()


def _report(run_dir: Path) -> dict:  # type: ignore[type-arg]
    return json.loads((run_dir / "report" / "report.json").read_text())


def test_schemas_are_versioned_and_documented() -> None:
    for name in NAMES:
        schema = load_schema(name)
        assert schema["$id"].endswith(f"/{name}/v1")
        assert schema["description"] and schema["title"]


def test_every_file_of_the_run_validates_against_its_schema(run_dir: Path) -> None:
    assert (run_dir / "report" / "report.json").exists()
    assert check_run_dir(run_dir) == []


def test_schemas_reject_broken_documents(run_dir: Path) -> None:
    run = json.loads((run_dir / "run.json").read_text())
    assert problems("run", {**run, "codec": "json"})
    line = json.loads((run_dir / "results.jsonl").read_text().splitlines()[0])
    assert problems("result", {**line, "verdict": "maybe"})
    assert problems("report", {**_report(run_dir), "fuzz": {"schema": "rsio-tck/fuzz/v1"}})


def test_each_scenario_leaves_a_trace_a_pcap_and_a_transcript(run_dir: Path) -> None:
    results = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]
    assert sorted(r["id"] for r in results) == sorted(CHOSEN)
    verdicts = {r["id"]: r["verdict"] for r in results}
    assert verdicts == {"HS-001": "pass", "DEM-001": "fail", "DEM-002": "fail", "DEM-003": "pass", "SPLIT-002": "skip"}
    for scenario_id, verdict in verdicts.items():
        if verdict == "skip":
            assert not (run_dir / "traces" / f"{scenario_id}.trace").exists()
            continue
        assert (run_dir / "traces" / f"{scenario_id}.trace").stat().st_size > 0
        assert (run_dir / "pcaps" / f"{scenario_id}.pcap").stat().st_size > 0
        assert scenario_id in (run_dir / "transcripts" / f"{scenario_id}.txt").read_text()


def test_run_json_fingerprints_the_target(run_dir: Path) -> None:
    run = json.loads((run_dir / "run.json").read_text())
    assert run["fingerprint"]["hello"] == {"version": 0, "extensions": [], "hex": "020090"}
    assert run["fingerprint"]["capabilities"]["implementation"] == "reference peer (faulty)"
    assert "tck/large" not in run["fingerprint"]["capabilities"]["tokens"]
    assert run["counts"] == {"pass": 2, "fail": 2, "skip": 1}
    assert run["run_id"] == run_dir.name


def test_matrix_lists_every_rule_of_the_binding_with_untested_ones_shown(run_dir: Path) -> None:
    # Every RS-IO rule, and only those: an RS-IO run says nothing about RSocket's or Ditto's rules
    # (it listed every binding's rules, most of them "untested", until issue 26 part 4).
    report = _report(run_dir)
    rows = {row["id"]: row for area in report["areas"] for row in area["rules"]}
    own = get_binding("rsio").rules()
    assert set(rows) == set(own) and report["rules_total"] == len(own) < len(RULES)
    assert rows["DEM-1"]["outcome"] == "fail" and rows["DEM-1"]["counts"]["fail"] >= 2
    assert rows["HS-2"]["outcome"] == "pass"
    assert rows["BYE-6"]["outcome"] == "untested"
    assert rows["SPLIT-2"]["outcome"] in ("skip", "untested")
    assert report["badge"]["outcome"] == "fail" and report["badge"]["color"] == "#e05d44"
    index = (run_dir / "report" / "index.html").read_text()
    for rule in RULES:
        assert (f'id="rule-{rule}"' in index) == (rule in own)
    assert index.count('class="v v-untested"') >= 40
    assert "<script" not in index
    # The report speaks the published site's words (rsio_tck.reader_words): the skipped scenario is "not run",
    # and no label shows the kit's own outcome names.
    assert '<span class="v v-not-run">not run</span>' in index
    assert not re.search(r'class="v v-(skip|warn|error|xfail|xpass)"', index)


def test_rule_anchors_match_spec_headings() -> None:
    spec = Path(__file__).resolve().parents[1] / "SPEC.md"
    headings = re.findall(r"^### (.+)$", spec.read_text(), flags=re.M)
    slugs = {re.sub(r"[^a-z0-9 -]", "", h.lower()).replace(" ", "-") for h in headings}
    assert {spec_anchor(rule) for rule in RULES.values()} <= slugs


def test_scenario_page_highlights_violations_and_escapes(run_dir: Path) -> None:
    page = (run_dir / "report" / "scenarios" / "DEM-001.html").read_text()
    assert 'class="violations"' in page and "DEM-1" in page
    assert re.search(r'<span class="hit">\s*[\d.]+ms #\d+\s+&lt;&lt; onNext', page)  # the offending frame's line
    assert "<< " not in page  # transcript arrows are escaped
    assert (run_dir / "report" / "scenarios" / "SPLIT-002.html").exists()


def test_badge_is_an_svg_with_the_counts(run_dir: Path) -> None:
    svg = (run_dir / "report" / "badge.svg").read_text()
    assert svg.startswith("<svg") and "RS-IO" in svg and "2/4 pass, 2 fail" in svg


def test_rebuild_is_idempotent_and_needs_only_the_files(run_dir: Path, tmp_path: Path) -> None:
    copy = tmp_path / run_dir.name
    shutil.copytree(run_dir, copy)
    before = {p.relative_to(copy): p.read_bytes() for p in (copy / "report").rglob("*") if p.is_file()}
    shutil.rmtree(copy / "report")
    shutil.rmtree(copy / "pcaps")
    result = CliRunner().invoke(app, ["report", str(copy)])
    assert result.exit_code == 0, result.output
    after = {p.relative_to(copy): p.read_bytes() for p in (copy / "report").rglob("*") if p.is_file()}
    assert after == before
    assert sorted(p.name for p in (copy / "pcaps").iterdir()) == sorted(p.name for p in (run_dir / "pcaps").iterdir())
    assert build(copy) == copy / "report" / "index.html"


def test_fuzz_findings_appear_in_the_report(run_dir: Path, tmp_path: Path) -> None:
    copy = tmp_path / run_dir.name
    shutil.copytree(run_dir, copy)
    fuzz = {"schema": "rsio-tck/fuzz/v1", "run_id": copy.name, "target": "tcp://127.0.0.1:1", "seed": 7,
            "examples": 500, "elapsed": 3.5, "findings": [
                {"rule": "DEM-1", "signature": "onNext beyond demand <x>", "side": "server",
                 "message": "delivered 1 element beyond demand", "scenario_file": "fuzz-findings/f1.yaml", "count": 3}]}
    assert problems("fuzz", fuzz) == []
    (copy / "fuzz.json").write_text(json.dumps(fuzz))
    build(copy)
    index = (copy / "report" / "index.html").read_text()
    assert 'id="fuzz"' in index and "onNext beyond demand &lt;x&gt;" in index
    assert _report(copy)["fuzz"]["seed"] == 7
    assert check_run_dir(copy) == []


def test_report_command_fails_on_a_missing_directory(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["report", str(tmp_path / "nope")])
    assert result.exit_code == 2


def test_run_json_records_the_name_given_with_name(run_dir: Path) -> None:
    run = json.loads((run_dir / "run.json").read_text())
    assert run["target_name"] is None and run["target_version"] is None  # none given: the capabilities name it
    assert problems("run", {**run, "target_name": "acme", "target_version": "2.0"}) == []
    assert problems("run", {**run, "target_name": ""})  # an empty name is no name


@pytest.mark.parametrize("command", ["run", "fuzz"])
def test_a_bad_name_is_a_one_line_usage_error(command: str, tmp_path: Path) -> None:
    result = CliRunner().invoke(app, [command, "--name", "acme@", "--report-dir", str(tmp_path), "--quiet"])
    assert result.exit_code == 2
    assert "--name 'acme@': the version after '@' is empty" in result.output
    assert "Traceback" not in result.output and list(tmp_path.iterdir()) == []
