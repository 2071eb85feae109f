"""Scapy layer for RSocket 1.0 frames: build and dissect (for the fuzzer and the dissector); never sends.

``RSocket`` is one TCP-framed frame: a 24-bit ``length`` (``None`` = computed),
the header (``reserved`` bit, 31-bit ``stream_id``, 6-bit ``frame_type``, 10
``flags``), and one body layer per frame type (``RSocketSetup`` ...
``RSocketExt``), chosen by ``frame_type``.  ``RSocketMessage`` is the same frame
without the length prefix (one WebSocket message).  Every length field inside a
body (``metadata_len``, ``token_len``, the MIME lengths) is ``None`` = computed,
and every reserved bit is a field, so a mutator can set any of them to a value
the rest of the frame does not match.

Flags are named by their bit, as PAYLOAD names them: ``I`` 0x200, ``M`` 0x100,
``F`` 0x80, ``C`` 0x40, ``N`` 0x20.  SETUP's resume R and KEEPALIVE's respond R
are the ``F`` bit; SETUP's lease L is the ``C`` bit.  Whether a body has a
metadata length follows the header's M flag, as on the wire.

``from_frame(frame)`` is the packet for a tck frame (its bytes are exactly the
``rsocket-1.0`` codec's, with every length left computed), ``pkt.to_frame()``
decodes a packet back through the codec, and ``dissect_stream(data)`` splits a
TCP byte stream into ``RSocket`` packets.
"""

from __future__ import annotations

from typing import Any

from scapy.fields import (
    BitEnumField,
    BitField,
    ConditionalField,
    FieldLenField,
    FlagsField,
    IntEnumField,
    ShortField,
    StrField,
    StrLenField,
    ThreeBytesField,
)
from scapy.packet import Packet, Raw

from . import get_profile
from .frames import ERROR_CODE_NAMES, Decoded, Frame, IgnoredFrame
from .v1 import FLAG_M, FLAG_R, TYPE_NAMES

FLAG_NAMES = ["b0", "b1", "b2", "b3", "b4", "N", "C", "F", "M", "I"]  # least significant bit first
_PROFILE = get_profile("rsocket-1.0")


class Len24Field(FieldLenField):
    """A 24-bit big-endian length of another field (``None`` = that field's length)."""

    def __init__(self, name: str, default: int | None, length_of: str) -> None:
        super().__init__(name, default, length_of=length_of, fmt="!I")

    def addfield(self, pkt: Any, s: bytes, val: Any) -> bytes:
        return s + int(self.i2m(pkt, val)).to_bytes(3, "big")

    def getfield(self, pkt: Any, s: bytes) -> tuple[bytes, Any]:
        return s[3:], self.m2i(pkt, int.from_bytes(s[:3], "big"))


def _flag(pkt: Packet, bit: int) -> bool:
    header = pkt.underlayer
    return header is not None and bool(int(header.getfieldval("flags")) & bit)


def _metadata_fields() -> list[Any]:
    """Metadata length and metadata when the header's M flag is set, then the data (the rest)."""
    return [
        ConditionalField(Len24Field("metadata_len", None, length_of="metadata"), lambda p: _flag(p, FLAG_M)),
        ConditionalField(
            StrLenField("metadata", b"", length_from=lambda p: p.metadata_len), lambda p: _flag(p, FLAG_M)
        ),
        StrField("data", b""),
    ]


def _reserved31(name: str) -> list[Any]:
    return [BitField(f"reserved_{name}", 0, 1), BitField(name, 0, 31)]


def _reserved63(name: str) -> list[Any]:
    return [BitField(f"reserved_{name}", 0, 1), BitField(name, 0, 63)]


def _length_of(field: str) -> Any:
    return lambda pkt: pkt.getfieldval(field)


def _mime(name: str) -> list[Any]:
    return [
        FieldLenField(f"{name}_len", None, length_of=name, fmt="B"),
        StrLenField(name, b"", length_from=_length_of(f"{name}_len")),
    ]


class RSocketBody(Packet):
    """A frame type's fields after the header; nothing follows it inside its frame."""

    def extract_padding(self, s: bytes) -> tuple[bytes, bytes]:
        return b"", s


class RSocketSetup(RSocketBody):
    name = "RSocket SETUP"
    fields_desc = [
        ShortField("major_version", 1),
        ShortField("minor_version", 0),
        *_reserved31("keepalive_interval"),
        *_reserved31("max_lifetime"),
        ConditionalField(
            FieldLenField("token_len", None, length_of="resume_token", fmt="!H"), lambda p: _flag(p, FLAG_R)
        ),
        ConditionalField(
            StrLenField("resume_token", b"", length_from=lambda p: p.token_len), lambda p: _flag(p, FLAG_R)
        ),
        *_mime("metadata_mime"),
        *_mime("data_mime"),
        *_metadata_fields(),
    ]


class RSocketLease(RSocketBody):
    name = "RSocket LEASE"
    fields_desc = [*_reserved31("ttl"), *_reserved31("number_of_requests"), StrField("metadata", b"")]


class RSocketKeepalive(RSocketBody):
    name = "RSocket KEEPALIVE"
    fields_desc = [*_reserved63("last_received_position"), StrField("data", b"")]


class RSocketRequestResponse(RSocketBody):
    name = "RSocket REQUEST_RESPONSE"
    fields_desc = _metadata_fields()


class RSocketRequestFnf(RSocketBody):
    name = "RSocket REQUEST_FNF"
    fields_desc = _metadata_fields()


