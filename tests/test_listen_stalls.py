"""Listen mode bounds a client by silence, not total time, and says once when the client stopped.

A case ends once a connection of its client stood open with no progress (no whole frame either way) for
``--client-silence`` seconds: silent, it fails (as a signal that did not come); trickling bytes that make no
frame, it is too slow to judge (error).  A client that stalls in two cases in a row stopped: the first keeps
its verdict, the second is not judged, the rest are not run, and the run exits 3 in one line (issue 27: a
hostile client costs a run two cases' bounds, not every case's).
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rsio_tck import gate
from rsio_tck.binding import get_binding
from rsio_tck.embedded import EmbeddedPeer
from rsio_tck.listen import client_tests, run_client_tests
from rsio_tck.listen import runner as listen_runner
from rsio_tck.listen.runner import SILENT, SLOW, TIMED_OUT, run_client_case
from rsio_tck.scenarios.result import Failure, ScenarioResult, Verdict

HERE = Path(__file__).resolve().parent
CASE = client_tests("rsio", ["stream-range"])[0]


def _one(mode: str, *, silence: float, timeout: float = 30.0) -> ScenarioResult:
    async def one() -> ScenarioResult:
        with EmbeddedPeer() as serving:
            return await run_client_case(CASE, f"{sys.executable} {HERE / 'listen_clients.py'} {mode}",
                                         "tcp://127.0.0.1:0", serving, get_binding("rsio"), "msgpack",
                                         timeout=timeout, silence=silence)

    return asyncio.run(one())


def test_a_client_silent_with_its_connection_open_fails_after_the_silence_not_the_time_out() -> None:
    result = _one("hang", silence=0.5)
    assert result.verdict is Verdict.FAIL, result.explain()
    assert result.failures[-1].got.startswith("nothing came either way for 0.5 s"), result.explain()
    assert result.duration < 15.0  # the 30 s time-out did not come (the client sleeps 60 s)
    assert result.timed_out and not result.out_of_budget
    assert not result.findings  # the kit ended it: the cut connection is not the client's to answer for


def test_a_client_sending_only_keepalives_fails_after_the_silence_not_the_time_out() -> None:
    # Whole, answered KEEPALIVEs show the client alive, not getting on with its case: they are no progress.
    case = client_tests("rsocket", ["stream-range"])[0]

    async def one() -> ScenarioResult:
        with EmbeddedPeer(binding="rsocket") as serving:
            return await run_client_case(case, f"{sys.executable} {HERE / 'listen_clients.py'} rsocket-keepalives",
                                         "tcp://127.0.0.1:0", serving, get_binding("rsocket"), "rsocket-1.0",
                                         timeout=30.0, silence=0.5)

    result = asyncio.run(one())
    assert result.verdict is Verdict.FAIL, result.explain()
    got = result.failures[-1].got
    assert got.startswith("only keepalives came (") and got.endswith("for 0.5 s with its connection open; the kit "
                                                                     "ended the case"), result.explain()
    assert result.duration < 15.0  # the 30 s time-out did not come (the client keeps alive for 60 s)
    assert not result.findings, result.explain()  # its keepalives are correct: only the stall is charged


def test_a_client_trickling_bytes_that_make_no_frame_is_too_slow_to_judge() -> None:
    result = _one("trickle", silence=0.5)
    assert result.verdict is Verdict.ERROR, result.explain()
    assert "too slow to judge" in result.reason
    assert result.out_of_budget and not result.failures and not result.findings
    assert result.duration < 15.0


def test_a_client_past_its_time_out_is_ended_by_the_kit_and_not_charged_for_the_cut() -> None:
    result = _one("trickle", silence=30.0, timeout=1.0)
    assert result.verdict is Verdict.FAIL, result.explain()
    assert result.failures[-1].expectation == "the client to finish within 1 s"
    assert not result.findings  # its frame, cut by the kit's end of the case, is no ERR of the client's


def _canned(stalls: list[str | None]) -> Any:
    """A stand-in for one case's run: case i passes (None) or stalls as ``stalls[i]``."""
    kinds = iter(stalls)

    async def run_case(case: Any, *args: Any) -> tuple[ScenarioResult, str | None]:
        stall = next(kinds)
        result = ScenarioResult(id=f"CLIENT-rsocket-{case.name}", title="", rules=case.rules, level="MUST",
                                verdict=Verdict.PASS, target_side="client")
        if stall == SLOW:
            result.verdict, result.out_of_budget = Verdict.ERROR, True
        elif stall is not None:
            result.verdict, result.timed_out = Verdict.FAIL, True
            result.failures = [Failure(case.rules[0], "the client to go on", "nothing came")]
        return result, stall

    return run_case


@contextlib.contextmanager
def _serving(case: Any) -> Iterator[str]:
    yield "tcp://127.0.0.1:9"


def _run_canned(monkeypatch: pytest.MonkeyPatch, stalls: list[str | None]) -> list[ScenarioResult]:
    monkeypatch.setattr(listen_runner, "_run_case", _canned(stalls))
    cases = client_tests("rsocket")
    seen: list[ScenarioResult] = []
    results = asyncio.run(run_client_tests(cases, "client", "tcp://127.0.0.1:0", get_binding("rsocket"),
                                           "rsocket-1.0", _serving, on_result=seen.append))
    assert results == seen and len(results) == len(cases)  # every case has a result, in order, each once
    assert [r.id for r in results] == [f"CLIENT-rsocket-{c.name}" for c in cases]
    return results


def test_a_client_that_stalls_in_two_cases_in_a_row_stopped_and_is_said_once(monkeypatch: pytest.MonkeyPatch) -> None:
    results = _run_canned(monkeypatch, [SILENT, None, SILENT, TIMED_OUT])
    first, passed, stalled, again, *rest = results
    assert first.verdict is Verdict.FAIL and first.stopped is None  # the next case passed: no stop
    assert passed.verdict is Verdict.PASS
    assert stalled.verdict is Verdict.FAIL and stalled.failures  # its own miss stands, as the probe's scenario's
    assert stalled.stopped is not None and stalled.stopped.during == stalled.id
    assert again.verdict is Verdict.ERROR and not again.failures and again.reason.startswith("not judged")
    assert rest and all(r.verdict is Verdict.ERROR and r.reason.startswith("not run") for r in rest)
    line = gate.target_stopped(results)
    assert line is not None and line.startswith(f"the client under test stopped answering during {stalled.id}")
    assert f"{len(rest) + 1} scenario(s) after it not judged" in line
    assert gate.suite_outcome(results, 1).code is gate.ExitCode.UNRUNNABLE


def test_a_client_too_slow_twice_is_said_too_slow(monkeypatch: pytest.MonkeyPatch) -> None:
    results = _run_canned(monkeypatch, [SLOW, SLOW])
    line = gate.target_stopped(results)
    assert line is not None and "client under test answered too slowly to judge" in line


def test_a_client_that_stalls_once_at_the_end_keeps_its_verdict(monkeypatch: pytest.MonkeyPatch) -> None:
    results = _run_canned(monkeypatch, [None] * 8 + [SILENT])
    assert [r.verdict for r in results] == [Verdict.PASS] * 8 + [Verdict.FAIL]
    assert gate.target_stopped(results) is None
