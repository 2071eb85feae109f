"""The kit breaks rules only where a scenario says so: zero undeclared kit-side violations.

And it breaks none because of a choice the target was free to make (SPEC.md Decision x): the suites run
against the reference peer choosing its ids in every way ``--ids`` offers, in every binding where the
target chooses ids, and no scenario fails or errs.

Every scenario of the suite runs against the reference peer, over both codecs.
Each violation with side ``client`` (the kit's) must be listed in that
scenario's ``kit_violations``; anything else is a kit bug.  Both judges are
held to it: the live monitor of the run, and the offline judge the pipeline
applies to the recorded trace (``judge_rows`` over the frame rows), whose
findings feed the multi-target site.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import re

import pytest

from rsio_tck.catalogue import RULES
from rsio_tck.embedded import EmbeddedPeer
from rsio_tck.errors import Side
from rsio_tck.monitor import Finding
from rsio_tck.pipeline.framing import frame_rows, judge_rows
from rsio_tck.scenarios import RunConfig, load_directory, run_suite
from rsio_tck.scenarios.result import Failure, ScenarioResult, Verdict
from rsio_tck.scenarios.runner import _verdict, kit_bugs


def _offline(trace: list, codec: str) -> list:  # type: ignore[type-arg]
    rows = list(frame_rows(trace, codec))
    return judge_rows([r.direction for r in rows], [r.data for r in rows], [r.t for r in rows],
                      [r.type for r in rows], codec)


@pytest.mark.parametrize("codec", ["msgpack", "varint"])
def test_the_kit_commits_only_the_violations_its_scenarios_declare(codec: str) -> None:
    scenarios = {s.id: s for s in load_directory(None)}
    with EmbeddedPeer(codec=codec) as url:
        results = asyncio.run(run_suite(scenarios.values(), RunConfig(target=url, codec=codec, keep_trace=True),
                                        jobs=4))
    undeclared, declared, judged = [], 0, 0
    for result in results:
        if result.verdict is Verdict.SKIP:
            continue
        assert result.trace, f"{result.id}: no trace kept"
        judged += 1
        allowed = scenarios[result.id].kit_violations
        for judge, findings in (("live", result.findings), ("offline", _offline(result.trace, codec))):
            for finding in findings:
                if finding.side is not Side.CLIENT:
                    continue
                if finding.rule in allowed:
                    declared += 1
                else:
                    undeclared.append(f"{result.id} ({judge} judge): {finding.message}")
    assert judged > 100
    assert declared > 0  # the deliberate ones are seen, so the judges did look at the kit's side
    assert undeclared == [], "\n".join(undeclared)
    # An undeclared MUST violation by the kit would have made the scenario's verdict error.
    assert not [r.id for r in results if r.verdict is Verdict.ERROR]


# -- a target's legal choices (issue 25): the kit never breaks a rule because of them -----------------------
#
# The reference peer's ``--ids`` holds every connection to one way of choosing the ids the target chooses:
# RS-IO subscribe-back Ids, RSocket's server-initiated stream ids (free in the draft profile only: 1.0
# fixes 2, 4, 6, ...), Ditto's subscriptionIds.  Against each, no scenario may fail or err: a failure
# would blame the target for a legal choice, an error would be the kit breaking a rule because of it.

MAX = 2**63 - 1
RSIO_IDS = ("fresh", "lowest", "highest", "mirror", "random")
RSOCKET_DRAFT_IDS = ("fresh", "lowest", "highest", "mirror", "random")
DITTO_IDS = ("fresh", "lowest", "mirror", "random")


def _matrix(choices: tuple[str, ...]) -> list[object]:
    """Each of the peer's id choices, a whole suite run apiece: ``random`` runs in ``make test``, the whole
    matrix of choices in the slow tier (marker ``slow``, run by ``make interop``).  ``random`` runs untraced
    (``no_cover``): each choice's own lines are run by tests/test_peer_id_choices.py, the suite's by others."""
    return [pytest.param(choice, marks=pytest.mark.no_cover if choice == "random" else pytest.mark.slow)
            for choice in choices]


def _run_against(binding: str, profile: str, ids: str, scenarios: list | None = None,  # type: ignore[type-arg]
                 extra: tuple[str, ...] = ()) -> list:  # type: ignore[type-arg]
    chosen = scenarios if scenarios is not None else load_directory(binding=binding)
    with EmbeddedPeer(binding=binding, profile=profile, extra=("--ids", ids, *extra)) as url:
        # A generous signal timeout: the point is the verdicts under each id choice, not speed under load.
        return asyncio.run(run_suite(chosen, RunConfig(target=url, codec=profile, binding=binding,
                                                       signal_timeout=5.0), jobs=4))


def _not_passed(results: list) -> list[str]:  # type: ignore[type-arg]
    return [r.explain() for r in results if r.verdict in (Verdict.FAIL, Verdict.ERROR)]


def _kit_bugs(results: list, binding: str) -> list[str]:  # type: ignore[type-arg]
    scenarios = {s.id: s for s in load_directory(binding=binding)}
    return [f"{r.id}: {f.message}" for r in results for f in kit_bugs(scenarios[r.id], r.findings, binding)]


def _chosen_ids(result, pattern: str) -> list[int]:  # type: ignore[no-untyped-def]
    return [int(m) for line in result.transcript for m in re.findall(pattern, line)]


@pytest.mark.parametrize("codec", ["msgpack", "varint"])
@pytest.mark.parametrize("ids", _matrix(RSIO_IDS))
def test_rsio_no_scenario_fails_whatever_subscribe_back_ids_the_target_chooses(ids: str, codec: str) -> None:
    results = _run_against("rsio", codec, ids)
    assert len([r for r in results if r.verdict is not Verdict.SKIP]) > 100
    assert _not_passed(results) == [], "\n\n".join(_not_passed(results))
    assert _kit_bugs(results, "rsio") == []
    # The choice was really made: STR-015's subscribe-back Id (the kit's own outer Id is 1000).
    (str015,) = [r for r in results if r.id == "STR-015"]
    (tid,) = _chosen_ids(str015, r"<< subscribe\(publisher='kit/mirror', subscriber=(\d+)")
    expected = {"fresh": 1, "lowest": 0, "highest": MAX, "mirror": 1000}
    assert tid == expected[ids] if ids in expected else tid not in expected.values()


@pytest.mark.parametrize("ids", _matrix(RSOCKET_DRAFT_IDS))
def test_rsocket_draft_no_scenario_fails_whatever_stream_ids_the_target_picks(ids: str) -> None:
    results = _run_against("rsocket", "reactivesocket-draft", ids)
    assert len([r for r in results if r.verdict is not Verdict.SKIP]) > 60
    assert _not_passed(results) == [], "\n\n".join(_not_passed(results))
    assert _kit_bugs(results, "rsocket") == []
    (rsim025,) = [r for r in results if r.id == "RSIM-025"]
    theirs = _chosen_ids(rsim025, r"<< REQUEST_STREAM\(stream_id=(\d+)")
    assert len(theirs) == 3
    if ids == "fresh":
        assert theirs == [2, 4, 6]
    if ids == "mirror":  # the very ids the kit would take next: it must skip them
        assert all(sid % 2 == 1 for sid in theirs)
        mine = _chosen_ids(rsim025, r">> REQUEST_STREAM\(stream_id=(\d+)")
        assert not set(mine) & set(theirs)


def test_rsocket_1_0_leaves_the_server_no_choice_of_stream_ids() -> None:
    from rsio_tck.embedded import EmbeddedPeerError

    with pytest.raises(EmbeddedPeerError, match="RS-STREAMID-2"), \
            EmbeddedPeer(binding="rsocket", profile="rsocket-1.0", extra=("--ids", "mirror"), timeout=30):
        pass


@pytest.mark.parametrize("profile", ["streaming", "search"])
@pytest.mark.parametrize("ids", _matrix(DITTO_IDS))
def test_ditto_no_scenario_fails_whatever_subscription_ids_the_target_gives(ids: str, profile: str) -> None:
    results = _run_against("ditto", profile, ids)
    assert len([r for r in results if r.verdict is not Verdict.SKIP]) >= (55 if profile == "streaming" else 15)
    assert _not_passed(results) == [], "\n\n".join(_not_passed(results))
    assert _kit_bugs(results, "ditto") == []


def _renamed(value, old: str, new: str):  # type: ignore[no-untyped-def]
    """``value`` (steps) with every mapping key ``old`` renamed ``new``."""
    if isinstance(value, dict):
        return {new if k == old else k: _renamed(v, old, new) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_renamed(v, old, new) for v in value]
    return value


@pytest.mark.parametrize("scenario_id", ["DITTO-037", "DITTO-038"])
def test_ditto_the_unknown_id_is_picked_after_the_targets_ids(scenario_id: str) -> None:
    # With --ids mirror the target names its subscription by the subscribe's correlation-id: here the very
    # text the scenario uses for "an id no created announced".  Naming that text as it is (the scenario
    # before issue 25) would touch the live subscription; the kit picks another one instead.
    (shipped,) = [s for s in load_directory(binding="ditto") if s.id == scenario_id]
    word = "no-such-subscription" if scenario_id == "DITTO-037" else "nobody"
    steps = copy.deepcopy(list(shipped.steps))
    steps[0]["send"]["subscribeForPersistedEvents"]["correlation_id"] = word
    fixed = dataclasses.replace(shipped, id=scenario_id + "a", steps=tuple(steps))
    old = dataclasses.replace(shipped, id=scenario_id + "b",
                              steps=tuple(_renamed(steps, "unknownSubscriptionId", "subscriptionId")))
    results = {r.id: r for r in _run_against("ditto", "streaming", "mirror", [fixed, old])}
    assert results[scenario_id + "a"].verdict is Verdict.PASS, results[scenario_id + "a"].explain()
    assert any(f'"subscriptionId":"{word}-1"' in line.replace(" ", "") or f"'{word}-1'" in line
               for line in results[scenario_id + "a"].transcript), results[scenario_id + "a"].explain()
    # The trap: the kit's "unknown" id was the target's live one.  DITTO-037's request then over-delivers
    # (fail); DITTO-038's cancel ends the live subscription, and the kit's next request breaks DITTO-SUB-8
    # (error, a kit bug).  Neither is the target's doing.
    assert results[scenario_id + "b"].verdict is (Verdict.FAIL if scenario_id == "DITTO-037" else Verdict.ERROR)


def test_an_undeclared_kit_violation_is_an_error_named_a_kit_bug_not_a_fail() -> None:
    # STR-015 as it was before issue 25: the kit subscribes with the target's Id whatever it is.  A target
    # that picks the kit's own active Id (1000) then rightly refuses the kit's duplicate subscribe.
    (shipped,) = [s for s in load_directory() if s.id == "STR-015"]
    when = next(step for step in shipped.steps if "when" in step)
    at = shipped.steps.index(when)
    old = dataclasses.replace(shipped, steps=shipped.steps[:at] + tuple(when["steps"]) + shipped.steps[at + 1:])
    (result,) = _run_against("rsio", "msgpack", "mirror", [old])
    assert result.verdict is Verdict.ERROR, result.explain()
    assert result.reason.startswith("kit bug:") and "ID-1" in result.reason
    assert "monitor, the kit's side: [ID-1]" in result.explain()
    (shipped_result,) = _run_against("rsio", "msgpack", "mirror", [shipped])
    assert shipped_result.verdict is Verdict.PASS, shipped_result.explain()


def test_a_burst_sized_by_the_target_beyond_the_kits_bound_skips() -> None:
    # RSLEASE-006 sends one request more than the target's lease allows; a lease of 200000 requests is
    # legal, and more than one burst of the kit's (100000): the scenario cannot judge it, and says so.
    (scenario,) = [s for s in load_directory(binding="rsocket") if s.id == "RSLEASE-006"]
    (result,) = _run_against("rsocket", "rsocket-1.0", "fresh", [scenario], extra=("--lease-requests", "200000"))
    assert result.verdict is Verdict.SKIP and "200001" in result.reason, result.explain()


def _finding(rule: str, side: Side) -> Finding:
    return Finding(rule=rule, level=RULES[rule].level, side=side, frame_index=None, t=None, message=f"[{rule}] x")


@pytest.mark.parametrize("order, failed_at, verdict", [
    (["kit"], None, Verdict.ERROR),
    (["kit", "target"], None, Verdict.ERROR),  # the target answered the kit's violation
    (["target", "kit"], None, Verdict.FAIL),  # the target broke a rule first: the kit's later one changes nothing
    (["kit"], 1, Verdict.ERROR),  # the step failed after the kit's violation
    (["kit"], 0, Verdict.FAIL),  # the step had failed before it
])
def test_the_verdict_blames_whoever_broke_a_rule_first(order: list[str], failed_at: int | None,
                                                       verdict: Verdict) -> None:
    (scenario,) = [s for s in load_directory() if s.id == "STR-015"]
    findings = [_finding("ID-1", Side.CLIENT) if who == "kit" else _finding("STR-9", Side.SERVER) for who in order]
    result = ScenarioResult(id=scenario.id, title="", rules=scenario.rules, level="MUST", verdict=Verdict.PASS,
                            findings=findings)
    if failed_at is not None:
        result.failures.append(Failure("STR-9", "something", "nothing"))
    _verdict(scenario, result, RunConfig(target="tcp://127.0.0.1:1"), failed_at)
    assert result.verdict is verdict
    declared = dataclasses.replace(scenario, kit_violations=("ID-1",))
    result.verdict, result.reason = Verdict.PASS, ""
    _verdict(declared, result, RunConfig(target="tcp://127.0.0.1:1"), failed_at)
    assert result.verdict is (Verdict.FAIL if "target" in order or failed_at is not None else Verdict.PASS)
