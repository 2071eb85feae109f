"""The client x server grid of ``make interop``: every real client against every real server, through the kit.

For every pair, a fresh server, the kit's proxy in front of it, and every client test case of the client
through the proxy; each cell is judged frame by frame on both sides.  ``interop/matrix-baseline.txt``
lists the cells known to fail.  The case that floods (``FLOODING_CASES``) runs last in each pair, and a
server that died is restarted before the next case.  Pairs run ``jobs`` at a time, each with its own
server and proxies (a cell mostly waits for its client and server); cells are written to ``matrix.json``
in a fixed order whatever order the pairs finished in.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
from pathlib import Path
from typing import Any

from baselines import read_matrix_baseline
from processes import HERE, Server, differs, say

CASE_TIMEOUT = 30.0  # one client test case
OUTPUT_KEPT = 400  # bytes of what the client printed last, shown on the cell's page
# After the client process has exited its sockets are closed, so what its server still sends reaches no one:
# the proxy gives the connection this long to end (a server that keeps a half-closed connection open would
# otherwise cost the proxy's default grace in every cell).
CELL_GRACE = 0.5
BINDING, PROFILE = "rsocket", "rsocket-1.0"  # what the proxy judges every cell with; matrix.json says it per cell
FLOODING_CASES = ("cancel-infinite",)  # client test cases against a server that may ignore CANCEL/credits (F1)


async def cell(client: str, server_url: str, case: str) -> dict[str, object]:
    from rsio_tck.binding import get_binding
    from rsio_tck.child_process import run_to_end
    from rsio_tck.proxy import run_proxy

    loop = asyncio.get_running_loop()
    ready: asyncio.Future[str] = loop.create_future()
    stop = asyncio.Event()
    relay = asyncio.ensure_future(run_proxy("tcp://127.0.0.1:0", server_url, get_binding(BINDING), PROFILE,
                                            max_connections=4, duration=CASE_TIMEOUT + 5, on_ready=ready.set_result,
                                            stop=stop, grace=CELL_GRACE))
    url = await asyncio.wait_for(asyncio.shield(ready), 10)
    # Output read to the end, its tail kept, every wait bounded (child_process): a client that logs a line per
    # frame of a flood it cancelled (rsocket-py against rsocket-rust, F1) once hung the grid here.
    finished = await run_to_end([str(HERE / client / "client")],
                                {**os.environ, "RSIO_URL": url, "RSIO_TESTCASE": case}, CASE_TIMEOUT, OUTPUT_KEPT)
    code, output = finished.code, finished.output
    stop.set()
    result = await relay
    sides: dict[str, list[str]] = {"client": [], "server": []}
    unjudged: list[str] = []
    for conn in result.connections:
        blind = blind_from(conn.findings)
        for finding in conn.findings:
            side = finding["side"]
            if finding["level"] != "MUST" or side not in sides:
                continue
            if float(finding["t"] or 0.0) >= blind.get(side, float("inf")):
                unjudged.append(f"{side} {finding['rule']}")
                continue
            sides[side].append(finding["rule"])
    return {"client_exit": code, "client_rules": sorted(set(sides["client"])),
            "server_rules": sorted(set(sides["server"])), "unjudged": sorted(set(unjudged)),
            "output": output.decode(errors="replace")}


def blind_from(findings: list[dict[str, Any]]) -> dict[str, float]:
    """From when a side's findings in a real-to-real cell cannot be trusted, per side: the proxy's monitor
    stops decoding a direction at its first undecodable frame (a MUST finding with no frame), and the other
    side's answers to requests it could not see would look unsolicited (RS-STREAM-2).  A transport that ended
    inside a frame (RS-FRAME-8) has nothing after it to blind."""
    other = {"client": "server", "server": "client"}
    blind: dict[str, float] = {}
    for finding in findings:
        side = finding["side"]
        if finding["frame"] is None and finding["level"] == "MUST" and side in other and finding["rule"] != "RS-FRAME-8":
            blind[other[side]] = min(blind.get(other[side], float("inf")), float(finding["t"] or 0.0))
    return blind


def pair(client: str, server: str, cases: list[str], known: set[str], flaky: set[str]) -> list[dict[str, Any]]:
    """Every case of ``client`` against one ``server`` process (restarted if it died), each through a proxy."""
    started = time.monotonic()
    cells: list[dict[str, Any]] = []
    with contextlib.ExitStack() as stack:
        running: Server | None = None
        url = ""
        for case in cases:
            if running is None or running.died():
                if running is not None:
                    say(f"{server} server died before {client} {case}: restarted")
                    stack.close()
                running = Server(server)
                url = stack.enter_context(running)
            found = asyncio.run(cell(client, url, case))
            failed = found["client_exit"] not in (0, 127) or bool(found["client_rules"] or found["server_rules"])
            key = f"{client} {server} {case}"
            verdict = ("skip" if found["client_exit"] == 127 else
                       ("xfail" if key in known | flaky else "fail") if failed else
                       ("xpass" if key in known else "pass"))
            if verdict in ("fail", "xpass"):
                differs(f"grid: {verdict.upper()} {key}: client exit {found['client_exit']}, client broke "
                    f"{found['client_rules'] or 'nothing'}, server broke {found['server_rules'] or 'nothing'}")
            cells.append({"client": client, "server": server, "case": case, "verdict": verdict, "binding": BINDING,
                          **found})
    say(f"{client} -> {server}: {len(cases)} cells in {time.monotonic() - started:.0f} s")
    return cells


def cases_and_baseline() -> tuple[list[str], set[str], set[str]]:
    """Every client test case (the flooding one last, so it cannot spoil a pair's other cells), and the known
    and flaky cells of ``interop/matrix-baseline.txt``."""
    cases = [c["name"] for c in json.loads((HERE / "testcases.json").read_text())["testcases"]]
    cases.sort(key=lambda case: case in FLOODING_CASES)
    known, flaky = read_matrix_baseline(HERE / "matrix-baseline.txt")
    return cases, known, flaky


def pairs_of(names: list[str]) -> list[tuple[str, str]]:
    """Every (client, server) pair, the slowest first: rsocket-rust's server floods (F1) and the JVM client
    starts once per case."""
    pairs = [(client, server) for server in names for client in names]
    return sorted(pairs, key=lambda p: (p[1] != "rsocket-rust", p[0] != "rsocket-java"))


def write_matrix(names: list[str], out: Path, done: dict[tuple[str, str], list[dict[str, Any]]]) -> int:
    """``out/matrix.json`` in a fixed order whatever order the pairs finished in; how many cells differ."""
    cells = [c for p in ((client, server) for server in names for client in names) if p in done for c in done[p]]
    (out / "matrix.json").write_text(json.dumps(cells, indent=1) + "\n")
    return sum(c["verdict"] in ("fail", "xpass") for c in cells)
