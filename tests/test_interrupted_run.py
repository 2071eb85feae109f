"""A run stopped by SIGTERM or SIGINT keeps what it judged (issue 27, part 3).

Each test starts a real ``python -m rsio_tck.cli run`` against the embedded reference peer, one scenario at a
time over the whole suite (a minute or more under load), waits until results.jsonl holds K lines, and signals
the kit.  The kit must exit 128 + the signal, write run.json marked interrupted (signal, when, selected vs
finished, the scenarios in flight), keep every finished scenario's line, transcript, trace and pcap, and the
report and the pipeline must show the run as interrupted, never as a complete green run.

Waiting for K lines: the kit's progress is observable only in the files it writes, and this machine has no
inotify binding, so ``wait_for`` polls the file's content (not the clock) every 50 ms up to a deadline.  That
is the only polling here; every other wait is on the process (``Popen.wait`` with a time-out).

The module is one of conftest's SPARK_MODULES: its pipeline test shares the Spark session of the pipeline
modules (and their worker).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rsio_tck.cli import app
from rsio_tck.report.rundir import file_stem
from rsio_tck.report.schema import check_run_dir

START_DEADLINE = 120.0  # seconds for the kit to start its peer and finish K scenarios, under load
EXIT_DEADLINE = 60.0  # seconds for the kit to clean up after the signal (pcaps, run.json, report)
POLL = 0.05  # seconds between two looks at a file the kit writes (see the module's docstring)


@dataclass
class Stopped:
    """A kit run that a signal stopped."""

    code: int
    run_dir: Path
    stderr: str
    selected: int


def wait_for(condition: Callable[[], bool], process: subprocess.Popen[bytes], what: str,
             deadline: float = START_DEADLINE) -> None:
    """Poll ``condition`` (a look at a file the kit writes) until it holds; fail if the kit exits first or the
    deadline passes."""
    end = time.monotonic() + deadline
    while not condition():
        if process.poll() is not None:
            pytest.fail(f"the kit exited ({process.returncode}) before {what}")
        if time.monotonic() > end:
            process.kill()
            process.wait(10)
            pytest.fail(f"no {what} within {deadline:g} s")
        time.sleep(POLL)  # polling a file's content: the only observable (module docstring)


def lines_of(report_dir: Path) -> int:
    found = list(report_dir.glob("*/results.jsonl"))
    return found[0].read_bytes().count(b"\n") if found else 0


def start_kit(tmp: Path, *args: str) -> subprocess.Popen[bytes]:
    (tmp / "reports").mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "rsio_tck.cli", "run", "--report-dir", str(tmp / "reports"), "--quiet", *args]
    return subprocess.Popen(command, stdout=(tmp / "stdout").open("wb"), stderr=(tmp / "stderr").open("wb"),
                            env={**os.environ, "COLUMNS": "200"})


@contextlib.contextmanager
def running_kit(tmp: Path, *args: str) -> Iterator[subprocess.Popen[bytes]]:
    """``start_kit``, killed on the way out if a failed wait left it running."""
    process = start_kit(tmp, *args)
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(10)


def stop_after(tmp: Path, lines: int, signum: int, *args: str) -> Stopped:
    with running_kit(tmp, *args) as process:
        wait_for(lambda: lines_of(tmp / "reports") >= lines, process, f"{lines} results.jsonl lines")
        process.send_signal(signum)
        code = process.wait(EXIT_DEADLINE)
    (run_dir,) = list((tmp / "reports").iterdir())
    selected = json.loads((run_dir / "run.json").read_text())["scenarios"] if (run_dir / "run.json").exists() else 0
    return Stopped(code, run_dir, (tmp / "stderr").read_text(errors="replace"), selected)


@pytest.fixture(scope="module")
def sigterm_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stopped]:
    yield stop_after(tmp_path_factory.mktemp("sigterm"), 3, signal.SIGTERM, "--jobs", "1")


def results(run_dir: Path) -> list[dict]:  # type: ignore[type-arg]
    return [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]


def test_sigterm_exits_143_and_run_json_says_interrupted(sigterm_run: Stopped) -> None:
    assert sigterm_run.code == 143, sigterm_run.stderr[-2000:]
    run = json.loads((sigterm_run.run_dir / "run.json").read_text())
    cut = run["interruption"]
    finished = results(sigterm_run.run_dir)  # every line parses
    assert run["interrupted"] is True and cut["signal"] == "SIGTERM" and cut["at"] >= run["started"]
    assert cut["finished"] == len(finished) >= 3 and cut["selected"] == run["scenarios"] > cut["finished"]
    assert sum(run["counts"].values()) == len(finished)
    # What was in flight was cancelled, not judged: no line of its own, so no verdict charged to its rules.
    assert len(cut["running"]) <= 1 and not set(cut["running"]) & {r["id"] for r in finished}
    assert check_run_dir(sigterm_run.run_dir) == []  # the schema takes the new fields
    line = f"interrupted after {len(finished)} of {run['scenarios']} scenarios (SIGTERM)"
    assert f"error: {line}" in sigterm_run.stderr and "Traceback" not in sigterm_run.stderr


def test_every_finished_scenario_keeps_its_files(sigterm_run: Stopped) -> None:
    for result in results(sigterm_run.run_dir):
        stem = file_stem(result["id"])
        assert (sigterm_run.run_dir / "transcripts" / f"{stem}.txt").is_file(), result["id"]
        if (sigterm_run.run_dir / "traces" / f"{stem}.trace").is_file():
            assert (sigterm_run.run_dir / "pcaps" / f"{stem}.pcap").stat().st_size > 0, result["id"]
    assert not list(sigterm_run.run_dir.rglob(".*.partial"))


def test_the_report_shows_the_interruption(sigterm_run: Stopped) -> None:
    outcome = CliRunner().invoke(app, ["report", str(sigterm_run.run_dir)])
    assert outcome.exit_code == 0, outcome.output
    finished = len(results(sigterm_run.run_dir))
    page = (sigterm_run.run_dir / "report" / "index.html").read_text()
    assert 'id="interrupted"' in page
    assert f"interrupted after {finished} of {sigterm_run.selected} scenarios (SIGTERM)" in page
    report = json.loads((sigterm_run.run_dir / "report" / "report.json").read_text())
    assert report["interrupted"]["signal"] == "SIGTERM" and report["badge"]["outcome"] != "pass"


def test_the_pipeline_and_the_site_show_the_run_interrupted(sigterm_run: Stopped, tmp_path: Path) -> None:
    pytest.importorskip("pyspark")
    from pipeline_spark import session

    from rsio_tck.pipeline.cli import publish_runs
    from rsio_tck.pipeline.ingest import read_table

    spark = session()
    index, report = publish_runs(spark, [sigterm_run.run_dir], tmp_path / "site", warehouse=tmp_path / "warehouse")
    assert report.runs == 1
    (row,) = read_table(spark, tmp_path / "warehouse", "runs").collect()
    assert row["interrupted"] is True
    (summary,) = read_table(spark, tmp_path / "warehouse", "run_summary").collect()
    assert summary["interrupted"] is True
    (page,) = list((tmp_path / "site" / "targets").glob("*.html"))
    assert '<span class="interrupted">interrupted</span>' in page.read_text()
    site = json.loads((tmp_path / "site" / "site.json").read_text())
    assert [run["interrupted"] for run in site["runs"]] == [True]
    (card,) = site["scorecards"]
    assert card["interrupted"] is True and card["badge_message"].endswith("(interrupted)")
    assert 'data-field="interrupted"' in index.read_text()


def test_sigint_exits_130_and_a_second_signal_exits_at_once(tmp_path: Path) -> None:
    with running_kit(tmp_path, "--jobs", "1") as process:
        wait_for(lambda: lines_of(tmp_path / "reports") >= 1, process, "a results.jsonl line")
        process.send_signal(signal.SIGINT)
        # The second signal must reach the kit after the first was handled: its stderr line is the event.
        wait_for(lambda: b"SIGINT: stopping" in (tmp_path / "stderr").read_bytes(), process,
                 "the kit's answer to SIGINT", EXIT_DEADLINE)
        process.send_signal(signal.SIGINT)
        code = process.wait(EXIT_DEADLINE)
    stderr = (tmp_path / "stderr").read_text()
    assert code == 130, stderr[-2000:]
    (run_dir,) = list((tmp_path / "reports").iterdir())
    results(run_dir)  # whatever the second signal cut, every line written is whole
    if "SIGINT again: exiting at once" not in stderr:  # the first signal's clean-up won the race: it is complete
        run = json.loads((run_dir / "run.json").read_text())
        assert run["interrupted"] is True and run["interruption"]["signal"] == "SIGINT"


def test_sigint_alone_writes_an_interrupted_run(tmp_path: Path) -> None:
    stopped = stop_after(tmp_path, 1, signal.SIGINT, "--jobs", "1", "-k", "PACK or ERR or BYE")
    assert stopped.code == 130, stopped.stderr[-2000:]
    run = json.loads((stopped.run_dir / "run.json").read_text())
    assert run["interrupted"] is True and run["interruption"]["signal"] == "SIGINT"
    assert run["interruption"]["finished"] == len(results(stopped.run_dir)) >= 1
    assert check_run_dir(stopped.run_dir) == []


def test_listen_mode_keeps_its_interrupted_run(tmp_path: Path) -> None:
    """Listen mode shares the recorder: a client that never ends is in flight when SIGTERM comes."""
    client = f"{sys.executable} -c 'import time; time.sleep(120)'"
    with running_kit(tmp_path, "--listen", "tcp://127.0.0.1:0", "--client-command", client,
                     "--client-timeout", "120") as process:
        # results.jsonl is created as the run starts, before the first client test case.
        wait_for(lambda: bool(list((tmp_path / "reports").glob("*/results.jsonl"))), process, "the run directory")
        process.send_signal(signal.SIGTERM)
        code = process.wait(EXIT_DEADLINE)
    stderr = (tmp_path / "stderr").read_text()
    assert code == 143, stderr[-2000:]
    (run_dir,) = list((tmp_path / "reports").iterdir())
    run = json.loads((run_dir / "run.json").read_text())
    cut = run["interruption"]
    assert run["interrupted"] is True and run["target_role"] == "client" and cut["finished"] == 0
    assert len(cut["running"]) == 1 and cut["selected"] >= 1
    assert check_run_dir(run_dir) == []


def test_a_ctrl_c_before_the_run_starts_is_one_line_and_130(capsys: pytest.CaptureFixture[str]) -> None:
    """Before a run holds SIGINT (checking inputs, loading scenarios) Ctrl-C is a KeyboardInterrupt: one line."""
    import typer

    from rsio_tck.gate import guard

    with pytest.raises(typer.Exit) as raised, guard():
        raise KeyboardInterrupt
    assert raised.value.exit_code == 130 and capsys.readouterr().err == "error: interrupted (SIGINT)\n"


def test_the_first_signal_cancels_the_work_and_is_recorded() -> None:
    """In process: the catcher's first SIGTERM cancels ``until_signal``'s work, which returns None; a run whose
    every scenario finished is complete whatever came after."""
    import asyncio

    from rsio_tck.interruption import Interruption, SignalCatcher, until_signal

    async def work() -> str:
        os.kill(os.getpid(), signal.SIGTERM)
        await asyncio.Event().wait()  # never set: only the signal's cancellation ends it
        return "not cancelled"

    before = signal.getsignal(signal.SIGTERM)
    with SignalCatcher() as catcher:
        assert asyncio.run(asyncio.wait_for(until_signal(work(), catcher), 30)) is None
    assert signal.getsignal(signal.SIGTERM) is before  # handed back
    assert catcher.at is not None
    assert catcher.interruption(5, 2, ["B", "A"]) == Interruption("SIGTERM", catcher.at, 5, 2, ("A", "B"))
    assert catcher.interruption(5, 5, []) is None
