"""The scapy RS-IO layer: every frame type builds to the tck codec's bytes, streams and captures dissect."""

from __future__ import annotations

from pathlib import Path

import pytest
from scapy.layers.inet import IP, TCP
from scapy.layers.l2 import Ether
from scapy.packet import Raw
from scapy.utils import rdpcap, wrpcap

from rsio_tck.bindings.rsio.dissect import (
    RSIOContinuation,
    RSIOFrame,
    bind_rsio,
    dissect,
    from_frame,
    msgpack_header,
    packet_class,
)
from rsio_tck.bindings.rsio.wire import get_codec
from rsio_tck.bindings.rsio.wire.frames import (
    FRAME_TYPES,
    ID_MAX,
    Cancel,
    ClientHello,
    Goodbye,
    OnComplete,
    OnError,
    OnNext,
    OnNextLastPart,
    OnNextPacked,
    OnNextPart,
    OnSubscribe,
    Request,
    ServerHello,
    Subscribe,
)

CODECS = ("msgpack", "varint")

# One or more frames of every type, in an order a stream could carry them (fixed-size
# onNext and onNextPacked follow the onSubscribe that announces their element size).
FRAMES = [
    ClientHello(version=0, extensions=()),
    ServerHello(version=0, extensions=(1, 300, ID_MAX)),
    Goodbye(reason="bye, ünïcode"),
    Subscribe(publisher="tck/range?start=0&count=3", subscriber=0, initial_demand=0),
    Subscribe(publisher="p" * 40, subscriber=ID_MAX, initial_demand=2**63),
    Request(subscriber=1, demand=ID_MAX),
    Cancel(subscriber=2**40),
    OnSubscribe(subscriber=1, element_size=0),
    OnSubscribe(subscriber=5, element_size=4),
    OnNext(subscriber=1, element=b""),
    OnNext(subscriber=1, element=bytes(range(256)) * 300),
    OnNext(subscriber=5, element=b"\x00\x01\x02\x03"),
    OnNextPacked(subscriber=5, count=3, data=bytes(12)),
    OnComplete(subscriber=5),
    OnError(subscriber=1, error="x" * 70000),
    OnNextPart(subscriber=9, element=0, data=b"ab"),
    OnNextLastPart(subscriber=9, element=ID_MAX, data=b"c" * 200),
]


def _encoded(codec: str) -> list[tuple[object, bytes, int]]:
    encoder = get_codec(codec).encoder()
    out = []
    for frame in FRAMES:
        size = encoder.element_size(frame.subscriber) if isinstance(frame, (OnNext, OnNextPacked)) else 0
        out.append((frame, encoder.encode(frame), size))
    return out


def test_the_frames_cover_every_message_type() -> None:
    assert {type(frame) for frame in FRAMES} == set(FRAME_TYPES)


@pytest.mark.parametrize("codec", CODECS)
def test_every_frame_builds_to_the_codec_encoding(codec: str) -> None:
    for frame, wire, size in _encoded(codec):
        pkt = from_frame(frame, codec, size)
        assert bytes(pkt) == wire, frame
        assert pkt.to_frame() == frame


@pytest.mark.parametrize("codec", CODECS)
def test_packet_classes_are_one_per_message_and_codec(codec: str) -> None:
    classes = {packet_class(codec, frame_type.wire_name) for frame_type in FRAME_TYPES}
    assert len(classes) == len(FRAME_TYPES)
    assert packet_class(codec, "request").__name__ == ("Msgpack" if codec == "msgpack" else "Varint") + "Request"
    built = packet_class(codec, "request")(subscriber=1, demand=10)
    assert bytes(built) == get_codec(codec).encoder().encode(Request(subscriber=1, demand=10))


def test_spec_examples_build() -> None:
    assert bytes(packet_class("msgpack", "onNext")(subscriber=1, element=b"hi")).hex() == "0801c4026869"
    assert bytes(packet_class("msgpack", "request")(subscriber=1, demand=10)).hex() == "05010a"


@pytest.mark.parametrize("codec", CODECS)
def test_a_stream_dissects_to_its_frames_and_a_trailing_raw(codec: str) -> None:
    encoded = _encoded(codec)
    data = b"".join(wire for _, wire, _ in encoded)
    packets = dissect(data + encoded[3][1][:5], codec)
    assert [pkt.to_frame() for pkt in packets[:-1]] == FRAMES
    assert isinstance(packets[-1], Raw) and packets[-1].load == encoded[3][1][:5]
    assert b"".join(bytes(pkt) for pkt in packets) == data + encoded[3][1][:5]


@pytest.mark.parametrize("codec", CODECS)
def test_an_unknown_type_code_ends_dissection_as_raw(codec: str) -> None:
    data = bytes(packet_class(codec, "cancel")(subscriber=3)) + b"\x0e\x01\x02"
    packets = dissect(data, codec)
    assert len(packets) == 2 and isinstance(packets[1], Raw) and packets[1].load == b"\x0e\x01\x02"


def test_mutated_headers_announce_what_the_body_lacks() -> None:
    pkt = packet_class("msgpack", "onNext")(subscriber=1, element=b"hi", element_len=0xFFFFFFFF)
    assert bytes(pkt).hex() == "0801c6ffffffff6869"
    assert isinstance(dissect(bytes(pkt), "msgpack")[0], Raw)
    vpkt = packet_class("varint", "goodbye")(reason=b"ok", reason_len=2**32)
    assert bytes(vpkt) == b"\x03\x80\x80\x80\x80\x10ok"
    assert msgpack_header("str", 31) == b"\xbf" and msgpack_header("array", 16) == b"\xdc\x00\x10"
    reserved = packet_class("varint", "cancel")(type=0x40, subscriber=1)
    assert bytes(reserved) == b"\x40\x01"


@pytest.mark.parametrize("codec", CODECS)
def test_a_capture_dissects_across_segment_boundaries(codec: str, tmp_path: Path) -> None:
    port = 47000 + CODECS.index(codec)
    bind_rsio(port, codec)
    encoded = _encoded(codec)
    data = b"".join(wire for _, wire, _ in encoded)
    cuts = sorted({0, 3, 40, 41, 200, 30000, 60000, 90000, 120000, len(data) - 1, len(data)})
    segments = [data[a:b] for a, b in zip(cuts, cuts[1:])]
    packets = []
    seq = 1000
    for segment in segments:
        packets.append(
            Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
            / IP(src="127.0.0.1", dst="127.0.0.1")
            / TCP(sport=port, dport=50000, seq=seq, flags="PA")
            / Raw(segment)
        )
        seq += len(segment)
    path = tmp_path / "rsio.pcap"
    wrpcap(str(path), packets)
    frames, continuations = [], 0
    for pkt in rdpcap(str(path)):
        layer = pkt[TCP].payload
        while layer and not isinstance(layer, Raw):
            if isinstance(layer, RSIOFrame):
                frames.append(layer.to_frame())
            else:
                assert isinstance(layer, RSIOContinuation)
                continuations += 1
            layer = layer.payload
    # A frame shows whole when it starts and ends in one segment; the bytes that
    # finish a frame cut by a boundary show as a continuation.
    ends, offset = [], 0
    for _, wire, _ in encoded:
        ends.append((offset, offset + len(wire)))
        offset += len(wire)
    same = [FRAMES[i] for i, (a, b) in enumerate(ends) if not any(a < cut < b for cut in cuts)]
    assert frames == same
    assert continuations == len(FRAMES) - len(same) > 0
