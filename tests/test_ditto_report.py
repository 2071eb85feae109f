"""Ditto through the CLI: ``rsio-tck run --binding ditto`` writes a run directory whose files validate,
with an HTML report citing Ditto rules, transcripts describing Ditto messages and pcaps (no Spark)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from ditto_publisher import running_publisher
from typer.testing import CliRunner

from rsio_tck.cli import app
from rsio_tck.report.schema import check_run_dir


@pytest.fixture(scope="module")
def publisher() -> Iterator[int]:
    ports: list[int] = []
    started, stop = threading.Event(), threading.Event()

    async def serve() -> None:
        async with running_publisher(seed=11) as port:
            ports.append(port)
            started.set()
            while not stop.is_set():
                await asyncio.sleep(0.05)

    thread = threading.Thread(target=lambda: asyncio.run(serve()), daemon=True)
    thread.start()
    assert started.wait(10)
    yield ports[0]
    stop.set()
    thread.join(10)


@pytest.mark.parametrize("profile", ["streaming", "search"])
def test_run_writes_a_valid_run_directory_and_report(publisher: int, profile: str, tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["run", "--binding", "ditto", "--profile", profile, "--target",
                                      f"tcp://127.0.0.1:{publisher}", "--report-dir", str(tmp_path), "-k", "DITTO"])
    assert result.exit_code == 0, result.output
    (run_dir,) = list(tmp_path.iterdir())
    assert check_run_dir(run_dir) == []
    html = (run_dir / "report" / "index.html").read_text(encoding="utf-8")
    assert "DITTO-TCK" in html and "DITTO-DEM-1" in html
    # The report names the run's protocol, not RS-IO's.
    assert "<h1>Eclipse Ditto compliance report</h1>" in html and "RS-IO compliance" not in html
    assert ">Eclipse Ditto<" in (run_dir / "report" / "badge.svg").read_text(encoding="utf-8")
    transcripts = list((run_dir / "transcripts").iterdir())
    assert transcripts and any("created(" in p.read_text(encoding="utf-8") for p in transcripts)
    assert list((run_dir / "pcaps").iterdir())


def test_an_unknown_profile_is_a_one_line_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["run", "--binding", "ditto", "--profile", "things", "--target",
                                      "tcp://127.0.0.1:9", "--report-dir", str(tmp_path)])
    assert result.exit_code != 0 and "streaming" in result.output and "Traceback" not in result.output


def test_a_ditto_capabilities_file_skips_what_the_target_does_not_claim(publisher: int, tmp_path: Path) -> None:
    caps = tmp_path / "caps.yaml"
    caps.write_text("ditto_capabilities: 1\nimplementation: test publisher\nprofiles: [streaming]\n"
                    "publishers: [tck/range]\n", encoding="utf-8")
    reports = tmp_path / "reports"
    result = CliRunner().invoke(app, ["run", "--binding", "ditto", "--target", f"tcp://127.0.0.1:{publisher}",
                                      "--capabilities", str(caps), "--report-dir", str(reports), "-k", "DITTO"])
    assert result.exit_code == 0, result.output
    (run_dir,) = list(reports.iterdir())
    import json

    results = [json.loads(line) for line in (run_dir / "results.jsonl").read_text(encoding="utf-8").splitlines()]
    skipped = {r["id"]: r.get("reason", "") for r in results if r["verdict"] == "skip"}
    passed = {r["id"] for r in results if r["verdict"] == "pass"}
    assert passed and any("tck/infinite" in why for why in skipped.values())
    rsio = tmp_path / "rsio.yaml"
    rsio.write_text("rsio_capabilities: 1\n", encoding="utf-8")
    wrong = CliRunner().invoke(app, ["run", "--binding", "ditto", "--target", f"tcp://127.0.0.1:{publisher}",
                                     "--capabilities", str(rsio), "--report-dir", str(reports)])
    assert wrong.exit_code != 0 and "ditto" in wrong.output and "Traceback" not in wrong.output
