"""The multi-target site as a new user meets it: real runs against two unnamed targets on one host.

Two embedded reference peers listen on loopback, one correct and one with a
fault, and neither has a capabilities file.  ``rsio-tck run`` runs a slice of
the suite holding deliberate kit violations (malformed input, a request of 0)
against each, once more against the correct one under ``--name``, and
``rsio-tck fuzz`` fuzzes it under another name; ``rsio-tck publish`` builds the
site.  The site must show four targets, keyed by URL with the port where
unnamed, and mark "in the traffic" only the faulty target's own violations.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from lxml import html

pytest.importorskip("pyspark")

from pipeline_spark import session  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from rsio_tck.cli import app  # noqa: E402
from rsio_tck.embedded import EmbeddedPeer  # noqa: E402
from rsio_tck.pipeline.ingest import read_table  # noqa: E402
from rsio_tck.report.schema import check_run_dir  # noqa: E402

SLICE = "DEM-001 or DEM-003 or ERR-002 or HS-003"  # a fault to catch; DEM-6, ERR-4, BYE-2, HS-3 by the kit


def _invoke(*args: str) -> str:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code in (0, 1), result.output + repr(result.exception)
    return result.output


def test_unnamed_targets_stay_apart_and_marks_count_only_what_the_target_did(tmp_path: Path) -> None:
    reports, site = tmp_path / "reports", tmp_path / "site"
    common = ("--report-dir", str(reports), "--quiet", "--jobs", "4", "-k", SLICE)
    with EmbeddedPeer() as good, EmbeddedPeer(faults=["dem-beyond-demand"]) as bad:
        _invoke("run", "--target", good, *common)
        _invoke("run", "--target", bad, *common)
        _invoke("run", "--target", good, "--name", "acme@2.0", *common)
        _invoke("fuzz", "--target", good, "--name", "fuzzed", "--examples", "3", "--time-budget", "10",
                "--report-dir", str(reports), "--quiet")
    run_dirs = sorted(reports.iterdir())
    assert len(run_dirs) == 4
    records = [json.loads((d / "run.json").read_text()) for d in run_dirs]  # the fuzz run's too: opened as a run's
    assert [(r["target_name"], r["target_version"]) for r in records] == [(None, None), (None, None), ("acme", "2.0"),
                                                                          ("fuzzed", None)]
    for run_dir in run_dirs:
        assert check_run_dir(run_dir) == []
    fuzz = json.loads((run_dirs[-1] / "fuzz.json").read_text())
    assert (fuzz["target_name"], fuzz["target_version"]) == ("fuzzed", None)

    session()
    output = _invoke("publish", str(reports), "--out", str(site), "--warehouse", str(tmp_path / "warehouse"),
                     "--no-build-reports")
    data = json.loads((site / "site.json").read_text())
    columns = {c["key"] for c in data["columns"]}
    assert columns == {f"{good}@unknown", f"{bad}@unknown", "acme@2.0"}  # the fuzz run has no verdicts
    assert {r["target"] for r in data["runs"]} == {good, bad, "acme", "fuzzed"}

    # The kit broke rules on purpose in every run: the offline judge saw it, the marks must not.
    offline = read_table(session(), tmp_path / "warehouse", "violations").filter("source = 'offline'").collect()
    runs = {r["run_id"]: r["target"] for r in data["runs"]}
    kit_side = {runs[v["run_id"]] for v in offline if v["side"] == "client"}
    assert {good, bad, "acme"} <= kit_side
    target_side = {(runs[v["run_id"]], v["rule"]) for v in offline if v["side"] == "server"}
    assert {target for target, _ in target_side} == {bad} and (bad, "DEM-1") in target_side
    marked = {(row["target"], row["rule"]) for row in data["matrix_latest"] if row["offline_violations"]}
    assert marked == {(target, rule) for target, rule in target_side if (target, rule) in
                      {(r["target"], r["rule"]) for r in data["matrix_latest"]}}
    assert (bad, "DEM-1") in marked
    assert {r["target"]: r["offline_violations"] for r in data["runs"]}[good] == 0
    assert "offline violations" in output

    # What a reader sees: the correct targets' columns carry no mark, the faulty one's DEM-1 row does.
    dom = html.fromstring((site / "index.html").read_bytes())
    matrix = dom.xpath('//table[@id="matrix"]')[0]
    order = [th.get("data-key") for th in matrix.xpath(".//thead//th")][2:]
    assert sorted(order) == sorted(columns)
    cells = {}
    for row in matrix.xpath(".//tbody/tr"):
        rule = row.xpath("./td[1]//code")[0].text_content()
        cells[rule] = dict(zip(order, (" ".join(td.text_content().split()) for td in row.xpath("./td")[2:])))
    assert cells["DEM-1"][f"{bad}@unknown"].startswith("fail") and "in the traffic" in cells["DEM-1"][f"{bad}@unknown"]
    for column in (f"{good}@unknown", "acme@2.0"):
        assert not [rule for rule, row in cells.items() if "in the traffic" in row[column]], column
    good_page = (site / "targets" / f"{re.sub(r'[^A-Za-z0-9_.-]+', '_', good).strip('_')}.html").read_text()
    assert "<td>kit</td>" in good_page and "<td>target</td>" not in good_page
