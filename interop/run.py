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

**Isolation (one finding must not become dozens).**  A real server is shared by the scenarios of a
run, so a scenario that floods it (a responder that ignores credits or keeps sending after CANCEL,
FINDINGS.md K8, F1) or kills it (F4) would fail every scenario after it.  Such scenarios are declared,
never guessed: ``FLOODING`` below names the kit's own flood scenarios (for every implementation), and
``interop/NAME/isolate.txt`` those that flood or kill that implementation's server, one per line:
``SCENARIO-ID  # why`` or ``requires:TOKEN  # why`` (every scenario requiring TOKEN), the why citing
FINDINGS.md; ``jobs:N`` there sets how many scenarios run at once on the shared server (default 4; 1
where one connection's load starves the others).  The other scenarios share one server; then each
declared scenario runs alone on a fresh server, and its results and files are merged into the shared
run directory, whose report is rebuilt: one run per role and implementation, as the pipeline expects.
``-k`` matches substrings, so the expressions name what they must leave out (ID-003 is part of
RSID-003): every scenario runs exactly once.  A server that died during the shared run is reported
loudly, naming the fix (isolate.txt).  In the matrix, the case that floods (``FLOODING_CASES``) runs
last in each pair, and a server that died is restarted before the next case.  Bounded: one server
start and one kit run per declared scenario, each under ``ISOLATED_TIMEOUT``, ``ISOLATED_AT_ONCE`` at
a time.

**Exact baselines.**  The kit's ``--baseline`` works per scenario id; ``interop/NAME/baseline.txt``
holds (scenario id, rule) pairs (``SCENARIO-ID RULE  # why``, as tests/test_interop_rsocket_py.py reads
them; ``SCENARIO-ID RULE [RULE ...] flaky  # why`` marks pairs that fail or pass by timing).  After each
role, the failing and warning pairs of the run are compared with the baseline's: a new pair, or a
steady baseline pair that no longer fails (xpass), makes the role fail.

Exit 0 when every result matches its baseline; 1 when something changed (a new failure, or a known
failure that now passes: xpass); 3 when a build failed.  Every wait is bounded.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
IMPLEMENTATIONS = ("rsocket-py", "rsocket-js-0", "rsocket-java", "rsocket-go", "rsocket-js-1", "rsocket-rust")
VERSIONS = {"rsocket-py": "0.4.20", "rsocket-js-0": "0.0.27", "rsocket-java": "1.1.5", "rsocket-go": "0.8.16",
            "rsocket-js-1": "1.0.0-alpha.3", "rsocket-rust": "0.7.5"}
BUILD_TIMEOUT = 900  # seconds per implementation, registries included
START_TIMEOUT = 60.0  # a server's listening socket (the JVM is slow on a loaded machine)
CASE_TIMEOUT = 30.0  # one client test case
SUITE_TIMEOUT = 900  # one kit run
ISOLATED_TIMEOUT = 120  # one isolated scenario, its server's start included
ISOLATED_AT_ONCE = 2  # isolated scenarios running at once, each with its own server
# The kit's own flood: 2^31-1 credits of tck/infinite, then CANCEL; what a server had queued keeps coming.
FLOODING = {"RSFLOW-011": "grants 2^31-1 of tck/infinite, then cancels (FINDINGS.md K8)"}
FLOODING_CASES = ("cancel-infinite",)  # client test cases against a server that may ignore CANCEL/credits (F1)
# Rules a relay cannot judge: when one side closes (or resets) first, the relay stops reading the other
# mid-frame, so "the transport ended inside a frame" is the relay's doing (FINDINGS.md K14).  The kit's own
# runs against each implementation judge them.
RELAY_BLIND = frozenset({"RS-FRAME-8"})


def kit(*args: str, timeout: float = SUITE_TIMEOUT, quiet: bool = False) -> int:
    """``rsio-tck ARGS`` (its output shown unless ``quiet``: the run directory holds the transcripts)."""
    command = [sys.executable, "-m", "rsio_tck.cli", *args]
    try:
        return subprocess.run(command, cwd=ROOT, timeout=timeout,
                              stdout=subprocess.DEVNULL if quiet else None).returncode
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


def baseline_flag(name: str) -> list[str]:
    path = HERE / name / "baseline.txt"
    return ["--baseline", str(path)] if path.exists() else []


def scenario_ids() -> list[str]:
    from rsio_tck.scenarios import load_directory

    return [s.id for s in load_directory(binding="rsocket")]


def isolated(name: str) -> dict[str, str]:
    """Scenario ids that run each on a fresh server: the kit's FLOODING, and interop/NAME/isolate.txt, whose
    lines are ``SCENARIO-ID  # why`` or ``requires:TOKEN  # why`` (every RSocket scenario requiring TOKEN,
    e.g. ``requires:tck/infinite`` for a server whose responders ignore credits and flood)."""
    chosen = dict(FLOODING)
    path = HERE / name / "isolate.txt"
    if not path.exists():
        return chosen
    from rsio_tck.scenarios import load_directory

    scenarios = load_directory(binding="rsocket")
    for line in path.read_text(encoding="utf-8").splitlines():
        entry, _, why = line.partition("#")
        if not entry.strip():
            continue
        word = entry.split()[0]
        if word.startswith("jobs:"):
            continue  # read by shared_jobs
        if word.startswith("requires:"):
            chosen.update({s.id: why.strip() for s in scenarios if word.removeprefix("requires:") in s.requires})
        else:
            chosen[word] = why.strip()
    return chosen


def selections(alone: list[str], everyone: list[str]) -> tuple[str, dict[str, str]]:
    """``-k`` expressions: the shared run's (every scenario but ``alone``) and one per isolated id.  ``-k``
    matches substrings (ID-003 is part of RSID-003), so each expression names the ids it must leave out."""
    def containing(word: str) -> list[str]:
        return [other for other in everyone if word.lower() in other.lower() and other != word]

    caught = sorted({other for word in alone for other in containing(word) if other not in alone})
    shared = f"not ({' or '.join(alone)})" + (f" or ({' or '.join(caught)})" if caught else "")
    each = {word: word + (f" and not ({' or '.join(containing(word))})" if containing(word) else "") for word in alone}
    return shared, each


def shared_jobs(name: str) -> int:
    """Scenarios run concurrently on the shared server: 4, or ``jobs:N`` from interop/NAME/isolate.txt (a
    server that one connection's load slows for the others needs 1)."""
    path = HERE / name / "isolate.txt"
    for line in path.read_text(encoding="utf-8").splitlines() if path.exists() else []:
        word = (line.split("#", 1)[0].split() or [""])[0]
        if word.startswith("jobs:") and word.removeprefix("jobs:").isdigit():
            return max(1, int(word.removeprefix("jobs:")))
    return 4


def run_dir(parent: Path) -> Path | None:
    """The (newest) run directory the kit wrote under ``parent``."""
    found = sorted(p for p in parent.glob("*/results.jsonl"))
    return found[-1].parent if found else None


def merge_run(into: Path, part: Path) -> None:
    """Append ``part``'s results and files to the run directory ``into`` and recount run.json."""
    with (into / "results.jsonl").open("a", encoding="utf-8") as results:
        results.write((part / "results.jsonl").read_text(encoding="utf-8"))
    for kind in ("traces", "transcripts", "pcaps"):
        if (part / kind).is_dir():
            (into / kind).mkdir(exist_ok=True)
            for file in (part / kind).iterdir():
                file.replace(into / kind / file.name)
    meta = json.loads((into / "run.json").read_text(encoding="utf-8"))
    lines = [json.loads(line) for line in (into / "results.jsonl").read_text(encoding="utf-8").splitlines() if line]
    counts: dict[str, int] = {}
    for line in lines:
        counts[line["verdict"]] = counts.get(line["verdict"], 0) + 1
    meta.update(counts=counts, scenarios=len(lines),
                finished=json.loads((part / "run.json").read_text(encoding="utf-8")).get("finished", meta["finished"]))
    (into / "run.json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")


def server_role(name: str, out: Path) -> int:
    started = time.monotonic()
    caps = HERE / name / "capabilities.json"
    common = ["run", "--binding", "rsocket", "--name", f"{name}@{VERSIONS[name]}",
              *(["--capabilities", str(caps)] if caps.exists() else []),
              *baseline_flag(name), "--quiet", "--min-run", "0"]
    alone = isolated(name)
    shared_k, alone_k = selections(list(alone), scenario_ids())
    where = out / "server" / name
    server = Server(name)
    with server as url:
        code = kit(*common, "--target", url, "--report-dir", str(where), "--jobs", str(shared_jobs(name)),
                   "-k", shared_k)
        died = server.process is not None and server.process.poll() is not None
    if died:
        print(f"interop: {name} server DIED during the shared run (exit {server.process.returncode if server.process else '?'}): "
              f"find the scenario that kills it and list it in interop/{name}/isolate.txt", flush=True)
        code = max(code, 1)
    shared = run_dir(where)

    def run_alone(scenario: str) -> int:
        try:
            with Server(name) as url:
                kit(*common, "--target", url, "--report-dir", str(out / "isolated" / name / scenario),
                    "-k", alone_k[scenario], "--jobs", "1", timeout=ISOLATED_TIMEOUT, quiet=True)
            return 0
        except RuntimeError as exc:
            print(f"interop: {exc}", flush=True)
            return 1

    # Each on its own server, ISOLATED_AT_ONCE at a time (they mostly wait out signal timeouts); merged in order.
    with ThreadPoolExecutor(max_workers=ISOLATED_AT_ONCE) as pool:
        code = max([code, *pool.map(run_alone, alone)])
    for scenario in alone:
        part = run_dir(out / "isolated" / name / scenario)
        if shared is not None and part is not None:
            merge_run(shared, part)
    if shared is None:
        print(f"interop: {name} as server: no run directory (exit {code})", flush=True)
        return max(code, 1)
    if alone:
        kit("report", str(shared), "--no-check", timeout=300)
    changed = compare_pairs(name, "server", shared)
    print(f"interop: {name} as server: {counts_line(shared)}; {len(alone)} isolated; "
          f"{'matches' if not changed else 'DIFFERS FROM'} its baseline; {time.monotonic() - started:.0f} s", flush=True)
    return 1 if changed or code >= 2 else 0


def client_role(name: str, out: Path) -> int:
    started = time.monotonic()
    where = out / "client" / name
    code = kit("run", "--binding", "rsocket", "--listen", "tcp://127.0.0.1:0", "--client-command",
               str(HERE / name / "client"), "--name", f"{name}@{VERSIONS[name]}", "--quiet", "--min-run", "0",
               *baseline_flag(name), "--report-dir", str(where))
    shared = run_dir(where)
    if shared is None:
        print(f"interop: {name} as client: no run directory (exit {code})", flush=True)
        return max(code, 1)
    changed = compare_pairs(name, "client", shared)
    print(f"interop: {name} as client: {counts_line(shared)}; "
          f"{'matches' if not changed else 'DIFFERS FROM'} its baseline; {time.monotonic() - started:.0f} s", flush=True)
    return 1 if changed or code >= 2 else 0


def run_results(directory: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (directory / "results.jsonl").read_text(encoding="utf-8").splitlines() if line]


def counts_line(directory: Path) -> str:
    counts: dict[str, int] = {}
    for result in run_results(directory):
        counts[str(result["verdict"])] = counts.get(str(result["verdict"]), 0) + 1
    return " ".join(f"{verdict} {n}" for verdict, n in sorted(counts.items()))


def failing_pairs(directory: Path) -> set[tuple[str, str]]:
    """(scenario id, rule) of every failing or warning verdict (xfail included: the baseline made it one)."""
    pairs: set[tuple[str, str]] = set()
    for result in run_results(directory):
        if result["verdict"] in ("fail", "warn", "xfail", "error"):
            violations = result.get("violations") or []
            rules = {str(v["rule"]) for v in violations} or {str(r) for r in result.get("rules") or []}
            pairs |= {(str(result["id"]), rule) for rule in rules}
    return pairs


def compare_pairs(name: str, role: str, directory: Path) -> bool:
    """Print every (scenario, rule) pair that differs from interop/NAME/baseline.txt; True if any does."""
    prefix = "CLIENT-" if role == "client" else ""
    steady, flaky = baseline_pairs(HERE / name / "baseline.txt")

    def mine(pairs: set[tuple[str, str]]) -> set[tuple[str, str]]:
        return {p for p in pairs if p[0].startswith(prefix) and (role == "client" or not p[0].startswith("CLIENT-"))}

    expected, maybe = mine(steady), mine(flaky)
    actual = failing_pairs(directory)
    for scenario, rule in sorted(actual - expected - maybe):
        print(f"interop: {name} as {role}: NEW {scenario} {rule} (triage: FINDINGS.md, or fix the kit)", flush=True)
    for scenario, rule in sorted(expected - actual):
        print(f"interop: {name} as {role}: XPASS {scenario} {rule} (remove its baseline line)", flush=True)
    return bool(actual - expected - maybe or expected - actual)


def baseline_pairs(path: Path) -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
    """``SCENARIO-ID RULE [RULE ...] [flaky]  # why`` lines as (steady pairs, flaky pairs).  ``flaky`` marks a
    deviation that shows or not by timing (a responder that ignores credits is caught only when its
    surplus element beats the kit's next REQUEST_N): such a pair may fail or pass.  A line naming no rule
    is reported and ignored."""
    steady: set[tuple[str, str]] = set()
    flaky: set[tuple[str, str]] = set()
    if path.exists():
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            fields = line.split("#", 1)[0].split()
            if not fields:
                continue
            marked = fields[-1] == "flaky"
            rules = fields[1:-1] if marked else fields[1:]
            if not rules:
                print(f"interop: {path}:{number}: {fields[0]} names no rule (write SCENARIO-ID RULE  # why)", flush=True)
            (flaky if marked else steady).update((fields[0], rule) for rule in rules)
    return steady, flaky


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
    unjudged: list[str] = []
    for conn in result.connections:
        blind = blind_from(conn.findings)
        for finding in conn.findings:
            side = finding["side"]
            if finding["level"] != "MUST" or side not in sides:
                continue
            if finding["rule"] in RELAY_BLIND or float(finding["t"] or 0.0) >= blind.get(side, float("inf")):
                unjudged.append(f"{side} {finding['rule']}")
                continue
            sides[side].append(finding["rule"])
    return {"client_exit": code, "client_rules": sorted(set(sides["client"])),
            "server_rules": sorted(set(sides["server"])), "unjudged": sorted(set(unjudged)),
            "output": output.decode(errors="replace")[-400:]}


def blind_from(findings: list[dict[str, Any]]) -> dict[str, float]:
    """From when a side's findings in a real-to-real cell cannot be trusted, per side: the proxy's monitor
    stops decoding a direction at its first undecodable frame (a MUST finding with no frame), and the other
    side's answers to requests it could not see would look unsolicited (RS-STREAM-2)."""
    other = {"client": "server", "server": "client"}
    blind: dict[str, float] = {}
    for finding in findings:
        side = finding["side"]
        if finding["frame"] is None and finding["level"] == "MUST" and side in other and finding["rule"] not in RELAY_BLIND:
            blind[other[side]] = min(blind.get(other[side], float("inf")), float(finding["t"] or 0.0))
    return blind


def matrix(names: list[str], out: Path) -> tuple[list[dict[str, object]], int]:
    cases = [c["name"] for c in json.loads((HERE / "testcases.json").read_text())["testcases"]]
    cases.sort(key=lambda case: case in FLOODING_CASES)  # a flood last: it cannot spoil the pair's other cells
    known, flaky = read_matrix_baseline(HERE / "matrix-baseline.txt")
    cells, changed = [], 0
    for server in names:
        for client in names:
            started = time.monotonic()
            with contextlib.ExitStack() as stack:
                running: Server | None = None
                url = ""
                for case in cases:
                    if running is None or running.process is None or running.process.poll() is not None:
                        if running is not None:
                            print(f"interop: {server} server died before {client} {case}: restarted", flush=True)
                            stack.close()
                        running = Server(server)
                        url = stack.enter_context(running)
                    found = asyncio.run(cell(client, url, case))
                    failed = found["client_exit"] not in (0, 127) or bool(found["client_rules"] or found["server_rules"])
                    key = f"{client} {server} {case}"
                    verdict = ("skip" if found["client_exit"] == 127 else
                               ("xfail" if key in known | flaky else "fail") if failed else
                               ("xpass" if key in known else "pass"))
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


def read_matrix_baseline(path: Path) -> tuple[set[str], set[str]]:
    """``CLIENT SERVER CASE [flaky]  # why`` lines: (cells known to fail, cells that fail or pass by timing)."""
    known: set[str] = set()
    flaky: set[str] = set()
    for line in path.read_text(encoding="utf-8").splitlines() if path.exists() else []:
        fields = line.split("#", 1)[0].split()
        if fields and fields[-1] == "flaky":
            flaky.add(" ".join(fields[:-1]))
        elif fields:
            known.add(" ".join(fields))
    return known, flaky


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", default=list(IMPLEMENTATIONS), choices=IMPLEMENTATIONS, metavar="NAME")
    parser.add_argument("--out", type=Path, default=ROOT / "reports" / "interop", metavar="DIR")
    parser.add_argument("--skip-build", action="store_true")
    parser.add_argument("--no-matrix", action="store_true")
    parser.add_argument("--no-ditto", action="store_true", help="skip the Ditto steps (interop/run_ditto.py)")
    parser.add_argument("--no-publish", action="store_true", help="skip the Spark site (triage runs)")
    parser.add_argument("--roles", nargs="*", default=["server", "client"], choices=["server", "client"])
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
        if "server" in args.roles:
            codes[f"{name} server"] = server_role(name, args.out)
        if "client" in args.roles:
            codes[f"{name} client"] = client_role(name, args.out)
    changed = 0
    if not args.no_matrix:
        _, changed = matrix(names, args.out)
    if not args.no_publish:
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
