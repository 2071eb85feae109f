"""The Ditto reference peer's client program (``reference_peer/ditto/testcases.py``): listen mode's Ditto client
test cases over ws:// (the kit's listen mode playing /ws/2, its monitor judging the client) and tcp:// (the
reference peer), and each of its client faults breaking, in the kit's verdict, the subscriber's rule it names."""

from __future__ import annotations

import asyncio
import os
import sys

import pytest
from ditto_peer_client import running_peer
from test_interop_ditto_client import CASES

from rsio_tck.binding import get_binding
from rsio_tck.listen.cases import client_tests
from rsio_tck.listen.cli import serving_peer_factory
from rsio_tck.listen.runner import run_client_tests
from rsio_tck.reference_peer.ditto import FAULTS, PeerConfig
from rsio_tck.scenarios import ScenarioResult, Verdict

CASE_TIMEOUT = 60.0


async def _client(url: str, case: str, *faults: str) -> tuple[int | None, str]:
    command = [sys.executable, "-m", "rsio_tck.reference_peer.ditto.testcases", "--profile", "search"]
    for fault in faults:
        command += ["--fault", fault]
    process = await asyncio.create_subprocess_exec(*command, env={**os.environ, "RSIO_URL": url, "RSIO_TESTCASE": case},
                                                   stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    try:
        output, _ = await asyncio.wait_for(process.communicate(), CASE_TIMEOUT)
    except TimeoutError:
        process.kill()
        output, _ = await process.communicate()
    return process.returncode, output.decode(errors="replace")


async def judged_over_ws(case: str, *faults: str) -> ScenarioResult:
    """One client test case in the kit's listen mode over ws:// (the Ditto reference peer behind the relay)."""
    client = " ".join([sys.executable, "-m", "rsio_tck.reference_peer.ditto.testcases", "--profile", "search",
                       *[f"--fault {fault}" for fault in faults]])
    (result,) = await run_client_tests(client_tests("ditto", [case]), client, "ws://127.0.0.1:0/ws/2",
                                       get_binding("ditto"), "search",
                                       serving_peer_factory("ditto", "search", "ws://127.0.0.1:0/ws/2"),
                                       timeout=CASE_TIMEOUT)
    return result


async def over_tcp(case: str) -> tuple[int | None, str]:
    async with running_peer(PeerConfig(seed=3)) as port:
        return await _client(f"tcp://127.0.0.1:{port}", case)


@pytest.mark.parametrize("case", CASES)
def test_each_case_passes_over_websocket_judged_by_the_kit(case: str) -> None:
    result = asyncio.run(judged_over_ws(case))
    assert result.verdict is Verdict.PASS, result.explain()


@pytest.mark.parametrize("case", CASES)
def test_each_case_passes_over_tcp_lines(case: str) -> None:
    code, output = asyncio.run(over_tcp(case))
    assert code == 0, output


@pytest.mark.parametrize("fault", sorted(f for f in FAULTS if f.startswith("client-")))
def test_each_client_fault_breaks_its_rule(fault: str) -> None:
    rule = FAULTS[fault].rule
    result = asyncio.run(judged_over_ws("search-pages", fault))
    assert result.verdict is Verdict.FAIL and rule in {f.rule for f in result.findings}, result.explain()


def test_an_unknown_case_is_127_and_a_bad_fault_one_line() -> None:
    code, output = asyncio.run(_client("ws://127.0.0.1:1/ws/2", "stream-range"))
    assert code == 127, output
    code, output = asyncio.run(_client("tcp://127.0.0.1:1", "search-pages", "created-missing"))
    assert code == 2 and "no such Ditto client fault" in output and "Traceback" not in output
    code, output = asyncio.run(_client("tcp://127.0.0.1:1", "search-pages"))
    assert code == 1 and output.startswith("failed: ") and "Traceback" not in output
