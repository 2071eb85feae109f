"""The sans-IO RSocket endpoint on its own: two endpoints wired back to back, no sockets, no clocks."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from rsio_tck.bindings.rsocket import Reassembler, get_profile
from rsio_tck.bindings.rsocket.endpoint import Endpoint, EndpointState, SetupRejected, default_setup
from rsio_tck.bindings.rsocket.frames import (
    CONNECTION_ERROR,
    REJECTED,
    Error,
    Keepalive,
    Lease,
    Payload,
    RequestN,
    RequestResponse,
    RequestStream,
)
from rsio_tck.bindings.rsocket.judge import RSocketJudge
from rsio_tck.errors import ProtocolViolation, Side
from rsio_tck.protocol.events import ConnectionClosed, Ignored, ProtocolError


def pair(profile: str = "rsocket-1.0", **server_options: Any) -> tuple[Endpoint, Endpoint, list[Any]]:
    client, server = Endpoint(Side.CLIENT, profile), Endpoint(Side.SERVER, profile, **server_options)
    events = server.receive_data(client.data_to_send())
    return client, server, events


def test_setup_is_accepted_and_ids_alternate() -> None:
    client, server, events = pair()
    assert events == [default_setup("rsocket-1.0")] and server.accepted
    assert [client.new_stream_id() for _ in range(3)] == [1, 3, 5]
    assert [server.new_stream_id() for _ in range(2)] == [2, 4]


def test_client_keepalive_follows_the_clock() -> None:
    client = Endpoint(Side.CLIENT, setup=default_setup("rsocket-1.0", keepalive_ms=500), now=10.0)
    client.data_to_send()
    assert client.next_deadline() == pytest.approx(10.5)
    client.tick(10.4)
    assert client.data_to_send() == b""
    client.tick(10.5)
    sent = get_profile("rsocket-1.0").decoder().feed(client.data_to_send())
    assert sent == [Keepalive(respond=True)]


@pytest.mark.parametrize("profile", ["rsocket-1.0", "reactivesocket-draft"])
def test_keepalive_is_echoed(profile: str) -> None:
    client, server, _ = pair(profile)
    client.send(Keepalive(respond=profile == "rsocket-1.0", data=b"echo me"))
    server.receive_data(client.data_to_send())
    answers = client.receive_data(server.data_to_send())
    assert answers == [Keepalive(respond=False, data=b"echo me")]
    assert client.data_to_send() == b""  # the client does not answer an answer


def test_lease_gates_the_requester_and_the_responder() -> None:
    client = Endpoint(Side.CLIENT, setup=default_setup("rsocket-1.0", lease=True))
    server = Endpoint(Side.SERVER, lease_grant=(1000, 1))
    server.receive_data(client.data_to_send())
    assert not client.may_request()
    eager = Endpoint(Side.CLIENT, setup=default_setup("rsocket-1.0", lease=True))
    with pytest.raises(ProtocolViolation) as refused:  # (a refused send has been judged: that endpoint is spent)
        eager.send(RequestResponse(stream_id=1, data=b"x"))
    assert refused.value.rule == "RS-LEASE-4"
    events = client.receive_data(server.data_to_send())
    assert events == [Lease(ttl=1000, number_of_requests=1)] and client.may_request()
    client.send(RequestResponse(stream_id=1, data=b"x"))
    assert not client.may_request()  # its one request is used
    client.send(RequestResponse(stream_id=3, data=b"y"), check=False)
    events = server.receive_data(client.data_to_send())
    assert isinstance(events[0], RequestResponse)
    assert isinstance(events[1], Ignored) and events[1].rule == "RS-LEASE-4"
    answers = client.receive_data(server.data_to_send())
    assert [(e.stream_id, e.error_code) for e in answers if isinstance(e, Error)] == [(3, REJECTED)]


def test_lease_expires_with_time() -> None:
    client = Endpoint(Side.CLIENT, setup=default_setup("rsocket-1.0", lease=True), now=0.0)
    client.receive_data(Endpoint(Side.SERVER).encode(Lease(ttl=1000, number_of_requests=5)), now=0.0)
    assert client.may_request()
    client.tick(1.0)
    assert not client.may_request()


def test_mtu_bounds_every_frame_and_the_receiver_gets_it_whole() -> None:
    client = Endpoint(Side.CLIENT)
    server = Endpoint(Side.SERVER, mtu=64)
    server.receive_data(client.data_to_send())
    client.send(RequestStream(stream_id=1, initial_request_n=1, data=b"tck/large?size=1000&count=1"))
    server.receive_data(client.data_to_send())
    server.send(Payload(stream_id=1, next=True, complete=True, metadata=b"m" * 100, data=bytes(range(256)) * 4))
    wire = server.data_to_send()
    frames = get_profile("rsocket-1.0").decoder().feed(wire)
    assert len(frames) > 10 and all(len(get_profile("rsocket-1.0").encode_frame(f)) <= 64 for f in frames)
    assert client.receive_data(wire) == [
        Payload(stream_id=1, next=True, complete=True, metadata=b"m" * 100, data=bytes(range(256)) * 4)]


def test_malformed_input_closes_with_connection_error() -> None:
    client, server, _ = pair()
    events = server.receive_data(b"\x00\x00\x01\x00")
    assert isinstance(events[0], ProtocolError) and events[0].violation.rule == "RS-FRAME-1"
    assert server.state is EndpointState.CLOSED
    answer = client.receive_data(server.data_to_send())
    assert answer == [Error(stream_id=0, error_code=CONNECTION_ERROR, data=answer[0].data)]
    assert server.receive_data(client.encode(Keepalive(respond=True))) == []  # nothing more is accepted


def test_the_unexpected_is_ignored() -> None:
    client, server, _ = pair()
    client.send(RequestStream(stream_id=1, initial_request_n=1, data=b"a"))
    client.send(RequestStream(stream_id=1, initial_request_n=1, data=b"b"), check=False)
    client.send(RequestN(stream_id=7, request_n=1), check=False)
    events = server.receive_data(client.data_to_send())
    assert isinstance(events[0], RequestStream)
    assert [(type(e.frame).__name__, e.rule) for e in events[1:]] == [
        ("RequestStream", "RS-UNEXPECTED-1"), ("RequestN", "RS-UNEXPECTED-1")]
    assert server.data_to_send() == b""  # no ERROR answers them


def test_a_checked_send_is_judged() -> None:
    client, server, _ = pair()
    client.send(RequestStream(stream_id=1, initial_request_n=1, data=b"a"))
    server.receive_data(client.data_to_send())
    server.send(Payload(stream_id=1, next=True, data=b"0"))
    for frame, rule in ((Payload(stream_id=1, next=True, data=b"1"), "RS-FLOW-2"),
                        (Keepalive(stream_id=3), "RS-KEEPALIVE-1"),
                        (Error(stream_id=1, error_code=CONNECTION_ERROR), "RS-ERROR-1")):
        with pytest.raises(ProtocolViolation) as broken:
            server.send(frame)
        assert broken.value.rule == rule
    with pytest.raises(ProtocolViolation) as odd:
        server.send(RequestStream(stream_id=3, initial_request_n=1, data=b"x"))
    assert odd.value.rule == "RS-STREAMID-1"


def test_unsupported_version_and_lifetime() -> None:
    server = Endpoint(Side.SERVER)
    setup = default_setup("rsocket-1.0")
    events = server.receive_data(Endpoint(Side.CLIENT, setup=False).encode(replace(setup, major_version=3)))
    assert isinstance(events[0], SetupRejected) and server.state is EndpointState.CLOSED
    watched = Endpoint(Side.SERVER, enforce_lifetime=True, now=0.0)
    watched.receive_data(Endpoint(Side.CLIENT, setup=default_setup("rsocket-1.0", lifetime_ms=1000)).data_to_send(),
                         now=0.0)
    assert watched.tick(0.5) == []
    closed = watched.tick(1.5)
    assert isinstance(closed[0], ConnectionClosed) and watched.state is EndpointState.CLOSED


def test_resume_is_refused() -> None:
    from rsio_tck.bindings.rsocket.frames import REJECTED_RESUME, REJECTED_SETUP, Resume

    server = Endpoint(Side.SERVER)
    events = server.receive_data(server.encode(Resume(resume_token=b"t", last_received_server_position=0,
                                                      first_available_client_position=0)))
    assert isinstance(events[0], SetupRejected) and events[0].error_code == REJECTED_RESUME
    server = Endpoint(Side.SERVER)
    events = server.receive_data(server.encode(replace(default_setup("rsocket-1.0"), resume_token=b"t")))
    assert isinstance(events[0], SetupRejected) and events[0].error_code == REJECTED_SETUP


def test_received_fragments_are_joined_by_the_judges_reassembler_alone() -> None:
    # One reassembler per direction: the endpoint reads the judge's (judge_each), and keeps none of its own.
    client, server, _ = pair()
    sid = client.new_stream_id()
    client.send(RequestStream(stream_id=sid, initial_request_n=5, data=b"tck/infinite"))
    server.receive_data(client.data_to_send())
    whole = Payload(stream_id=sid, next=True, metadata=b"m" * 40, data=b"d" * 300)
    server.send(whole, fragment_size=64)
    wire = server.data_to_send()
    assert len(get_profile("rsocket-1.0").decoder().feed(wire)) > 2
    assert not any(isinstance(value, Reassembler) for value in vars(client).values())
    events = client.receive_data(wire[:-1])
    assert events == [] and client._judge.reassembly[Side.SERVER].held > 0
    assert client.receive_data(wire[-1:]) == [whole]
    assert client._judge.reassembly[Side.SERVER].held == 0


def test_a_broken_fragment_chain_closes_the_connection_with_the_judges_finding() -> None:
    client, server, _ = pair()
    sid = client.new_stream_id()
    client.send(RequestStream(stream_id=sid, initial_request_n=5, data=b"tck/infinite"))
    server.receive_data(client.data_to_send())
    # A follows-flagged PAYLOAD, then a request on the same connection before the chain's last fragment.
    server.send(Payload(stream_id=sid, next=True, follows=True, data=b"part"), check=False)
    server.send(Payload(stream_id=sid, next=True, complete=True, metadata=b"late metadata", data=b"x"), check=False)
    wire = server.data_to_send()
    decoded = get_profile("rsocket-1.0").decoder().feed(wire)
    _, wholes = RSocketJudge().judge_each(Side.SERVER, decoded, 0.0, 0, lambda *found: None)
    assert wholes[0] is None and isinstance(wholes[1], ProtocolViolation)
    events = client.receive_data(wire)
    assert [type(e) for e in events] == [ProtocolError] and client.error is not None
    assert client.error.rule == wholes[1].rule and client.error.side is Side.SERVER
