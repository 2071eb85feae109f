"""Eclipse Ditto's Java client (interop/ditto-client, ditto-client 2.4.0) judged by the kit in listen mode.

``rsio-tck run --binding ditto --profile search --listen ws://127.0.0.1:0/ws/2 --client-command
interop/ditto-client/client``: the kit plays Ditto's /ws/2 endpoint (the Ditto reference peer behind
the WebSocket relay) and its monitor judges every message the client sends, the subscriber's rules
(DITTO-SUB-7, DITTO-SUB-8, DITTO-DEM-3) and the codec's included.  Skipped without a JDK or without
the fixture built (``interop/ditto-client/build.sh``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CLIENT = ROOT / "interop" / "ditto-client"
RUN_TIMEOUT = 300.0
CASES = ("search-pages", "search-all", "search-stream", "search-cancel", "search-empty", "search-failed")


def _built() -> None:
    if shutil.which("java") is None or not (CLIENT / "target" / "classpath.txt").exists():
        pytest.skip("interop/ditto-client is not built (interop/ditto-client/build.sh; needs a JDK and Maven)")


@pytest.mark.timeout(RUN_TIMEOUT + 30)
def test_the_kit_judges_ditto_client_in_listen_mode_over_websocket_and_every_case_passes(tmp_path: Path) -> None:
    _built()
    command = [sys.executable, "-m", "rsio_tck.cli", "run", "--binding", "ditto", "--profile", "search",
               "--listen", "ws://127.0.0.1:0/ws/2", "--client-command", str(CLIENT / "client"),
               "--name", "ditto-client", "--report-dir", str(tmp_path), "--quiet"]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=RUN_TIMEOUT)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    (run,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    results = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines() if line.strip()]
    verdicts = {r["id"]: r["verdict"] for r in results}
    assert verdicts == {f"CLIENT-ditto-{case}": "pass" for case in CASES}


@pytest.mark.timeout(120)
def test_ditto_client_says_127_for_a_case_it_does_not_support() -> None:
    _built()
    env = {**os.environ, "RSIO_URL": "ws://127.0.0.1:9/ws/2", "RSIO_TESTCASE": "stream-range"}
    done = subprocess.run([str(CLIENT / "client")], env=env, capture_output=True, text=True, timeout=110)
    assert done.returncode == 127, done.stdout + done.stderr


def test_the_fixture_knows_the_ditto_client_test_cases_of_listen_mode() -> None:
    from rsio_tck.listen import client_tests
    from rsio_tck.reference_peer.ditto.faults import known_rule

    cases = client_tests("ditto")
    assert tuple(case.name for case in cases) == CASES
    source = (CLIENT / "src" / "main" / "java" / "tck" / "SearchClient.java").read_text()
    assert all(f'"{name}"' in source for name in CASES)
    # Each case cites the subscriber's rules it exercises (the catalogue's once the Ditto binding is merged).
    assert all(case.rules and all(known_rule(rule) for rule in case.rules) for case in cases)
    assert {"DITTO-SUB-7", "DITTO-SUB-8", "DITTO-DEM-3"} <= {rule for case in cases for rule in case.rules}
