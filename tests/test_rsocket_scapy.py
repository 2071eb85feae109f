"""The scapy RSocket layers agree with the codecs of both profiles: they build the codec's bytes and dissect them back."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scapy.layers.inet import IP, TCP
from scapy.layers.l2 import Ether
from scapy.packet import Packet, Raw
from scapy.utils import rdpcap, wrpcap
from test_rsocket_codec import GENERATED, ROUNDTRIP_DRAFT, ROUNDTRIP_V1
from test_rsocket_golden import DATA, EXPECTED, load_vectors

from rsio_tck.bindings.rsocket import Decoded, IgnoredFrame, draft, get_profile, v1
from rsio_tck.bindings.rsocket.frames import (
    Keepalive,
    Payload,
    RequestN,
    RequestStream,
    RequestSubscription,
    Setup,
    describe,
)
from rsio_tck.bindings.rsocket.scapy_layer import (
    BODIES,
    DRAFT_BODIES,
    PACKETS,
    DraftRequestN,
    DraftRequestStream,
    DraftResponse,
    DraftRSocket,
    DraftRSocketMessage,
    DraftSetup,
    RSocket,
    RSocketKeepalive,
    RSocketMessage,
    RSocketPayload,
    RSocketRequestN,
    RSocketRequestStream,
    RSocketSetup,
    dissect_stream,
    from_frame,
)
from rsio_tck.errors import ProtocolViolation

V1 = get_profile("rsocket-1.0")
DRAFT = get_profile("reactivesocket-draft")
GOLDEN = load_vectors(DATA / "rsocket-1.0.hex")
ETHER = {"src": "02:00:00:00:00:01", "dst": "02:00:00:00:00:02"}


def test_every_frame_type_of_both_profiles_has_a_body_layer() -> None:
    assert set(BODIES) == set(v1.READERS)
    assert set(DRAFT_BODIES) == set(draft.READERS)


@pytest.mark.parametrize("frame", ROUNDTRIP_DRAFT, ids=lambda f: describe(f)[:60])
def test_draft_from_frame_builds_the_codec_bytes_and_dissects_back(frame: Decoded) -> None:
    raw = DRAFT.encoder().encode(frame)
    assert bytes(from_frame(frame, profile="reactivesocket-draft")) == raw
    assert bytes(from_frame(frame, length_prefix=False, profile="reactivesocket-draft")) == raw[4:]
    assert DraftRSocket(raw).to_frame() == frame
    assert DraftRSocketMessage(raw[4:]).to_frame() == frame


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), profile=st.sampled_from(["rsocket-1.0", "reactivesocket-draft"]))
def test_generated_frames_of_every_type_round_trip_through_the_layer(data: st.DataObject, profile: str) -> None:
    frame = data.draw(GENERATED[profile])
    codec = get_profile(profile)
    raw = codec.encoder().encode(frame)
    framed, message = PACKETS[profile]
    pkt = from_frame(frame, profile=profile)
    assert bytes(pkt) == raw
    assert framed(raw).to_frame() == frame
    assert message(raw[codec.prefix_size :]).to_frame() == frame
    assert dissect_stream(raw + raw, profile)[1].to_frame() == frame


def test_hand_built_draft_packets_decode_as_the_frames_they_name() -> None:
    built: list[tuple[Packet, Decoded]] = [
        (DraftRSocket(stream_id=5, frame_type="REQUEST_STREAM", flags="M")
         / DraftRequestStream(initial_request_n=3, metadata=b"md", data=b"tck/range?count=3"),
         RequestStream(stream_id=5, initial_request_n=3, metadata=b"md", data=b"tck/range?count=3")),
        (DraftRSocket(stream_id=5, frame_type="RESPONSE", flags="C") / DraftResponse(data=b"2"),
         Payload(stream_id=5, next=True, complete=True, data=b"2")),
        (DraftRSocket(stream_id=5, frame_type="RESPONSE", flags="C") / DraftResponse(),
         Payload(stream_id=5, complete=True)),
        (DraftRSocket(stream_id=2**64 - 1, frame_type="REQUEST_N") / DraftRequestN(request_n=2**64 - 1),
         RequestN(stream_id=2**64 - 1, request_n=2**64 - 1)),
        (DraftRSocket(frame_type="SETUP", flags="F+C") / DraftSetup(keepalive_interval=5, max_lifetime=6,
                                                                   metadata_mime=b"a", data_mime=b"b"),
         Setup(major_version=0, keepalive_interval=5, max_lifetime=6, lease=True, strict=True, metadata_mime=b"a",
               data_mime=b"b")),
        (DraftRSocket(stream_id=7, frame_type="REQUEST_SUB") / Raw(bytes(8)),
         RequestSubscription(stream_id=7, initial_request_n=0)),
    ]
    for pkt, frame in built:
        assert pkt.to_frame() == frame
        assert bytes(pkt) == DRAFT.encoder().encode(frame)


def test_a_draft_metadata_length_past_the_frame_makes_it_ignored_and_a_short_length_is_rejected() -> None:
    pkt = from_frame(Payload(stream_id=3, next=True, metadata=b"m", data=b"hi"), profile="reactivesocket-draft")
    pkt[DraftResponse].metadata_len = 200
    ignored = DraftRSocket(bytes(pkt)).to_frame()
    assert isinstance(ignored, IgnoredFrame) and ignored.rule == "RS-DRAFT-2"
    pkt = from_frame(Payload(stream_id=3, next=True, data=b"hi"), profile="reactivesocket-draft")
    pkt.length = 15
    with pytest.raises(ProtocolViolation) as caught:
        DRAFT.decoder().feed(bytes(pkt))
    assert caught.value.rule == "RS-FRAME-1"
    pkt.length, pkt.reserved = None, 1
    with pytest.raises(ProtocolViolation) as caught:
        DRAFT.decoder().feed(bytes(pkt))
    assert caught.value.rule == "RS-FRAME-3"
    pkt.reserved, pkt.version = 0, 1
    with pytest.raises(ProtocolViolation) as caught:
        DRAFT.decoder().feed(bytes(pkt))
    assert caught.value.rule == "RS-DRAFT-1"


def test_draft_dissect_stream_keeps_an_incomplete_or_impossible_tail() -> None:
    encoder = DRAFT.encoder()
    frames = [RequestStream(stream_id=1, initial_request_n=2, data=b"x"), Payload(stream_id=1, next=True, data=b"1")]
    stream = b"".join(encoder.encode(f) for f in frames)
    packets = dissect_stream(stream + b"\x00\x00\x00\x20\x00", "reactivesocket-draft")
    assert [p.to_frame() for p in packets[:2]] == frames
    assert isinstance(packets[2], Raw) and bytes(packets[2]) == b"\x00\x00\x00\x20\x00"
    assert isinstance(dissect_stream(b"\x00\x00\x00\x0f" + bytes(11), "reactivesocket-draft")[0], Raw)


@pytest.mark.parametrize("frame", ROUNDTRIP_V1, ids=lambda f: describe(f)[:60])
def test_from_frame_builds_the_codec_bytes_and_dissects_back(frame: Decoded) -> None:
    raw = V1.encoder().encode(frame)
    assert bytes(from_frame(frame)) == raw
    assert bytes(from_frame(frame, length_prefix=False)) == raw[3:]
    assert RSocket(raw).to_frame() == frame
    assert RSocketMessage(raw[3:]).to_frame() == frame


def test_hand_built_packets_match_the_golden_vectors() -> None:
    built = {
        "request_stream": RSocket(stream_id=1, frame_type="REQUEST_STREAM")
        / RSocketRequestStream(initial_request_n=3, data=b"tck/range?count=10"),
        "payload_next_complete_metadata": RSocket(stream_id=1, frame_type="PAYLOAD", flags="M+C+N")
        / RSocketPayload(metadata=b"m", data=b"hi"),
        "keepalive_respond": RSocket(frame_type="KEEPALIVE", flags="F") / RSocketKeepalive(),
        "request_n_max": RSocket(stream_id=1, frame_type="REQUEST_N") / RSocketRequestN(request_n=2**31 - 1),
        "setup": RSocket(frame_type="SETUP")
        / RSocketSetup(
            keepalive_interval=30_000,
            max_lifetime=90_000,
            metadata_mime=b"application/octet-stream",
            data_mime=b"text/plain",
        ),
    }
    for name, pkt in built.items():
        assert bytes(pkt) == GOLDEN[name], name
        assert pkt.to_frame() == EXPECTED["rsocket-1.0"][name]


def test_lengths_follow_a_mutated_body() -> None:
    pkt = from_frame(Payload(stream_id=3, next=True, metadata=b"m", data=b"hi"))
    pkt[RSocketPayload].metadata = b"longer metadata"
    pkt[RSocketPayload].data = b"and data"
    assert RSocket(bytes(pkt)).to_frame() == Payload(
        stream_id=3, next=True, metadata=b"longer metadata", data=b"and data"
    )


@pytest.mark.parametrize(
    ("mutate", "rule"),
    [
        (lambda p: setattr(p[RSocketPayload], "metadata_len", 200), "RS-FRAME-5"),
        (lambda p: setattr(p, "reserved", 1), "RS-FRAME-3"),
        (lambda p: setattr(p, "frame_type", 0x10), "RS-FRAME-4"),
        (lambda p: setattr(p, "flags", "C+N"), None),  # M cleared: metadata bytes become data, still a frame
    ],
)
def test_mutated_fields_break_the_rule_the_codec_names(mutate: object, rule: str | None) -> None:
    pkt = from_frame(Payload(stream_id=3, next=True, metadata=b"m", data=b"hi"))
    mutate(pkt)  # type: ignore[operator]
    decoder = V1.decoder()
    if rule is None:
        (frame,) = decoder.feed(bytes(pkt))
        assert isinstance(frame, Payload) and frame.metadata is None and frame.complete
        return
    with pytest.raises(ProtocolViolation) as caught:
        decoder.feed(bytes(pkt))
    assert caught.value.rule == rule


def test_reserved_bits_of_body_fields_are_fields() -> None:
    pkt = from_frame(RequestN(stream_id=1, request_n=5))
    pkt[RSocketRequestN].reserved_request_n = 1
    with pytest.raises(ProtocolViolation) as caught:
        V1.decoder().feed(bytes(pkt))
    assert caught.value.rule == "RS-FRAME-3"


def test_ignorable_unknown_type_round_trips_through_the_layer() -> None:
    raw = bytes.fromhex("00000007 3e00 abcd".replace(" ", ""))
    (ignored,) = V1.decoder(length_prefix=False).feed(raw)
    assert isinstance(ignored, IgnoredFrame)
    pkt = from_frame(ignored)
    assert isinstance(pkt.payload, Raw)
    assert pkt.to_frame() == ignored


def test_dissect_stream_splits_frames_and_keeps_an_incomplete_tail() -> None:
    encoder = V1.encoder()
    frames = [RequestStream(stream_id=1, initial_request_n=2, data=b"x"), Payload(stream_id=1, next=True, data=b"1")]
    stream = b"".join(encoder.encode(f) for f in frames)
    packets = dissect_stream(stream + b"\x00\x00\x09\x00")
    assert [p.to_frame() for p in packets[:2]] == frames
    assert isinstance(packets[2], Raw) and bytes(packets[2]) == b"\x00\x00\x09\x00"


def _pcap(tmp_path: Path, frames: list[Decoded], port: int, profile: str = "rsocket-1.0") -> Path:
    packets = []
    seq = 1000
    for frame in frames:
        pkt = from_frame(frame, profile=profile)
        packets.append(
            Ether(**ETHER)
            / IP(src="127.0.0.1", dst="127.0.0.1")
            / TCP(sport=port, dport=40000, flags="PA", seq=seq)
            / pkt
        )
        seq += len(pkt)
    path = tmp_path / f"{profile}.pcap"
    wrpcap(str(path), packets)
    return path


def test_pcap_round_trip(tmp_path: Path) -> None:
    frames: list[Decoded] = [RequestStream(stream_id=1, initial_request_n=3, data=b"tck/range"), Keepalive(respond=True)]
    path = _pcap(tmp_path, frames, 7878)
    payloads = [bytes(p[TCP].payload) for p in rdpcap(str(path))]
    assert [RSocket(raw).to_frame() for raw in payloads] == frames


@pytest.mark.parametrize(("profile", "frames"), [("rsocket-1.0", ROUNDTRIP_V1), ("reactivesocket-draft", ROUNDTRIP_DRAFT)])
def test_pcap_of_every_frame_type_reads_back(tmp_path: Path, profile: str, frames: list[Decoded]) -> None:
    path = _pcap(tmp_path, frames, 7878, profile)
    captured = rdpcap(str(path))
    assert all(p[Ether].src == ETHER["src"] and p[Ether].dst == ETHER["dst"] for p in captured)
    framed = PACKETS[profile][0]
    assert [framed(bytes(p[TCP].payload)).to_frame() for p in captured] == frames


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark not installed")
def test_wireshark_reads_setup_and_keepalive_as_written(tmp_path: Path) -> None:
    # Wireshark 4.0 parses RSocket 1.0 frames inside its LBMSRS dissector (SETUP and KEEPALIVE among them):
    # an implementation the kit did not write agrees with the layer's encoding.
    frames: list[Decoded] = [
        Setup(keepalive_interval=30_000, max_lifetime=90_000, metadata_mime=b"application/octet-stream",
              data_mime=b"text/plain"),
        Keepalive(respond=True, last_received_position=5, data=b"ka"),
    ]
    path = _pcap(tmp_path, frames, 7878)
    fields = ["frame_len", "stream_id", "frame_type", "version.major", "keepalive.interval", "max_lifetime",
              "mdata_mime_type", "data_mime_type", "flags.respond", "keepalive_last_received_position"]
    argv = ["tshark", "-r", str(path), "-d", "tcp.port==7878,lbmsrs", "-T", "fields"]
    for name in fields:
        argv += ["-e", f"lbmsrs.rsocket.{name}"]
    result = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=True)
    rows = [line.split("\t") for line in result.stdout.splitlines()]
    assert rows[0] == ["54", "0", "1", "1", "30000", "90000", "application/octet-stream", "text/plain", "", ""]
    assert rows[1][:3] == ["16", "0", "3"] and rows[1][8:] == ["1", "5"]
