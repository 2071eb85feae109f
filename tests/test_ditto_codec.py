"""Ditto codec: every message kind of both profiles round-trips, topics parse, WebSocket texts decode.

Round trip both ways: a message written and read back is the same value, and
the JSON of every kind (as Ditto's pages draw it) read and written back is the
same JSON (member order aside).
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rsio_tck.bindings.ditto import (
    MESSAGE_CLASSES,
    MISSING,
    SEARCH_TARGET,
    ControlMessage,
    Envelope,
    ErrorInfo,
    LineDecoder,
    Message,
    SearchCancel,
    SearchComplete,
    SearchCreated,
    SearchFailed,
    SearchNext,
    SearchRequest,
    SearchSubscribe,
    StreamingCancel,
    StreamingComplete,
    StreamingCreated,
    StreamingFailed,
    StreamingNext,
    StreamingRequest,
    SubscribeForPersistedEvents,
    Target,
    Topic,
    decode_message,
    decode_websocket_text,
    encode_line,
    encode_message,
    encode_websocket_text,
    parse_topic,
)
from rsio_tck.bindings.ditto.codec import READERS
from rsio_tck.bindings.ditto.schemas import SCHEMA_OF
from rsio_tck.errors import ProtocolViolation

RANGE = Target(namespace="tck", entity_name="range")
POLICY = Target(namespace="tck", entity_name="policy", group="policies", channel=None)
CID = {"correlation-id": "c-1"}
ERROR = ErrorInfo(status=400, error="streaming.subscription.protocol.error", message="demand must be positive")

MESSAGES = {
    "streaming subscribe by revision": SubscribeForPersistedEvents(
        target=RANGE, headers=CID, from_revision=5, to_revision=7
    ),
    "streaming subscribe by timestamp and filter": SubscribeForPersistedEvents(
        target=RANGE,
        headers=CID,
        from_timestamp="2026-01-01T00:00:00Z",
        to_timestamp="2026-01-02T00:00:00+01:00",
        filter="exists(value)",
    ),
    "streaming subscribe, everything": SubscribeForPersistedEvents(target=RANGE, headers=CID),
    "streaming subscribe on a policy": SubscribeForPersistedEvents(target=POLICY, from_revision=-3),
    "streaming request": StreamingRequest(target=RANGE, headers=CID, subscription_id="0", demand=3),
    "streaming request of demand 0 (judged above the codec)": StreamingRequest(
        target=RANGE, subscription_id="0", demand=0
    ),
    "streaming cancel": StreamingCancel(target=RANGE, subscription_id="0"),
    "streaming created": StreamingCreated(target=RANGE, headers=CID, subscription_id="0"),
    "streaming next": StreamingNext(target=RANGE, subscription_id="0", item={"revision": 5, "value": [1, None]}),
    "streaming next of a scalar item": StreamingNext(target=RANGE, subscription_id="0", item=None),
    "streaming complete": StreamingComplete(target=RANGE, subscription_id="0"),
    "streaming failed": StreamingFailed(target=RANGE, subscription_id="0", error=ERROR),
    "streaming failed, error with unknown members": StreamingFailed(
        target=RANGE, subscription_id="0", error=ErrorInfo(other={"href": "https://example.org"})
    ),
    "search subscribe": SearchSubscribe(
        headers=CID, filter="eq(attributes/tck,3)", options="size(2)", namespaces=("tck",), fields="thingId"
    ),
    "search subscribe, empty": SearchSubscribe(),
    "search request": SearchRequest(subscription_id="s", demand=2),
    "search cancel": SearchCancel(subscription_id="s"),
    "search created": SearchCreated(headers=CID, subscription_id="s"),
    "search next": SearchNext(subscription_id="s", items=({"thingId": "tck:thing-0"}, {"thingId": "tck:thing-1"})),
    "search next, empty page": SearchNext(subscription_id="s", items=()),
    "search complete": SearchComplete(subscription_id="s"),
    "search failed": SearchFailed(
        subscription_id="s", error=ErrorInfo(status=400, error="thing-search:subscription.protocol.error")
    ),
    "extra envelope and value members are kept": StreamingCreated(
        target=RANGE,
        subscription_id="0",
        value_other={"vendor": {"x": 1}},
        other={"extra": {"attributes": {}}, "status": 200},
    ),
}


def test_the_table_covers_every_message_kind_of_both_profiles() -> None:
    assert {type(m) for m in MESSAGES.values()} == set(MESSAGE_CLASSES.values())
    # one reader and one schema for each kind, and nothing else
    assert READERS.keys() == SCHEMA_OF.keys() == MESSAGE_CLASSES.keys()


@pytest.mark.parametrize("name", MESSAGES)
def test_a_message_written_and_read_back_is_the_same(name: str) -> None:
    message = MESSAGES[name]
    text = encode_message(message)
    assert "\n" not in text
    assert decode_message(text) == message
    assert decode_message(text.encode()) == message


# JSON as the pages draw it -> the message class it reads as.
WIRE = [
    ('{"topic":"tck/range/things/twin/streaming/subscribeForPersistedEvents","headers":{"correlation-id":"a"},'
     '"path":"/","value":{"fromHistoricalRevision":1,"toHistoricalRevision":3}}', SubscribeForPersistedEvents),
    ('{"topic":"tck/range/things/twin/streaming/request","headers":{},"path":"/",'
     '"value":{"subscriptionId":"0","demand":9223372036854775807}}', StreamingRequest),
    ('{"topic":"tck/range/things/twin/streaming/cancel","path":"/","headers":{},"value":{"subscriptionId":"0"}}',
     StreamingCancel),
    ('{"topic":"tck/range/things/twin/streaming/created","headers":{"Correlation-Id":"a"},"path":"/",'
     '"value":{"subscriptionId":"0"}}', StreamingCreated),
    ('{"topic":"tck/range/things/twin/streaming/next","headers":{},"path":"/",'
     '"value":{"subscriptionId":"0","item":{"revision":1}}}', StreamingNext),
    ('{"topic":"tck/range/things/twin/streaming/complete","headers":{},"path":"/","value":{"subscriptionId":"0"}}',
     StreamingComplete),
    ('{"topic":"tck/range/things/twin/streaming/failed","headers":{},"path":"/","value":{"subscriptionId":"0",'
     '"error":{"status":400,"error":"streaming.subscription.protocol.error","message":"m","description":"d"}}}',
     StreamingFailed),
    ('{"topic":"_/_/things/twin/search/subscribe","headers":{},"path":"/","fields":"thingId,attributes",'
     '"value":{"filter":"eq(attributes/tck,3)","options":"size(25)","namespaces":["tck","b"]}}', SearchSubscribe),
    ('{"topic":"_/_/things/twin/search/request","headers":{},"path":"/","value":{"subscriptionId":"s","demand":1}}',
     SearchRequest),
    ('{"topic":"_/_/things/twin/search/cancel","headers":{},"path":"/","value":{"subscriptionId":"s"}}',
     SearchCancel),
    ('{"topic":"_/_/things/twin/search/created","headers":{},"path":"/","value":{"subscriptionId":"s"}}',
     SearchCreated),
    ('{"topic":"_/_/things/twin/search/next","headers":{},"path":"/","value":{"subscriptionId":"s","items":[{}]}}',
     SearchNext),
    ('{"topic":"_/_/things/twin/search/complete","headers":{},"path":"/","value":{"subscriptionId":"s"}}',
     SearchComplete),
    ('{"topic":"_/_/things/twin/search/failed","headers":{},"path":"/","value":{"subscriptionId":"s",'
     '"error":{"status":500}}}', SearchFailed),
    # Topics outside the two profiles: the generic envelope.
    ('{"topic":"tck/range/things/twin/errors","headers":{"correlation-id":"a"},"path":"/","status":404,'
     '"value":{"status":404,"error":"things:thing.notfound","message":"m"}}', Envelope),
    ('{"topic":"tck/range/things/live/messages/a/b/c","headers":{},"path":"/inbox/messages/a/b/c","value":null}',
     Envelope),
    ('{"topic":"tck/p/policies/announcements/subjectDeletion","headers":{},"path":"/","value":{},"extra":{}}',
     Envelope),
]


@pytest.mark.parametrize(("text", "cls"), WIRE, ids=[json.loads(t)["topic"] for t, _ in WIRE])
def test_json_read_and_written_back_is_the_same_json(text: str, cls: type) -> None:
    message = decode_message(text)
    assert type(message) is cls
    assert json.loads(encode_message(message)) == json.loads(text)


def test_the_fields_of_a_decoded_message() -> None:
    created = decode_message(WIRE[3][0])
    assert isinstance(created, StreamingCreated)
    assert (created.subscription_id, created.correlation_id, str(created.topic)) == (
        "0", "a", "tck/range/things/twin/streaming/created"
    )
    search = decode_message(WIRE[7][0])
    assert isinstance(search, SearchSubscribe)
    assert (search.filter, search.options, search.namespaces, search.fields) == (
        "eq(attributes/tck,3)", "size(25)", ("tck", "b"), "thingId,attributes"
    )
    failed = decode_message(WIRE[6][0])
    assert isinstance(failed, StreamingFailed)
    assert failed.error == ErrorInfo(
        status=400, error="streaming.subscription.protocol.error", message="m", description="d"
    )
    envelope = decode_message(WIRE[14][0])
    assert isinstance(envelope, Envelope) and envelope.status == 404 and envelope.correlation_id == "a"
    no_value = decode_message('{"topic":"tck/range/things/twin/errors"}')
    assert isinstance(no_value, Envelope) and no_value.value is MISSING and no_value.path is None


TOPICS = {
    "tck/range/things/twin/streaming/subscribeForPersistedEvents": Topic(
        namespace="tck", entity_name="range", criterion="streaming", action="subscribeForPersistedEvents"
    ),
    "_/_/things/twin/search/next": Topic(namespace="_", entity_name="_", criterion="search", action="next"),
    "org.eclipse.ditto/fancy-policy-1/policies/commands/create": Topic(
        namespace="org.eclipse.ditto", entity_name="fancy-policy-1", group="policies", channel=None,
        criterion="commands", action="create",
    ),
    "tck/p/policies/streaming/created": Topic(
        namespace="tck", entity_name="p", group="policies", channel=None, criterion="streaming", action="created"
    ),
    "org.eclipse.ditto/fancy-car-42/things/live/messages/hello.world/x": Topic(
        namespace="org.eclipse.ditto", entity_name="fancy-car-42", channel="live", criterion="messages",
        action="hello.world/x",
    ),
    "tck/range/things/twin/errors": Topic(namespace="tck", entity_name="range", criterion="errors"),
    "tck/range/things/twin/acks": Topic(namespace="tck", entity_name="range", criterion="acks"),
    "tck/range/things/twin/acks/twin-persisted": Topic(
        namespace="tck", entity_name="range", criterion="acks", action="twin-persisted"
    ),
    "_/my-connection/connections/commands/retrieve": Topic(
        namespace="_", entity_name="my-connection", group="connections", channel=None, criterion="commands",
        action="retrieve",
    ),
}


@pytest.mark.parametrize("text", TOPICS)
def test_a_topic_parses_into_its_segments_and_back(text: str) -> None:
    assert parse_topic(text) == TOPICS[text]
    assert str(TOPICS[text]) == text


BAD_TOPICS = [
    ("tck/range/things", "DITTO-TOPIC-1", "segments"),
    ("/range/things/twin/streaming/next", "DITTO-TOPIC-1", "empty namespace"),
    ("tck//things/twin/streaming/next", "DITTO-TOPIC-1", "empty entity name"),
    ("tck/range/things/twin/", "DITTO-TOPIC-1", "no criterion"),
    ("tck/range/devices/twin/streaming/next", "DITTO-TOPIC-2", "'devices'"),
    ("tck/range/things/shadow/streaming/next", "DITTO-TOPIC-3", "'shadow'"),
    ("tck/p/policies/twin/streaming/next", "DITTO-TOPIC-3", "'twin'"),
    ("tck/range/things/twin/streams/next", "DITTO-TOPIC-4", "'streams'"),
    ("tck/range/things/twin/streaming/subscribe", "DITTO-TOPIC-5", "'subscribe'"),
    ("_/_/things/twin/search/subscribeForPersistedEvents", "DITTO-TOPIC-5", "subscribeForPersistedEvents"),
    ("_/_/things/twin/search", "DITTO-TOPIC-5", "needs an action"),
    ("tck/range/things/twin/streaming/next/more", "DITTO-TOPIC-5", "one segment"),
    ("tck/range/things/twin/errors/extra", "DITTO-TOPIC-5", "'extra'"),
    ("tck/range/things/twin/acks/no", "DITTO-TOPIC-5", "'no'"),
    ("tck/range/things/twin/commands/update", "DITTO-TOPIC-5", "'update'"),
    ("_/_/things/live/search/subscribe", "DITTO-TOPIC-6", "things/live"),
    ("_/_/policies/search/subscribe", "DITTO-TOPIC-6", "policies"),
    ("tck/range/things/live/streaming/request", "DITTO-TOPIC-7", "things/live"),
    ("_/c/connections/streaming/request", "DITTO-TOPIC-7", "connections"),
]


@pytest.mark.parametrize(("text", "rule", "named"), BAD_TOPICS, ids=[t for t, _, _ in BAD_TOPICS])
def test_a_bad_topic_names_its_rule_and_the_segment(text: str, rule: str, named: str) -> None:
    with pytest.raises(ProtocolViolation) as caught:
        parse_topic(text)
    assert caught.value.rule == rule
    assert named in caught.value.message and text in caught.value.message
    assert "\n" not in str(caught.value)


def test_websocket_texts_are_messages_or_control_messages() -> None:
    created = decode_websocket_text(WIRE[3][0])
    assert isinstance(created, StreamingCreated)
    assert json.loads(encode_websocket_text(created)) == json.loads(WIRE[3][0])
    for text, name, query in [
        ("START-SEND-EVENTS", "START-SEND-EVENTS", None),
        ("START-SEND-EVENTS:ACK", "START-SEND-EVENTS:ACK", None),
        ("STOP-SEND-LIVE-COMMANDS", "STOP-SEND-LIVE-COMMANDS", None),
        ("START-SEND-EVENTS?namespaces=tck&filter=gt(attributes/counter,42)", "START-SEND-EVENTS",
         "namespaces=tck&filter=gt(attributes/counter,42)"),
        ("JWT-TOKEN?jwtToken=abc.def", "JWT-TOKEN", "jwtToken=abc.def"),
    ]:
        control = decode_websocket_text(text)
        assert control == ControlMessage(name=name, query=query)
        assert encode_websocket_text(control) == text
    with pytest.raises(ProtocolViolation) as caught:
        decode_websocket_text("START-SEND-NOTHING")
    assert caught.value.rule == "DITTO-ENV-1"


def test_a_lone_surrogate_read_from_the_wire_is_written_back_as_valid_utf8() -> None:
    text = '{"topic":"_/_/things/twin/search/created","headers":{},"path":"/","value":{"subscriptionId":"\\ud800é"}}'
    created = decode_message(text)
    assert isinstance(created, SearchCreated) and created.subscription_id == "\ud800é"
    line = encode_line(created)
    assert b"\\ud800" in line and decode_message(line) == created
    assert encode_message(SearchCreated(subscription_id="é")) == (
        '{"topic":"_/_/things/twin/search/created","headers":{},"path":"/","value":{"subscriptionId":"é"}}'
    )


def test_the_encoder_writes_illegal_messages_for_faults_but_not_what_json_cannot_carry() -> None:
    bad = StreamingRequest(target=RANGE, subscription_id="0", demand=-1)
    assert json.loads(encode_message(bad))["value"]["demand"] == -1
    with pytest.raises(ValueError, match="tck/range/things/twin/streaming/next"):
        encode_message(StreamingNext(target=RANGE, subscription_id="0", item=float("nan")))
    with pytest.raises(ValueError, match="not JSON serializable"):
        encode_message(StreamingNext(target=RANGE, subscription_id="0", item=object()))


# -- generated messages of every kind round-trip ----------------------------------------------------

json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text()
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)
names = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_.", min_size=1, max_size=12)
extra_members = st.dictionaries(names.map(lambda n: "x-" + n), json_values, max_size=2)
headers = st.dictionaries(names.map(lambda n: "h-" + n), st.text(max_size=8), max_size=3).flatmap(
    lambda h: st.sampled_from([h, h | {"correlation-id": "c"}])
)
targets = st.builds(Target, namespace=names, entity_name=names) | st.builds(
    Target, namespace=names, entity_name=names, group=st.just("policies"), channel=st.none()
)
ids = st.text(max_size=10)
demands = st.integers(-(2**70), 2**70)
timestamps = st.sampled_from(["2026-01-01T00:00:00Z", "1970-01-01T00:00:00.5+02:00", None])
errors = st.builds(
    ErrorInfo,
    status=st.none() | st.integers(100, 599),
    error=st.none() | st.text(max_size=10),
    message=st.none() | st.text(max_size=10),
    description=st.none() | st.text(max_size=10),
    other=extra_members,
)
common = {"headers": headers, "value_other": extra_members, "other": extra_members}
streaming = {"target": targets, **common}
search = {"target": st.just(SEARCH_TARGET), **common}
any_message = st.one_of(
    st.builds(SubscribeForPersistedEvents, from_revision=st.none() | st.integers(), to_revision=st.none()
              | st.integers(), from_timestamp=timestamps, to_timestamp=timestamps, filter=st.none() | st.text(),
              **streaming),
    st.builds(StreamingRequest, subscription_id=ids, demand=demands, **streaming),
    st.builds(StreamingCancel, subscription_id=ids, **streaming),
    st.builds(StreamingCreated, subscription_id=ids, **streaming),
    st.builds(StreamingNext, subscription_id=ids, item=json_values, **streaming),
    st.builds(StreamingComplete, subscription_id=ids, **streaming),
    st.builds(StreamingFailed, subscription_id=ids, error=errors, **streaming),
    st.builds(SearchSubscribe, filter=st.none() | st.text(), options=st.none() | st.text(),
              namespaces=st.none() | st.lists(st.text(max_size=6), max_size=3).map(tuple),
              fields=st.none() | st.text(max_size=10), **search),
    st.builds(SearchRequest, subscription_id=ids, demand=demands, **search),
    st.builds(SearchCancel, subscription_id=ids, **search),
    st.builds(SearchCreated, subscription_id=ids, **search),
    st.builds(SearchNext, subscription_id=ids, items=st.lists(json_values, max_size=3).map(tuple), **search),
    st.builds(SearchComplete, subscription_id=ids, **search),
    st.builds(SearchFailed, subscription_id=ids, error=errors, **search),
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(message=any_message)
def test_any_message_of_any_kind_written_and_read_back_is_the_same(message: Message) -> None:
    text = encode_message(message)
    assert decode_message(text) == message
    assert json.loads(encode_message(decode_message(text))) == json.loads(text)
    assert LineDecoder().feed(encode_line(message)) == [message]


_JSON_VALUES = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=4),
                            lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner,
                                                                                         max_size=3), max_leaves=6)
_VALUE_MEMBERS = st.sampled_from(["subscriptionId", "item", "items", "error", "demand", "other"])


@pytest.mark.parametrize("kind", sorted(SCHEMA_OF))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=st.dictionaries(_VALUE_MEMBERS, _JSON_VALUES, max_size=4) | _JSON_VALUES)
def test_a_value_taken_as_valid_without_jsonschema_is_valid_by_jsonschema(kind: tuple[str, str], value: object) -> None:
    """The shortcut of ``check_value`` for schemas of plain member types (floods of ``next`` events) accepts
    only what Ditto's schema accepts: a value it passes has no jsonschema error."""
    from rsio_tck.bindings.ditto.schemas import _plainly_valid, _validator
    name = SCHEMA_OF[kind][0]
    if _plainly_valid(name, value):
        assert not list(_validator(name).iter_errors(value))


