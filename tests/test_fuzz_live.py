"""The fuzzer against the reference peer over loopback: faults found fast, no false alarms, round trip."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import find, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from rsio_tck.bindings.rsio.fuzz.program import ProgramState, ep_near_reassembly_limit, ep_reuse_outstanding
from rsio_tck.bindings.rsio.wire.frames import ID_MAX
from rsio_tck.cli import app
from rsio_tck.embedded import REASSEMBLY_LIMIT, EmbeddedPeer
from rsio_tck.fuzz import FuzzConfig, fuzz, write_findings
from rsio_tck.fuzz.engine import judge, run_program
from rsio_tck.reference_peer.freedoms import DELIBERATE_WARNINGS
from rsio_tck.scenarios.loader import load_file

# One fault from each of five areas; each is found within a few seconds.
QUICK_FAULTS = {
    "hs-client-hello": "HS-4",
    "bye-no-ack": "BYE-2",
    "err-truncated-frame": "ERR-6",
    "dem-error-without-rule": "DEM-3",
    "ext-undeclared-type": "EXT-2",
}


@pytest.mark.parametrize("fault", sorted(QUICK_FAULTS))
def test_a_fault_is_found_within_seconds(fault: str) -> None:
    with EmbeddedPeer(faults=[fault]) as url:
        outcome = fuzz(FuzzConfig(target=url, tolerated=DELIBERATE_WARNINGS, examples=400, seed=0, time_budget=20,
                                  shrink_budget=3, stop_at_first=True))
    assert [f.rule for f in outcome.findings if f.count] == [QUICK_FAULTS[fault]]
    assert outcome.elapsed < 25


@pytest.mark.parametrize("codec", ["msgpack", "varint"])
def test_a_conforming_target_yields_no_findings(codec: str) -> None:
    with EmbeddedPeer(codec=codec) as url:
        outcome = fuzz(FuzzConfig(target=url, tolerated=DELIBERATE_WARNINGS, codec=codec, examples=40, seed=7,
                                  time_budget=30))
    assert outcome.examples == 40
    assert [f.message for f in outcome.findings if f.count] == []


def test_a_finding_file_reproduces_the_failure_with_rsio_tck_run(tmp_path: Path) -> None:
    with EmbeddedPeer(faults=["dem-beyond-demand"]) as url:
        config = FuzzConfig(target=url, tolerated=DELIBERATE_WARNINGS, examples=400, seed=0, time_budget=30,
                            shrink_budget=5, stop_at_first=True)
        outcome = fuzz(config)
        assert outcome.findings and outcome.findings[0].rule == "DEM-1"
        run_dir = tmp_path / "run"
        summary = json.loads(write_findings(outcome, run_dir, config, "20260101T000000000Z").read_text())
        files = sorted((run_dir / "fuzz-findings").glob("*.yaml"))
        assert [str(p.relative_to(run_dir)) for p in files] == [f["scenario_file"] for f in summary["findings"]]
        assert load_file(files[0])[0].rules[0] == "DEM-1"
        result = CliRunner().invoke(app, ["run", "--target", url, "--scenarios", str(run_dir / "fuzz-findings"),
                                          "--report-dir", str(tmp_path / "reports"), "--quiet"])
    assert result.exit_code == 1, result.output
    (results,) = list((tmp_path / "reports").glob("*/results.jsonl"))
    lines = [json.loads(line) for line in results.read_text().splitlines()]
    assert [line["verdict"] for line in lines] == ["fail"]
    assert any(v["rule"] == "DEM-1" for v in lines[0]["violations"])


def test_the_fuzz_command_writes_its_run_directory_and_exits_1(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["fuzz", "--fault", "hs-second-hello", "--examples", "30", "--time-budget", "20",
                                      "--report-dir", str(tmp_path), "--quiet", "--seed", "4"])
    assert result.exit_code == 1, result.output
    (summary_path,) = list(tmp_path.glob("*/fuzz.json"))
    summary = json.loads(summary_path.read_text())
    assert summary["schema"] == "rsio-tck/fuzz/v1" and summary["seed"] == 4
    assert summary["findings"][0]["rule"] == "HS-3"
    assert (summary_path.parent / summary["findings"][0]["scenario_file"]).exists()


def test_the_fuzz_command_exits_0_on_a_conforming_target(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["fuzz", "--examples", "10", "--time-budget", "20", "--report-dir",
                                      str(tmp_path), "--quiet"])
    assert result.exit_code == 0, result.output
    (summary_path,) = list(tmp_path.glob("*/fuzz.json"))
    assert json.loads(summary_path.read_text())["findings"] == []


def _episode_program(which: Any, codec: str = "msgpack") -> st.SearchStrategy[dict[str, Any]]:
    @st.composite
    def program(draw: st.DrawFn) -> dict[str, Any]:
        state = ProgramState(codec, REASSEMBLY_LIMIT)
        return {"level": "MUST", "handshake": "auto", "goodbye": "auto", "codecs": [codec],
                "steps": which(draw, state)}
    return program()


def _sizes(program: dict[str, Any]) -> set[int]:
    """Lengths of the split elements the kit sends in ``program``."""
    return {sum(frame[kind]["data"]["large"][2] for frame in step["send"] for kind in frame
                if kind in ("onNextPart", "onNextLastPart"))
            for step in program["steps"] if isinstance(step.get("send"), list)} - {0}


@pytest.mark.parametrize("offset", [-1, 0, 1])
def test_an_element_at_the_reassembly_limit_is_joined_and_one_byte_past_it_is_cancelled(offset: int) -> None:
    program = find(_episode_program(ep_near_reassembly_limit), lambda p: _sizes(p) == {REASSEMBLY_LIMIT + offset},
                   settings=settings(database=None, max_examples=500))
    rules = {step.get("rule") for step in program["steps"]}
    assert ("SPLIT-5" in rules) is (offset > 0)
    with EmbeddedPeer() as url:
        result = run_program(program, FuzzConfig(target=url, reassembly_limit=REASSEMBLY_LIMIT))
    assert judge(result) is None, result.explain()


@pytest.mark.parametrize("demand", [4, 1000, ID_MAX])
def test_reusing_an_id_with_demand_outstanding_passes_against_a_conforming_peer(demand: int) -> None:
    wanted = "${MAX}" if demand == ID_MAX else demand
    program = find(_episode_program(ep_reuse_outstanding),
                   lambda p: any(frame.get("subscribe", {}).get("initialDemand") == wanted
                                 for step in p["steps"] for frame in
                                 (step["send"] if isinstance(step.get("send"), list) else [step.get("send", {})])),
                   settings=settings(database=None, max_examples=500))
    with EmbeddedPeer() as url:
        result = run_program(program, FuzzConfig(target=url))
    assert judge(result) is None, result.explain()
