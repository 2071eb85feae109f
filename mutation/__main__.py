"""``make mutation``: mutation testing of the reference peer against the scenario suite.

For each mutant of the modules that decide what the peer sends and accepts
(``mutants.py``), the whole scenario suite runs against an embedded peer that loads
that one mutated module (``suite.py``, ``overlay/``).  A mutant is killed when a
scenario fails, warns or errs, or when the run passes its time limit; it survives
when everything passes.  A survivor is accounted for only by a new or stronger
scenario that kills it, or by an entry in ``tests/mutation-equivalents.txt`` saying
why the protocol allows what the mutant does.

Score = killed / (mutants - equivalent), where equivalent means listed *and*
survived: a listed mutant that the suite kills is reported, so the list cannot hide
a mutant the suite catches.  The worktree is never written; results go to
``reports/mutation-<time>/`` (results.jsonl, summary.md).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from .mutants import (
    ROOT,
    SCOPE,
    Equivalent,
    Mutant,
    all_mutants,
    changed_lines,
    load_equivalents,
    mutated_source,
    nearest,
    stale_equivalents,
)

GOAL = 90.0


@dataclass(frozen=True, slots=True)
class Outcome:
    mutant: Mutant
    status: str  # killed, timeout (counts as killed), survived
    detail: str  # the killer, or the worker's last line
    seconds: float

    @property
    def killed(self) -> bool:
        return self.status != "survived"


_LIVE: set[subprocess.Popen[bytes]] = set()  # suite runs going on, each a process group
_LIVE_LOCK = threading.Lock()


def stop_workers() -> None:
    """End every suite run still going (an interrupted run leaves no peer behind)."""
    with _LIVE_LOCK:
        for process in _LIVE:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


# The peer takes its freedoms (unsolicited splits, Id reuse, mixed packing...) at random per
# connection, and which scenario gets which connection varies from run to run.  A mutant that
# survives the seeded peer gets a second run against the peer's one fixed habit
# (--no-freedoms), so the "freedom off" side of every choice is always exercised.  A mutant
# listed as equivalent gets the first pass only (a kill there is still reported).
PASSES: tuple[tuple[str, ...], ...] = ((), ("--no-freedoms",))


def run_worker(env: dict[str, str], timeout: float, jobs: int,
               peer_args: tuple[str, ...] = ()) -> tuple[int | None, str, float]:
    """One suite run in its own process group (the peer it starts included): (exit code or None, last line, s)."""
    started = time.perf_counter()
    command = [sys.executable, "-m", "mutation.suite", "--jobs", str(jobs), *(f"--peer-arg={a}" for a in peer_args)]
    with _LIVE_LOCK:
        process = subprocess.Popen(command, cwd=ROOT,
                                   env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
        _LIVE.add(process)
    try:
        output, _ = process.communicate(timeout=timeout)
        code: int | None = process.returncode
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        output, _ = process.communicate()
        code = None
    finally:
        with _LIVE_LOCK:
            _LIVE.discard(process)
    lines = output.decode(errors="replace").strip().splitlines()
    return code, (lines[-1] if lines else ""), time.perf_counter() - started


def try_mutant(mutant: Mutant, timeout: float, jobs: int, scratch: Path, listed: bool = False) -> Outcome:
    """Kill ``mutant`` if the suite can; a mutant listed as equivalent gets the seeded pass only."""
    path = scratch / f"{mutant.module.removesuffix('.py').replace('/', '-')}-{mutant.occurrence}-{mutant.operator.split('/')[-1]}.py"
    path.write_text(mutated_source(mutant))
    env = {**os.environ, "RSIO_MUTANT_MODULE": mutant.import_name, "RSIO_MUTANT_SOURCE": str(path)}
    seconds = 0.0
    try:
        for peer_args in PASSES[:1] if listed else PASSES:
            code, last, took = run_worker(env, timeout, jobs, peer_args)
            seconds += took
            against = f" (peer {' '.join(peer_args)})" if peer_args else ""
            if code is None:
                return Outcome(mutant, "timeout", f"no verdict within {timeout:.0f} s{against}", seconds)
            if code != 0:
                # 1: a scenario failed; 2 or a crash: the mutated peer did not even start.
                return Outcome(mutant, "killed", (last or f"exit status {code}") + against, seconds)
    finally:
        path.unlink()
    return Outcome(mutant, "survived", last, seconds)


def choose(mutants: list[Mutant], args: argparse.Namespace) -> list[Mutant]:
    chosen = [m for m in mutants if not args.module or m.module in args.module]
    if args.only:
        keys = set(args.only)
        chosen = [m for m in chosen if m.key in keys]
        unknown = keys - {m.key for m in chosen}
        if unknown:
            raise SystemExit(f"python -m mutation: --only names no mutant: {', '.join(sorted(unknown))}")
    if args.sample:
        chosen = sorted(random.Random(args.seed).sample(chosen, min(args.sample, len(chosen))))
    return chosen


def summarize(outcomes: list[Outcome], equivalents: dict[str, Equivalent], mutants: list[Mutant],
              elapsed: float, complete: bool) -> tuple[str, float]:
    """The summary (markdown) and the score in percent."""
    killed = [o for o in outcomes if o.killed]
    survived = [o for o in outcomes if not o.killed]
    equivalent = [o for o in survived if o.mutant.key in equivalents]
    unaccounted = [o for o in survived if o.mutant.key not in equivalents]
    contradicted = [o for o in killed if o.mutant.key in equivalents]
    counted = len(outcomes) - len(equivalent)
    score = 100.0 * len(killed) / counted if counted else 100.0
    timeouts = sum(o.status == "timeout" for o in outcomes)
    lines = [
        f"mutation run: {len(outcomes)} mutants of {', '.join(SCOPE)} in {elapsed / 60:.1f} min "
        f"({elapsed:.0f} s){'' if complete else ' (a selection, not the full set)'}",
        f"killed {len(killed)} (of which {timeouts} by time limit), survived {len(survived)}, "
        f"equivalent {len(equivalent)}",
        f"score: killed / (mutants - equivalent) = {len(killed)} / {counted} = {score:.1f} %",
    ]
    if unaccounted:
        lines += ["", f"survivors not accounted for ({len(unaccounted)}):"]
        lines += [f"- `{o.mutant.key}`: `{changed_lines(o.mutant)[0][1].strip()}`" for o in unaccounted]
    if equivalent:
        lines += ["", f"equivalent mutants ({len(equivalent)}, tests/mutation-equivalents.txt):"]
        lines += [f"- `{o.mutant.key}`: {equivalents[o.mutant.key].reason}" for o in equivalent]
    if contradicted:
        lines += ["", "listed as equivalent but killed (remove them from tests/mutation-equivalents.txt):"]
        lines += [f"- `{o.mutant.key}` by {o.detail}" for o in contradicted]
    stale = stale_equivalents(equivalents, mutants) if complete else []
    if stale:
        lines += ["", "equivalents that name no current mutant (the module changed):"]
        lines += [f"- `{e.key}` (nearest: {nearest(mutants, e.key)})" for e in stale]
    return "\n".join(lines), score


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mutation", description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=2, help="mutants tested at once (default 2: the machine is shared)")
    parser.add_argument("--suite-jobs", type=int, default=8, help="scenarios run concurrently within one suite run")
    parser.add_argument("--timeout", type=float, default=0.0,
                        help="seconds one suite run may take (default: 10 x the unmutated run, at least 90)")
    parser.add_argument("--module", action="append", choices=sorted(SCOPE), help="mutate only this module")
    parser.add_argument("--only", action="append", metavar="KEY", help="only this mutant ('rsio/flows.py:92 core/...#0')")
    parser.add_argument("--sample", type=int, default=0, help="a random selection of this many mutants")
    parser.add_argument("--seed", type=int, default=15)
    parser.add_argument("--list", action="store_true", help="list the mutants and exit")
    parser.add_argument("--report-dir", type=Path, default=ROOT / "reports")
    parser.add_argument("--fail-under", type=float, default=GOAL, help="exit 1 if the full run scores below this")
    args = parser.parse_args(argv)
    if args.jobs < 1 or args.suite_jobs < 1:
        parser.error("--jobs and --suite-jobs must be at least 1")

    mutants = all_mutants()
    try:
        equivalents = load_equivalents()
    except ValueError as exc:
        print(f"python -m mutation: {exc}", file=sys.stderr)
        return 2
    chosen = choose(mutants, args)
    if args.list:
        for mutant in chosen:
            note = "  [equivalent]" if mutant.key in equivalents else ""
            print(f"{mutant.key}: {changed_lines(mutant)[0][1].strip()}{note}")
        print(f"{len(chosen)} mutants")
        return 0

    started = time.perf_counter()
    code, last, baseline = run_worker(dict(os.environ), 120.0, args.suite_jobs)
    if code != 0:
        print(f"python -m mutation: the unmutated peer does not pass the suite ({last}); nothing to measure",
              file=sys.stderr)
        return 2
    timeout = args.timeout or max(90.0, 10 * baseline)
    print(f"unmutated suite: {baseline:.1f} s; {len(chosen)} mutants, {args.jobs} at a time, "
          f"time limit {timeout:.0f} s each", flush=True)

    out = args.report_dir / f"mutation-{datetime.now(UTC).strftime('%Y%m%dT%H%M%SZ')}"
    out.mkdir(parents=True, exist_ok=True)
    outcomes: list[Outcome] = []
    lock = threading.Lock()
    with tempfile.TemporaryDirectory(prefix="rsio-mutants-") as scratch, \
            (out / "results.jsonl").open("w") as results, ThreadPoolExecutor(args.jobs) as pool:
        def one(mutant: Mutant) -> None:
            outcome = try_mutant(mutant, timeout, args.suite_jobs, Path(scratch), mutant.key in equivalents)
            with lock:
                outcomes.append(outcome)
                mark = "EQUIV" if not outcome.killed and mutant.key in equivalents else outcome.status
                print(f"[{len(outcomes)}/{len(chosen)}] {mark:8s} {mutant.key}  {outcome.seconds:.1f} s  "
                      f"{outcome.detail[:160]}", flush=True)
                results.write(json.dumps({"key": mutant.key, "status": outcome.status, "detail": outcome.detail,
                                          "seconds": round(outcome.seconds, 2),
                                          "change": changed_lines(mutant)[0][1].strip()}) + "\n")
                results.flush()

        futures = [pool.submit(one, mutant) for mutant in chosen]
        try:
            for future in futures:
                future.result()
        except BaseException:
            for future in futures:
                future.cancel()  # an interrupted run stops at once (main() then kills the suite runs going on)
            stop_workers()
            raise
    elapsed = time.perf_counter() - started
    complete = len(chosen) == len(mutants)
    equivalents = load_equivalents()  # as the file is now: it may have been edited during a long run
    summary, score = summarize(sorted(outcomes, key=lambda o: o.mutant), equivalents, mutants, elapsed, complete)
    (out / "summary.md").write_text(summary + "\n")
    print("\n" + summary + f"\n\nresults: {out}")
    return 1 if complete and score < args.fail_under else 0


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        sys.exit(main())
    finally:
        stop_workers()
