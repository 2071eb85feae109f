"""The Ditto peer's sans-IO session under arbitrary input: never an exception, every output line a Ditto
message or a control acknowledgement, memory bounded by its limits."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from rsio_tck.bindings.ditto import ControlMessage, decode_websocket_text
from rsio_tck.bindings.ditto.codec import DittoLimits
from rsio_tck.reference_peer.ditto.connection import DittoConnection
from rsio_tck.reference_peer.ditto.faults import build_policy
from rsio_tck.reference_peer.ditto.freedoms import Freedoms

TOPICS = ["tck/range/things/twin/streaming/", "tck/infinite/things/twin/streaming/", "tck/error/things/twin/streaming/",
          "_/_/things/twin/search/", "tck/x/policies/streaming/"]
ACTIONS = ["subscribeForPersistedEvents", "subscribe", "request", "cancel", "created", "next", "bogus"]
VALUES = st.fixed_dictionaries({}, optional={
    "subscriptionId": st.sampled_from(["0", "1", "tck-sub-1", "nobody"]) | st.integers(),
    "demand": st.integers(min_value=-3, max_value=2**64) | st.floats(allow_nan=False) | st.text(max_size=3),
    "fromHistoricalRevision": st.integers(-5, 50), "toHistoricalRevision": st.integers(-5, 50),
    "filter": st.sampled_from(["eq(attributes/tck,5)", "eq(attributes/tck,0)", "x", ""]),
    "options": st.sampled_from(["size(2)", "size(0)", "size(2),sort(+thingId)", "sort(-x)", ""]),
})
MESSAGES = st.builds(lambda topic, action, value, cid: json.dumps(
    {"topic": topic + action, "headers": {"correlation-id": cid}, "path": "/", "value": value}).encode(),
    st.sampled_from(TOPICS), st.sampled_from(ACTIONS), VALUES, st.text(max_size=4))
LINES = st.one_of(MESSAGES, st.binary(max_size=40), st.sampled_from(
    [b"START-SEND-EVENTS", b"STOP-SEND-MESSAGES", b"JWT-TOKEN?jwtToken=x", b"", b"[]", b"{}", b"\xff"]))


@settings(max_examples=300, deadline=None)
@given(st.lists(LINES, max_size=30), st.integers(0, 7), st.lists(st.integers(1, 64), min_size=1, max_size=5))
def test_any_input_is_answered_with_ditto_messages_and_never_raises(lines: list[bytes], seed: int,
                                                                     cuts: list[int]) -> None:
    session = DittoConnection(policy=build_policy(()), freedoms=Freedoms(True, seed, 1),
                           limits=DittoLimits(max_message=4096), max_subscriptions=4)
    data = b"\n".join(lines) + b"\n"
    out = bytearray()
    position, index = 0, 0
    while position < len(data):
        size = cuts[index % len(cuts)]
        session.receive_data(data[position:position + size])
        position, index = position + size, index + 1
        for _ in range(20):  # bounded: an unbounded subscription may always have more
            if not session.pump(64):
                break
        out += session.data_to_send()
    session.receive_eof()
    out += session.data_to_send()
    assert not out or out.endswith(b"\n")  # whole lines only
    for line in bytes(out).split(b"\n")[:-1]:
        message = decode_websocket_text(line.decode("utf-8"))  # raises if the peer wrote a bad message
        assert not isinstance(message, ControlMessage) or message.name.endswith(":ACK")
    assert len(session.subscriptions) <= 2 * 4


def test_a_pretty_printed_message_from_a_websocket_hook_is_one_line() -> None:
    """The WebSocket framing hook hands a text message over as one line, its raw LFs turned into CRs."""
    session = DittoConnection(policy=build_policy(()), freedoms=Freedoms(False, 0, 1))
    text = json.dumps({"topic": "_/_/things/twin/search/subscribe", "headers": {"correlation-id": "p"}, "path": "/",
                       "value": {"filter": "eq(attributes/tck,2)"}}, indent=2)
    session.receive_data(text.replace("\n", "\r").encode() + b"\n" + b"START-SEND-EVENTS\r\n")
    lines = session.data_to_send().decode().splitlines()
    created = decode_websocket_text(lines[0])
    assert created.topic.action == "created" and created.correlation_id == "p"  # type: ignore[union-attr]
    assert lines[1:] == ["START-SEND-EVENTS:ACK"]
