"""``make interop``: the kit against every real RSocket implementation, in both roles, and each pair.

Usage: python interop/run.py [--only NAME ...] [--out reports/interop] [--skip-build] [--jobs N]

1. Build what is missing (each ``interop/NAME/build.sh`` is cached), all at once; print each build time.
2. Server role: start ``interop/NAME/server PORT`` and run the kit's RSocket suite against it
   (``rsio-tck run --binding rsocket``), with ``interop/NAME/baseline.txt`` as the baseline.
3. Client role: ``rsio-tck run --binding rsocket --listen ... --client-command interop/NAME/client``,
   same baseline file (client test case ids are ``CLIENT-rsocket-CASE``).  The Ditto steps
   (``run_ditto.py``: golden vectors, ditto-client in listen mode) run beside the roles.
4. Client x server: every pair through the kit's proxy, each cell judged frame by frame (``grid.py``).
5. Publish: the Spark pipeline over the run directories (one site per role, with the grid page, and
   ditto-client's), the three sites in one Spark session (``publish.py``), which starts with step 2: a
   site's Spark jobs run once its roles are done, beside the other steps; its pages once the grid is written
   (``Publishing``).

Steps 2-4 share one pool, ``--jobs`` at a time (default 3), the roles first, the slowest first: the roles and
pairs are independent (each has its own server process, kit run, ports and output directory), and mostly
wait on their peers.  Each kit run's output goes to ``OUT/logs/``; the console gets one line per role, pair
and build, with its time, and the closing lines say where the time went (``timing.py``).

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
loudly, naming the fix (isolate.txt).  Bounded: one server start and one kit process per declared scenario
(``isolation.py``: the runner without the liveness probe, which decides nothing on a server no scenario
follows), each under ``ISOLATED_TIMEOUT``, ``ISOLATED_AT_ONCE`` at a time.

Baselines are exact (``baselines.py``): a new failing pair, or a known one that now passes (xpass),
makes the run fail.  Exit 0 when every result matches its baseline; 1 when something changed; 3 when
a build failed.  Every wait is bounded.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any

import timing
from baselines import compare_pairs, counts_line
from grid import cases_and_baseline, pair, pairs_of, write_matrix
from processes import DIFFERENCES, HERE, ROOT, Server, build, differs, kit, say, script

IMPLEMENTATIONS = ("rsocket-py", "rsocket-js-0", "rsocket-java", "rsocket-go", "rsocket-js-1", "rsocket-rust")
VERSIONS = {"rsocket-py": "0.4.20", "rsocket-js-0": "0.0.27", "rsocket-java": "1.1.5", "rsocket-go": "0.8.16",
            "rsocket-js-1": "1.0.0-alpha.3", "rsocket-rust": "0.7.5"}
BUILD_TIMEOUT = 900  # seconds per implementation, registries included
SUITE_TIMEOUT = 900  # one kit run
ISOLATED_TIMEOUT = 120  # one isolated scenario, its server's start included
ISOLATED_AT_ONCE = 2  # isolated scenarios running at once, each with its own server
# The kit's own flood: 2^31-1 credits of tck/infinite, then CANCEL; what a server had queued keeps coming.
FLOODING = {"RSFLOW-011": "grants 2^31-1 of tck/infinite, then cancels (FINDINGS.md K8)"}
# The longest steps start first, so that the last to finish is a short one.
SLOWEST_FIRST = ("rsocket-rust", "rsocket-java", "rsocket-go", "rsocket-js-1", "rsocket-js-0", "rsocket-py")


def baseline_flag(name: str) -> list[str]:
    path = HERE / name / "baseline.txt"
    return ["--baseline", str(path)] if path.exists() else []


def isolate_lines(name: str) -> list[tuple[str, str]]:
    """(first word, why) of every entry of interop/NAME/isolate.txt."""
    path = HERE / name / "isolate.txt"
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    return [(entry.split()[0], why.strip()) for entry, _, why in (line.partition("#") for line in lines) if entry.strip()]


def isolated(name: str, scenarios: list[Any]) -> dict[str, str]:
    """Scenario ids that run each on a fresh server: the kit's FLOODING, and interop/NAME/isolate.txt, whose
    lines are ``SCENARIO-ID  # why`` or ``requires:TOKEN  # why`` (every one of ``scenarios``, the RSocket
    suite, requiring TOKEN, e.g. ``requires:tck/infinite`` for a server whose responders ignore credits)."""
    chosen = dict(FLOODING)
    for word, why in isolate_lines(name):
        if word.startswith("jobs:"):
            continue  # read by shared_jobs
        if word.startswith("requires:"):
            chosen.update({s.id: why for s in scenarios if word.removeprefix("requires:") in s.requires})
        else:
            chosen[word] = why
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
    for word, _ in isolate_lines(name):
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
    # A part whose kit was stopped by its time-out has results but no run.json: its end is unknown.
    part_meta = json.loads((part / "run.json").read_text(encoding="utf-8")) if (part / "run.json").is_file() else {}
    meta.update(counts=counts, scenarios=len(lines), finished=part_meta.get("finished", meta["finished"]))
    (into / "run.json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")


def run_isolated(name: str, alone: list[str], files: dict[str, str], out: Path) -> int:
    """Each of ``alone`` on a fresh server and in a fresh kit process (``isolation.py``), ``ISOLATED_AT_ONCE``
    at a time; each run directory under OUT/isolated/NAME/ID.  ``files``: each scenario's file.  0 when every
    scenario has a result."""
    caps, baseline = HERE / name / "capabilities.json", HERE / name / "baseline.txt"

    def run_alone(scenario: str) -> int:
        spec = {"name": name, "target_name": f"{name}@{VERSIONS[name]}", "scenario": scenario, "file": files[scenario],
                "capabilities": str(caps) if caps.exists() else None,
                "baseline": str(baseline) if baseline.exists() else None,
                "report_dir": str(out / "isolated" / name / scenario)}
        code = script("isolation.py", json.dumps(spec), timeout=ISOLATED_TIMEOUT,
                      log=out / "logs" / "isolated" / f"{name}.log")
        if code != 0:
            differs(f"{name} as server: isolated {scenario} has no result (exit {code}; "
                    f"{out / 'logs' / 'isolated' / f'{name}.log'})")
        return code

    with ThreadPoolExecutor(max_workers=ISOLATED_AT_ONCE) as pool:
        return max(pool.map(run_alone, alone), default=0)


def server_role(name: str, out: Path) -> int:
    started = time.monotonic()
    caps = HERE / name / "capabilities.json"
    common = ["run", "--binding", "rsocket", "--name", f"{name}@{VERSIONS[name]}",
              *(["--capabilities", str(caps)] if caps.exists() else []),
              *baseline_flag(name), "--quiet", "--min-run", "0"]
    from rsio_tck.scenarios import load_directory

    scenarios = load_directory(binding="rsocket")
    alone = isolated(name, scenarios)
    shared_k, _ = selections(list(alone), [s.id for s in scenarios])  # the isolated ones are named by id
    where, log = out / "server" / name, out / "logs" / f"server-{name}.log"
    server = Server(name)
    with server as url:
        code = kit(*common, "--target", url, "--report-dir", str(where), "--jobs", str(shared_jobs(name)),
                   "-k", shared_k, timeout=SUITE_TIMEOUT, log=log)
        died = server.died()
    if died:
        differs(f"{name} server DIED during the shared run (exit {server.process.returncode if server.process else '?'}): "
            f"find the scenario that kills it and list it in interop/{name}/isolate.txt")
        code = max(code, 1)
    shared = run_dir(where)
    if alone:
        files = {s.id: s.file for s in scenarios}
        code = max(code, timing.timed(f"{name} server isolated", lambda: run_isolated(name, list(alone), files, out)))
        for scenario in alone:  # merged in a fixed order
            part = run_dir(out / "isolated" / name / scenario)
            if shared is not None and part is not None:
                merge_run(shared, part)
    if shared is None:
        differs(f"{name} as server: no run directory (exit {code}; {log})")
        return max(code, 1)
    if alone:
        kit("report", str(shared), "--no-check", timeout=300, log=log)
    changed = compare_pairs(HERE / name / "baseline.txt", name, "server", shared)
    say(f"{name} as server: {counts_line(shared)}; {len(alone)} isolated; "
        f"{'matches' if not changed else 'DIFFERS FROM'} its baseline; {time.monotonic() - started:.0f} s")
    return 1 if changed or code >= 2 else 0


def client_role(name: str, out: Path) -> int:
    started = time.monotonic()
    where, log = out / "client" / name, out / "logs" / f"client-{name}.log"
    code = kit("run", "--binding", "rsocket", "--listen", "tcp://127.0.0.1:0", "--client-command",
               str(HERE / name / "client"), "--name", f"{name}@{VERSIONS[name]}", "--quiet", "--min-run", "0",
               *baseline_flag(name), "--report-dir", str(where), timeout=SUITE_TIMEOUT, log=log)
    shared = run_dir(where)
    if shared is None:
        differs(f"{name} as client: no run directory (exit {code}; {log})")
        return max(code, 1)
    changed = compare_pairs(HERE / name / "baseline.txt", name, "client", shared)
    say(f"{name} as client: {counts_line(shared)}; "
        f"{'matches' if not changed else 'DIFFERS FROM'} its baseline; {time.monotonic() - started:.0f} s")
    return 1 if changed or code >= 2 else 0


SITES = (("server", "RSocket servers"), ("client", "RSocket clients"), ("ditto", "Ditto's client"))


class Publishing:
    """Step 5: one site per role (implementations x rules), each with the client x server grid, ditto-client's
    site, and an index of them; all from one Spark session (``publish.py --stdin``; Spark's log in OUT/logs/).
    ``start`` with the steps (Spark starts beside them); ``offer`` a site once its roles' run directories are
    written (its pipeline runs at once, beside the steps still running); ``finish`` once ``matrix.json`` is
    written (``grid_coming``), which lets the pages be built."""

    def __init__(self, out: Path, names: list[str], grid_coming: bool) -> None:
        self.out, self.names, self.grid_coming = out, names, grid_coming
        self.offered: list[str] = []
        self.process: subprocess.Popen[str] | None = None
        self.started = 0.0

    def start(self) -> None:
        shutil.rmtree(self.out / "site", ignore_errors=True)  # the site shows this run's directories, nothing older
        log = self.out / "logs" / "publish.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        self.started = time.monotonic()
        with log.open("w", encoding="utf-8") as stream:  # the child holds its own descriptor
            self.process = subprocess.Popen([sys.executable, str(HERE / "publish.py"), "--stdin"], cwd=ROOT,
                                            stdin=subprocess.PIPE, stderr=stream, text=True)

    def offer(self, name: str) -> None:
        """Site ``name`` (of SITES): its run directories are all written."""
        out, grid = self.out, self.out / "matrix.json"
        role = "client" if name == "ditto" else name
        runs = [out / "client" / "ditto-client"] if name == "ditto" else [out / role / n for n in self.names]
        site = {"name": name, "out": str(out / "site" / name), "runs": [str(r) for r in runs if r.is_dir()],
                "grid": str(grid) if name != "ditto" and (self.grid_coming or grid.exists()) else None}
        if site["runs"] and self.process is not None and self.process.stdin is not None:
            self.offered.append(name)
            try:
                self.process.stdin.write(json.dumps(site) + "\n")
                self.process.stdin.flush()
            except OSError:  # it ended (Spark did not start): finish says so
                pass

    def finish(self) -> int:
        """Let the pages be built (the grid is written), wait for them, write the landing page; the exit code."""
        assert self.process is not None
        try:
            self.process.communicate(json.dumps({"pages": True}) + "\n",
                                     timeout=max(1.0, SUITE_TIMEOUT - (time.monotonic() - self.started)))
            code = self.process.returncode
        except (subprocess.TimeoutExpired, OSError) as exc:
            self.process.kill()
            self.process.wait()
            say(f"publish: {'timed out' if isinstance(exc, subprocess.TimeoutExpired) else exc} "
                f"({self.out / 'logs' / 'publish.log'})")
            code = 3
        landing = [(heading, name) for name, heading in SITES
                   if name in self.offered and (self.out / "site" / name / "site.json").is_file()]
        if landing:
            from rsio_tck.pipeline.landing import LandingError, write_landing

            try:
                write_landing(self.out / "site", landing, "Reactive Streams over the network")
            except LandingError as exc:
                say(f"publish: no landing page: {exc}")
                code = code or 1
        return code


def fresh(out: Path, names: list[str], roles: list[str]) -> None:
    """Remove what an earlier ``make interop`` left for the steps about to run: each site shows this run."""
    for name in names:
        for part in [*roles, *(["isolated"] if "server" in roles else [])]:
            shutil.rmtree(out / part / name, ignore_errors=True)
    shutil.rmtree(out / "logs", ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", default=list(IMPLEMENTATIONS), choices=IMPLEMENTATIONS, metavar="NAME")
    parser.add_argument("--out", type=Path, default=ROOT / "reports" / "interop", metavar="DIR")
    parser.add_argument("--skip-build", action="store_true")
    parser.add_argument("--no-matrix", action="store_true")
    parser.add_argument("--no-ditto", action="store_true", help="skip the Ditto steps (interop/run_ditto.py)")
    parser.add_argument("--no-publish", action="store_true", help="skip the Spark site (triage runs)")
    parser.add_argument("--roles", nargs="*", default=["server", "client"], choices=["server", "client"])
    parser.add_argument("--jobs", type=int, default=3, metavar="N", help="roles and grid pairs run at once (default 3)")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    names = [name for name in SLOWEST_FIRST if name in args.only]
    fresh(args.out, names, args.roles)
    if not args.skip_build:
        with ThreadPoolExecutor(max_workers=len(names) or 1) as pool:
            times = timing.timed("builds", lambda: dict(zip(names, pool.map(
                lambda n: build(n, args.out / "logs" / f"build-{n}.log", BUILD_TIMEOUT), names))), timing.PHASES)
        say(f"builds: {time.monotonic() - started:.0f} s")
        if any(t is None for t in times.values()):
            return 3
    steps: dict[str, Callable[[], int]] = {}
    if not args.no_ditto:  # Ditto: golden vectors from ditto-protocol, ditto-client against the kit (run_ditto.py)
        import run_ditto

        # First: its site's pipeline, started when it is done, then runs beside the roles.
        steps["ditto"] = lambda: run_ditto.run(args.out, build=not args.skip_build, publish_site=False)
    for name in names:
        if "server" in args.roles:
            steps[f"{name} server"] = lambda name=name: server_role(name, args.out)  # type: ignore[misc]
        if "client" in args.roles:
            steps[f"{name} client"] = lambda name=name: client_role(name, args.out)  # type: ignore[misc]
    # The grid's pairs join the same pool, after the roles: one bounded queue keeps --jobs steps busy to the end,
    # where a grid started after the last role waited for the slowest role alone.
    cells: dict[tuple[str, str], list[dict[str, Any]]] = {}
    if not args.no_matrix:
        cases, known, flaky = cases_and_baseline()
        for client, server in pairs_of(names):
            def one_pair(client: str = client, server: str = server) -> int:
                cells[(client, server)] = pair(client, server, cases, known, flaky)
                return 0

            steps[f"grid {client} {server}"] = one_pair
    publishing = None if args.no_publish else Publishing(args.out, names, not args.no_matrix)
    # Which steps write each site's run directories: its pipeline starts once they are done.
    feeding = {"server": [key for key in steps if key.endswith(" server")],
               "client": [key for key in steps if key.endswith(" client")], "ditto": [k for k in steps if k == "ditto"]}
    begun = time.monotonic()
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        if publishing is not None:
            publishing.start()  # Spark's start beside the first steps
        futures = {key: pool.submit(timing.timed, key, step) for key, step in steps.items()}
        waiting = {site: keys for site, keys in feeding.items() if keys}
        while waiting:
            for site in [site for site, keys in waiting.items() if all(futures[k].done() for k in keys)]:
                del waiting[site]
                if publishing is not None:
                    publishing.offer(site)
            wait([futures[k] for keys in waiting.values() for k in keys if not futures[k].done()],
                 return_when=FIRST_COMPLETED)
        timing.record(f"roles and Ditto ({args.jobs} steps at a time, the first grid pairs beside them)",
                      time.monotonic() - begun, timing.PHASES)
        grid_begun = time.monotonic()
        codes = {key: future.result() for key, future in futures.items() if not key.startswith("grid ")}
        wait(futures.values())
    timing.record("the rest of the grid" + (" (the sites' pipeline beside it)" if publishing else ""),
                  time.monotonic() - grid_begun, timing.PHASES)
    for future in futures.values():
        future.result()  # a grid pair's exception, raised here as before
    changed = write_matrix(names, args.out, cells) if not args.no_matrix else 0
    if publishing is not None:
        codes["publish"] = timing.timed("the sites' pages (after the grid)", publishing.finish, timing.PHASES)
        timing.record("publish (pipeline and pages)", time.monotonic() - publishing.started)
    bad = {what: code for what, code in codes.items() if code != 0}
    for what, code in bad.items():
        say(f"{what}: exit {code}" + (" (a result differs from its baseline)" if code == 1 and what != "publish" else ""))
    if changed:
        say(f"{changed} client x server cells differ from interop/matrix-baseline.txt")
    for line in DIFFERENCES:
        say(f"  {line}")
    for line in timing.summary(names, time.monotonic() - started):
        say(line)
    say(f"done in {time.monotonic() - started:.0f} s; site: {args.out / 'site' / 'index.html'}")
    return 1 if bad or changed else 0


if __name__ == "__main__":
    sys.exit(main())
