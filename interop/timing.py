"""Where the time of ``make interop`` went: each step's seconds, said in the run's closing lines.

The steps overlap (``run.py`` runs ``--jobs`` at a time), so a step's seconds are its own wall time, not a share
of the run's: the phases (builds, the steps, publishing) add up to the total; the implementations' lines say
which of them kept the phase of steps long.  Threads record at once (one lock).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

_LOCK = threading.Lock()
STEPS: dict[str, float] = {}  # "rsocket-rust server", "rsocket-rust server isolated", "grid rsocket-py rsocket-go", ...
PHASES: dict[str, float] = {}  # "builds", "steps", "publish", in the order they ran


def record(key: str, seconds: float, into: dict[str, float] | None = None) -> None:
    with _LOCK:
        (STEPS if into is None else into)[key] = seconds


def timed(key: str, step: Callable[[], T], into: dict[str, float] | None = None) -> T:
    """``step()``, its wall time recorded under ``key`` (in STEPS, or ``into``: PHASES)."""
    started = time.monotonic()
    try:
        return step()
    finally:
        record(key, time.monotonic() - started, into)


def summary(names: list[str], total: float) -> list[str]:
    """The closing lines: one per phase and the total, then one per implementation: each role's seconds and its
    grid pairs' (as server, as client), the longest step of all named."""
    lines = ["time: " + "; ".join(f"{phase} {seconds:.0f} s" for phase, seconds in PHASES.items())
             + f"; total {total:.0f} s"]
    for name in names:
        parts = []
        if f"{name} server" in STEPS:
            isolated = STEPS.get(f"{name} server isolated")
            parts.append(f"server {STEPS[f'{name} server']:.0f} s"
                         + (f" (its isolated scenarios {isolated:.0f} s)" if isolated is not None else ""))
        if f"{name} client" in STEPS:
            parts.append(f"client {STEPS[f'{name} client']:.0f} s")
        as_server = [s for key, s in STEPS.items() if key.startswith("grid ") and key.split()[2] == name]
        as_client = [s for key, s in STEPS.items() if key.startswith("grid ") and key.split()[1] == name]
        if as_server or as_client:
            parts.append(f"grid as server {sum(as_server):.0f} s, as client {sum(as_client):.0f} s "
                         f"({len(as_server) + len(as_client)} pairs)")
        if parts:
            lines.append(f"time {name}: " + ", ".join(parts))
    others = {key: s for key, s in STEPS.items() if not key.startswith(("grid ", *(f"{n} " for n in names)))}
    if others:
        lines.append("time, other steps: " + ", ".join(f"{key} {s:.0f} s" for key, s in others.items()))
    if STEPS:
        longest = max(STEPS, key=STEPS.__getitem__)
        lines.append(f"time: the longest step was {longest} ({STEPS[longest]:.0f} s); the steps' seconds add up to "
                     f"{sum(s for key, s in STEPS.items() if not key.endswith(' isolated')):.0f} s")
    return lines
