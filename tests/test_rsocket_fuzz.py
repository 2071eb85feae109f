"""RSocket fuzz strategies: scripts encode and decode on both profiles, the RSocket judge finds in each
mutated script exactly the rule it names (and nothing in a legal one), and programs are well-formed scenarios."""

from __future__ import annotations

import json
from importlib import resources

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rsio_tck.bindings.rsocket import get_profile
from rsio_tck.bindings.rsocket.frames import IgnoredFrame
from rsio_tck.bindings.rsocket.fuzz import (
    MUTATIONS,
    NOT_IN,
    WIRE_MUTATIONS,
    Script,
    fuzz_programs,
    legal_scripts,
    mutated_scripts,
)
from rsio_tck.bindings.rsocket.runs import expand
from rsio_tck.catalogue import RULES
from rsio_tck.errors import ProtocolViolation, Side
from rsio_tck.monitor import Monitor

V1, DRAFT = "rsocket-1.0", "reactivesocket-draft"
PROFILES = st.sampled_from([V1, DRAFT])
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
STEP_KINDS = {"send", "send_hex", "expect", "expect_elements", "expect_silence", "expect_goodbye", "expect_close",
              "close", "liveness"}


def client_findings(profile: str, script: Script, chunk: int = 7) -> list[str]:
    """Rules the RSocket monitor finds against the client that sent ``script`` (fed in ``chunk``-byte pieces)."""
    monitor = Monitor(profile, binding="rsocket")
    data = script.wire(profile)
    for start in range(0, len(data), chunk):
        monitor.observe(Side.CLIENT, data[start : start + chunk])
    monitor.close(Side.CLIENT)
    return [f.rule for f in monitor.findings if f.side is Side.CLIENT]


@SETTINGS
@given(data=st.data(), profile=PROFILES)
def test_legal_scripts_round_trip_through_the_codec_and_break_no_rule(data: st.DataObject, profile: str) -> None:
    script = data.draw(legal_scripts(profile))
    wire = script.wire(profile)
    decoder = get_profile(profile).decoder()
    assert expand(decoder.feed_runs(wire)) == list(script.frames)
    decoder.eof()
    found = [rule for rule in client_findings(profile, script) if RULES[rule].level.name == "MUST"]
    assert found == [], (script, found)


@SETTINGS
@given(data=st.data(), profile=PROFILES)
def test_mutated_scripts_are_judged_as_the_rule_they_break(data: st.DataObject, profile: str) -> None:
    script = data.draw(mutated_scripts(profile))
    assert script.kind not in NOT_IN.get(profile, ())
    found = client_findings(profile, script)
    if script.rule is None:  # an ignorable frame: the decoder returns it as ignored, the judge finds nothing
        (ignored,) = get_profile(profile).decoder().feed(script.tail)
        assert isinstance(ignored, IgnoredFrame) and ignored.rule == "RS-IGNORE-1"
        assert [r for r in found if RULES[r].level.name == "MUST"] == []
        return
    assert script.rule in found, (script, found)
    if script.kind in WIRE_MUTATIONS:
        # The bytes alone break the rule: the codec raises it (at end of input when truncated).
        decoder = get_profile(profile).decoder()
        with pytest.raises(ProtocolViolation) as caught:
            decoder.feed(script.wire(profile))
            decoder.eof()
        assert caught.value.rule == script.rule


@pytest.mark.parametrize("profile", [V1, DRAFT])
def test_every_mutation_kind_of_a_profile_is_drawn(profile: str) -> None:
    kinds: set[str] = set()

    @settings(max_examples=400, deadline=None, database=None)
    @given(mutated_scripts(profile))
    def collect(script: Script) -> None:
        kinds.add(script.kind)

    collect()
    assert kinds == set(MUTATIONS) - NOT_IN.get(profile, frozenset())


SCHEMA = json.loads(resources.files("rsio_tck.scenarios").joinpath("schema.json").read_text())
SCENARIO_FILE = jsonschema.Draft202012Validator(SCHEMA)


def _rules_cited(program: dict[str, object]) -> set[str]:
    return {step["rule"] for step in program["steps"] if "rule" in step}  # type: ignore[index, union-attr]


@SETTINGS
@given(data=st.data(), profile=PROFILES)
def test_programs_are_scenarios_of_known_steps_citing_catalogued_rules(data: st.DataObject, profile: str) -> None:
    program = data.draw(fuzz_programs(profile))
    assert json.loads(json.dumps(program)) == program  # plain data: the engine caches programs as JSON
    assert program["profiles"] == [profile] and program["binding"] == "rsocket" and program["level"] == "MUST"
    assert "codecs" not in program  # RS-IO's wire names
    steps = program["steps"]
    assert steps and all(len(set(step) - {"rule"}) == 1 and set(step) - {"rule"} <= STEP_KINDS for step in steps)
    assert _rules_cited(program) <= set(RULES)
    for step in steps:
        if "send_hex" in step:
            raw = bytes.fromhex(step["send_hex"])
            decoder = get_profile(profile).decoder()
            if program.get("kit_violations"):
                (rule,) = program["kit_violations"]
                with pytest.raises(ProtocolViolation) as caught:
                    decoder.feed(raw)
                    decoder.eof()
                assert caught.value.rule == rule
            else:
                assert all(isinstance(f, IgnoredFrame) for f in decoder.feed(raw))


@pytest.mark.skipif("binding" not in SCHEMA["$defs"]["scenario"]["properties"],
                    reason="this tree's scenario schema predates bindings (the engine's branch brings it)")
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), profile=PROFILES)
def test_programs_are_valid_scenario_files(data: st.DataObject, profile: str) -> None:
    program = data.draw(fuzz_programs(profile))
    scenario = dict(program, id="FUZZ-001", title="fuzz program", rules=sorted(_rules_cited(program)))
    SCENARIO_FILE.validate([scenario])
