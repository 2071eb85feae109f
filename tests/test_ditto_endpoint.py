"""Ditto's sans-IO endpoint: a kit endpoint in one role against a scripted peer (bytes in, events out).

On a peer's violation the endpoint queues the binding's close (SPEC.md, decision
DITTO-f: one error envelope naming the rule), returns ProtocolError and reads no
more.  ``CITED`` lists the rules these tests feed a violation (test_rule_coverage).
"""

from __future__ import annotations

import json

import pytest

from rsio_tck.binding import get_binding
from rsio_tck.bindings.ditto import StreamingCreated, StreamingRequest, SubscribeForPersistedEvents, Target, encode_line
from rsio_tck.errors import ProtocolViolation, Side
from rsio_tck.protocol.events import ConnectionClosed, ConnectionState, ProtocolError

RANGE = Target(namespace="tck", entity_name="range")
SUBSCRIBE = SubscribeForPersistedEvents(target=RANGE, headers={"correlation-id": "c1"}, from_revision=0, to_revision=2)
CREATED = StreamingCreated(target=RANGE, headers={"correlation-id": "c1"}, subscription_id="s1")
CITED = ("DITTO-WS-1", "DITTO-LINE-1", "DITTO-LINE-2", "DITTO-ENV-1", "DITTO-SUB-3", "DITTO-DEM-3")


def client() -> object:
    return get_binding("ditto").endpoint(Side.CLIENT, "streaming")


def test_a_subscription_round_trip_in_any_chunking() -> None:
    kit = client()
    kit.send(SUBSCRIBE)  # type: ignore[attr-defined]
    assert json.loads(kit.data_to_send())["topic"].endswith("subscribeForPersistedEvents")  # type: ignore[attr-defined]
    line = encode_line(CREATED)
    events = [e for i in range(len(line)) for e in kit.receive_data(line[i:i + 1])]  # type: ignore[attr-defined]
    assert events == [CREATED]
    kit.send(StreamingRequest(target=RANGE, subscription_id="s1", demand=3))  # type: ignore[attr-defined]
    assert kit.state is ConnectionState.OPEN  # type: ignore[attr-defined]


def test_the_kit_refuses_to_send_a_violation_unless_told() -> None:
    kit = client()
    kit.send(SUBSCRIBE)  # type: ignore[attr-defined]
    kit.receive_data(encode_line(CREATED))  # type: ignore[attr-defined]
    with pytest.raises(ProtocolViolation) as caught:
        kit.send(StreamingRequest(target=RANGE, subscription_id="s1", demand=0))  # type: ignore[attr-defined]
    assert caught.value.rule == "DITTO-DEM-3"
    kit.send(StreamingRequest(target=RANGE, subscription_id="s1", demand=0), check=False)  # type: ignore[attr-defined]


@pytest.mark.parametrize(("data", "rule"), [
    (b"{not json}\n", "DITTO-ENV-1"),
    (encode_line(StreamingCreated(target=RANGE, headers={"correlation-id": "zz"}, subscription_id="s9"))
     + b"", "DITTO-SUB-1"),
])
def test_a_peer_violation_queues_one_error_envelope_and_stops_reading(data: bytes, rule: str) -> None:
    kit = client()
    kit.send(SUBSCRIBE)  # type: ignore[attr-defined]
    kit.data_to_send()  # type: ignore[attr-defined]
    events = kit.receive_data(data)  # type: ignore[attr-defined]
    errors = [e for e in events if isinstance(e, ProtocolError)]
    assert [e.violation.rule for e in errors] == [rule] and errors[0].violation.side is Side.SERVER
    answer = json.loads(kit.data_to_send())  # type: ignore[attr-defined]
    assert answer["topic"] == "_/_/things/twin/errors" and answer["status"] == 400 and rule in answer["value"]["message"]
    assert kit.state is ConnectionState.CLOSING  # type: ignore[attr-defined]
    assert kit.receive_data(encode_line(CREATED)) == []  # type: ignore[attr-defined]


def test_a_binary_websocket_message_breaks_ws_1_and_text_is_one_message() -> None:
    kit = client()
    kit.send(SUBSCRIBE)  # type: ignore[attr-defined]
    assert kit.receive_message(encode_line(CREATED)[:-1].decode()) == [CREATED]  # type: ignore[attr-defined]
    events = client().receive_message(b"\x00\x01")  # type: ignore[attr-defined]
    assert [e.violation.rule for e in events if isinstance(e, ProtocolError)] == ["DITTO-WS-1"]


def test_a_line_cut_by_the_close_breaks_line_2_and_an_overlong_line_line_1() -> None:
    from rsio_tck.bindings.ditto import DittoLimits

    kit = client()
    kit.receive_data(b'{"topic": ')  # type: ignore[attr-defined]
    events = kit.receive_eof()  # type: ignore[attr-defined]
    assert [e.violation.rule for e in events if isinstance(e, ProtocolError)] == ["DITTO-LINE-2"]
    assert isinstance(events[-1], ConnectionClosed) and not events[-1].orderly
    small = get_binding("ditto").endpoint(Side.SERVER, "streaming", DittoLimits(max_message=64))
    events = small.receive_data(b"x" * 100)  # type: ignore[attr-defined]
    assert [e.violation.rule for e in events if isinstance(e, ProtocolError)] == ["DITTO-LINE-1"]


def test_the_publisher_sending_an_event_for_no_subscription_is_sub_3() -> None:
    from rsio_tck.bindings.ditto import StreamingNext

    kit = client()
    events = kit.receive_data(encode_line(StreamingNext(target=RANGE, subscription_id="x", item=1)))  # type: ignore[attr-defined]
    assert [e.violation.rule for e in events if isinstance(e, ProtocolError)] == ["DITTO-SUB-3"]
