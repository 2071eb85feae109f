"""RSocket codecs, both profiles: round trips of every frame type, any chunking, malformed input, ignorable frames."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rsio_tck.bindings.rsocket import Decoded, IgnoredFrame, RSocketLimits, get_profile
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
from rsio_tck.bindings.rsocket.rules import RULES
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


# -- malformed input -------------------------------------------------------------------------

# (profile, hex of the stream, rule); eof marks input that is only wrong once the transport ends.
MALFORMED: list[tuple[str, str, str, bool]] = [
    # 1.0: frame shorter than its header (length prefix 0..5)
    (V1, "000000", "RS-FRAME-1", False),
    (V1, "000005 00000001 28", "RS-FRAME-1", False),
    # 1.0: length over the configured maximum (64 here) fails on the prefix alone
    (V1, "000041", "RS-FRAME-2", False),
    (V1, "ffffff", "RS-FRAME-2", False),
    # 1.0: reserved bits
    (V1, "000006 80000001 2400", "RS-FRAME-3", False),  # stream id high bit (CANCEL)
    (V1, "LEN 00000001 2000 80000001", "RS-FRAME-3", False),  # REQUEST_N high bit
    (V1, "LEN 00000000 0c00 8000000000000000", "RS-FRAME-3", False),  # KEEPALIVE position
    # 1.0: unknown / reserved type without the I flag
    (V1, "000006 00000000 0000", "RS-FRAME-4", False),  # type 0x00 RESERVED
    (V1, "000006 00000001 3c00", "RS-FRAME-4", False),  # type 0x0F
    (V1, "000006 00000001 f800", "RS-FRAME-4", False),  # type 0x3E
    # 1.0: metadata length past the end (no I flag)
    (V1, "LEN 00000001 2920 000010 6869 6a", "RS-FRAME-5", False),
    (V1, "LEN 00000001 2920 00", "RS-FRAME-5", False),  # metadata length cut
    (V1, "LEN 00000000 0400 0001 0000 00000001 00000001 05 61", "RS-FRAME-5", False),  # MIME past end
    (V1, "LEN 00000000 0480 0001 0000 00000001 00000001 ffff", "RS-FRAME-5", False),  # token past end
    # 1.0: fixed fields cut short
    (V1, "LEN 00000001 2000 0000", "RS-FRAME-6", False),  # REQUEST_N
    (V1, "LEN 00000001 1800 0000", "RS-FRAME-6", False),  # REQUEST_STREAM
    (V1, "LEN 00000001 2c00 000002", "RS-FRAME-6", False),  # ERROR code
    (V1, "LEN 00000000 3800 00000000", "RS-FRAME-6", False),  # RESUME_OK
    # 1.0: trailing bytes after a frame with no data area
    (V1, "LEN 00000001 2400 00", "RS-FRAME-7", False),  # CANCEL
    (V1, "LEN 00000001 2000 00000001 ff", "RS-FRAME-7", False),  # REQUEST_N
    (V1, "LEN 00000000 0800 00000001 00000001 00", "RS-FRAME-7", False),  # LEASE without M
    # truncated at the end of the transport
    (V1, "00000a 00000001 28", "RS-FRAME-8", True),
    (V1, "0000", "RS-FRAME-8", True),
    (V1, "000010", "RS-FRAME-8", True),
    # 1.0: METADATA_PUSH without M
    (V1, "LEN 00000000 3000 6d64", "RS-FRAME-9", False),
    # draft: length shorter than 16, reserved R bit, over the limit
    (DRAFT, "0000000f 00 00 0016 0000000000000001", "RS-FRAME-1", False),
    (DRAFT, "00000000", "RS-FRAME-1", False),
    (DRAFT, "80000010 00 00 0016 0000000000000001", "RS-FRAME-3", False),
    (DRAFT, "7fffffff", "RS-FRAME-2", False),
    (DRAFT, "00000045", "RS-FRAME-2", False),  # 69 bytes: a frame of 65 after the prefix
    # draft: version not 0
    (DRAFT, "00000010 01 00 0016 0000000000000001", "RS-DRAFT-1", False),
    # draft: unknown type without I
    (DRAFT, "00000010 00 00 0000 0000000000000001", "RS-FRAME-4", False),
    (DRAFT, "00000010 00 00 000a 0000000000000001", "RS-FRAME-4", False),
    (DRAFT, "00000010 00 00 0017 0000000000000001", "RS-FRAME-4", False),
    # draft: fixed fields cut short / trailing bytes
    (DRAFT, "LEN 00 00 0015 0000000000000001 00000001", "RS-FRAME-6", False),
    (DRAFT, "LEN 00 00 0016 0000000000000001 00", "RS-FRAME-7", False),
    (DRAFT, "LEN 00 00 0031 0000000000000000", "RS-FRAME-9", False),
    (DRAFT, "00000010 00 00 00", "RS-FRAME-8", True),
]


def _stream(hexes: str, profile: str = V1) -> bytes:
    """The bytes of ``hexes``; a leading ``LEN`` becomes the profile's length prefix for the rest."""
    if not hexes.startswith("LEN"):
        return bytes.fromhex(hexes.replace(" ", ""))
    body = bytes.fromhex(hexes[3:].replace(" ", ""))
    return get_profile(profile).build_prefix(len(body)) + body


