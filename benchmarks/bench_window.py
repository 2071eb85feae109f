"""The silence window on a loaded machine: the shortest that keeps every verdict.

RS-IO orders nothing across Ids, so where a scenario proves that nothing more comes it waits out a
quiet spell (``--silence-window``, ``RunConfig.silence_window``).  Too short a window on a loaded
machine takes a pause of a steady target for its end and turns a pass into a failure; too long a
window is time every user pays.  This runs the RS-IO suite (both codecs, ``--jobs 16``) against the
reference peer while ``LOAD_PROCESSES`` bounded busy loops compete for the cores, at each window of
``WINDOWS``, ``ROUNDS`` times, and counts the scenarios that did not pass.  The baseline is the same
suite at the longest window.  Each busy loop stops by itself after ``LOAD_SECONDS``.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import time

from rsio_tck.embedded import EmbeddedPeer
from rsio_tck.scenarios import RunConfig, Verdict, load_directory, run_suite
from rsio_tck.selfcheck import freedom_only

WINDOWS = (0.01, 0.02, 0.05, 0.1)
ROUNDS = 2
LOAD_PROCESSES = os.cpu_count() or 2  # one busy loop per core: the suite gets about half the machine
LOAD_SECONDS = 240.0  # each busy loop's own bound


def _busy(until: float) -> None:
    x = 0
    while time.monotonic() < until:
        x = (x * 31 + 7) % 1000003


def _not_passing(codec: str, window: float) -> list[str]:
    scenarios = load_directory()
    with EmbeddedPeer(codec=codec) as url:
        config = RunConfig(target=url, codec=codec, silence_window=window)
        results = asyncio.run(run_suite(scenarios, config, jobs=16))
    return [r.id for r in results if r.verdict not in (Verdict.PASS, Verdict.SKIP) and not freedom_only(r)]


def main() -> dict[str, float]:
    figures: dict[str, float] = {}
    context = multiprocessing.get_context("spawn")
    until = time.monotonic() + LOAD_SECONDS
    load = [context.Process(target=_busy, args=(until,), daemon=True) for _ in range(LOAD_PROCESSES)]
    for process in load:
        process.start()
    try:
        for window in WINDOWS:
            bad: list[str] = []
            started = time.perf_counter()
            for _ in range(ROUNDS):
                for codec in ("msgpack", "varint"):
                    bad += [f"{codec}:{sid}" for sid in _not_passing(codec, window)]
            wall = (time.perf_counter() - started) / (2 * ROUNDS)
            figures[f"window_{window}_not_passing"] = len(bad)
            print(f"  window {window * 1000:5.0f} ms under {LOAD_PROCESSES} busy loops: {len(bad)} not passing in "
                  f"{2 * ROUNDS} suite runs ({wall:.2f} s a run){': ' + ', '.join(sorted(set(bad))) if bad else ''}",
                  flush=True)
    finally:
        for process in load:
            process.terminate()
            process.join(5)
    kept = [w for w in WINDOWS if figures[f"window_{w}_not_passing"] == 0]
    print(f"  shortest window keeping every verdict under load: {kept[0] * 1000:.0f} ms" if kept
          else "  no window tried kept every verdict under load")
    print("  goal: the default (--silence-window, 50 ms) is the shortest that keeps every verdict under load")
    return figures


if __name__ == "__main__":
    main()
