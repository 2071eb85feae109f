"""The Ditto reference peer's client program (``reference_peer/ditto/testcases.py``): listen mode's Ditto client
test cases over ws:// (the test-only /ws/2 endpoint of ``test_interop_ditto_client``) and tcp:// (the reference
peer), and each of its client faults breaking the subscriber's rule it names."""

from __future__ import annotations

import asyncio
import os
import sys

import pytest
from ditto_peer_client import running_peer
from test_interop_ditto_client import CASES, SubscriberCheck, endpoint

from rsio_tck.reference_peer.ditto import FAULTS, PeerConfig

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


async def over_ws(case: str, *faults: str) -> tuple[int | None, str, SubscriberCheck]:
    check = SubscriberCheck()
    async with endpoint(check) as url:
        code, output = await _client(url, case, *faults)
    return code, output, check


async def over_tcp(case: str) -> tuple[int | None, str]:
    async with running_peer(PeerConfig(seed=3)) as port:
        return await _client(f"tcp://127.0.0.1:{port}", case)


@pytest.mark.parametrize("case", CASES)
def test_each_case_passes_over_websocket_keeping_the_subscriber_rules(case: str) -> None:
    code, output, check = asyncio.run(over_ws(case))
    assert code == 0, output
    assert check.broken == [], check.sent


@pytest.mark.parametrize("case", CASES)
def test_each_case_passes_over_tcp_lines(case: str) -> None:
    code, output = asyncio.run(over_tcp(case))
    assert code == 0, output


@pytest.mark.parametrize("fault", sorted(f for f in FAULTS if f.startswith("client-")))
def test_each_client_fault_breaks_its_rule(fault: str) -> None:
    rule = FAULTS[fault].rule
    code, output, check = asyncio.run(over_ws("search-pages", fault))
    assert any(broken.startswith(rule + ":") for broken in check.broken), (check.broken, output)


def test_an_unknown_case_is_127_and_a_bad_fault_one_line() -> None:
    code, output, _ = asyncio.run(over_ws("stream-range"))
    assert code == 127
    code, output = asyncio.run(_client("tcp://127.0.0.1:1", "search-pages", "created-missing"))
    assert code == 2 and "no such Ditto client fault" in output and "Traceback" not in output
    code, output = asyncio.run(_client("tcp://127.0.0.1:1", "search-pages"))
    assert code == 1 and output.startswith("failed: ") and "Traceback" not in output
