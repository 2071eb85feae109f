"""Ditto fuzz programs: every drawn program is a valid scenario citing Ditto rules, and a correct
publisher (the test-only one of ditto_publisher.py) passes every one of them, run by the fuzz engine."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ditto_publisher import running_publisher
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rsio_tck.binding import get_binding
from rsio_tck.catalogue import RULES
from rsio_tck.fuzz.engine import FuzzConfig, as_scenario, fuzz_hooks, judge, run_program


@contextmanager
def publisher_in_a_thread() -> Iterator[int]:
    """The publisher on its own event loop, so the engine's asyncio.run can drive the kit."""
    ready: list[int] = []
    started = threading.Event()
    stop: list[Any] = []

    async def serve() -> None:
        async with running_publisher(seed=5) as port:
            ready.append(port)
            done = asyncio.Event()
            stop.append((asyncio.get_running_loop(), done))
            started.set()
            await done.wait()

    thread = threading.Thread(target=lambda: asyncio.run(serve()), daemon=True)
    thread.start()
    assert started.wait(10)
    try:
        yield ready[0]
    finally:
        loop, done = stop[0]
        loop.call_soon_threadsafe(done.set)
        thread.join(10)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_programs_are_scenarios_citing_ditto_rules(data: st.DataObject) -> None:
    profile = data.draw(st.sampled_from(get_binding("ditto").profiles))
    programs, _ = fuzz_hooks("ditto")
    program = data.draw(programs(profile, None))
    scenario = as_scenario(program)
    assert scenario.binding == "ditto" and scenario.profiles == (profile,)
    cited = set(scenario.rules) | set(scenario.kit_violations)
    assert cited and all(rule.startswith("DITTO-") and rule in RULES for rule in cited)


def test_a_correct_publisher_passes_the_programs() -> None:
    programs, _ = fuzz_hooks("ditto")
    drawn: list[dict[str, Any]] = []

    @settings(max_examples=12, deadline=None, database=None, derandomize=True)
    @given(profile=st.sampled_from(("streaming", "search")), data=st.data())
    def collect(profile: str, data: st.DataObject) -> None:
        drawn.append(data.draw(programs(profile, None)))

    collect()
    with publisher_in_a_thread() as port:
        for program in drawn:
            config = FuzzConfig(target=f"tcp://127.0.0.1:{port}", codec=program["profiles"][0], binding="ditto",
                                signal_timeout=2.0)
            verdict = judge(run_program(program, config), tuple(program.get("kit_violations", ())))
            assert verdict is None, (verdict, program)
