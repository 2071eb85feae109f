"""The wall time of ``make test`` and ``make interop``, next to their goals (issue 29, parts 2 and 3).

Neither can run inside ``make bench`` (a quarter of an hour each on two cores), so each records its own
wall time when it succeeds: the Makefile calls ``python -m benchmarks.bench_ci record NAME START [PART=START...]``
as its last step, which writes ``build/timings/NAME.json`` (the seconds from START, each PART's seconds, the
commit and the time).  ``make bench`` prints the last record of this checkout against the goal, with its date and
commit, or says that there is none.  A recipe's own time: ``make test``'s excludes the install of a fresh
clone (its ``.venv``), which the README's fresh-clone figure includes.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

TIMINGS = Path("build/timings")
# name -> (what it is, goal in seconds, the goal's words)
GOALS = {
    "make-test": ("make test (lint, types, docs, pytest with coverage)", 600.0, "under 10 min on a fresh clone"),
    "make-interop": ("make interop (the implementations, then the slow tier)", 300.0,
                     "under 5 min with cached builds"),
}


def _commit() -> str:
    try:
        done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return done.stdout.strip() or "unknown"


def record(name: str, start: float, parts: dict[str, float], now: float | None = None,
           where: Path = TIMINGS) -> Path:
    """Write ``where/NAME.json``: the seconds since ``start``, and each part's seconds since its own start."""
    now = time.time() if now is None else now
    where.mkdir(parents=True, exist_ok=True)
    path = where / f"{name}.json"
    entry = {"seconds": round(now - start, 1), "parts": {part: round(now - begun, 1) for part, begun in parts.items()},
             "commit": _commit(), "finished": datetime.fromtimestamp(now, UTC).strftime("%Y-%m-%d %H:%M UTC")}
    path.write_text(json.dumps(entry, indent=2) + "\n")
    return path


def lines(where: Path = TIMINGS) -> list[str]:
    """One line per goal: the last recorded run against it, or that none is recorded."""
    out = []
    for name, (what, goal, words) in GOALS.items():
        path = where / f"{name}.json"
        try:
            entry = json.loads(path.read_text())
            seconds = float(entry["seconds"])
        except (OSError, ValueError, KeyError, TypeError):
            out.append(f"  {what}: no run recorded in this checkout ({path}); goal {words}")
            continue
        parts = ", ".join(f"{part} {value:.0f} s" for part, value in entry.get("parts", {}).items())
        verdict = "met" if seconds < goal else "NOT met"
        out.append(f"  {what}: {seconds:.0f} s{f' ({parts})' if parts else ''} on {entry.get('finished', '?')}, "
                   f"commit {entry.get('commit', '?')}; goal {words}: {verdict}")
    return out


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["record"]:
        try:
            name, start = args[1], float(args[2])
            parts = {part: float(begun) for part, _, begun in (item.partition("=") for item in args[3:])}
        except (IndexError, ValueError):
            sys.exit("usage: python -m benchmarks.bench_ci record NAME START_EPOCH [PART=START_EPOCH ...]")
        print(f"{name}: {time.time() - start:.0f} s, recorded in {record(name, start, parts)}")
        return
    print("\n".join(lines()))


if __name__ == "__main__":
    main()
