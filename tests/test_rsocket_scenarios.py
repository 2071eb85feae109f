"""The scenario engine over RSocket: the adapter sans-IO, and the RSocket suite against the reference peer."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from test_peer_rsocket import running_peer

from rsio_tck.binding import get_binding
from rsio_tck.bindings.rsocket.frames import Keepalive, Payload, RequestN, RequestStream, Setup
from rsio_tck.bindings.rsocket.judge import RSocketJudge
from rsio_tck.errors import Side
from rsio_tck.reference_peer.rsocket import PeerConfig
from rsio_tck.scenarios import RunConfig, Verdict, load_directory, run_suite
from rsio_tck.scenarios.loader import applies_to

# Contract rules the RSocket binding does not translate (none today).
UNTRANSLATED: set[str] = set()


def adapter() -> Any:
    return get_binding("rsocket").scenario_adapter("rsocket-1.0", {})  # type: ignore[attr-defined]


def attached() -> tuple[Any, Any]:
    """An adapter reading a judge of its own connection, as the scenario session attaches the monitor's."""
    a = adapter()
    judge = RSocketJudge("rsocket-1.0", a.session_limits, contract=False)
    a.attach(judge, Side.CLIENT, Side.SERVER)
    return a, judge


def receive(a: Any, judge: Any, frame: Any, index: int) -> Any:
    """The session's order: the judge judges the target's frame, then the adapter sorts it."""
    judge.judge(Side.SERVER, [frame], 0.0, index, lambda *found: None)
    return a.received(frame, index)


def test_at_least_100_scenarios_run_on_rsocket_and_each_cites_rsocket_rules() -> None:
    scenarios = load_directory(binding="rsocket")
    binding = get_binding("rsocket")
    assert len(scenarios) >= 100
    assert {s.binding for s in scenarios} == {"rsocket", "contract"}
    for scenario in scenarios:
        cited = [binding.contract_rule(rule) for rule in scenario.rules if rule not in UNTRANSLATED]
        assert cited and all(rule.startswith("RS-") for rule in cited), scenario.id


def test_contract_scenarios_run_where_their_needs_are_met() -> None:
    rsio = {s.id: s for s in load_directory(binding="rsio")}
    rsocket = {s.id for s in load_directory(binding="rsocket")}
    assert "DEM-001" in rsio and "DEM-001" in rsocket  # a contract scenario runs on both
    assert "DEM-002" in rsio and "DEM-002" not in rsocket  # initialDemand 0 has no RSocket form
    assert applies_to(rsio["DEM-002"], "rsocket") == "binding rsocket lacks what the scenario needs: initial-demand-zero"
    assert not any(s.startswith("RS") for s in rsio)  # RSocket's wire scenarios stay out of RS-IO's suite
    assert "HS-001" not in rsocket


def test_subscribe_opens_a_stream_with_an_implied_onsubscribe_and_logical_ids_take_fresh_odd_streams() -> None:
    a = adapter()
    first = a.frames("subscribe", {"publisher": "tck/range?count=3", "subscriber": 7, "initialDemand": 3})
    assert first == [RequestStream(stream_id=1, initial_request_n=3, data=b"tck/range?count=3")]
    (key, event), = a.sent(first, 4)
    assert key == ("kit", 1) and event.kind == "onSubscribe" and event.fields["subscriber"] == 7
    second = a.frames("subscribe", {"publisher": "tck/infinite", "subscriber": 0, "initialDemand": 1})
    assert second[0].stream_id == 3
    assert a.frames("request", {"subscriber": 7, "demand": 2}) == [RequestN(stream_id=1, request_n=2)]
    a.frames("cancel", {"subscriber": 7})
    again = a.frames("subscribe", {"publisher": "tck/range", "subscriber": 7, "initialDemand": 1})
    assert again[0].stream_id == 5  # the ended stream 1 is never reused
    assert a.kit_key(7) == ("kit", 5)


def test_received_payload_with_next_and_complete_is_onnext_then_oncomplete() -> None:
    a, judge = attached()
    a.frames("subscribe", {"publisher": "tck/range?count=1", "subscriber": 1, "initialDemand": 1})
    events = receive(a, judge, Payload(stream_id=1, next=True, complete=True, data=b"0"), 9)
    assert [(key, e.kind, e.frame) for key, e in events] == [(("kit", 1), "onNext", "PAYLOAD"),
                                                             (("kit", 1), "onComplete", "PAYLOAD")]
    assert events[0][1].fields["element"] == b"0" and events[0][1].fields["subscriber"] == 1


def test_fragments_join_into_one_element_and_keepalive_is_answered() -> None:
    a, judge = attached()
    a.frames("subscribe", {"publisher": "tck/range", "subscriber": 1, "initialDemand": 1})
    last = Payload(stream_id=1, next=True, data=b"cd")
    assert receive(a, judge, Payload(stream_id=1, next=True, follows=True, data=b"ab"), 1) == []
    judge.judge(Side.SERVER, [last], 0.0, 2, lambda *found: None)
    assert a.fast_element(last, 2) is None  # the chain's last fragment is not a plain element
    (key, event), = a.received(last, 2)
    assert event.kind == "onNext" and event.fields["element"] == b"abcd" and event.via == "fragments"
    assert not judge.outcomes[Side.SERVER]  # the adapter took what the judge's reassembly made, in order
    receive(a, judge, Keepalive(respond=True, data=b"x"), 3)
    assert a.replies() == [Keepalive(respond=False, data=b"x")]
    assert a.replies() == []


