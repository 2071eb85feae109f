"""RSocket fragmentation: reassembly per stream, the spec's rules, the size bound, and fragment() as its inverse."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rsio_tck.bindings.rsocket import RSocketLimits, get_profile
from rsio_tck.bindings.rsocket.fragments import CHAIN_COST, Reassembler, fragment
from rsio_tck.bindings.rsocket.frames import (
    APPLICATION_ERROR,
    Cancel,
    Decoded,
    Error,
    Keepalive,
    Payload,
    RequestChannel,
    RequestFnf,
    RequestN,
    RequestResponse,
    RequestStream,
)
from rsio_tck.errors import ProtocolViolation

SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def push_all(frames: list[Decoded], reassembler: Reassembler | None = None) -> list[Decoded]:
    reassembler = reassembler or Reassembler()
    out = []
    for frame in frames:
        whole = reassembler.push(frame)
        if whole is not None:
            out.append(whole)
    return out


def test_the_spec_example_three_payload_fragments() -> None:
    # Protocol.md's example, scaled down: 20 units of metadata and 25 of data in frames of at most 16.
    meta, data = bytes(range(20)), bytes(range(100, 125))
    frames = [
        Payload(stream_id=1, follows=True, next=True, metadata=meta[:16], data=b""),
        Payload(stream_id=1, follows=True, next=True, metadata=meta[16:], data=data[:12]),
        Payload(stream_id=1, next=True, data=data[12:]),
    ]
    assert push_all(frames) == [Payload(stream_id=1, next=True, metadata=meta, data=data)]


def test_request_chain_continues_with_payloads_and_keeps_the_request_fields() -> None:
    frames: list[Decoded] = [
        RequestStream(stream_id=3, follows=True, initial_request_n=5, metadata=b"route", data=b""),
        Payload(stream_id=3, follows=True, next=True, data=b"tck/ran"),
        Payload(stream_id=3, next=True, data=b"ge?count=3"),
    ]
    assert push_all(frames) == [
        RequestStream(stream_id=3, initial_request_n=5, metadata=b"route", data=b"tck/range?count=3")
    ]


def test_channel_completion_on_the_last_fragment_carries_over() -> None:
    frames: list[Decoded] = [
        RequestChannel(stream_id=5, follows=True, initial_request_n=1, data=b"tck/"),
        Payload(stream_id=5, complete=True, next=True, data=b"echo"),
    ]
    assert push_all(frames) == [RequestChannel(stream_id=5, complete=True, initial_request_n=1, data=b"tck/echo")]


def test_chains_on_different_streams_interleave_and_other_frames_pass_through() -> None:
    frames: list[Decoded] = [
        Payload(stream_id=1, follows=True, next=True, data=b"a1"),
        Payload(stream_id=3, follows=True, next=True, data=b"b1"),
        Keepalive(respond=True),
        RequestN(stream_id=1, request_n=2),
        Payload(stream_id=3, next=True, data=b"b2"),
        Payload(stream_id=1, next=True, data=b"a2"),
    ]
    assert push_all(frames) == [
        Keepalive(respond=True),
        RequestN(stream_id=1, request_n=2),
        Payload(stream_id=3, next=True, data=b"b1b2"),
        Payload(stream_id=1, next=True, data=b"a1a2"),
    ]


def test_follows_with_complete_ends_the_chain() -> None:
    # Handling the Unexpected: a PAYLOAD with both F and C implicitly ignores F.
    frames: list[Decoded] = [
        Payload(stream_id=1, follows=True, next=True, data=b"x"),
        Payload(stream_id=1, follows=True, complete=True, next=True, data=b"y"),
        Payload(stream_id=7, follows=True, complete=True),
    ]
    reassembler = Reassembler()
    assert push_all(frames, reassembler) == [
        Payload(stream_id=1, complete=True, next=True, data=b"xy"),
        Payload(stream_id=7, complete=True),
    ]
    assert reassembler.in_progress() == frozenset()
    assert reassembler.held == 0


def test_unfragmented_frames_come_back_as_they_are() -> None:
    frames: list[Decoded] = [
        RequestResponse(stream_id=1, data=b"q"),
        RequestFnf(stream_id=3, metadata=b"", data=b""),
        Payload(stream_id=1, next=True, complete=True, data=b"r"),
    ]
    assert push_all(frames) == frames


@pytest.mark.parametrize("ender", [Cancel(stream_id=1), Error(stream_id=1, error_code=APPLICATION_ERROR)])
def test_cancel_or_error_abandons_a_chain(ender: Decoded) -> None:
    reassembler = Reassembler()
    assert reassembler.push(RequestResponse(stream_id=1, follows=True, data=b"half")) is None
    assert reassembler.in_progress() == {1}
    assert reassembler.push(ender) == ender
    assert reassembler.in_progress() == frozenset()
    assert reassembler.held == 0
    # The stream id starts afresh: a new, whole request is not glued to the abandoned one.
    assert reassembler.push(Payload(stream_id=1, next=True, data=b"new")) == Payload(stream_id=1, next=True, data=b"new")


def test_a_request_in_the_middle_of_a_chain_breaks_frag_1() -> None:
    reassembler = Reassembler()
    reassembler.push(RequestStream(stream_id=1, follows=True, initial_request_n=1, data=b"a"))
    with pytest.raises(ProtocolViolation) as caught:
        reassembler.push(RequestStream(stream_id=1, initial_request_n=1, data=b"b"))
    assert caught.value.rule == "RS-FRAG-1"
    assert "REQUEST_STREAM on stream 1" in str(caught.value)


def test_metadata_after_data_breaks_frag_2() -> None:
    reassembler = Reassembler()
    reassembler.push(Payload(stream_id=1, follows=True, next=True, metadata=b"m", data=b"d"))
    with pytest.raises(ProtocolViolation) as caught:
        reassembler.push(Payload(stream_id=1, next=True, metadata=b"late", data=b""))
    assert caught.value.rule == "RS-FRAG-2"


def test_empty_metadata_flag_after_data_is_not_metadata() -> None:
    frames: list[Decoded] = [
        Payload(stream_id=1, follows=True, next=True, data=b"d"),
        Payload(stream_id=1, next=True, metadata=b"", data=b"e"),
    ]
    assert push_all(frames) == [Payload(stream_id=1, next=True, metadata=b"", data=b"de")]


def test_reassembly_is_bounded() -> None:
    limit = CHAIN_COST + 100
    reassembler = Reassembler(RSocketLimits(max_reassembly=limit))
    reassembler.push(Payload(stream_id=1, follows=True, next=True, data=b"x" * 60))
    reassembler.push(Payload(stream_id=1, follows=True, next=True, data=b"x" * 40))
    assert reassembler.held == limit
    with pytest.raises(ProtocolViolation) as caught:
        reassembler.push(Payload(stream_id=1, follows=True, next=True, data=b"x"))
    assert caught.value.rule == "RS-LIMIT-1"


def test_many_empty_chains_are_bounded_too() -> None:
    reassembler = Reassembler(RSocketLimits(max_reassembly=CHAIN_COST * 10))
    with pytest.raises(ProtocolViolation) as caught:
        for stream_id in range(1, 100, 2):
            reassembler.push(Payload(stream_id=stream_id, follows=True, next=True))
    assert caught.value.rule == "RS-LIMIT-1"
    assert len(reassembler.in_progress()) == 11


# -- fragment() and reassembly are inverses ----------------------------------------------------

blobs = st.binary(max_size=200)


@st.composite
def whole_frames(draw: st.DrawFn) -> RequestResponse | RequestFnf | RequestStream | RequestChannel | Payload:
    stream_id = draw(st.integers(1, 2**31 - 1))
    metadata = draw(st.none() | blobs)
    data = draw(blobs)
    kind = draw(st.sampled_from(["rr", "fnf", "stream", "channel", "payload"]))
    if kind == "rr":
        return RequestResponse(stream_id=stream_id, metadata=metadata, data=data)
    if kind == "fnf":
        return RequestFnf(stream_id=stream_id, metadata=metadata, data=data)
    if kind == "stream":
        return RequestStream(stream_id=stream_id, initial_request_n=draw(st.integers(1, 9)), metadata=metadata, data=data)
    if kind == "channel":
        return RequestChannel(
            stream_id=stream_id, complete=draw(st.booleans()), initial_request_n=1, metadata=metadata, data=data
        )
    return Payload(stream_id=stream_id, next=True, complete=draw(st.booleans()), metadata=metadata, data=data)


@SETTINGS
@given(frame=whole_frames(), mtu=st.integers(1, 64))
def test_fragment_then_reassemble_is_the_identity(
    frame: RequestResponse | RequestFnf | RequestStream | RequestChannel | Payload, mtu: int
) -> None:
    pieces = fragment(frame, mtu)
    assert all(len(p.metadata or b"") + len(p.data) <= mtu for p in pieces)
    assert all(p.follows for p in pieces[:-1]) and not pieces[-1].follows
    assert all(isinstance(p, Payload) for p in pieces[1:])
    # Metadata strictly before data, across the fragments.
    seen_data = False
    for piece in pieces:
        assert not (seen_data and piece.metadata)
        seen_data = seen_data or bool(piece.data)
    assert push_all(list(pieces)) == [frame]


@SETTINGS
@given(frame=whole_frames(), mtu=st.integers(1, 64), cuts=st.lists(st.integers(0, 3000), max_size=8))
def test_fragments_survive_the_wire_and_any_chunking(
    frame: RequestResponse | RequestFnf | RequestStream | RequestChannel | Payload, mtu: int, cuts: list[int]
) -> None:
    codec = get_profile("rsocket-1.0")
    encoder = codec.encoder()
    stream = b"".join(encoder.encode(piece) for piece in fragment(frame, mtu))
    decoder = codec.decoder()
    reassembler = Reassembler()
    out = []
    pos = 0
    for cut in sorted(min(c, len(stream)) for c in cuts) + [len(stream)]:
        for decoded in decoder.feed(stream[pos:cut]):
            whole = reassembler.push(decoded)
            if whole is not None:
                out.append(whole)
        pos = cut
    assert out == [frame]


def test_fragment_rejects_a_zero_mtu() -> None:
    with pytest.raises(ValueError, match="max_payload"):
        fragment(Payload(stream_id=1, next=True, data=b"x"), 0)
