"""The fuzzing machinery without a live target: shrinking, seed replay, mutation, findings files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
from hypothesis import given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st

from rsio_tck.bindings.rsio.fuzz.mutate import classify, malformed_input
from rsio_tck.bindings.rsio.fuzz.program import programs
from rsio_tck.bindings.rsio.wire import get_codec
from rsio_tck.bindings.rsio.wire.frames import ID_MAX, Request, Subscribe
from rsio_tck.errors import ProtocolViolation
from rsio_tck.fuzz import FuzzConfig, fuzz, signature, write_findings
from rsio_tck.scenarios.loader import load_file
from rsio_tck.scenarios.steps import build_frame


def _sent_frames(program: dict[str, Any], codec: str) -> bytes:
    """What the kit would write for ``program`` (frames with unbound variables are left out)."""
    encoder = get_codec(codec).encoder()
    out = b""
    for step in program["steps"]:
        if "send_hex" in step:
            out += bytes.fromhex(step["send_hex"])
        for spec in ([step["send"]] if isinstance(step.get("send"), dict) else step.get("send", [])):
            try:
                out += encoder.encode(build_frame(spec, {"MAX": ID_MAX, "OVER": 2**63}))
            except (KeyError, ValueError, TypeError):
                continue
    return out


class FakeTarget:
    """A sans-IO target: decodes what the kit sends; its planted bug breaks DEM-2 on a request >= 2^63."""

    def __init__(self, codec: str = "msgpack") -> None:
        self.codec = codec
        self.runs: list[bytes] = []

    def __call__(self, program: dict[str, Any]) -> tuple[str, str | None, str] | None:
        data = _sent_frames(program, self.codec)
        self.runs.append(data)
        decoder = get_codec(self.codec).decoder()
        try:
            frames = decoder.feed(data)
        except ProtocolViolation:
            return None
        subscribed = {f.subscriber for f in frames if isinstance(f, Subscribe)}
        for frame in frames:
            if isinstance(frame, Request) and frame.demand >= 2**63 and frame.subscriber in subscribed:
                return "DEM-2", "server", f"request of {frame.demand} on {frame.subscriber} made it fail"
        return None


def test_a_planted_bug_is_found_and_shrunk_to_the_minimal_program() -> None:
    # Hypothesis's shrinker ends in a local minimum: depending on the seed (and, seen once in
    # CI, on the run), empty tck/range episodes that draw nothing but zeros stay in front of
    # the bug.  So: over five seeds the bug is always found, every shrunk program is the two
    # triggering frames after nothing but subscribes, and at least one is exactly those two.
    lengths = []
    for seed in (1, 2, 3, 4, 5):
        target = FakeTarget()
        outcome = fuzz(FuzzConfig(target="fake", examples=400, seed=seed, time_budget=60, shrink_budget=30,
                                  stop_at_first=True), runner=target)
        assert [f.rule for f in outcome.findings] == ["DEM-2"]
        program = outcome.findings[0].program
        sends = [step["send"] for step in program["steps"] if "send" in step]
        assert "subscribe" in sends[-2] and sends[-1] == {
            "request": {"subscriber": sends[-2]["subscribe"]["subscriber"], "demand": "${OVER}"}}, sends
        assert all(isinstance(send, dict) and "subscribe" in send for send in sends[:-1]), sends
        assert program["handshake"] == "auto" and program["goodbye"] == "auto"
        lengths.append(len(sends))
    assert min(lengths) == 2, lengths


def test_replaying_a_seed_generates_identical_sequences() -> None:
    def run(seed: int) -> list[str]:
        return fuzz(FuzzConfig(target="fake", examples=40, seed=seed, time_budget=60), runner=lambda p: None).programs

    first, again, other = run(11), run(11), run(12)
    assert len(first) >= 30 and first == again  # duplicates are run once
    assert first != other


@st.composite
def _malformed(draw: st.DrawFn, codec: str) -> tuple[bytes, bool, str]:
    return malformed_input(draw, codec)


@settings(max_examples=60, database=None, deadline=None)
@hypothesis_seed(5)
@given(st.data())
def test_malformed_input_is_a_protocol_error_or_incomplete(data: st.DataObject) -> None:
    for codec in ("msgpack", "varint"):
        raw, incomplete, rule = data.draw(_malformed(codec))
        verdict, classified = classify(codec, raw)
        assert verdict == ("incomplete" if incomplete else "error") and classified == rule
        assert rule.split("-")[0] in ("ERR", "EXT", "HS", "PACK", "ID")


def test_classify_names_the_rule() -> None:
    assert classify("msgpack", b"\x0e") == ("error", "ERR-7")
    assert classify("msgpack", b"\x40") == ("error", "EXT-2")
    assert classify("msgpack", b"\x03\xc6\xff\xff\xff\xff")[1] in ("ERR-8", "ERR-4")
    assert classify("varint", b"\x05\x01") == ("incomplete", "ERR-6")
    assert classify("varint", b"\x06\x01") == ("valid", "")


def test_signatures_ignore_numbers_but_not_rules_or_words() -> None:
    assert signature("DEM-1", "Id 1 got 3 elements") == signature("DEM-1", "Id 7 got 12 elements")
    assert signature("DEM-1", "Id 1 got 3 elements") != signature("DEM-2", "Id 1 got 3 elements")
    assert signature("DEM-1", "Id 1 got 3 elements") != signature("DEM-1", "Id 1 sent 3 elements")


def test_programs_are_valid_scenarios_and_findings_files_load(tmp_path: Path) -> None:
    target = FakeTarget("varint")
    config = FuzzConfig(target="fake", codec="varint", examples=300, seed=1, time_budget=60, shrink_budget=10)
    outcome = fuzz(config, runner=target)
    assert outcome.findings
    path = write_findings(outcome, tmp_path, config, "20260101T000000000Z")
    summary = json.loads(path.read_text())
    schema = json.loads(Path("tck/report/schemas/fuzz.schema.json").read_text())
    jsonschema.validate(summary, schema)
    assert summary["examples"] == outcome.examples and summary["codec"] == "varint"
    for finding in summary["findings"]:
        loaded = load_file(tmp_path / finding["scenario_file"])
        assert loaded[0].rules[0] == finding["rule"] and loaded[0].profiles == ("varint",)


@settings(max_examples=40, database=None, deadline=None)
@hypothesis_seed(2)
@given(programs("msgpack"))
def test_generated_programs_validate_against_the_schema(program: dict[str, Any]) -> None:
    from rsio_tck.scenarios.loader import schema

    document = [{"id": "FUZZ-001", "title": "generated", "rules": ["STR-1"], **program}]
    jsonschema.Draft202012Validator(schema()).validate(document)
