"""``benchmarks.bench_ci``: ``make test`` and ``make interop`` record their wall time; ``make bench`` prints it
next to the goal, or says that no run is recorded (a missing or unreadable record is no figure)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from benchmarks.bench_ci import GOALS, lines, record

ROOT = Path(__file__).resolve().parents[1]


def test_a_recorded_run_is_printed_against_its_goal(tmp_path: Path) -> None:
    record("make-test", start=1000.0, parts={}, now=1000.0 + 946.4, where=tmp_path)
    record("make-interop", start=0.0, parts={"slow tier": 100.0}, now=280.0, where=tmp_path)
    assert json.loads((tmp_path / "make-test.json").read_text())["seconds"] == 946.4
    test, interop = lines(tmp_path)
    assert test.startswith(f"  {GOALS['make-test'][0]}: 946 s on 1970-01-01 00:32 UTC, commit ")
    assert test.endswith("goal under 10 min on a fresh clone: NOT met")
    assert "280 s (slow tier 180 s)" in interop and interop.endswith("goal under 5 min with cached builds: met")


def test_no_record_or_a_broken_one_is_said_and_gives_no_figure(tmp_path: Path) -> None:
    (tmp_path / "make-interop.json").write_text('{"seconds": "soon"}')
    test, interop = lines(tmp_path)
    assert "no run recorded in this checkout" in test and "no run recorded in this checkout" in interop


def test_the_record_command_writes_the_file_and_refuses_bad_arguments_in_one_line(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "benchmarks.bench_ci", "record", "make-test", "x"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and done.stderr.strip().startswith("usage: python -m benchmarks.bench_ci record")
    assert "Traceback" not in done.stderr
