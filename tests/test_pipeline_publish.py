"""``rsio-tck publish``: the static site and its machine-readable JSON, built from a synthetic corpus."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("pyspark")

from pipeline_spark import published  # noqa: E402

from rsio_tck.bindings.rsio.corpus import DEFAULT_TARGETS  # noqa: E402


def test_publish_reports_what_it_did() -> None:
    run = published()
    assert f"({len(run.corpus.runs)} runs" in run.output
    assert f"{run.corpus.faulty_connections} offline violations" in run.output


def test_index_matrix_has_a_column_per_target_version_and_a_row_per_rule() -> None:
    site = published().site
    index = (site / "index.html").read_text()
    data = json.loads((site / "site.json").read_text())
    assert data["schema"] == "rsio-tck/site/v1"
    assert [c["key"] for c in data["columns"]] == sorted(f"{t.name}@{v}" for t in DEFAULT_TARGETS for v in t.versions)
    for rule in data["rules"]:
        assert f"<code>{rule}</code>" in index
    cards = data["scorecards"]
    assert sorted(f"{c['target']}@{c['version']}" for c in cards) == [c["key"] for c in data["columns"]]
    # Each failing or warning cell of the matrix is a rule page, and links to it.
    pages = [page for card in cards for page in card["rule_pages"].values()]
    assert index.count('<td class="fail"') + index.count('<td class="warning"') == len(pages) > 0
    for page in pages:
        assert f'href="{page}"' in index and (site / page).is_file()
    assert 'class="sortable" id="scorecards"' in index  # sortable by a script; readable without it
    gamma = next(c for c in data["columns"] if c["target"] == "gamma")
    assert gamma["failed"] >= 1


def test_target_pages_show_history_flakiness_and_the_latest_report() -> None:
    site = published().site
    beta = (site / "targets" / "beta.html").read_text()
    assert beta.count("<tr><td>2026") == 4  # four runs of beta in the history
    assert "demand-batch" in beta and 'class="flaky"' in beta
    alpha = (site / "targets" / "alpha.html").read_text()
    assert 'href="alpha-1.0/report/index.html"' in alpha  # the copied per-run report of alpha 1.0's latest run
    copied = site / "targets" / "alpha-1.0"
    assert (copied / "report" / "index.html").read_text() == "<html>per-run report of alpha 1.0</html>"
    assert (copied / "results.jsonl").is_file()  # with the run's files its pages link
    assert "no per-run report available" in alpha  # alpha 1.1 has none and building was switched off


def test_site_json_carries_the_derived_tables() -> None:
    data = json.loads((published().site / "site.json").read_text())
    assert {"matrix_latest", "matrix_history", "runs", "flakiness", "wire_stats", "latency", "violations_by_rule",
            "violations_by_signature", "fuzz", "targets"} <= set(data)
    assert len(data["runs"]) == len(published().corpus.runs)
    assert data["targets"]["beta"]["wire"]["packed_share"] == 1.0
