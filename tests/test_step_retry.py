"""The ``retry`` step: its steps run until they pass, at most ``times`` times; the last failure is the step's.

The target is the RS-IO reference peer serving ``tck/range`` with a demand of 3: each attempt below takes
the next element and expects it to be 1, so the first attempt fails (it gets 0) and the second passes.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from rsio_tck.embedded import EmbeddedPeer
from rsio_tck.scenarios import RunConfig, Verdict, run_suite
from rsio_tck.scenarios.loader import ScenarioError, load_file
from rsio_tck.selfcheck import freedom_only

SCENARIO = """
- id: RETRY-00{times}
  title: the second element is 1
  rules: [STR-1]
  level: MUST
  binding: contract
  steps:
    - send: {{subscribe: {{publisher: "tck/range?count=3", subscriber: 1, initialDemand: 3}}}}
    - expect: {{onSubscribe: {{subscriber: 1}}}}
    - retry:
        times: {times}
        var: attempt
        steps:
          - expect_elements: {{subscriber: 1, elements: [{{int: 1}}]}}
"""


def _verdict(times: int, tmp_path: Path) -> tuple[Verdict, str]:
    """The verdict (a pass; warn when it is only the peer's deliberate wide integers, TCK-9) and the failures."""
    path = tmp_path / f"retry-{times}.yaml"
    path.write_text(SCENARIO.format(times=times), encoding="utf-8")
    (scenario,) = load_file(path)
    with EmbeddedPeer(binding="rsio", profile="msgpack") as url:
        (result,) = asyncio.run(run_suite([scenario], RunConfig(target=url), jobs=1))
    verdict = Verdict.PASS if freedom_only(result) else result.verdict
    return verdict, " ".join(f.render() for f in result.failures)


def test_a_later_attempt_that_passes_passes_the_step(tmp_path: Path) -> None:
    assert _verdict(2, tmp_path) == (Verdict.PASS, "")


def test_when_every_attempt_fails_the_last_failure_is_the_steps(tmp_path: Path) -> None:
    verdict, failures = _verdict(1, tmp_path)
    assert verdict is Verdict.FAIL and "[STR-1]" in failures


@pytest.mark.parametrize("times", [0, 101])
def test_times_is_bounded(times: int, tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(SCENARIO.format(times=times), encoding="utf-8")
    with pytest.raises(ScenarioError, match="not a known step"):
        load_file(path)