@pytest.mark.parametrize("kind", sorted(SCHEMA_OF))
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_a_value_with_every_required_member_is_taken_by_the_shortcut_only_if_jsonschema_agrees(
        kind: tuple[str, str], data: st.DataObject) -> None:
    """As above, with the schema's required members always there, so that the member types are what decides
    (a bool is no ``number``: a demand of true must go to jsonschema, which rejects it)."""
    from rsio_tck.bindings.ditto.schemas import _plainly_valid, _validator, load_schema
    name = SCHEMA_OF[kind][0]
    required = load_schema(name).get("required", [])
    value = data.draw(st.fixed_dictionaries({member: _JSON_VALUES for member in required},
                                            optional={"other": _JSON_VALUES}))
    if _plainly_valid(name, value):
        assert not list(_validator(name).iter_errors(value))


def test_a_request_of_plain_members_is_judged_without_jsonschema() -> None:
    """The shortcut covers the request payload's ``number`` demand (the kit's own requests are judged too)."""
    from rsio_tck.bindings.ditto.schemas import _plainly_valid
    name = SCHEMA_OF[("streaming", "request")][0]
    assert _plainly_valid(name, {"subscriptionId": "s", "demand": 3})
    assert not _plainly_valid(name, {"subscriptionId": "s", "demand": True})
