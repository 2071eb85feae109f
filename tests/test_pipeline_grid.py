"""The client x server grid of make interop: aggregated by Spark, rendered as the site's grid page."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("pyspark")

from pipeline_spark import session  # noqa: E402

from rsio_tck.findings.baselines import GridCell  # noqa: E402
from rsio_tck.findings.entries import Findings  # noqa: E402
from rsio_tck.findings.sources import Sources  # noqa: E402
from rsio_tck.pipeline.grid import grid_shape, read_grid  # noqa: E402
from rsio_tck.pipeline.publish import publish_site  # noqa: E402
from rsio_tck.pipeline.schemas import DERIVED_TABLES  # noqa: E402

CELLS = [
    {"client": "a", "server": "x", "case": "stream-range", "verdict": "pass", "client_rules": [], "server_rules": []},
    {"client": "a", "server": "x", "case": "error", "verdict": "fail", "client_rules": [],
     "server_rules": ["RS-FLOW-2"]},
    {"client": "a", "server": "y", "case": "stream-range", "verdict": "xfail", "client_rules": ["RS-FLOW-1"],
     "server_rules": []},
    {"client": "b", "server": "x", "case": "stream-range", "verdict": "skip", "client_rules": [], "server_rules": []},
]


def test_the_grid_counts_verdicts_and_rules_per_pair(tmp_path: Path) -> None:
    path = tmp_path / "matrix.json"
    path.write_text(json.dumps(CELLS))
    pairs = {(p["client"], p["server"]): p for p in read_grid(session(), path)}
    assert set(pairs) == {("a", "x"), ("a", "y"), ("b", "x")}
    ax = pairs[("a", "x")]
    assert (ax["pass"], ax["fail"], ax["server_rules"], ax["not_passed"]) == (1, 1, ["RS-FLOW-2"], ["error: fail"])
    assert pairs[("a", "y")]["client_rules"] == ["RS-FLOW-1"]
    shape = grid_shape(list(pairs.values()))
    assert shape["clients"] == ["a", "b"] and shape["servers"] == ["x", "y"]
    assert shape["cells"][("a", "x")]["word"] == "fail" and shape["cells"][("b", "x")]["word"] == "not run"
    known = shape["cells"][("a", "y")]  # a known failure is a failure
    assert (known["word"], known["failed"], known["passed"]) == ("fail", 1, 0)


def test_the_grid_keeps_the_binding_its_cells_were_judged_with(tmp_path: Path) -> None:
    path = tmp_path / "matrix.json"
    path.write_text(json.dumps([{**cell, "binding": "rsocket"} for cell in CELLS]))
    assert {p["binding"] for p in read_grid(session(), path)} == {"rsocket"}
    path.write_text(json.dumps(CELLS))  # a matrix.json from before the column: still read, with no binding
    assert {p["binding"] for p in read_grid(session(), path)} == {None}


def _flaky_source() -> Sources:
    """Sources whose grid baseline lists a -> y stream-range as a flaky known failure, F9."""
    line = GridCell(client="a", server="y", case="stream-range", flaky=True, why="F9: by timing", findings=("F9",),
                    where="interop/matrix-baseline.txt:1")
    return Sources(findings=Findings(source="FINDINGS.md", entries=()), baseline=(), grid=(line,), versions={},
                   isolated={})


def test_the_site_gets_a_grid_page(tmp_path: Path) -> None:
    path = tmp_path / "matrix.json"
    path.write_text(json.dumps(CELLS))
    tables: dict[str, list[dict[str, object]]] = {name: [] for name in (*DERIVED_TABLES, "runs", "scenario_results")}
    index = publish_site(tables, tmp_path / "site", build_reports=False, grid=read_grid(session(), path))
    page = (index.parent / "grid.html").read_text()
    assert 'href="grid/a--x.html">1 of 2 fail</a>' in page and 'href="grid/a--y.html">1 of 1 fail</a>' in page
    assert "xfail" not in page and 'class="fail"' in page
    cell = (index.parent / "grid" / "a--x.html").read_text()
    assert "RS-FLOW-2" in cell and "error" in cell
    known = publish_site(tables, tmp_path / "known", build_reports=False, grid=read_grid(session(), path),
                         sources=_flaky_source())
    flaky = (known.parent / "grid" / "a--y.html").read_text()
    assert "known F9" in flaky and "flaky: failed in 1 of 1 run here" in flaky
    assert 'href="grid.html"' in index.read_text()


def test_the_site_names_the_protocols_of_its_runs(tmp_path: Path) -> None:
    tables: dict[str, list[dict[str, object]]] = {name: [] for name in (*DERIVED_TABLES, "runs", "scenario_results")}
    tables["runs"] = [{"run_id": "a", "binding": "rsocket"}, {"run_id": "b", "binding": "rsocket"}]
    page = publish_site(tables, tmp_path / "rsocket", build_reports=False).read_text()
    assert "<h1>RSocket: who conforms?</h1>" in page
    tables["runs"] = [{"run_id": "a", "binding": "rsocket"}, {"run_id": "b", "binding": None}]  # None: before the field
    page = publish_site(tables, tmp_path / "both", build_reports=False).read_text()
    assert "<h1>RS-IO / RSocket: who conforms?</h1>" in page


@pytest.mark.parametrize("text", ["not json", "{}", '[{"client": "a"}]'])
def test_a_bad_matrix_is_one_line(tmp_path: Path, text: str) -> None:
    path = tmp_path / "matrix.json"
    path.write_text(text)
    with pytest.raises(ValueError, match="not a client x server matrix"):
        read_grid(session(), path)
