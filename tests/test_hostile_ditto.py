"""The kit as client against the reference peer's hostile Ditto modes (issue 27): bounded, and honest.

As ``test_hostile_rsocket.py``, for ``rsio-tck run --binding ditto`` over TCP lines and WebSocket
(``ws://.../ws/2``).  The modes that stress memory run the whole default suite, each asserting the
rule it surely breaks; the time-based ones (silent, slowloris, half-close, a close mid-line) and the
WebSocket ones a ``-k`` subset of three scenarios (their cost is time-outs, or the transport's, not
the suite's).  14 runs took 5 min together beside another such module on a loaded 2-core machine.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hostile_target import assert_said_too_slow, bounded_run, not_judged_at_a_kit_limit

# Slow by nature (each waits out a hostile peer within a bound of tens of seconds): the tier `make interop`
# runs, not `make test` (issue 29).
pytestmark = pytest.mark.hostile

FULL_SUITE = {
    "garbage": None,
    "endless-line": "DITTO-LINE-1",  # a line longer than the kit's maximum
    "unknown-next-flood": None,
    "invalid-utf8": "DITTO-ENV-1",
    "deep-json": "DITTO-ENV-2",  # an array, however deep, is not an object
    "unclosed-json": "DITTO-ENV-1",
}
SUBSET = {"silent": "DITTO-001 or DITTO-002", "slowloris": "DITTO-001 or DITTO-002",
          "mid-frame-close": "DITTO-001 or DITTO-002", "half-close": "DITTO-001 or DITTO-002"}


@pytest.mark.timeout(400)  # the run is killed at 150 s; the rest is the peer and report
@pytest.mark.parametrize("mode", sorted(FULL_SUITE))
def test_the_whole_suite_against_a_hostile_ditto_target_is_bounded(mode: str, tmp_path: Path) -> None:
    bounded_run("ditto", "tcp", mode, tmp_path, wanted=FULL_SUITE[mode])


@pytest.mark.timeout(400)
@pytest.mark.parametrize("mode", sorted(SUBSET))
def test_a_subset_against_a_slow_ditto_target_is_bounded(mode: str, tmp_path: Path) -> None:
    bounded_run("ditto", "tcp", mode, tmp_path, "-k", SUBSET[mode])


@pytest.mark.timeout(400)
def test_the_whole_suite_against_an_endless_websocket_message_is_bounded_and_cites_the_line_rule(tmp_path: Path) -> None:
    # Eight connections each held a message growing to the WebSocket framing's 16 MiB (334 MB): a scenario connection
    # now opens its WebSocket with the kit's configured maximum (4 MiB), and the message over it breaks DITTO-LINE-1.
    measured, results = bounded_run("ditto", "ws", "endless-line", tmp_path, wanted="DITTO-LINE-1")
    failing = [r for r in results if r["verdict"] == "fail"]
    assert failing and all({v["rule"] for v in r["violations"]} == {"DITTO-LINE-1"} for r in failing), failing[:2]


@pytest.mark.timeout(400)
@pytest.mark.parametrize("mode", ["ws-continuations", "ws-huge-frame"])
def test_websocket_modes_against_the_kit_are_bounded(mode: str, tmp_path: Path) -> None:
    bounded_run("ditto", "ws", mode, tmp_path, "-k", "DITTO-001 or DITTO-002 or DITTO-003")


@pytest.mark.timeout(400)
def test_a_ping_flood_is_bounded_and_not_judged(tmp_path: Path) -> None:
    # Pings as fast as the socket takes them, the pongs never read: the kit closes at its own limit (1008), and
    # nothing after it is charged to a rule (before: 235 MB, still running).
    measured, results = bounded_run("ditto", "ws", "ws-ping-flood", tmp_path)
    assert not_judged_at_a_kit_limit(results), results


@pytest.mark.timeout(400)
def test_the_whole_suite_against_a_line_that_trickles_is_said_once_to_be_too_slow(tmp_path: Path) -> None:
    # A line of the largest announced length, two bytes a second: the first round of scenarios runs out of its
    # 30 s budget with bytes still arriving (not judged), a probe of the target's pace fails, the run ends.
    measured, results = bounded_run("ditto", "tcp", "huge-length", tmp_path)
    assert_said_too_slow(measured, results)
