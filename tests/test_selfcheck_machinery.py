"""How the self-check decides a fault's outcome: the scenarios citing its rule first, the first catch ends the
check, the whole suite only to explain a miss; and a fault that shows whatever the peer's seeded freedoms chose."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from rsio_tck import selfcheck
from rsio_tck.embedded import EmbeddedPeer
from rsio_tck.reference_peer.rsocket.freedoms import Freedoms
from rsio_tck.scenarios import RunConfig, Verdict, load_directory, run_suite
from rsio_tck.scenarios.result import ScenarioResult
from rsio_tck.selfcheck import check_fault, run_against_peer


def test_a_caught_fault_names_the_citing_scenario_that_caught_it() -> None:
    outcome = check_fault("dem-beyond-demand", "DEM-1", load_directory())
    assert outcome.caught and outcome.caught_by
    assert set(outcome.caught_by) <= set(outcome.failed)


def test_a_missed_fault_runs_the_whole_suite_to_show_what_it_disturbs() -> None:
    # No scenario cites this made-up rule, so nothing can catch the fault: the outcome still lists the
    # scenarios the fault makes fail, which is what a reader needs to find out why it was missed.
    chosen = [s for s in load_directory() if s.id in ("DEM-001", "DEM-002", "STR-001")]
    outcome = check_fault("dem-beyond-demand", "NO-SUCH-1", chosen)
    assert not outcome.caught
    assert outcome.failed and set(outcome.failed) <= {"DEM-001", "DEM-002", "STR-001"}


def _caught_by(scenario_id: str, rule: str) -> ScenarioResult:
    return ScenarioResult(id=scenario_id, title="", rules=(rule,), level="MUST", verdict=Verdict.FAIL)


def test_a_citing_scenario_that_catches_the_fault_in_the_whole_suite_run_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    # HS-2 sees hs-stream-before-hello's early frames only if they beat the kit's clientHello: a first run
    # whose peer missed that window (as under load) returns nothing here, and the whole-suite run catches it.
    calls: list[tuple[bool, int]] = []

    def window_missed_first(scenarios: list[Any], codec: str | None = None, faults: tuple[str, ...] = (),
                            jobs: int = 8, **kwargs: Any) -> list[Any]:
        calls.append((kwargs.get("stop_when") is not None, len(scenarios)))
        return [] if kwargs.get("stop_when") is not None else [_caught_by("HS-001", "HS-2")]

    monkeypatch.setattr(selfcheck, "run_against_peer", window_missed_first)
    chosen = [s for s in load_directory() if s.id in ("HS-001", "HS-002", "STR-001")]
    outcome = check_fault("hs-stream-before-hello", "HS-2", chosen, "msgpack")
    assert calls == [(True, 1), (False, 3)]  # the citing scenario (HS-001), then the whole suite
    assert outcome.caught and outcome.caught_by == ("HS-001",)


@pytest.mark.parametrize(("fault", "runs"), [("hs-stream-before-hello", 2 + selfcheck.WINDOW_TRIES),
                                             ("dem-beyond-demand", 2)])
def test_only_a_time_window_fault_is_tried_again_when_both_runs_miss_it(
        monkeypatch: pytest.MonkeyPatch, fault: str, runs: int) -> None:
    calls: list[int] = []

    def always_missed(scenarios: list[Any], codec: str | None = None, faults: tuple[str, ...] = (),
                      jobs: int = 8, **kwargs: Any) -> list[Any]:
        calls.append(jobs)
        return []

    monkeypatch.setattr(selfcheck, "run_against_peer", always_missed)
    rule = "HS-2" if fault.startswith("hs-") else "DEM-1"
    chosen = [s for s in load_directory() if s.id in ("HS-001", "DEM-001")]
    outcome = check_fault(fault, rule, chosen, "msgpack")
    assert not outcome.caught and len(calls) == runs
    assert calls[2:] == [1] * (runs - 2)  # the tries again run one scenario at a time


def test_a_time_window_fault_caught_on_a_try_again_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []

    def caught_on_the_fourth(scenarios: list[Any], codec: str | None = None, faults: tuple[str, ...] = (),
                             jobs: int = 8, **kwargs: Any) -> list[Any]:
        calls.append(jobs)
        return [_caught_by("HS-001", "HS-2")] if len(calls) == 4 else []

    monkeypatch.setattr(selfcheck, "run_against_peer", caught_on_the_fourth)
    chosen = [s for s in load_directory() if s.id == "HS-001"]
    outcome = check_fault("hs-stream-before-hello", "HS-2", chosen, "msgpack")
    assert outcome.caught_by == ("HS-001",) and len(calls) == 4


def test_stop_when_cancels_the_scenarios_still_running() -> None:
    chosen = [s for s in load_directory() if s.id.startswith("STR-")][:6]
    assert len(chosen) == 6
    results = run_against_peer(chosen, "msgpack", jobs=1, stop_when=lambda r: True)
    # Only the first finished; the others were cancelled (the peer's wide integers may make it a warning).
    assert [r.id for r in results] == [chosen[0].id] and results[0].verdict in (Verdict.PASS, Verdict.WARN)


def _seed_for(together_rate: float, connection: int = 1) -> int:
    return next(seed for seed in range(1000) if Freedoms(True, seed, connection).together_rate == together_rate)


@pytest.mark.parametrize("together_rate", [0.0, 1.0])
def test_a_late_setup_error_follows_a_completion_sent_either_way(together_rate: float) -> None:
    # The peer ends a stream with PAYLOAD N|C or with a PAYLOAD C of its own, per connection by seed. The fault
    # once followed only the first: whether the self-check caught it depended on which connection number
    # RSERR-001 drew, so on the scheduling of the scenarios around it.
    (scenario,) = [s for s in load_directory(binding="rsocket") if s.id == "RSERR-001"]
    extra = ("--seed", str(_seed_for(together_rate)))
    with EmbeddedPeer(binding="rsocket", profile="rsocket-1.0", faults=("error-setup-code-after-accept",),
                      extra=extra) as url:
        config = RunConfig(target=url, codec="rsocket-1.0", binding="rsocket")
        (result,) = asyncio.run(run_suite([scenario], config, jobs=1))
    assert result.verdict is Verdict.FAIL
    assert any(f.rule == "RS-ERROR-4" for f in result.findings), result.explain()
