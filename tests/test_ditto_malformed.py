"""Ditto codec on bad input: each malformed message names its rule and the field, in one line.

Malformed JSON, a non-object, a missing or bad topic, bad envelope members and
values that break Ditto's JSON Schemas raise ``ProtocolViolation`` with the
provisional rule of ``rules.py`` and nothing else (no JSONDecodeError,
KeyError, jsonschema error): the tables below and arbitrary text.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rsio_tck.bindings.ditto import DittoLimits, decode_message
from rsio_tck.bindings.ditto.rules import RULES
from rsio_tck.bindings.ditto.schemas import SCHEMA_OF, load_schema
from rsio_tck.errors import ProtocolViolation

STREAM = "tck/range/things/twin/streaming/"
SEARCH = "_/_/things/twin/search/"


def envelope(topic: str, value: Any = None, **members: Any) -> str:
    obj: dict[str, Any] = {"topic": topic, "headers": {"correlation-id": "c"}, "path": "/"}
    if value is not None:
        obj["value"] = value
    return json.dumps(obj | members)


# (text, rule, words the one-line message must hold)
MALFORMED: list[tuple[str | bytes, str, tuple[str, ...]]] = [
    # not JSON / not an object
    ("", "DITTO-ENV-1", ("not JSON",)),
    ('{"topic": ', "DITTO-ENV-1", ("not JSON",)),
    ('{"topic": "a"} x', "DITTO-ENV-1", ("not JSON", "Extra data")),
    ('{"value": NaN, "topic": "x"}', "DITTO-ENV-1", ("NaN",)),
    (b'{"topic": "\xff"}', "DITTO-ENV-1", ("UTF-8",)),
    # Too deep to read: an array is still known not to be an object; inside an object the kit cannot tell.
    ("[" * 100_000 + "]" * 100_000, "DITTO-ENV-2", ("array", "nested too deeply")),
    ('{"value":' + "[" * 100_000 + "]" * 100_000 + "}", "DITTO-ENV-1", ("nested too deeply",)),
    ('{"n": ' + "9" * 5000 + "}", "DITTO-ENV-1", ("not JSON",)),
    ("[]", "DITTO-ENV-2", ("array",)),
    ('"topic"', "DITTO-ENV-2", ("string",)),
    ("null", "DITTO-ENV-2", ("null",)),
    # envelope members
    ('{"headers": {}, "path": "/"}', "DITTO-ENV-3", ("no topic",)),
    ('{"topic": 7}', "DITTO-ENV-3", ("topic", "number")),
    (envelope(STREAM + "created", {"subscriptionId": "0"}, headers=["c"]), "DITTO-ENV-4", ("headers", "array")),
    (envelope(STREAM + "created", {"subscriptionId": "0"}, path="value"), "DITTO-ENV-5", ("path", "'value'")),
    (envelope(STREAM + "created", {"subscriptionId": "0"}, path="/a~2"), "DITTO-ENV-5", ("path",)),
    (envelope(STREAM + "created", {"subscriptionId": "0"}, status="200"), "DITTO-ENV-6", ("status", "'200'")),
    (envelope(STREAM + "created", {"subscriptionId": "0"}, status=99), "DITTO-ENV-6", ("status", "99")),
    (envelope(STREAM + "created", {"subscriptionId": "0"}, status=True), "DITTO-ENV-6", ("status",)),
    (envelope(STREAM + "created"), "DITTO-ENV-7", ("streaming created", "value is missing")),
    (envelope(SEARCH + "subscribe"), "DITTO-ENV-7", ("search subscribe", "value is missing")),
    (envelope(STREAM + "created", {"subscriptionId": "0"}, path="/x"), "DITTO-ENV-8", ("path", "'/x'")),
    (json.dumps({"topic": SEARCH + "next", "value": {"subscriptionId": "s", "items": []}}), "DITTO-ENV-8",
     ("search next", "path is missing")),
    (envelope(SEARCH + "subscribe", {}, fields=["thingId"]), "DITTO-ENV-9", ("fields", "array")),
    (envelope(SEARCH + "subscribe", {}, fields=None), "DITTO-ENV-9", ("fields", "null")),
    (envelope(STREAM + "created", {"subscriptionId": "0"}, path=None), "DITTO-ENV-5", ("path", "None")),
    (envelope(STREAM + "created", {"subscriptionId": "0"}, status=None), "DITTO-ENV-6", ("status", "None")),
    ('{"topic": null}', "DITTO-ENV-3", ("topic", "null")),
    # headers
    (envelope(STREAM + "created", {"subscriptionId": "0"}, headers={"correlation-id": "a", "Correlation-ID": "b"}),
     "DITTO-HDR-1", ("'correlation-id'", "'Correlation-ID'")),
    (envelope(STREAM + "created", {"subscriptionId": "0"}, headers={"correlation-id": 5}), "DITTO-HDR-2",
     ("correlation-id", "number")),
    # topics (the full table is in test_ditto_codec.py)
    (envelope("tck/range/things/twin/streaming", {"subscriptionId": "0"}), "DITTO-TOPIC-5", ("needs an action",)),
    (envelope("tck/range", {}), "DITTO-TOPIC-1", ("segments",)),
    # integer demand (the schemas say number, and "a positive integer" in words)
    (envelope(STREAM + "request", {"subscriptionId": "0", "demand": 1.5}), "DITTO-STREAM-2", ("value/demand",)),
    (envelope(STREAM + "request", {"subscriptionId": "0", "demand": 3.0}), "DITTO-STREAM-2", ("value/demand",)),
    (envelope(SEARCH + "request", {"subscriptionId": "s", "demand": 1e0}), "DITTO-SEARCH-2", ("value/demand",)),
]


@pytest.mark.parametrize(("text", "rule", "words"), MALFORMED, ids=[f"{i}-{r}" for i, (_, r, _) in
                                                                   enumerate(MALFORMED)])
def test_a_malformed_message_names_its_rule_and_field(text: str | bytes, rule: str, words: tuple[str, ...]) -> None:
    with pytest.raises(ProtocolViolation) as caught:
        decode_message(text)
    violation = caught.value
    assert violation.rule == rule, violation.message
    for word in words:
        assert word in violation.message, violation.message
    assert "\n" not in str(violation) and RULES[rule].title in violation.message


def test_a_message_over_the_limit_is_rejected_before_parsing() -> None:
    limits = DittoLimits(max_message=64)
    ok = envelope(STREAM + "created", {"subscriptionId": "0"})[:64]
    with pytest.raises(ProtocolViolation) as caught:
        decode_message(ok + " " * (65 - len(ok)), limits)
    assert caught.value.rule == "DITTO-LINE-1"


# -- one schema violation per schema ----------------------------------------------------------------

BASE: dict[str, dict[str, Any]] = {
    "subscribeForPersistedEvents": {},
    "subscribe": {},
    "request": {"subscriptionId": "0", "demand": 1},
    "cancel": {"subscriptionId": "0"},
    "created": {"subscriptionId": "0"},
    "complete": {"subscriptionId": "0"},
    "next": {"subscriptionId": "0"},  # item/items added per profile
    "failed": {"subscriptionId": "0", "error": {}},
}

# (profile, action, value, the field named)
SCHEMA_BREAKS: list[tuple[str, str, Any, str]] = [
    ("streaming", "subscribeForPersistedEvents", {"fromHistoricalRevision": "1"}, "value/fromHistoricalRevision"),
    ("streaming", "subscribeForPersistedEvents", {"toHistoricalRevision": 1.5}, "value/toHistoricalRevision"),
    ("streaming", "subscribeForPersistedEvents", {"fromHistoricalTimestamp": "yesterday"},
     "value/fromHistoricalTimestamp"),
    ("streaming", "subscribeForPersistedEvents", {"filter": 3}, "value/filter"),
    ("streaming", "subscribeForPersistedEvents", [], "value"),
    ("streaming", "request", {"subscriptionId": "0"}, "value/demand"),
    ("streaming", "request", {"demand": 1}, "value/subscriptionId"),
    ("streaming", "request", {"subscriptionId": "0", "demand": "1"}, "value/demand"),
    ("streaming", "cancel", {}, "value/subscriptionId"),
    ("streaming", "created", {"subscriptionId": 0}, "value/subscriptionId"),
    ("streaming", "complete", "0", "value"),
    ("streaming", "next", {"subscriptionId": "0"}, "value/item"),
    ("streaming", "failed", {"subscriptionId": "0"}, "value/error"),
    ("streaming", "failed", {"subscriptionId": "0", "error": {"status": "400"}}, "value/error/status"),
    ("streaming", "failed", {"subscriptionId": "0", "error": "boom"}, "value/error"),
    ("search", "subscribe", {"filter": ["eq(a,1)"]}, "value/filter"),
    ("search", "subscribe", {"options": 25}, "value/options"),
    ("search", "subscribe", {"namespaces": "tck"}, "value/namespaces"),
    ("search", "subscribe", {"namespaces": ["tck", 1]}, "value/namespaces/1"),
    ("search", "request", {"subscriptionId": "s", "demand": None}, "value/demand"),
    ("search", "request", {"demand": 2}, "value/subscriptionId"),
    ("search", "cancel", {"subscriptionId": None}, "value/subscriptionId"),
    ("search", "created", {}, "value/subscriptionId"),
    ("search", "complete", {"subscriptionId": ["s"]}, "value/subscriptionId"),
    ("search", "next", {"subscriptionId": "s"}, "value/items"),
    ("search", "next", {"subscriptionId": "s", "items": {}}, "value/items"),
    ("search", "failed", {"subscriptionId": "s", "error": {"message": 1}}, "value/error/message"),
    ("search", "failed", {"error": {}}, "value/subscriptionId"),
]


def test_every_schema_has_a_break_in_the_table() -> None:
    broken = {SCHEMA_OF[(profile, action)][0] for profile, action, _, _ in SCHEMA_BREAKS}
    assert broken == {name for name, _ in SCHEMA_OF.values()}


@pytest.mark.parametrize(("profile", "action", "value", "field"), SCHEMA_BREAKS,
                         ids=[f"{p}-{a}-{f}" for p, a, _, f in SCHEMA_BREAKS])
def test_a_value_breaking_its_schema_is_rejected_with_the_field_named(
    profile: str, action: str, value: Any, field: str
) -> None:
    topic = (STREAM if profile == "streaming" else SEARCH) + action
    schema, rule = SCHEMA_OF[(profile, action)]
    with pytest.raises(ProtocolViolation) as caught:
        decode_message(envelope(topic, value))
    assert caught.value.rule == rule
    assert f": {field} " in caught.value.message, caught.value.message
    assert schema in caught.value.message and "\n" not in caught.value.message


@pytest.mark.parametrize(("profile", "action"), sorted(SCHEMA_OF))
def test_the_minimal_value_of_each_kind_passes_its_schema(profile: str, action: str) -> None:
    value = dict(BASE[action])
    if action == "next":
        value["item" if profile == "streaming" else "items"] = [] if profile == "search" else 1
    topic = (STREAM if profile == "streaming" else SEARCH) + action
    assert type(decode_message(envelope(topic, value))).__name__  # no violation
    # The copied schemas are Ditto's draft-04 files, and the required members are what the codec reads.
    schema = load_schema(SCHEMA_OF[(profile, action)][0])
    assert schema["$schema"] == "http://json-schema.org/draft-04/schema#"
    assert set(schema.get("required", [])) <= set(value)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.text(max_size=200) | st.binary(max_size=200))
def test_arbitrary_input_decodes_or_raises_only_protocol_violation(text: str | bytes) -> None:
    try:
        decode_message(text)
    except ProtocolViolation as exc:
        assert exc.rule in RULES and "\n" not in exc.message


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=10,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    action=st.sampled_from(sorted(SCHEMA_OF)),
    value=json_values,
    members=st.dictionaries(st.sampled_from(["headers", "path", "status", "fields", "extra"]), json_values),
)
def test_arbitrary_envelopes_of_the_profiles_decode_or_raise_only_protocol_violation(
    action: tuple[str, str], value: Any, members: dict[str, Any]
) -> None:
    profile, name = action
    topic = (STREAM if profile == "streaming" else SEARCH) + name
    try:
        decode_message(json.dumps({"topic": topic, "path": "/", "value": value} | members))
    except ProtocolViolation as exc:
        assert exc.rule in RULES and "\n" not in exc.message