class RSocketRequestStream(RSocketBody):
    name = "RSocket REQUEST_STREAM"
    fields_desc = [*_reserved31("initial_request_n"), *_metadata_fields()]


class RSocketRequestChannel(RSocketBody):
    name = "RSocket REQUEST_CHANNEL"
    fields_desc = [*_reserved31("initial_request_n"), *_metadata_fields()]


class RSocketRequestN(RSocketBody):
    name = "RSocket REQUEST_N"
    fields_desc = _reserved31("request_n")


class RSocketCancel(RSocketBody):
    name = "RSocket CANCEL"
    fields_desc = []  # type: ignore[var-annotated]


class RSocketPayload(RSocketBody):
    name = "RSocket PAYLOAD"
    fields_desc = _metadata_fields()


class RSocketError(RSocketBody):
    name = "RSocket ERROR"
    fields_desc = [IntEnumField("error_code", 0x201, ERROR_CODE_NAMES), StrField("data", b"")]


class RSocketMetadataPush(RSocketBody):
    name = "RSocket METADATA_PUSH"
    fields_desc = [StrField("metadata", b"")]


class RSocketResume(RSocketBody):
    name = "RSocket RESUME"
    fields_desc = [
        ShortField("major_version", 1),
        ShortField("minor_version", 0),
        FieldLenField("token_len", None, length_of="resume_token", fmt="!H"),
        StrLenField("resume_token", b"", length_from=lambda p: p.token_len),
        *_reserved63("last_received_server_position"),
        *_reserved63("first_available_client_position"),
    ]


class RSocketResumeOk(RSocketBody):
    name = "RSocket RESUME_OK"
    fields_desc = _reserved63("last_received_client_position")


class RSocketExt(RSocketBody):
    name = "RSocket EXT"
    fields_desc = [*_reserved31("extended_type"), StrField("body", b"")]


BODIES: dict[int, type[RSocketBody]] = {
    0x01: RSocketSetup,
    0x02: RSocketLease,
    0x03: RSocketKeepalive,
    0x04: RSocketRequestResponse,
    0x05: RSocketRequestFnf,
    0x06: RSocketRequestStream,
    0x07: RSocketRequestChannel,
    0x08: RSocketRequestN,
    0x09: RSocketCancel,
    0x0A: RSocketPayload,
    0x0B: RSocketError,
    0x0C: RSocketMetadataPush,
    0x0D: RSocketResume,
    0x0E: RSocketResumeOk,
    0x3F: RSocketExt,
}

HEADER_FIELDS: list[Any] = [
    BitField("reserved", 0, 1),
    BitField("stream_id", 0, 31),
    BitEnumField("frame_type", 0, 6, TYPE_NAMES),
    FlagsField("flags", 0, 10, FLAG_NAMES),
]


class RSocketMessage(Packet):
    """One frame without length prefix (a WebSocket message); the body layer follows ``frame_type``."""

    name = "RSocket"
    fields_desc = list(HEADER_FIELDS)
    prefix_size = 0

    def guess_payload_class(self, payload: bytes) -> type[Packet]:
        return BODIES.get(int(self.frame_type), Raw)

    def to_frame(self) -> Decoded:
        """The tck frame, decoded by the ``rsocket-1.0`` codec (ProtocolViolation if malformed)."""
        return _PROFILE.decode_frame(bytes(self)[self.prefix_size :])

    def mysummary(self) -> str:
        return f"RSocket {TYPE_NAMES.get(int(self.frame_type), hex(int(self.frame_type)))} stream {self.stream_id}"


class RSocket(RSocketMessage):
    """One TCP-framed frame: ``length`` (24 bits, excluding itself; ``None`` = computed) then the frame."""

    fields_desc = [ThreeBytesField("length", None), *HEADER_FIELDS]  # type: ignore[arg-type]  # None = computed
    prefix_size = 3

    def post_build(self, pkt: bytes, pay: bytes) -> bytes:
        if self.length is None:
            pkt = (len(pkt) + len(pay) - 3).to_bytes(3, "big") + pkt[3:]
        return pkt + pay

    def extract_padding(self, s: bytes) -> tuple[bytes, bytes]:
        body = max(int(self.length) - 6, 0)
        return s[:body], s[body:]


_COMPUTED = ("length", "metadata_len", "token_len", "metadata_mime_len", "data_mime_len")


def from_frame(frame: Frame | IgnoredFrame, length_prefix: bool = True) -> RSocketMessage:
    """The packet for ``frame``: dissected from the codec's bytes, with every length field left computed."""
    raw = _PROFILE.encode_frame(frame)
    pkt: RSocketMessage = RSocket(len(raw).to_bytes(3, "big") + raw) if length_prefix else RSocketMessage(raw)
    layer: Packet | None = pkt
    while layer is not None and not isinstance(layer, Raw):
        for name in _COMPUTED:
            if name in layer.fields:
                layer.setfieldval(name, None)
        layer = layer.payload if layer.payload else None
    return pkt


def dissect_stream(data: bytes) -> list[Packet]:
    """The TCP-framed frames of ``data`` as ``RSocket`` packets; an incomplete tail comes back as ``Raw``."""
    out: list[Packet] = []
    pos = 0
    while pos < len(data):
        if len(data) - pos < 3:
            out.append(Raw(data[pos:]))
            break
        size = 3 + int.from_bytes(data[pos : pos + 3], "big")
        if len(data) - pos < size:
            out.append(Raw(data[pos:]))
            break
        out.append(RSocket(data[pos : pos + size]))
        pos += size
    return out
