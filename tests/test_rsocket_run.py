"""An RSocket run end to end through the command line: run directory, schemas, report, pcaps, traces."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

KIT = [sys.executable, "-m", "rsio_tck.cli"]


def test_an_rsocket_run_writes_a_run_directory_that_every_reader_accepts(tmp_path: Path) -> None:
    done = subprocess.run([*KIT, "run", "--binding", "rsocket", "-k", "RSIM or RSFRAG", "--report-dir", str(tmp_path),
                           "--quiet"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    (run_dir,) = tmp_path.iterdir()
    run = json.loads((run_dir / "run.json").read_text())
    assert (run["binding"], run["profile"]) == ("rsocket", "rsocket-1.0")
    results = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]
    assert len(results) >= 20 and all(r["rules"][0].startswith("RS-") for r in results)
    report = subprocess.run([*KIT, "report", str(run_dir)], capture_output=True, text=True, timeout=300)
    assert report.returncode == 0, report.stdout + report.stderr  # every file meets its schema
    pcap = sorted((run_dir / "pcaps").glob("*.pcap"))[0]
    judged = subprocess.run([*KIT, "check-pcap", "--binding", "rsocket", str(pcap)], capture_output=True, text=True,
                            timeout=120)
    assert judged.returncode == 0 and "0 violations" in judged.stdout, judged.stdout + judged.stderr
    trace = sorted((run_dir / "traces").glob("*.trace"))[0]
    replayed = subprocess.run([*KIT, "check-trace", "--binding", "rsocket", str(trace)], capture_output=True,
                              text=True, timeout=120)
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
