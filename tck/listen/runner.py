"""Running client test cases: the client under test, the kit's relay, the binding's serving peer.

Theory of operation: for each case the kit starts its conforming server for the
binding (the embedded reference peer, with the case's options), listens at the
listen URL with the proxy relay in front of it, and starts the client command with
``RSIO_URL`` and ``RSIO_TESTCASE``.  The relay judges every frame of both
directions with the binding's monitor; the verdict is the client's:

- exit 127: skip (the client does not support the case);
- a MUST rule broken by the client: fail (SHOULD: warn);
- the client exited non-zero (it saw something other than the case expects), or
  did not exit within the timeout: fail;
- a rule broken by the kit's own server: error (a kit bug, never blamed on the client);
- otherwise pass.

Bounds: one connection per case is judged (a client may open more: each is relayed and
judged, up to ``MAX_CONNECTIONS``), the client's output is kept to its last
``MAX_OUTPUT`` bytes, and every case ends within ``timeout`` seconds.  Once the client
broke a MUST rule its verdict is certain: the relay passes a little more (a goodbye, a
close) and closes the connection (``run_proxy(certain=Side.CLIENT)``), as the kit's own
scenarios stop reading a target then, so a client that floods or writes garbage costs
the kit neither its time nor a long trace to re-judge in the report.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import time
from collections.abc import Callable
from typing import Any

from ..binding import Binding
from ..child_process import run_to_end
from ..errors import Side
from ..monitor import Finding
from ..proxy.relay import run_proxy
from ..rules import Level
from ..scenarios.result import Failure, ScenarioResult, Verdict
from .cases import ClientTest, result_id

MAX_CONNECTIONS = 4  # connections one case may open
MAX_OUTPUT = 8 * 1024  # bytes of the client's output kept for the transcript
UNSUPPORTED = 127


async def _run_client(command: str, env: dict[str, str], timeout: float) -> tuple[int | None, str]:
    """Run the client; (exit code or None on timeout, the tail of its output).  Its output is read to the
    end and every wait is bounded (``child_process``), whatever the client or its children do."""
    finished = await run_to_end(shlex.split(command), env, timeout, MAX_OUTPUT)
    tail = finished.output.decode(errors="replace")
    if finished.output_left_open:
        tail += "\n(the kit gave up on the client's output: it stayed open after the client ended)"
    return finished.code, tail


def _verdict(case: ClientTest, code: int | None, output: str, connected: bool, findings: list[Finding],
             timeout: float) -> tuple[Verdict, list[Failure], str]:
    # The serving peer's SHOULD deviations are its seeded legal freedoms (e.g. TCK-9's wide
    # integers), which clients must accept; only a MUST it broke is the kit's bug.
    mine = [f for f in findings if f.side is Side.SERVER and f.level is Level.MUST]
    theirs = [f for f in findings if f.side is Side.CLIENT]
    if code == UNSUPPORTED:
        return Verdict.SKIP, [], "the client does not support this test case (exit 127)"
    if mine:
        return Verdict.ERROR, [], f"the kit's own server broke {mine[0].rule} (a kit bug): {mine[0].message}"
    failures: list[Failure] = []  # the client's own rule breaks are findings, reported as such
    # A client that broke a MUST on the wire and then failed its case failed because of it (the kit refuses
    # an undecodable frame): the exit is charged to that rule, not to the case's first rule, which the client
    # may not have broken (FINDINGS.md F26: a METADATA_PUSH on stream 0 without M is no RS-PUSH-1).
    primary = next((f.rule for f in theirs if f.level is Level.MUST), case.rules[0])
    if code is None:
        failures.append(Failure(rule=primary, expectation=f"the client to finish within {timeout:g} s",
                                got="it did not; the kit killed it"))
    elif code != 0:
        last = output.strip().splitlines()[-3:]
        failures.append(Failure(rule=primary, expectation="the client to exit 0 (the test case went as expected)",
                                got=f"exit {code}; its last output: {' | '.join(last) or '(none)'}"))
    if not connected and code == 0:
        failures.append(Failure(rule=primary, expectation="a connection to the kit", got="none came"))
    if failures or any(f.level is Level.MUST for f in theirs):
        return Verdict.FAIL, failures, ""
    if any(f.level is Level.SHOULD for f in theirs):
        return Verdict.WARN, [], ""
    return Verdict.PASS, [], ""


async def run_client_case(case: ClientTest, command: str, listen: str, serving: str, binding: Binding,
                          profile: str, *, timeout: float = 30.0) -> ScenarioResult:
    """One client test case against the kit listening at ``listen``, served by the peer at ``serving``."""
    started = time.monotonic()
    loop = asyncio.get_running_loop()
    ready: asyncio.Future[str] = loop.create_future()
    stop = asyncio.Event()
    # The kit is the client's receiver here: the client is judged against the kit's configured maxima (a kit
    # connection's, ``session_limits``: RSocket's 1 MiB of reassembly), not the binding's largest (64 MiB of
    # fragments that never end were held, 165 MB for a hostile client's two cases).
    limits = getattr(binding.scenario_adapter(profile, {}), "session_limits", None)  # type: ignore[attr-defined]
    relay = asyncio.ensure_future(run_proxy(listen, serving, binding, profile, max_connections=MAX_CONNECTIONS,
                                            duration=timeout + 5.0, on_ready=ready.set_result, stop=stop,
                                            certain=Side.CLIENT, limits=limits))
    try:
        url = await asyncio.wait_for(asyncio.shield(ready), 10.0)
    except TimeoutError:
        relay.cancel()
        raise
    env = {**os.environ, "RSIO_URL": url, "RSIO_TESTCASE": case.name}
    code, output = await _run_client(command, env, timeout)
    stop.set()
    result = await relay
    findings = [f for c in result.connections for f in c.monitor.findings]
    verdict, failures, reason = _verdict(case, code, output, bool(result.connections), findings, timeout)
    transcript = [f"$ RSIO_URL={url} RSIO_TESTCASE={case.name} {command}  -> exit {code}"]
    transcript += [c.line() for c in result.connections]
    transcript += [f"client: {line}" for line in output.splitlines()[-40:]]
    for conn in result.connections:
        for finding in conn.monitor.findings:
            transcript.append(f"connection {conn.index}: {finding.side} {finding.rule}: {finding.message}")
    trace = result.connections[0].trace if result.connections else []
    wire = result.connections[0].wire_trace if result.connections else []
    return ScenarioResult(
        id=result_id(binding.name, case.name), title=case.description, rules=case.rules, level="MUST",
        verdict=verdict, duration=time.monotonic() - started, failures=failures, findings=findings,
        reason=reason, transcript=transcript, target=command, codec=profile, trace=trace, wire_trace=wire,
        target_side="client")


async def run_client_tests(cases: list[ClientTest], command: str, listen: str, binding: Binding, profile: str,
                           serving_peer: Callable[[ClientTest], Any], *, timeout: float = 30.0,
                           on_result: Callable[[ScenarioResult], None] | None = None) -> list[ScenarioResult]:
    """Every case in turn; ``serving_peer(case)`` is a context manager giving the serving peer's URL."""
    results = []
    for case in cases:
        with serving_peer(case) as serving:
            result = await run_client_case(case, command, listen, serving, binding, profile, timeout=timeout)
        results.append(result)
        if on_result is not None:
            on_result(result)
    return results
