"""The fuzzer against hostile targets (issue 27): bounded, and honest.

``rsio-tck fuzz --binding B --target`` a hostile server ends by itself in under 60 s at under 200 MB (the
kit's own process, psutil), exit 1 (what it finds: the hostile server breaks rules) or 3, no traceback.
Each example is an ordinary scenario run (the same bounded sessions as ``rsio-tck run``), so what is
fuzzer-specific is the search's clock: one run keeps the default 45 s time budget against random bytes
(the whole run, start-up, confirming and writing findings, within 60 s); the others run a 10 s budget,
which is enough to meet each hostile mode many times (the cost is the budget, not the mode).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hostile_roles import assert_role_bounded, run_fuzz

# Slow by nature (each waits out a hostile peer within a bound of tens of seconds): the tier `make interop`
# runs, not `make test` (issue 29).
pytestmark = pytest.mark.hostile

# The default budget against random bytes: before issue 27's fixes one run took 126 s (an example in flight when
# the budget ended, and confirming, lay outside it); examples now end by the budget plus FINISH_GRACE, and this run
# reaches its 200 examples in about 12 s (15.1 s in all at load average 5.7, 2026-11-27).
RUNS = [
    ("rsocket", "garbage", ()),  # the default --time-budget (45 s)
    ("rsocket", "endless-fragments", ("--time-budget", "10")),
    ("rsocket", "silent", ("--time-budget", "10")),
    ("ditto", "endless-line", ("--time-budget", "10")),
    ("ditto", "unknown-next-flood", ("--time-budget", "10")),
]


@pytest.mark.timeout(300)
@pytest.mark.parametrize(("binding", "mode", "extra"), RUNS,
                         ids=["rsocket-garbage-default-budget", *(f"{b}-{m}" for b, m, _ in RUNS[1:])])
def test_the_fuzzer_against_a_hostile_target_is_bounded(binding: str, mode: str, extra: tuple[str, ...],
                                                        tmp_path: Path) -> None:
    measured = run_fuzz(binding, "tcp", mode, tmp_path, *extra)
    assert_role_bounded(measured, f"fuzz {binding} {mode}")
    assert "fuzz summary:" in measured.output
