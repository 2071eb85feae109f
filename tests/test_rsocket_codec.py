"""RSocket codecs, both profiles: round trips of every frame type, any chunking, malformed input, ignorable frames."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rsio_tck.bindings.rsocket import Decoded, get_profile
from rsio_tck.bindings.rsocket.frames import (
    APPLICATION_ERROR,
    CONNECTION_ERROR,
    DRAFT_REJECTED_SETUP,
    FRAME_TYPES,
    INVALID,
    REJECTED_SETUP,
    Cancel,
    Error,
    Ext,
    Keepalive,
    Lease,
    MetadataPush,
    Payload,
    RequestChannel,
    RequestFnf,
    RequestN,
    RequestResponse,
    RequestStream,
    RequestSubscription,
    Resume,
    ResumeOk,
    Setup,
    SetupError,
    describe,
)
from rsio_tck.errors import ProtocolViolation

V1, DRAFT = "rsocket-1.0", "reactivesocket-draft"
SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
MIME = {"metadata_mime": b"application/octet-stream", "data_mime": b"text/plain"}

ROUNDTRIP_V1: list[Decoded] = [
    Setup(keepalive_interval=30_000, max_lifetime=90_000, **MIME),
    Setup(
        ignore=True,
        major_version=1,
        minor_version=2,
        keepalive_interval=2**31 - 1,
        max_lifetime=1,
        resume_token=b"tok\x00en",
        lease=True,
        metadata_mime=b"",
        data_mime=b"x" * 255,
        metadata=b"",
        data=b"setup data",
    ),
    Setup(keepalive_interval=1, max_lifetime=1, resume_token=b"", metadata=b"md", **MIME),
    Lease(ttl=1000, number_of_requests=5),
    Lease(ttl=2**31 - 1, number_of_requests=0, metadata=b"lease md"),
    Keepalive(respond=True),
    Keepalive(respond=False, last_received_position=2**63 - 1, data=b"ping"),
    RequestResponse(stream_id=1, data=b"tck/range?count=1"),
    RequestResponse(stream_id=3, follows=True, metadata=b"m" * 300, data=b""),
    RequestFnf(stream_id=5, data=b"tck/fnf?key=a"),
    RequestFnf(stream_id=7, ignore=True, follows=True, metadata=b"", data=b"d"),
    RequestStream(stream_id=9, initial_request_n=3, data=b"tck/range?count=10"),
    RequestStream(stream_id=2**31 - 1, follows=True, initial_request_n=2**31 - 1, metadata=b"meta", data=b"x"),
    RequestStream(stream_id=11, initial_request_n=0),  # illegal N, still a frame the wire carries
    RequestChannel(stream_id=13, initial_request_n=1, data=b"tck/echo"),
    RequestChannel(stream_id=15, follows=True, complete=True, initial_request_n=7, metadata=b"m", data=b"d"),
    RequestN(stream_id=1, request_n=2**31 - 1),
    RequestN(stream_id=1, request_n=0),
    Cancel(stream_id=1),
    Cancel(stream_id=0, ignore=True),
    Payload(stream_id=1, next=True, data=b"1"),
    Payload(stream_id=1, next=True, data=b""),  # a zero-length element
    Payload(stream_id=1, complete=True),
    Payload(stream_id=1, next=True, complete=True, metadata=b"m", data=b"last"),
    Payload(stream_id=2, follows=True, next=True, metadata=b"\x00" * 5, data=b"frag"),
    Payload(stream_id=4),  # neither N nor C: illegal, still carried
    Error(stream_id=1, error_code=APPLICATION_ERROR, data="boom ✓".encode()),
    Error(stream_id=0, error_code=REJECTED_SETUP),
    Error(stream_id=3, error_code=0xFFFFFFFF, data=b"\xff\xfe"),
    MetadataPush(metadata=b"routing"),
    MetadataPush(metadata=b""),
    Resume(
        resume_token=b"token",
        last_received_server_position=42,
        first_available_client_position=2**63 - 1,
    ),
    Resume(major_version=2, minor_version=3, resume_token=b"", last_received_server_position=0,
           first_available_client_position=0),
    ResumeOk(last_received_client_position=7),
    Ext(stream_id=1, ignore=True, extended_type=1, body=b"\x01\x02"),
    Ext(stream_id=0, has_metadata=True, extended_type=2**31 - 1),
]

ROUNDTRIP_DRAFT: list[Decoded] = [
    Setup(major_version=0, keepalive_interval=500_000_000, max_lifetime=2**32 - 1, **MIME),
    Setup(
        major_version=0,
        keepalive_interval=0,
        max_lifetime=0,
        lease=True,
        strict=True,
        metadata_mime=b"application/x.reactivesocket+cbor",
        data_mime=b"",
        metadata=b"setup md",
        data=b"setup data",
    ),
    SetupError(error_code=DRAFT_REJECTED_SETUP, data=b"no"),
    SetupError(error_code=0xFFFF, metadata=b"m"),
    Lease(ttl=2**64 - 1, number_of_requests=2**40),
    Lease(ttl=1, number_of_requests=0, metadata=b""),
    Keepalive(),
    Keepalive(data=b"echo me"),
    RequestResponse(stream_id=1, data=b"tck/range?count=1"),
    RequestResponse(stream_id=2**64 - 1, ignore=True, metadata=b"m", data=b"d"),
    RequestFnf(stream_id=3, data=b"tck/fnf?key=k"),
    RequestStream(stream_id=5, initial_request_n=2**63, metadata=b"", data=b"tck/infinite"),
    RequestSubscription(stream_id=7, initial_request_n=3, data=b"tck/infinite"),
    RequestN(stream_id=5, request_n=2**64 - 1),
    RequestN(stream_id=5, request_n=1, metadata=b"why"),
    Cancel(stream_id=5),
    Cancel(stream_id=5, metadata=b"bye"),
    Payload(stream_id=1, next=True, data=b"1"),
    Payload(stream_id=1, next=True, data=b""),
    Payload(stream_id=1, next=True, metadata=b"", data=b""),
    Payload(stream_id=1, complete=True),
    Payload(stream_id=1, next=True, complete=True, data=b"last"),
    Payload(stream_id=1, follows=True, next=True, metadata=b"mm", data=b"part"),
    Error(stream_id=1, error_code=APPLICATION_ERROR, data=b"boom"),
    Error(stream_id=0, error_code=CONNECTION_ERROR, metadata=b"m", data=b"bad"),
    MetadataPush(metadata=b"routing"),
    MetadataPush(stream_id=9, metadata=b""),
    Ext(stream_id=0, ignore=True, extended_type=0xFFFFFFFF, body=b"ext"),
]

PROFILE_FRAMES = {V1: ROUNDTRIP_V1, DRAFT: ROUNDTRIP_DRAFT}


def decode_all(profile: str, data: bytes, chunks: list[int] | None = None, **kw: object) -> list[Decoded]:
    decoder = get_profile(profile).decoder(**kw)  # type: ignore[arg-type]
    out: list[Decoded] = []
    pos = 0
    for size in chunks or []:
        out += decoder.feed(data[pos : pos + size])
        pos += size
    out += decoder.feed(data[pos:])
    decoder.eof()
    return out


def test_every_frame_type_of_protocol_md_is_in_the_v1_table() -> None:
    assert {type(f) for f in ROUNDTRIP_V1} == set(FRAME_TYPES)


def test_every_draft_frame_type_is_in_the_draft_table() -> None:
    assert {type(f) for f in ROUNDTRIP_DRAFT} == set(get_profile(DRAFT).writers)
    assert len(get_profile(DRAFT).readers) == 14  # seed 001's type table, RESERVED aside


@pytest.mark.parametrize("length_prefix", [True, False], ids=["tcp", "websocket"])
@pytest.mark.parametrize(
    ("profile", "frame"),
    [(p, f) for p, frames in PROFILE_FRAMES.items() for f in frames],
    ids=lambda x: describe(x)[:60] if not isinstance(x, str) else x,
)
def test_round_trip(profile: str, frame: Decoded, length_prefix: bool) -> None:
    codec = get_profile(profile)
    raw = codec.encoder(length_prefix=length_prefix).encode(frame)
    decoder = codec.decoder(length_prefix=length_prefix)
    assert decoder.feed(raw) == [frame]
    assert decoder.offset == len(raw)
    decoder.eof()


@pytest.mark.parametrize("profile", [V1, DRAFT])
def test_whole_table_as_one_stream_and_byte_by_byte(profile: str) -> None:
    frames = PROFILE_FRAMES[profile]
    encoder = get_profile(profile).encoder()
    stream = b"".join(encoder.encode(f) for f in frames)
    assert decode_all(profile, stream) == frames
    assert decode_all(profile, stream, [1] * len(stream)) == frames


@SETTINGS
@given(data=st.data(), profile=st.sampled_from([V1, DRAFT]))
def test_any_chunking_gives_the_same_frames(data: st.DataObject, profile: str) -> None:
    frames = data.draw(st.lists(st.sampled_from(PROFILE_FRAMES[profile]), min_size=1, max_size=12))
    encoder = get_profile(profile).encoder()
    stream = b"".join(encoder.encode(f) for f in frames)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=20)))
    chunks = [b - a for a, b in zip([0, *cuts], cuts, strict=False)]
    assert decode_all(profile, stream, chunks) == frames


blobs = st.binary(max_size=64)
opt_blobs = st.none() | blobs


@st.composite
def v1_payloads(draw: st.DrawFn) -> Payload:
    return Payload(
        stream_id=draw(st.integers(0, 2**31 - 1)),
        ignore=draw(st.booleans()),
        follows=draw(st.booleans()),
        complete=draw(st.booleans()),
        next=draw(st.booleans()),
        metadata=draw(opt_blobs),
        data=draw(blobs),
    )


@SETTINGS
@given(frames=st.lists(v1_payloads() | st.builds(RequestStream, stream_id=st.integers(0, 2**31 - 1),
       initial_request_n=st.integers(0, 2**31 - 1), follows=st.booleans(), metadata=opt_blobs, data=blobs),
       min_size=1, max_size=8), cuts=st.lists(st.integers(0, 2000), max_size=10))
def test_generated_frames_round_trip_under_any_chunking(frames: list[Decoded], cuts: list[int]) -> None:
    encoder = get_profile(V1).encoder()
    stream = b"".join(encoder.encode(f) for f in frames)
    points = sorted(min(c, len(stream)) for c in cuts)
    chunks = [b - a for a, b in zip([0, *points], points, strict=False)]
    assert decode_all(V1, stream, chunks) == frames


# -- what a profile cannot carry -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("profile", "frame"),
    [
        (V1, SetupError(error_code=1)),
        (V1, RequestSubscription(stream_id=1, initial_request_n=1)),
        (V1, RequestN(stream_id=1, request_n=1, metadata=b"m")),
        (V1, Setup(strict=True, keepalive_interval=1, max_lifetime=1, **MIME)),
        (V1, RequestStream(stream_id=1, initial_request_n=2**32)),
        (V1, MetadataPush(metadata=b"x" * 2**24)),
        (DRAFT, RequestChannel(stream_id=1, initial_request_n=1)),
        (DRAFT, Resume(resume_token=b"", last_received_server_position=0, first_available_client_position=0)),
        (DRAFT, ResumeOk(last_received_client_position=0)),
        (DRAFT, Setup(keepalive_interval=1, max_lifetime=1, **MIME)),  # version 1.0
        (DRAFT, Keepalive(respond=True)),
        (DRAFT, RequestResponse(stream_id=1, follows=True)),
        (DRAFT, Error(stream_id=1, error_code=INVALID)),
        (DRAFT, Payload(stream_id=1, next=True, complete=True)),  # empty NEXT+COMPLETE reads as COMPLETE
        (DRAFT, Payload(stream_id=1)),
    ],
    ids=lambda x: describe(x) if not isinstance(x, str) else x,
)
def test_frames_a_profile_cannot_carry_raise_value_error(profile: str, frame: Decoded) -> None:
    with pytest.raises(ValueError, match=frame.wire_name):
        get_profile(profile).encoder().encode(frame)


def test_encoder_writes_reserved_bits_for_faults() -> None:
    raw = get_profile(V1).encoder().encode(RequestN(stream_id=2**31 + 1, request_n=1))
    with pytest.raises(ProtocolViolation) as caught:
        get_profile(V1).decoder().feed(raw)
    assert caught.value.rule == "RS-FRAME-3"


def test_unknown_profile_names_the_choices() -> None:
    with pytest.raises(ValueError, match="rsocket-1.0, reactivesocket-draft"):
        get_profile("rsocket-2")


@SETTINGS
@given(
    kind=st.sampled_from([0x03, 0x08, 0x0A]) | st.integers(0, 63),
    flags=st.integers(0, 0x3FF),
    stream_id=st.integers(0, 2**32 - 1),
    body=st.binary(max_size=12),
)
def test_fast_path_agrees_with_the_general_decoder(kind: int, flags: int, stream_id: int, body: bytes) -> None:
    # Any frame the fast path takes decodes to the same frame the readers make; the rest it leaves alone.
    profile = get_profile(V1)
    raw = stream_id.to_bytes(4, "big") + ((kind << 10) | flags).to_bytes(2, "big") + body
    fast = profile.fast_decode(bytearray(raw), 0, len(raw))
    if fast is not None:
        assert fast == profile.decode_frame(raw)
        assert hash(fast) == hash(profile.decode_frame(raw))


@SETTINGS
@given(
    head=st.sampled_from([b"\x00\x00\x00\x20", b"\x00\x00\x00\x15", b"\x00\x00\x00\x04"]) | st.binary(min_size=4, max_size=4),
    flags=st.integers(0, 0xFF),
    stream_id=st.integers(0, 2**64 - 1),
    body=st.sampled_from([b"", bytes(8), b"\x00\x00\x00\x00\x00\x00\x00\x07"]) | st.binary(max_size=12),
)
def test_draft_fast_path_agrees_with_the_general_decoder(head: bytes, flags: int, stream_id: int, body: bytes) -> None:
    profile = get_profile(DRAFT)
    raw = head[:1] + bytes((flags,)) + head[2:] + stream_id.to_bytes(8, "big") + body
    fast = profile.fast_decode(bytearray(raw), 0, len(raw))
    if fast is not None:
        assert fast == profile.decode_frame(raw)
    elif head in (b"\x00\x00\x00\x20", b"\x00\x00\x00\x15", b"\x00\x00\x00\x04") and not flags & 0xC0:
        assert head[3] == 0x15 and len(body) != 8  # only a REQUEST_N of the wrong size goes the general way


def test_fast_path_takes_the_hot_frames() -> None:
    profile = get_profile(V1)
    for frame in (Payload(stream_id=1, next=True, data=b"7"), RequestN(stream_id=1, request_n=5),
                  Keepalive(respond=True, last_received_position=2**63 - 1, data=b"ping")):
        raw = profile.encode_frame(frame)
        assert profile.fast_decode(bytearray(raw), 0, len(raw)) == frame
    draft = get_profile(DRAFT)
    raw = draft.encode_frame(Keepalive(data=b"ping"))
    assert draft.fast_decode(bytearray(raw), 0, len(raw)) == Keepalive(data=b"ping")


def test_describe_names_the_frame_and_leaves_defaults_out() -> None:
    assert describe(Payload(stream_id=1, next=True, data=b"hi")) == "PAYLOAD(stream_id=1, next=True, data=6869)"
    assert describe(Error(stream_id=3, error_code=APPLICATION_ERROR)) == "ERROR(stream_id=3, error_code=APPLICATION_ERROR)"
    assert describe(Payload(stream_id=1, next=True, data=b"x" * 20), max_bytes=2) == (
        "PAYLOAD(stream_id=1, next=True, data=7878...(20 bytes))"
    )


# -- generated frames of every type, within what each profile's wire can carry ---------------------

U31, U32, U63, U64 = st.integers(0, 2**31 - 1), st.integers(0, 2**32 - 1), st.integers(0, 2**63 - 1), st.integers(0, 2**64 - 1)
short = st.binary(max_size=24)
maybe = st.none() | short
mime = st.binary(max_size=40)


def v1_frames() -> st.SearchStrategy[Decoded]:
    sid, n = U31, U31
    return st.one_of(
        st.builds(Setup, ignore=st.booleans(), major_version=st.integers(0, 65535), minor_version=st.integers(0, 65535),
                  keepalive_interval=U31, max_lifetime=U31, resume_token=maybe, lease=st.booleans(),
                  metadata_mime=mime, data_mime=mime, metadata=maybe, data=short),
        st.builds(Lease, ignore=st.booleans(), ttl=U31, number_of_requests=U31, metadata=maybe),
        st.builds(Keepalive, respond=st.booleans(), last_received_position=U63, data=short),
        st.builds(RequestResponse, stream_id=sid, follows=st.booleans(), metadata=maybe, data=short),
        st.builds(RequestFnf, stream_id=sid, follows=st.booleans(), metadata=maybe, data=short),
        st.builds(RequestStream, stream_id=sid, follows=st.booleans(), initial_request_n=n, metadata=maybe, data=short),
        st.builds(RequestChannel, stream_id=sid, follows=st.booleans(), complete=st.booleans(), initial_request_n=n,
                  metadata=maybe, data=short),
        st.builds(RequestN, stream_id=sid, ignore=st.booleans(), request_n=n),
        st.builds(Cancel, stream_id=sid),
        st.builds(Payload, stream_id=sid, follows=st.booleans(), complete=st.booleans(), next=st.booleans(),
                  metadata=maybe, data=short),
        st.builds(Error, stream_id=sid, error_code=U32, data=short),
        st.builds(MetadataPush, stream_id=sid, metadata=short),
        st.builds(Resume, major_version=st.integers(0, 65535), minor_version=st.integers(0, 65535), resume_token=short,
                  last_received_server_position=U63, first_available_client_position=U63),
        st.builds(ResumeOk, last_received_client_position=U63),
        st.builds(Ext, stream_id=sid, ignore=st.booleans(), has_metadata=st.booleans(), extended_type=U31, body=short),
    )


@st.composite
def draft_payloads(draw: st.DrawFn) -> Payload:
    if draw(st.booleans()):
        return Payload(stream_id=draw(U64), complete=True)
    metadata, data = draw(maybe), draw(short)
    complete = draw(st.booleans()) and (metadata is not None or bool(data))
    return Payload(stream_id=draw(U64), follows=draw(st.booleans()), complete=complete, next=True,
                   metadata=metadata, data=data)


@st.composite
def draft_errors(draw: st.DrawFn) -> Error:
    sid = draw(st.just(0) | U64)
    return Error(stream_id=sid, error_code=CONNECTION_ERROR if sid == 0 else APPLICATION_ERROR, metadata=draw(maybe),
                 data=draw(short))


def draft_frames() -> st.SearchStrategy[Decoded]:
    sid = U64
    return st.one_of(
        st.builds(Setup, major_version=st.just(0), keepalive_interval=U32, max_lifetime=U32, lease=st.booleans(),
                  strict=st.booleans(), metadata_mime=mime, data_mime=mime, metadata=maybe, data=short),
        st.builds(SetupError, error_code=U32, metadata=maybe, data=short),
        st.builds(Lease, ttl=U64, number_of_requests=U64, metadata=maybe),
        st.builds(Keepalive, data=short),
        st.builds(RequestResponse, stream_id=sid, ignore=st.booleans(), metadata=maybe, data=short),
        st.builds(RequestFnf, stream_id=sid, metadata=maybe, data=short),
        st.builds(RequestStream, stream_id=sid, initial_request_n=U64, metadata=maybe, data=short),
        st.builds(RequestSubscription, stream_id=sid, initial_request_n=U64, metadata=maybe, data=short),
        st.builds(RequestN, stream_id=sid, request_n=U64, metadata=maybe),
        st.builds(Cancel, stream_id=sid, metadata=maybe),
        draft_payloads(),
        draft_errors(),
        st.builds(MetadataPush, stream_id=sid, metadata=short),
        st.builds(Ext, stream_id=sid, ignore=st.booleans(), has_metadata=st.booleans(), extended_type=U32, body=short),
    )


GENERATED = {V1: v1_frames(), DRAFT: draft_frames()}


@SETTINGS
@given(data=st.data(), profile=st.sampled_from([V1, DRAFT]))
def test_generated_frames_of_every_type_round_trip(data: st.DataObject, profile: str) -> None:
    frames = data.draw(st.lists(GENERATED[profile], min_size=1, max_size=6))
    cuts = data.draw(st.lists(st.integers(0, 600), max_size=6))
    codec = get_profile(profile)
    stream = b"".join(codec.encoder().encode(f) for f in frames)
    points = sorted(min(c, len(stream)) for c in cuts)
    assert decode_all(profile, stream, [b - a for a, b in zip([0, *points], points, strict=False)]) == frames
    assert [codec.decoder(length_prefix=False).feed(codec.encode_frame(f))[0] for f in frames] == frames
