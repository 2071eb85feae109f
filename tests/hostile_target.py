"""The reference peer's hostile modes as a child process, for the kit's bounded-run tests and ``make bench``.

``with HostileTarget("rsocket", "garbage", "tcp") as url:`` starts
``python -m rsio_tck.reference_peer --binding rsocket --listen tcp://127.0.0.1:0 --hostile garbage``
and gives the URL it listens on (its first stdout line).  The peer caps its own bytes per
connection and its lifetime (``--hostile-max-bytes``, ``--hostile-max-seconds``), and the
context kills it on exit, so a test that fails cannot leave it running.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from listening_child import ListeningChild

# Where each binding listens on WebSocket (Ditto's /ws/2, RSocket's and RS-IO's any path).
WS_PATHS = {"rsio": "/rsio", "rsocket": "/rsocket", "ditto": "/ws/2"}


class HostileTarget(ListeningChild):
    def __init__(self, binding: str, mode: str, transport: str = "tcp", *, profile: str | None = None,
                 max_bytes: int = 64 * 1024 * 1024, max_seconds: float = 200.0, seed: int = 0) -> None:
        url = "tcp://127.0.0.1:0" if transport == "tcp" else f"ws://127.0.0.1:0{WS_PATHS.get(binding, '/')}"
        command = [sys.executable, "-m", "rsio_tck.reference_peer", "--binding", binding, "--listen", url,
                   "--hostile", mode, "--hostile-max-bytes", str(max_bytes), "--hostile-max-seconds",
                   str(max_seconds), "--seed", str(seed), "-q"]
        super().__init__(command + (["--profile", profile] if profile is not None else []), "hostile target")


# -- the kit against one hostile mode: bounded, and honest about what broke -------------------------

WALL_LIMIT = 60.0  # seconds (issue 27, as issue 15)
RSS_LIMIT = 200 * 1024 * 1024  # bytes: the kit's own process
KILL_AFTER = 150.0  # a run still going then is killed, and the test fails on its wall time
UNRUNNABLE = 3  # the kit's exit code for a target it could not run (stopped answering: docs/guide/exit-codes.md)


def kit_command(binding: str, url: str, report_dir: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "rsio_tck.cli", "run", "--binding", binding, "--target", url,
            "--report-dir", str(report_dir), "--quiet", *extra]


def run_kit(binding: str, transport: str, mode: str, report_dir: Path, *extra: str,
            profile: str | None = None) -> tuple[Any, list[dict[str, Any]]]:
    """``rsio-tck run`` of ``binding``'s suite (``extra``: e.g. ``-k``) against ``mode``, sampled with psutil;
    the measure and the results.jsonl lines.  ``profile``: the wire profile of both ends (None: the default)."""
    from flood_target import measure

    if profile is not None:
        extra = (*extra, "--profile", profile)
    with HostileTarget(binding, mode, transport, profile=profile, max_seconds=KILL_AFTER + 30) as url:
        measured = measure(kit_command(binding, url, report_dir, *extra), KILL_AFTER)
    runs = [p for p in report_dir.iterdir() if p.is_dir()] if report_dir.exists() else []
    lines = (runs[0] / "results.jsonl").read_text().splitlines() if len(runs) == 1 else []
    return measured, [json.loads(line) for line in lines if line]


def assert_bounded(measured: Any, results: list[dict[str, Any]], binding: str, what: str) -> None:
    """The run ended by itself within the bounds, with exit 1 or 3, one line per problem and no traceback;
    every failure cites a rule of the binding's own catalogue."""
    from rsio_tck.binding import get_binding

    assert measured.returncode is not None, f"{what}: still running after {KILL_AFTER:g} s"
    assert measured.wall < WALL_LIMIT, f"{what}: {measured.wall:.1f} s"
    assert measured.peak_rss < RSS_LIMIT, f"{what}: peak RSS {measured.peak_rss / 2**20:.0f} MB"
    assert measured.returncode in (1, UNRUNNABLE), f"{what}: exit {measured.returncode}: {measured.output[-2000:]}"
    assert "Traceback" not in measured.output, measured.output[-3000:]
    own = set(get_binding(binding).rules())
    assert results, f"{what}: no results.jsonl"
    for result in results:
        if result["verdict"] == "fail":
            rules = {v["rule"] for v in result["violations"]}
            assert rules and rules <= own, f"{what}: {result['id']} cites {sorted(rules - own) or 'nothing'}"


def bounded_run(binding: str, transport: str, mode: str, report_dir: Path, *extra: str, profile: str | None = None,
                wanted: str | tuple[str, ...] | None = None) -> tuple[Any, list[dict[str, Any]]]:
    """``run_kit``, then ``assert_bounded``; ``wanted``: a rule some failing result must cite (the one the mode
    surely breaks; of several, one: which one can depend on frames crossing).  The measure and the results."""
    measured, results = run_kit(binding, transport, mode, report_dir, *extra, profile=profile)
    assert_bounded(measured, results, binding, " ".join((binding, transport, profile or "", mode)))
    alternatives = (wanted,) if isinstance(wanted, str) else wanted or ()
    assert wanted is None or set(alternatives) & cited(results), sorted(cited(results))
    return measured, results


def cited(results: list[dict[str, Any]]) -> set[str]:
    """Every rule the failing results cite."""
    return {v["rule"] for r in results if r["verdict"] == "fail" for v in r["violations"]}


def assert_said_too_slow(measured: Any, results: list[dict[str, Any]]) -> None:
    """The run ended with exit 3, saying once that the target answered too slowly to judge, and no scenario
    that was not run is charged to a rule."""
    said = [line for line in measured.output.splitlines() if "answered too slowly to judge during" in line]
    assert measured.returncode == UNRUNNABLE and len(said) == 1, measured.output[-3000:]
    not_run = [r for r in results if r.get("reason", "").startswith("not run: the target answered too slowly")]
    assert not_run and all(r["verdict"] == "error" and not r["violations"] for r in not_run), not_run[:3]


def not_judged_at_a_kit_limit(results: list[dict[str, Any]]) -> bool:
    """Every scenario that ran ended not judged, the kit having closed at a limit of its own: nothing charged."""
    ran = [r for r in results if r["verdict"] != "skip"]
    return bool(ran) and all(r["verdict"] == "error" and not r["violations"]
                             and "at a limit of its own" in r["reason"] for r in ran)