@pytest.mark.parametrize(("profile", "hexes", "rule", "eof"), MALFORMED, ids=[f"{c[0]}:{c[1]}" for c in MALFORMED])
def test_malformed_input_names_the_rule(profile: str, hexes: str, rule: str, eof: bool) -> None:
    assert rule in RULES
    data = _stream(hexes, profile)
    limits = RSocketLimits(max_frame=64)
    for chunking in ([len(data)], [1] * len(data)):
        decoder = get_profile(profile).decoder(limits)
        with pytest.raises(ProtocolViolation) as caught:
            for size, start in zip(chunking, range(0, len(data), max(chunking[0], 1)), strict=False):
                decoder.feed(data[start : start + size])
            if eof:
                decoder.eof()
            else:
                pytest.fail("the feed did not raise")
        assert caught.value.rule == rule, str(caught.value)
        assert caught.value.offset == 0
        assert rule in str(caught.value)
        # A dead decoder keeps raising the same violation.
        with pytest.raises(ProtocolViolation) as again:
            decoder.feed(b"\x00")
        assert again.value.rule == rule


def test_violation_keeps_the_frames_before_it_and_its_offset() -> None:
    encoder = get_profile(V1).encoder()
    good = encoder.encode(Cancel(stream_id=1)) + encoder.encode(RequestN(stream_id=1, request_n=1))
    decoder = get_profile(V1).decoder()
    with pytest.raises(ProtocolViolation) as caught:
        decoder.feed(good + _stream("000006 00000001 0000"))
    assert caught.value.offset == len(good)
    assert decoder.salvaged == [Cancel(stream_id=1), RequestN(stream_id=1, request_n=1)]


def test_length_over_the_limit_fails_before_the_body_arrives() -> None:
    decoder = get_profile(V1).decoder(RSocketLimits(max_frame=1024))
    with pytest.raises(ProtocolViolation) as caught:
        decoder.feed(b"\x00\x04\x01")  # 1025 announced, nothing of it sent
    assert caught.value.rule == "RS-FRAME-2"


def test_websocket_message_over_the_limit_is_rejected() -> None:
    decoder = get_profile(V1).decoder(RSocketLimits(max_frame=8), length_prefix=False)
    with pytest.raises(ProtocolViolation) as caught:
        decoder.feed(_stream("00000001 2920 000001 6d 6869"))
    assert caught.value.rule == "RS-FRAME-2"


@pytest.mark.parametrize("profile", [V1, DRAFT])
@pytest.mark.parametrize("length_prefix", [True, False])
@SETTINGS
@given(data=st.binary(max_size=80))
def test_arbitrary_bytes_raise_only_protocol_violations(profile: str, length_prefix: bool, data: bytes) -> None:
    decoder = get_profile(profile).decoder(RSocketLimits(max_frame=64), length_prefix=length_prefix)
    try:
        decoder.feed(data)
        decoder.eof()
    except ProtocolViolation as exc:
        assert exc.rule in RULES


