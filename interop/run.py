"""``make interop``: the kit against every real RSocket implementation, in both roles, and each pair.

Usage: python interop/run.py [--only NAME ...] [--out reports/interop] [--skip-build]

1. Build what is missing (each ``interop/NAME/build.sh`` is cached); print each build time.
2. Server role: start ``interop/NAME/server PORT`` and run the kit's RSocket suite against it
   (``rsio-tck run --binding rsocket``), with ``interop/NAME/baseline.txt`` as the baseline.
3. Client role: ``rsio-tck run --binding rsocket --listen ... --client-command interop/NAME/client``,
   same baseline file (client test case ids are ``CLIENT-rsocket-CASE``).
4. Client x server: for every pair, a fresh server, the kit's proxy in front of it, and every client
   test case of the client through the proxy; each cell is judged frame by frame on both sides.
   ``interop/matrix-baseline.txt`` lists the cells known to fail (``CLIENT SERVER CASE  # why``).
5. Publish: the Spark pipeline over the run directories (one matrix per role) plus the grid page.

Exit 0 when every result matches its baseline; 1 when something changed (a new failure, or a known
failure that now passes: xpass); 3 when a build failed.  Every wait is bounded.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
IMPLEMENTATIONS = ("rsocket-py", "rsocket-js-0", "rsocket-java", "rsocket-go", "rsocket-js-1", "rsocket-rust")
VERSIONS = {"rsocket-py": "0.4.20", "rsocket-js-0": "0.0.27", "rsocket-java": "1.1.5", "rsocket-go": "0.8.16",
            "rsocket-js-1": "1.0.0-alpha.3", "rsocket-rust": "0.7.5"}
BUILD_TIMEOUT = 900  # seconds per implementation, registries included
START_TIMEOUT = 60.0  # a server's listening socket (the JVM is slow on a loaded machine)
CASE_TIMEOUT = 30.0  # one client test case
SUITE_TIMEOUT = 900  # one kit run


def kit(*args: str, timeout: float = SUITE_TIMEOUT) -> int:
    command = [sys.executable, "-m", "rsio_tck.cli", *args]
    try:
        return subprocess.run(command, cwd=ROOT, timeout=timeout).returncode
    except subprocess.TimeoutExpired:
        print(f"interop: timed out after {timeout:.0f} s: {' '.join(args)}", flush=True)
        return 3


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Server:
    """``interop/NAME/server PORT`` as a context manager; waits for its listening socket."""

    def __init__(self, name: str) -> None:
        self.name, self.port = name, free_port()
        self.process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> str:
        self.process = subprocess.Popen([str(HERE / self.name / "server"), str(self.port)],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline and self.process.poll() is None:
            if listening(self.port):
                return f"tcp://127.0.0.1:{self.port}"
            time.sleep(0.1)  # polling the kernel's socket table, not synchronising with the server's output
        raise RuntimeError(f"{self.name} server did not listen on port {self.port} within {START_TIMEOUT:.0f} s")

    def __exit__(self, *exc: object) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, 15)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, 9)
                self.process.wait(10)


def listening(port: int) -> bool:
    """Whether something listens on 127.0.0.1:port, read from /proc (no connection: a bare connect
    is a test of its own for some servers)."""
    want = f":{port:04X}"
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        if any(line.split()[1].endswith(want) and line.split()[3] == "0A" for line in lines):
            return True
    return False


def build(names: list[str]) -> dict[str, float | None]:
    times: dict[str, float | None] = {}
    for name in names:
        started = time.monotonic()
        try:
            ok = subprocess.run([str(HERE / name / "build.sh")], timeout=BUILD_TIMEOUT).returncode == 0
        except subprocess.TimeoutExpired:
            ok = False
        times[name] = time.monotonic() - started if ok else None
        print(f"interop: build {name}: {f'{times[name]:.0f} s' if ok else 'FAILED'}", flush=True)
    return times


def server_role(name: str, out: Path) -> int:
    started = time.monotonic()
    caps = HERE / name / "capabilities.json"
    isolated = isolated_scenarios(name)
    with Server(name) as url:
        code = kit("run", "--binding", "rsocket", "--target", url, "--name", f"{name}@{VERSIONS[name]}",
                   *(["--capabilities", str(caps)] if caps.exists() else []),
                   *(["-k", " and ".join(f"not {scenario}" for scenario in isolated)] if isolated else []),
                   "--baseline", str(HERE / name / "baseline.txt"), "--report-dir", str(out / "server" / name),
                   "--quiet", "--jobs", "4")
    code = max([code, *(isolated_run(name, scenario, out) for scenario in isolated)])
    print(f"interop: {name} as server: exit {code} in {time.monotonic() - started:.0f} s", flush=True)
    return code


def isolated_scenarios(name: str) -> list[str]:
    """Scenario ids of ``interop/NAME/isolate.txt`` (one per line, ``#`` comments): scenarios that end the
    server process (rsocket-js-1's F4), so each runs on a fresh server of its own after the rest."""
    path = HERE / name / "isolate.txt"
    return sorted(read_baseline(path)) if path.exists() else []


def isolated_run(name: str, scenario: str, out: Path) -> int:
    """One scenario on a fresh server, judged against the same baseline; its run directory goes under
    ``out/server-isolated/NAME/SCENARIO`` (not published on the site: the main run's directory is)."""
    caps = HERE / name / "capabilities.json"
    with Server(name) as url:
        return kit("run", "--binding", "rsocket", "--target", url, "--name", f"{name}@{VERSIONS[name]}",
                   *(["--capabilities", str(caps)] if caps.exists() else []), "-k", scenario,
                   "--baseline", str(HERE / name / "baseline.txt"),
                   "--report-dir", str(out / "server-isolated" / name / scenario), "--quiet", "--jobs", "1")


def client_role(name: str, out: Path) -> int:
    started = time.monotonic()
    code = kit("run", "--binding", "rsocket", "--listen", "tcp://127.0.0.1:0", "--client-command",
               str(HERE / name / "client"), "--name", f"{name}@{VERSIONS[name]}",
               "--baseline", str(HERE / name / "baseline.txt"), "--report-dir", str(out / "client" / name))
    print(f"interop: {name} as client: exit {code} in {time.monotonic() - started:.0f} s", flush=True)
    return code


async def cell(client: str, server_url: str, case: str) -> dict[str, object]:
    from rsio_tck.binding import get_binding
    from rsio_tck.proxy import run_proxy

    loop = asyncio.get_running_loop()
    ready: asyncio.Future[str] = loop.create_future()
    stop = asyncio.Event()
    relay = asyncio.ensure_future(run_proxy("tcp://127.0.0.1:0", server_url, get_binding("rsocket"), "rsocket-1.0",
                                            max_connections=4, duration=CASE_TIMEOUT + 5, on_ready=ready.set_result,
                                            stop=stop))
    url = await asyncio.wait_for(asyncio.shield(ready), 10)
    process = await asyncio.create_subprocess_exec(
        str(HERE / client / "client"), env={**os.environ, "RSIO_URL": url, "RSIO_TESTCASE": case},
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    try:
        output, _ = await asyncio.wait_for(process.communicate(), CASE_TIMEOUT)
        code: int | None = process.returncode
    except TimeoutError:
        process.kill()
        await process.wait()
        output, code = b"", None
    stop.set()
    result = await relay
    sides: dict[str, list[str]] = {"client": [], "server": []}
    for conn in result.connections:
        for finding in conn.findings:
            if finding["level"] == "MUST" and finding["side"] in sides:
                sides[finding["side"]].append(finding["rule"])
    return {"client_exit": code, "client_rules": sorted(set(sides["client"])),
            "server_rules": sorted(set(sides["server"])), "output": output.decode(errors="replace")[-400:]}


def matrix(names: list[str], out: Path) -> tuple[list[dict[str, object]], int]:
    cases = [c["name"] for c in json.loads((HERE / "testcases.json").read_text())["testcases"]]
    known = read_baseline(HERE / "matrix-baseline.txt")
    cells, changed = [], 0
    for server in names:
        for client in names:
            started = time.monotonic()
            with Server(server) as url:
                for case in cases:
                    found = asyncio.run(cell(client, url, case))
                    failed = found["client_exit"] not in (0, 127) or bool(found["client_rules"] or found["server_rules"])
                    key = f"{client} {server} {case}"
                    verdict = ("skip" if found["client_exit"] == 127 else
                               ("xfail" if key in known else "fail") if failed else ("xpass" if key in known else "pass"))
                    changed += verdict in ("fail", "xpass")
                    cells.append({"client": client, "server": server, "case": case, "verdict": verdict, **found})
            print(f"interop: {client} -> {server}: {len(cases)} cells in {time.monotonic() - started:.0f} s", flush=True)
    (out / "matrix.json").write_text(json.dumps(cells, indent=1) + "\n")
    return cells, changed


def publish(out: Path, names: list[str]) -> None:
    """One site per role (implementations x rules), each with the client x server grid, and an index of both."""
    grid = out / "matrix.json"
    for role in ("server", "client"):
        runs = [str(out / role / name) for name in names if (out / role / name).is_dir()]
        if runs:
            kit("publish", *runs, "--out", str(out / "site" / role), *(["--grid", str(grid)] if grid.exists() else []))
    (out / "site").mkdir(parents=True, exist_ok=True)
    (out / "site" / "index.html").write_text(
        "<!doctype html><html lang=en><meta charset=utf-8><title>rsio-tck interop</title><h1>RSocket interop</h1>"
        "<ul><li><a href=server/index.html>implementations as servers</a> (the kit as client)</li>"
        "<li><a href=client/index.html>implementations as clients</a> (the kit listening)</li>"
        "<li><a href=server/grid.html>client x server grid</a> (real to real, judged by the kit's proxy)</li></ul>\n",
        encoding="utf-8")


def read_baseline(path: Path) -> set[str]:
    if not path.exists():
        return set()
    return {" ".join(line.split("#", 1)[0].split()) for line in path.read_text().splitlines()
            if line.split("#", 1)[0].strip()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", default=list(IMPLEMENTATIONS), choices=IMPLEMENTATIONS, metavar="NAME")
    parser.add_argument("--out", type=Path, default=ROOT / "reports" / "interop", metavar="DIR")
    parser.add_argument("--skip-build", action="store_true")
    parser.add_argument("--no-matrix", action="store_true")
    parser.add_argument("--no-ditto", action="store_true", help="skip the Ditto steps (interop/run_ditto.py)")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    names = list(args.only)
    if not args.skip_build:
        times = build(names)
        if any(t is None for t in times.values()):
            return 3
    codes = {}
    for name in names:
        codes[f"{name} server"] = server_role(name, args.out)
        codes[f"{name} client"] = client_role(name, args.out)
    changed = 0
    if not args.no_matrix:
        _, changed = matrix(names, args.out)
    publish(args.out, names)
    if not args.no_ditto:  # Ditto: golden vectors from ditto-protocol, ditto-client against the kit (run_ditto.py)
        import run_ditto

        codes["ditto"] = run_ditto.run(args.out, build=not args.skip_build)
    bad = {what: code for what, code in codes.items() if code != 0}
    for what, code in bad.items():
        print(f"interop: {what}: exit {code} (a result differs from its baseline)", flush=True)
    if changed:
        print(f"interop: {changed} client x server cells differ from interop/matrix-baseline.txt", flush=True)
    print(f"interop: done in {time.monotonic() - started:.0f} s; site: {args.out / 'site' / 'index.html'}", flush=True)
    return 1 if bad or changed else 0


if __name__ == "__main__":
    sys.exit(main())