def test_a_barrier_goes_only_on_a_connection_in_good_standing_and_its_answer_is_no_steps_event() -> None:
    """KEEPALIVE(R) with the kit's token (SPEC.md RS-u): none before the kit's SETUP (RSSETUP-001 watches the
    server's first bytes) nor once the kit has broken a rule; its answer marks the token, once, and sorts into
    no inbox, while an answer to a scenario's own KEEPALIVE still does."""
    a, judge = attached()
    assert a.barrier(b"t0") == []  # nothing sent yet: a KEEPALIVE before SETUP would be the kit's violation
    judge.judge(Side.CLIENT, a.opening(), 0.0, 0, lambda *found: None)
    frames = a.barrier(b"t1")
    assert [(type(f), f.respond, f.data) for f in frames] == [(Keepalive, True, b"t1")]
    judge.judge(Side.CLIENT, frames, 0.0, 1, lambda *found: None)
    assert not a.barrier_answered(b"t1")
    assert receive(a, judge, Keepalive(respond=False, data=b"t1"), 2) == []
    assert a.barrier_answered(b"t1") and not a.barrier_answered(b"t1")  # each token answers once
    assert [key for key, _ in receive(a, judge, Keepalive(respond=False, data=b"ping-1"), 3)] == [("keepalive", None)]

    broken, broken_judge = attached()
    broken_judge.judge(Side.CLIENT, broken.opening(), 0.0, 0, lambda *found: None)
    broken_judge.judge(Side.CLIENT, [RequestStream(stream_id=1, initial_request_n=0, data=b"tck/range")], 0.0, 1,
                       lambda *found: None)  # request N of 0 breaks the requester's MUST (RS-d)
    assert broken_judge.model.parties[Side.CLIENT].must_broken
    assert broken.barrier(b"t2") == []


def test_setup_opens_with_the_bindings_defaults_and_int_elements_are_decimal_text() -> None:
    a = adapter()
    (setup,) = a.opening()
    assert isinstance(setup, Setup) and setup.keepalive_interval == 30_000 and setup.max_lifetime == 90_000
    assert setup.data_mime == b"text/plain" and not setup.lease and setup.resume_token is None
    assert a.element(-12) == b"-12"
    draft = get_binding("rsocket").scenario_adapter("reactivesocket-draft", {})  # type: ignore[attr-defined]
    assert draft.opening()[0].major_version == 0 and draft.keepalive_every == 1.0


@pytest.mark.parametrize("profile", ["rsocket-1.0", "reactivesocket-draft"])
def test_the_rsocket_suite_passes_on_the_reference_peer(profile: str) -> None:
    scenarios = load_directory(binding="rsocket")

    async def run() -> list[Any]:
        async with running_peer(PeerConfig(profile=profile)) as port:
            config = RunConfig(target=f"tcp://127.0.0.1:{port}", codec=profile, binding="rsocket")
            return await run_suite(scenarios, config, jobs=4)

    results = asyncio.run(run())

    bad = [f"{r.id}: {r.verdict.value} {r.reason} {[(f.rule, f.got) for f in r.failures]} "
           f"{[f.message for f in r.findings]}"
           for r in results if r.verdict not in (Verdict.PASS, Verdict.SKIP)]
    assert not bad, "\n".join(bad)
    skipped = [r for r in results if r.verdict is Verdict.SKIP]
    assert all("profile" in r.reason for r in skipped)  # only scenarios of the other profile skip
    ran = len(results) - len(skipped)
    assert ran >= (100 if profile == "rsocket-1.0" else 80)
    # Every finding the suite raised is RSocket's: no RS-IO rule in an RSocket report.
    assert all(f.rule.startswith("RS-") for r in results for f in r.findings)
    assert all(rule.startswith("RS-") or rule in UNTRANSLATED for r in results for rule in r.rules)


def test_loading_refuses_a_contract_scenario_whose_rule_the_binding_does_not_own(tmp_path: Any) -> None:
    from rsio_tck.scenarios import ScenarioError, load_paths

    path = tmp_path / "c.yaml"
    path.write_text("- id: CON-001\n  title: a contract scenario citing an RS-IO-only rule\n  binding: contract\n"
                    "  rules: [HS-1]\n  level: MUST\n  steps:\n    - expect_silence: {}\n")
    assert [s.id for s in load_paths([path], binding="rsio")] == ["CON-001"]
    with pytest.raises(ScenarioError, match=r"c.yaml:1: CON-001 cites rule\(s\) binding rsocket does not have: HS-1"):
        load_paths([path], binding="rsocket")