# -- ignorable frames ---------------------------------------------------------------------------


def test_unknown_type_with_ignore_flag_is_an_ignored_frame() -> None:
    raw = _stream("00000007 3e00") + b"future"  # type 0x0F, I set (0x200)
    (ignored,) = decode_all(V1, len(raw).to_bytes(3, "big") + raw)
    assert ignored == IgnoredFrame(
        frame_type=0x0F, stream_id=7, rule="RS-IGNORE-1", reason="unknown frame type 0x0f with the I flag set", raw=raw
    )
    assert get_profile(V1).encoder().encode(ignored) == len(raw).to_bytes(3, "big") + raw


def test_bad_metadata_length_with_ignore_flag_is_ignored_not_an_error() -> None:
    raw = _stream("00000001 2b20 0000ff 6869")  # PAYLOAD, I+M+N, metadata length 255 of 2 bytes
    (ignored,) = decode_all(V1, raw, length_prefix=False)
    assert isinstance(ignored, IgnoredFrame)
    assert ignored.rule == "RS-IGNORE-2"
    assert ignored.frame_type == 0x0A


def test_ext_decodes_with_or_without_ignore_flag() -> None:
    for flags, ignore in (("fe00", True), ("fc00", False)):
        (ext,) = decode_all(V1, _stream("00000003" + flags + "00000005 abcd"), length_prefix=False)
        assert ext == Ext(stream_id=3, ignore=ignore, extended_type=5, body=b"\xab\xcd")


def test_draft_unknown_type_with_ignore_flag_is_ignored() -> None:
    raw = _stream("00 80 0040 0000000000000009 aa")
    (ignored,) = decode_all(DRAFT, raw, length_prefix=False)
    assert isinstance(ignored, IgnoredFrame) and ignored.rule == "RS-IGNORE-1" and ignored.stream_id == 9


@pytest.mark.parametrize("meta_len", ["000003", "000009", "ffffff"])
def test_draft_metadata_length_that_does_not_fit_ignores_the_frame(meta_len: str) -> None:
    raw = _stream(f"00 40 0020 0000000000000001 00 {meta_len} 6869")  # RESPONSE, M, 2 bytes after the header
    (ignored,) = decode_all(DRAFT, raw, length_prefix=False)
    assert isinstance(ignored, IgnoredFrame) and ignored.rule == "RS-DRAFT-2"


def test_unnamed_flag_bits_are_ignored() -> None:
    # CANCEL with every flag bit but I and M set: still a CANCEL (Protocol.md: unnamed flags MUST be ignored).
    (frame,) = decode_all(V1, _stream("00000001 24ff"), length_prefix=False)
    assert frame == Cancel(stream_id=1)


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
    kind=st.sampled_from([0x08, 0x0A]) | st.integers(0, 63),
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


def test_fast_path_takes_the_hot_frames() -> None:
    profile = get_profile(V1)
    for frame in (Payload(stream_id=1, next=True, data=b"7"), RequestN(stream_id=1, request_n=5)):
        raw = profile.encode_frame(frame)
        assert profile.fast_decode(bytearray(raw), 0, len(raw)) == frame


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


@SETTINGS
@given(data=st.data(), profile=st.sampled_from([V1, DRAFT]))
def test_corrupted_frames_raise_only_protocol_violations(data: st.DataObject, profile: str) -> None:
    frames = data.draw(st.lists(GENERATED[profile], min_size=1, max_size=4))
    stream = bytearray(b"".join(get_profile(profile).encoder().encode(f) for f in frames))
    for _ in range(data.draw(st.integers(1, 4))):
        stream[data.draw(st.integers(0, len(stream) - 1))] ^= data.draw(st.integers(1, 255))
    decoder = get_profile(profile).decoder(RSocketLimits(max_frame=4096))
    try:
        decoder.feed(bytes(stream))
        decoder.eof()
    except ProtocolViolation as exc:
        assert exc.rule in RULES
