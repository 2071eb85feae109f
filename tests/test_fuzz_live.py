"""The fuzzer against the reference peer over loopback: faults found fast, no false alarms, round trip."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
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
from rsio_tck.reference_peer.rsio.freedoms import DELIBERATE_WARNINGS
from rsio_tck.report.schema import check_run_dir
from rsio_tck.scenarios.loader import load_file

FINDING_DEADLINE = 120.0  # seconds for the fuzz command to start its peer and confirm a quick finding, under load
EXIT_DEADLINE = 60.0  # seconds for it to stop, write what it found and its report after SIGTERM

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
    run = json.loads((summary_path.parent / "run.json").read_text())  # opened and finished as a run's
    assert run["interrupted"] is False and run["seed"] == 4 and (summary_path.parent / "report" / "index.html").is_file()
    assert check_run_dir(summary_path.parent) == []


def test_a_fuzz_run_stopped_by_sigterm_keeps_its_findings_and_says_it_was_interrupted(tmp_path: Path) -> None:
    """SIGTERM once the first finding is printed: the search stops, the example in flight is not counted, what
    was confirmed is written, run.json says interrupted, the exit is 143, and report and pipeline read it."""
    command = [sys.executable, "-m", "rsio_tck.cli", "fuzz", "--fault", "hs-client-hello", "--examples", "100000",
               "--time-budget", "600", "--report-dir", str(tmp_path / "reports"), "--quiet", "--seed", "0"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "COLUMNS": "200"})
    lines: queue.Queue[str | None] = queue.Queue()

    def read() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            lines.put(line)
        lines.put(None)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    seen: list[str] = []
    try:
        end = time.monotonic() + FINDING_DEADLINE
        while not any(line.startswith("finding: HS-4 ") for line in seen):
            line = lines.get(timeout=max(0.1, end - time.monotonic()))  # queue.Empty past the deadline: a failure
            assert line is not None, f"the fuzz run exited ({process.wait(10)}) before a finding: {''.join(seen)}"
            seen.append(line)
        process.send_signal(signal.SIGTERM)
        code = process.wait(EXIT_DEADLINE)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(10)
    reader.join(10)
    while not lines.empty():  # the rest of what it said, to its end (None)
        seen.extend(line for line in [lines.get_nowait()] if line is not None)
    stderr = "".join(seen)
    assert code == 143, stderr[-3000:]
    (run_dir,) = list((tmp_path / "reports").iterdir())
    run = json.loads((run_dir / "run.json").read_text())
    summary = json.loads((run_dir / "fuzz.json").read_text())
    cut = run["interruption"]
    assert run["interrupted"] is True and cut["signal"] == "SIGTERM" and run["seed"] == 0
    assert cut["selected"] == run["scenarios"] == 100000 and cut["finished"] == summary["examples"] >= 1
    assert len(cut["running"]) <= 1  # the example (or the confirmation) in flight, not counted
    assert "HS-4" in [f["rule"] for f in summary["findings"]]
    assert all((run_dir / f["scenario_file"]).is_file() for f in summary["findings"])
    assert check_run_dir(run_dir) == []
    assert f"error: interrupted after {summary['examples']} of 100000 scenarios (SIGTERM)" in stderr
    assert "Traceback" not in stderr
    outcome = CliRunner().invoke(app, ["report", str(run_dir)])
    assert outcome.exit_code == 0, outcome.output
    page = (run_dir / "report" / "index.html").read_text()
    assert 'id="interrupted"' in page and 'id="fuzz"' in page and "HS-4" in page
    from rsio_tck.pipeline.sources import fuzz_rows, run_row

    row = run_row(run_dir)  # what the pipeline's runs table gets
    assert row["interrupted"] is True and row["fuzz"] is True and row["seed"] == 0
    assert [f["rule"] for f in fuzz_rows(run_dir, row["run_id"])] == [f["rule"] for f in summary["findings"]]


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
