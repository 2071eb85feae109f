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
from hostile_target import assert_bounded, cited, run_kit

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
    measured, results = run_kit("ditto", "tcp", mode, tmp_path)
    assert_bounded(measured, results, "ditto", f"ditto tcp {mode}")
    wanted = FULL_SUITE[mode]
    assert wanted is None or wanted in cited(results), sorted(cited(results))


@pytest.mark.timeout(400)
@pytest.mark.parametrize("mode", sorted(SUBSET))
def test_a_subset_against_a_slow_ditto_target_is_bounded(mode: str, tmp_path: Path) -> None:
    measured, results = run_kit("ditto", "tcp", mode, tmp_path, "-k", SUBSET[mode])
    assert_bounded(measured, results, "ditto", f"ditto tcp {mode}")


@pytest.mark.timeout(400)
@pytest.mark.parametrize("mode", ["endless-line", "ws-continuations", "ws-huge-frame"])
def test_websocket_modes_against_the_kit_are_bounded(mode: str, tmp_path: Path) -> None:
    measured, results = run_kit("ditto", "ws", mode, tmp_path, "-k", "DITTO-001 or DITTO-002 or DITTO-003")
    assert_bounded(measured, results, "ditto", f"ditto ws {mode}")


# Open (issue 27): pings as fast as the socket takes them, the pongs never read: 235 MB peak (run alone on
# a loaded machine), over the bound, though the kit stops reading while 1 MiB of pongs waits unsent.
@pytest.mark.xfail(reason="issue 27, open: a WebSocket ping flood peaks over 200 MB", strict=False)
@pytest.mark.timeout(400)
def test_a_ping_flood_is_bounded(tmp_path: Path) -> None:
    measured, results = run_kit("ditto", "ws", "ws-ping-flood", tmp_path, "-k", "DITTO-001 or DITTO-002 or DITTO-003")
    assert_bounded(measured, results, "ditto", "ditto ws ws-ping-flood")
