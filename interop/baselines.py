"""Exact baselines for ``make interop``: what each implementation is known to fail, pair by pair.

The kit's ``--baseline`` works per scenario id; ``interop/NAME/baseline.txt`` holds (scenario id, rule)
pairs (``SCENARIO-ID RULE [RULE ...]  # why``, as tests/test_interop_rsocket_py.py reads them;
``SCENARIO-ID RULE ... flaky  # why`` marks pairs that fail or pass by timing).  After each role the failing
and warning pairs of the run are compared with the baseline's: a new pair, or a steady baseline pair that
no longer fails (xpass), makes the role fail.  ``interop/matrix-baseline.txt`` does the same for the
client x server cells (``CLIENT SERVER CASE [flaky]  # why``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from processes import differs, say

Pair = tuple[str, str]


def run_results(directory: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (directory / "results.jsonl").read_text(encoding="utf-8").splitlines() if line]


def counts_line(directory: Path) -> str:
    counts: dict[str, int] = {}
    for result in run_results(directory):
        counts[str(result["verdict"])] = counts.get(str(result["verdict"]), 0) + 1
    return " ".join(f"{verdict} {n}" for verdict, n in sorted(counts.items()))


def failing_pairs(directory: Path) -> set[Pair]:
    """(scenario id, rule) of every failing or warning verdict (xfail included: the baseline made it one)."""
    pairs: set[Pair] = set()
    for result in run_results(directory):
        if result["verdict"] in ("fail", "warn", "xfail", "error"):
            violations = result.get("violations") or []
            rules = {str(v["rule"]) for v in violations} or {str(r) for r in result.get("rules") or []}
            pairs |= {(str(result["id"]), rule) for rule in rules}
    return pairs


def compare_pairs(baseline: Path, what: str, role: str, directory: Path) -> bool:
    """Print every (scenario, rule) pair that differs from ``baseline``; True if any does."""
    prefix = "CLIENT-" if role == "client" else ""
    steady, flaky = baseline_pairs(baseline)

    def mine(pairs: set[Pair]) -> set[Pair]:
        return {p for p in pairs if p[0].startswith(prefix) and (role == "client" or not p[0].startswith("CLIENT-"))}

    expected, maybe = mine(steady), mine(flaky)
    actual = failing_pairs(directory)
    for scenario, rule in sorted(actual - expected - maybe):
        differs(f"{what} as {role}: NEW {scenario} {rule} (triage: FINDINGS.md, or fix the kit)")
    for scenario, rule in sorted(expected - actual):
        differs(f"{what} as {role}: XPASS {scenario} {rule} (remove its baseline line)")
    return bool(actual - expected - maybe or expected - actual)


def baseline_pairs(path: Path) -> tuple[set[Pair], set[Pair]]:
    """``SCENARIO-ID RULE [RULE ...] [flaky]  # why`` lines as (steady pairs, flaky pairs).  ``flaky`` marks a
    deviation that shows or not by timing (a responder that ignores credits is caught only when its
    surplus element beats the kit's next REQUEST_N): such a pair may fail or pass.  A line naming no rule
    is reported and ignored."""
    steady: set[Pair] = set()
    flaky: set[Pair] = set()
    if path.exists():
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            fields = line.split("#", 1)[0].split()
            if not fields:
                continue
            marked = fields[-1] == "flaky"
            rules = fields[1:-1] if marked else fields[1:]
            if not rules:
                say(f"{path}:{number}: {fields[0]} names no rule (write SCENARIO-ID RULE  # why)")
            (flaky if marked else steady).update((fields[0], rule) for rule in rules)
    return steady, flaky


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
