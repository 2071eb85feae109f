"""The ``drain`` step's bounds: delivery must stop within ``max`` elements and ``within`` seconds.

A flood under an unbounded grant has megabytes of small frames in flight when the kit cancels, so the
two flood scenarios (STR-006, RSFLOW-011) give delivery a minute to stop (a loaded machine reads and
judges that backlog slowly), while the default stays five signal timeouts.
"""

from __future__ import annotations

import asyncio
import dataclasses

import pytest

from rsio_tck.embedded import EmbeddedPeer
from rsio_tck.scenarios import RunConfig, Verdict, load_directory, run_suite


def _drain_steps(scenario_id: str, binding: str) -> list[dict[str, object]]:
    (scenario,) = [s for s in load_directory(binding=binding) if s.id == scenario_id]
    return [step["drain"] for step in scenario.steps if "drain" in step]


@pytest.mark.parametrize(("scenario_id", "binding"), [("STR-006", "rsio"), ("RSFLOW-011", "rsocket")])
def test_the_flood_scenarios_give_delivery_a_minute_to_stop(scenario_id: str, binding: str) -> None:
    assert [step.get("within") for step in _drain_steps(scenario_id, binding)] == [60]


@pytest.mark.timeout(60)
def test_within_ends_a_drain_that_never_quietens_and_fails_its_rule() -> None:
    # The faulty peer ignores cancel and keeps sending under the unbounded demand.  The signal timeout is
    # so long that the default bound (five of them) would outlast this test's timeout: only `within` ends it.
    (scenario,) = [s for s in load_directory() if s.id == "STR-006"]
    steps = tuple({"drain": {**step["drain"], "within": 0.5}} if "drain" in step else step for step in scenario.steps)
    quick = dataclasses.replace(scenario, steps=steps)
    with EmbeddedPeer(binding="rsio", profile="msgpack", faults=("str-ignore-cancel",)) as url:
        (result,) = asyncio.run(run_suite([quick], RunConfig(target=url, signal_timeout=120.0), jobs=1))
    assert result.verdict is Verdict.FAIL
    assert any(f.rule == "STR-6" and "delivery on subscriber 1 to stop" in f.expectation for f in result.failures)


@pytest.mark.timeout(60)
def test_max_ends_a_drain_that_never_quietens_and_fails_its_rule() -> None:
    # The same faulty peer, with the time bound out of reach: the count of elements after the cancel ends it.
    (scenario,) = [s for s in load_directory() if s.id == "STR-006"]
    steps = tuple({"drain": {**step["drain"], "max": 1000, "within": 120}} if "drain" in step else step
                  for step in scenario.steps)
    quick = dataclasses.replace(scenario, steps=steps)
    with EmbeddedPeer(binding="rsio", profile="msgpack", faults=("str-ignore-cancel",)) as url:
        (result,) = asyncio.run(run_suite([quick], RunConfig(target=url), jobs=1))
    assert result.verdict is Verdict.FAIL
    (failure,) = [f for f in result.failures if f.rule == "STR-6"]
    assert "at most 1000 more elements" in failure.expectation and "and still sending" in failure.got
    assert int(failure.got.split()[0]) > 1000
