"""Rules that bind the kit's own side of the wire, checked on the sans-IO ``Connection``.

Some MUST rules bind a role a target never plays in the suite (the kit is always
the client) or a subscriber the kit cannot make a target be (Id reuse in a
subscribe-back).  For those the violating situation is fed to the ``Connection``
the kit and the reference peer both stand on, and the test fails if it does
what the rule forbids.  ``CITED`` maps each rule to its tests here, for the
coverage check in ``test_rule_coverage.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from rsio_tck.bindings.rsio.wire import Limits, get_codec
from rsio_tck.bindings.rsio.wire.frames import (
    Cancel,
    ClientHello,
    Frame,
    Goodbye,
    OnComplete,
    OnError,
    OnNext,
    OnNextLastPart,
    OnNextPart,
    OnSubscribe,
    Request,
    ServerHello,
    Subscribe,
)
from rsio_tck.errors import ProtocolViolation, Side
from rsio_tck.protocol import Connection, ConnectionClosed, ConnectionState, Ignored, ProtocolError, ReassemblyLimit

CITED: dict[str, list[str]] = {}
CODECS = ["msgpack", "varint"]


def cites(*rules: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def mark(test: Callable[..., Any]) -> Callable[..., Any]:
        for rule in rules:
            CITED.setdefault(rule, []).append(test.__name__)
        return test

    return mark


def wire(codec: str, *frames: Frame) -> bytes:
    encoder = get_codec(codec).encoder()
    return b"".join(encoder.encode(frame) for frame in frames)


def client(codec: str, *subscribes: Subscribe, limits: Limits | None = None) -> Connection:
    """A client Connection past the handshake, with ``subscribes`` sent."""
    conn = Connection(Side.CLIENT, codec, limits)
    conn.send(ClientHello(version=0))
    for frame in subscribes:
        conn.send(frame)
    assert conn.receive_data(wire(codec, ServerHello(version=0))) == [ServerHello(version=0)]
    conn.data_to_send()
    return conn


def server(codec: str, demand: int) -> Connection:
    """A server Connection past the handshake, serving subscriptions 1 and 2 with ``demand`` each."""
    conn = Connection(Side.SERVER, codec)
    conn.receive_data(wire(codec, ClientHello(version=0), Subscribe(publisher="p", subscriber=1, initial_demand=demand),
                           Subscribe(publisher="p", subscriber=2, initial_demand=demand)))
    conn.send(ServerHello(version=0))
    for sid in (1, 2):
        conn.send(OnSubscribe(subscriber=sid, element_size=0))
    return conn


def delivered(events: list[object]) -> list[object]:
    """What the application gets: frames and events, without the ignored frames."""
    return [e for e in events if not isinstance(e, Ignored)]


@cites("HS-7")
@pytest.mark.parametrize("codec", CODECS)
def test_a_server_serves_frames_that_came_with_the_client_hello(codec: str) -> None:
    conn = Connection(Side.SERVER, codec)
    sub = Subscribe(publisher="p", subscriber=3, initial_demand=2)
    events = conn.receive_data(wire(codec, ClientHello(version=0), sub, Request(subscriber=3, demand=1)))
    assert events == [ClientHello(version=0), sub, Request(subscriber=3, demand=1)]
    conn.send(ServerHello(version=0))
    conn.send(OnSubscribe(subscriber=3, element_size=0))
    for i in range(3):  # initialDemand 2 plus the request that came before the serverHello
        conn.send(OnNext(subscriber=3, element=bytes([i])))
    assert conn.state is ConnectionState.OPEN


@cites("HS-7")
@pytest.mark.parametrize("codec", CODECS)
def test_a_client_accepts_a_server_hello_sent_before_its_own_hello_was_read(codec: str) -> None:
    # The serverHello and a goodbye-free stream answer cross the client's optimistic frames.
    conn = Connection(Side.CLIENT, codec)
    conn.send(ClientHello(version=0))
    conn.send(Subscribe(publisher="p", subscriber=1, initial_demand=1))
    events = conn.receive_data(wire(codec, ServerHello(version=0), OnSubscribe(subscriber=1, element_size=0),
                                    OnNext(subscriber=1, element=b"x")))
    assert events == [ServerHello(version=0), OnSubscribe(subscriber=1, element_size=0), OnNext(subscriber=1, element=b"x")]


@cites("STR-7")
@pytest.mark.parametrize("codec", CODECS)
def test_requests_and_cancels_for_unknown_cancelled_or_ended_ids_get_no_answer(codec: str) -> None:
    conn = server(codec, 1)
    conn.send(OnComplete(subscriber=2))
    conn.data_to_send()
    stale = [Request(subscriber=9, demand=1), Cancel(subscriber=9), Cancel(subscriber=1), Request(subscriber=1, demand=5),
             Cancel(subscriber=1), Request(subscriber=2, demand=1), Cancel(subscriber=2)]
    events = conn.receive_data(wire(codec, *stale))
    assert delivered(events) == [Cancel(subscriber=1)]  # the one cancel that counts; the rest are ignored
    ignored = [e for e in events if isinstance(e, Ignored)]
    assert [e.frame for e in ignored] == [f for i, f in enumerate(stale) if i != 2]
    assert {e.rule for e in ignored} == {"STR-7"}
    assert conn.data_to_send() == b"" and conn.state is ConnectionState.OPEN


@cites("ID-4")
@pytest.mark.parametrize("codec", CODECS)
def test_a_reused_id_drops_the_old_subscriptions_frames_until_the_new_on_subscribe(codec: str) -> None:
    conn = client(codec, Subscribe(publisher="a", subscriber=5, initial_demand=10))
    assert delivered(conn.receive_data(wire(codec, OnSubscribe(subscriber=5, element_size=0),
                                            OnNext(subscriber=5, element=b"old1")))) == [
        OnSubscribe(subscriber=5, element_size=0), OnNext(subscriber=5, element=b"old1")]
    conn.send(Cancel(subscriber=5))
    # In flight from the old subscription, before and after the Id is subscribed again.
    before = conn.receive_data(wire(codec, OnNext(subscriber=5, element=b"old2")))
    conn.send(Subscribe(publisher="b", subscriber=5, initial_demand=1))
    after = wire(codec, OnNext(subscriber=5, element=b"old3"), OnNextPart(subscriber=5, element=1, data=b"ol"),
                 OnNextLastPart(subscriber=5, element=1, data=b"d4"), OnComplete(subscriber=5))
    fresh = wire(codec, OnSubscribe(subscriber=5, element_size=0), OnNext(subscriber=5, element=b"new"),
                 OnComplete(subscriber=5))
    events = before + [e for chunk in (after, fresh) for e in conn.receive_data(chunk)]
    assert delivered(events) == [OnSubscribe(subscriber=5, element_size=0), OnNext(subscriber=5, element=b"new"),
                                 OnComplete(subscriber=5)]
    assert conn.error is None


@cites("SPLIT-4")
@pytest.mark.parametrize("codec", CODECS)
def test_interleaved_parts_of_two_streams_join_apart_and_element_ids_are_reused(codec: str) -> None:
    conn = client(codec, Subscribe(publisher="a", subscriber=1, initial_demand=9),
                  Subscribe(publisher="b", subscriber=2, initial_demand=9))
    frames = [OnSubscribe(subscriber=1, element_size=0), OnSubscribe(subscriber=2, element_size=0),
              OnNextPart(subscriber=1, element=0, data=b"le"), OnNextPart(subscriber=2, element=0, data=b"ri"),
              OnNextLastPart(subscriber=1, element=0, data=b"ft"), OnNextPart(subscriber=2, element=0, data=b"gh"),
              OnNextPart(subscriber=1, element=0, data=b"ag"),  # element Id 0 again, its first element done
              OnNextLastPart(subscriber=2, element=0, data=b"t"), OnNextLastPart(subscriber=1, element=0, data=b"ain")]
    data = wire(codec, *frames)
    for chunk in (len(data), 1):
        conn = client(codec, Subscribe(publisher="a", subscriber=1, initial_demand=9),
                      Subscribe(publisher="b", subscriber=2, initial_demand=9))
        events = [e for i in range(0, len(data), chunk) for e in conn.receive_data(data[i : i + chunk])]
        assert [e for e in events if isinstance(e, OnNext)] == [
            OnNext(subscriber=1, element=b"left"), OnNext(subscriber=2, element=b"right"),
            OnNext(subscriber=1, element=b"again")]


@cites("SPLIT-5")
@pytest.mark.parametrize("codec", CODECS)
def test_an_element_over_the_reassembly_limit_cancels_only_its_subscription(codec: str) -> None:
    conn = client(codec, Subscribe(publisher="a", subscriber=1, initial_demand=9),
                  Subscribe(publisher="b", subscriber=2, initial_demand=9), limits=Limits(max_reassembly=10))
    conn.receive_data(wire(codec, OnSubscribe(subscriber=1, element_size=0), OnSubscribe(subscriber=2, element_size=0)))
    events = conn.receive_data(wire(codec, OnNextPart(subscriber=1, element=0, data=b"123456"),
                                    OnNextPart(subscriber=1, element=0, data=b"789012")))
    assert events == [ReassemblyLimit(subscriber=1, size=12, limit=10)]
    assert conn.data_to_send() == wire(codec, Cancel(subscriber=1))
    later = conn.receive_data(wire(codec, OnNextLastPart(subscriber=1, element=0, data=b"3"),  # in flight
                                   OnNext(subscriber=2, element=b"ok"), OnNextLastPart(subscriber=2, element=4, data=b"10")))
    assert delivered(later) == [OnNext(subscriber=2, element=b"ok"), OnNext(subscriber=2, element=b"10")]
    assert conn.state is ConnectionState.OPEN and conn.error is None


@cites("SPLIT-6")
@pytest.mark.parametrize("codec", CODECS)
def test_on_error_cutting_a_split_element_short_drops_the_partial_element(codec: str) -> None:
    conn = client(codec, Subscribe(publisher="a", subscriber=1, initial_demand=9))
    events = conn.receive_data(wire(codec, OnSubscribe(subscriber=1, element_size=0),
                                    OnNextPart(subscriber=1, element=3, data=b"half an ele"),
                                    OnError(subscriber=1, error="cut short")))
    assert events == [OnSubscribe(subscriber=1, element_size=0), OnError(subscriber=1, error="cut short")]
    assert conn.assembler.in_progress(1) == 0


@cites("BYE-5")
@pytest.mark.parametrize("codec", CODECS)
def test_a_goodbye_ends_every_stream_and_only_the_acknowledgement_follows(codec: str) -> None:
    conn = server(codec, 100)
    for sid in (1, 2):
        conn.send(OnNext(subscriber=sid, element=b"e"))
    conn.data_to_send()
    events = conn.receive_data(wire(codec, Goodbye(reason="enough")))
    assert events == [Goodbye(reason="enough")]
    assert conn.data_to_send() == wire(codec, Goodbye(reason="goodbye acknowledged"))
    assert conn.state is ConnectionState.CLOSED
    for frame in (OnNext(subscriber=1, element=b"e"), OnComplete(subscriber=2), OnSubscribe(subscriber=3, element_size=0)):
        with pytest.raises(ProtocolViolation) as caught:
            conn.send(frame)
        assert caught.value.rule == "BYE-1"
    assert conn.receive_data(wire(codec, Request(subscriber=1, demand=1))) == []


@cites("ERR-11")
@pytest.mark.parametrize("codec", CODECS)
def test_a_close_without_goodbye_ends_the_streams_as_an_error_not_a_crash(codec: str) -> None:
    conn = client(codec, Subscribe(publisher="a", subscriber=1, initial_demand=9))
    conn.receive_data(wire(codec, OnSubscribe(subscriber=1, element_size=0), OnNext(subscriber=1, element=b"x")))
    events = conn.receive_eof()
    assert events == [ConnectionClosed(orderly=False, reason="transport closed without goodbye")]
    assert conn.state is ConnectionState.CLOSED
    assert not any(isinstance(e, ProtocolError) for e in events)
    assert conn.receive_data(b"\x08") == []  # nothing after the end, and no exception
