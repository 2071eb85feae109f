"""The fuzzer on RSocket, live: nothing against the conforming reference peer, each fault's rule against a
faulty one, and the shrunk finding replays with rsio-tck run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rsio_tck.cli import app

FUZZ = ["fuzz", "--binding", "rsocket", "--examples", "60", "--time-budget", "40"]


@pytest.mark.parametrize("profile", ["rsocket-1.0", "reactivesocket-draft"])
def test_the_conforming_rsocket_peer_yields_no_findings(tmp_path: Path, profile: str) -> None:
    result = CliRunner().invoke(app, [*FUZZ, "--profile", profile, "--report-dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    (run_dir,) = tmp_path.iterdir()
    assert json.loads((run_dir / "fuzz.json").read_text())["findings"] == []


@pytest.mark.parametrize(("fault", "rule"), [("flow-beyond-demand", "RS-FLOW-2"),
                                             ("tck-range-wrong-element", "RS-TCK-1")])
def test_a_fault_of_the_rsocket_peer_is_found_and_replays(tmp_path: Path, fault: str, rule: str) -> None:
    result = CliRunner().invoke(app, [*FUZZ, "--fault", fault, "--report-dir", str(tmp_path)])
    assert result.exit_code == 1, result.output
    (run_dir,) = tmp_path.iterdir()
    findings = json.loads((run_dir / "fuzz.json").read_text())["findings"]
    assert rule in {f["rule"] for f in findings}
    replay = CliRunner().invoke(app, ["run", "--binding", "rsocket", "--fault", fault, "--scenarios",
                                      str(run_dir / "fuzz-findings"), "--report-dir", str(tmp_path / "replay"),
                                      "--quiet"])
    assert replay.exit_code == 1, replay.output  # the shrunk scenario fails the faulty peer again
