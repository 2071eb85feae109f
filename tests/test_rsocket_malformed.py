"""RSocket codecs on bad input: each malformed frame names its rule, ignorable frames come back as values.

Malformed bytes raise ``ProtocolViolation`` with the rule of ``rules.py`` and the
frame's offset, under any chunking, and nothing else (no IndexError, no
struct.error): the table below, arbitrary bytes, and corrupted valid encodings.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_rsocket_codec import DRAFT, GENERATED, SETTINGS, V1, decode_all

from rsio_tck.bindings.rsocket import IgnoredFrame, RSocketLimits, get_profile
from rsio_tck.bindings.rsocket.frames import Cancel, Ext, RequestN
from rsio_tck.bindings.rsocket.rules import RULES
from rsio_tck.errors import ProtocolViolation

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
