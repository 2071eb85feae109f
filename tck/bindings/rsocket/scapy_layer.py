"""Scapy layers for RSocket frames, both profiles: build and dissect (fuzzer, dissector); never sends.

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

The ``reactivesocket-draft`` profile (seed 001) has its own layers:
``DraftRSocket`` (a reserved bit and a 31-bit ``length`` counting the whole
frame, the prefix included), ``DraftRSocketMessage`` (no prefix), a header of
``version``, 8 ``flags`` (``I`` 0x80, ``M`` 0x40, ``F`` 0x20 = SETUP's L,
``C`` 0x10 = SETUP's S), a 16-bit ``frame_type`` and a 64-bit ``stream_id``,
and one body per draft frame type (``DraftSetup`` ... ``DraftExt``).  Its
metadata block is ``metadata_type`` (8 bits), ``metadata_len`` (24 bits,
counting its own 4-byte header; ``None`` = computed) and the metadata.

``from_frame(frame, profile=...)`` is the packet for a tck frame (its bytes are
exactly that profile's codec's, with every length left computed),
``pkt.to_frame()`` decodes a packet back through the codec, and
``dissect_stream(data, profile=...)`` splits a TCP byte stream into packets.
"""

from __future__ import annotations

from typing import Any

from scapy.fields import (
    BitEnumField,
    BitField,
    ByteField,
    ConditionalField,
    FieldLenField,
    FlagsField,
    IntEnumField,
    IntField,
    LongField,
    ShortEnumField,
    ShortField,
    StrField,
    StrLenField,
    ThreeBytesField,
)
from scapy.packet import Packet, Raw

from . import draft
from .frames import ERROR_CODE_NAMES, Decoded, Frame, IgnoredFrame
from .profiles import get_profile
from .v1 import FLAG_M, FLAG_R, TYPE_NAMES

FLAG_NAMES = ["b0", "b1", "b2", "b3", "b4", "N", "C", "F", "M", "I"]  # least significant bit first
_PROFILE = get_profile("rsocket-1.0")


class Len24Field(FieldLenField):
    """A 24-bit big-endian length of another field (``None`` = that field's length, plus ``extra``)."""

    def __init__(self, name: str, default: int | None, length_of: str, extra: int = 0) -> None:
        super().__init__(name, default, length_of=length_of, fmt="!I", adjust=lambda pkt, n: n + extra)

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


# -- reactivesocket-draft -----------------------------------------------------------------

DRAFT_FLAG_NAMES = ["b0", "b1", "b2", "b3", "C", "F", "M", "I"]  # least significant bit first
_DRAFT = get_profile("reactivesocket-draft")


def _draft_metadata() -> list[Any]:
    """The draft's metadata block when the header's M flag is set: type, length (with its header), metadata."""
    present = lambda p: _flag(p, draft.FLAG_M)  # noqa: E731 - one condition shared by three fields
    return [
        ConditionalField(ByteField("metadata_type", 0), present),
        ConditionalField(Len24Field("metadata_len", None, length_of="metadata", extra=draft.METADATA_HEADER), present),
        ConditionalField(
            StrLenField("metadata", b"", length_from=lambda p: max(p.metadata_len - draft.METADATA_HEADER, 0)), present
        ),
    ]


class DraftSetup(RSocketBody):
    name = "ReactiveSocket SETUP"
    fields_desc = [
        IntField("keepalive_interval", 0),
        IntField("max_lifetime", 0),
        *_mime("metadata_mime"),
        *_mime("data_mime"),
        *_draft_metadata(),
        StrField("data", b""),
    ]


class DraftSetupError(RSocketBody):
    name = "ReactiveSocket SETUP_ERROR"
    fields_desc = [IntField("error_code", 0), *_draft_metadata(), StrField("data", b"")]


class DraftLease(RSocketBody):
    name = "ReactiveSocket LEASE"
    fields_desc = [LongField("ttl", 0), LongField("number_of_requests", 0), *_draft_metadata()]


class DraftKeepalive(RSocketBody):
    name = "ReactiveSocket KEEPALIVE"
    fields_desc = [StrField("data", b"")]


class DraftRequestResponse(RSocketBody):
    name = "ReactiveSocket REQUEST_RESPONSE"
    fields_desc = [*_draft_metadata(), StrField("data", b"")]


class DraftRequestFnf(RSocketBody):
    name = "ReactiveSocket REQUEST_FNF"
    fields_desc = [*_draft_metadata(), StrField("data", b"")]


class DraftRequestStream(RSocketBody):
    name = "ReactiveSocket REQUEST_STREAM"
    fields_desc = [LongField("initial_request_n", 0), *_draft_metadata(), StrField("data", b"")]


class DraftRequestSub(RSocketBody):
    name = "ReactiveSocket REQUEST_SUB"
    fields_desc = [LongField("initial_request_n", 0), *_draft_metadata(), StrField("data", b"")]


class DraftRequestN(RSocketBody):
    name = "ReactiveSocket REQUEST_N"
    fields_desc = [LongField("request_n", 0), *_draft_metadata()]


class DraftCancel(RSocketBody):
    name = "ReactiveSocket CANCEL"
    fields_desc = _draft_metadata()


class DraftResponse(RSocketBody):
    name = "ReactiveSocket RESPONSE"
    fields_desc = [*_draft_metadata(), StrField("data", b"")]


class DraftError(RSocketBody):
    name = "ReactiveSocket ERROR"
    fields_desc = [*_draft_metadata(), StrField("data", b"")]


class DraftMetadataPush(RSocketBody):
    name = "ReactiveSocket METADATA_PUSH"
    fields_desc = _draft_metadata()


class DraftExt(RSocketBody):
    name = "ReactiveSocket EXT"
    fields_desc = [IntField("extended_type", 0), StrField("body", b"")]


DRAFT_BODIES: dict[int, type[RSocketBody]] = {
    0x0001: DraftSetup,
    0x0002: DraftSetupError,
    0x0003: DraftLease,
    0x0004: DraftKeepalive,
    0x0011: DraftRequestResponse,
    0x0012: DraftRequestFnf,
    0x0013: DraftRequestStream,
    0x0014: DraftRequestSub,
    0x0015: DraftRequestN,
    0x0016: DraftCancel,
    0x0020: DraftResponse,
    0x0021: DraftError,
    0x0031: DraftMetadataPush,
    0xFFFF: DraftExt,
}

DRAFT_HEADER_FIELDS: list[Any] = [
    ByteField("version", draft.VERSION),
    FlagsField("flags", 0, 8, DRAFT_FLAG_NAMES),
    ShortEnumField("frame_type", 0, draft.TYPE_NAMES),
    LongField("stream_id", 0),
]


class DraftRSocketMessage(Packet):
    """One draft frame without length prefix (a WebSocket message); the body follows ``frame_type``."""

    name = "ReactiveSocket"
    fields_desc = list(DRAFT_HEADER_FIELDS)
    prefix_size = 0

    def guess_payload_class(self, payload: bytes) -> type[Packet]:
        return DRAFT_BODIES.get(int(self.frame_type), Raw)

    def to_frame(self) -> Decoded:
        """The tck frame, decoded by the ``reactivesocket-draft`` codec (ProtocolViolation if malformed)."""
        return _DRAFT.decode_frame(bytes(self)[self.prefix_size :])

    def mysummary(self) -> str:
        kind = draft.TYPE_NAMES.get(int(self.frame_type), hex(int(self.frame_type)))
        return f"ReactiveSocket {kind} stream {self.stream_id}"


class DraftRSocket(DraftRSocketMessage):
    """One TCP-framed draft frame: a reserved bit and a 31-bit ``length`` counting the whole frame."""

    fields_desc = [BitField("reserved", 0, 1), BitField("length", None, 31), *DRAFT_HEADER_FIELDS]  # type: ignore[arg-type]
    prefix_size = 4

    def post_build(self, pkt: bytes, pay: bytes) -> bytes:
        if self.length is None:
            value = (int(self.reserved) << 31) | (len(pkt) + len(pay))
            pkt = value.to_bytes(4, "big") + pkt[4:]
        return pkt + pay

    def extract_padding(self, s: bytes) -> tuple[bytes, bytes]:
        body = max(int(self.length) - 16, 0)
        return s[:body], s[body:]


# -- both profiles -------------------------------------------------------------------------

_COMPUTED = ("length", "metadata_len", "token_len", "metadata_mime_len", "data_mime_len")
PACKETS: dict[str, tuple[type[Packet], type[Packet]]] = {  # profile -> (TCP-framed, message) packet class
    "rsocket-1.0": (RSocket, RSocketMessage),
    "reactivesocket-draft": (DraftRSocket, DraftRSocketMessage),
}


def from_frame(frame: Frame | IgnoredFrame, length_prefix: bool = True, profile: str = "rsocket-1.0") -> Packet:
    """The packet for ``frame``: dissected from the profile codec's bytes, every length field left computed."""
    codec = get_profile(profile)
    raw = codec.encode_frame(frame)
    framed, message = PACKETS[profile]
    pkt: Packet = framed(codec.build_prefix(len(raw)) + raw) if length_prefix else message(raw)
    layer: Packet | None = pkt
    while layer is not None and not isinstance(layer, Raw):
        for name in _COMPUTED:
            if name in layer.fields:
                layer.setfieldval(name, None)
        layer = layer.payload if layer.payload else None
    return pkt


def dissect_stream(data: bytes, profile: str = "rsocket-1.0") -> list[Packet]:
    """The TCP-framed frames of ``data`` as packets of the profile; an incomplete tail comes back as ``Raw``.

    A length the profile rejects (the draft's below its 16-byte minimum or with the
    reserved bit set) ends the split there too: the rest comes back as ``Raw``.
    """
    framed = PACKETS[profile][0]
    prefix = 3 if profile == "rsocket-1.0" else 4
    # 1.0's length excludes its 3-byte prefix; the draft's counts its own 4 bytes.
    extra = prefix if profile == "rsocket-1.0" else 0
    out: list[Packet] = []
    pos = 0
    while pos < len(data):
        size = int.from_bytes(data[pos : pos + prefix], "big") + extra if len(data) - pos >= prefix else 0
        if size < prefix + (6 if extra else 12) or len(data) - pos < size:
            out.append(Raw(data[pos:]))
            break
        out.append(framed(data[pos : pos + size]))
        pos += size
    return out


_BOUND: dict[int, str] = {}


def bind(port: int, profile: str = "rsocket-1.0") -> None:
    """TCP payloads to or from ``port`` dissect as length-prefixed RSocket frames of ``profile`` (rdpcap,
    ``Ether(bytes)``).  A segment that holds several frames dissects as a chain of them; one that ends
    inside a frame leaves the rest as ``Raw`` (scapy dissects packets, not streams: the kit's judging
    reassembles the stream itself and never depends on this)."""
    from scapy.layers.inet import TCP
    from scapy.packet import bind_layers, split_layers

    layer = DraftRSocket if profile == "reactivesocket-draft" else RSocket
    old = _BOUND.get(port)
    if old is not None:
        previous = DraftRSocket if old == "reactivesocket-draft" else RSocket
        split_layers(TCP, previous, dport=port)
        split_layers(TCP, previous, sport=port)
    bind_layers(TCP, layer, dport=port)
    bind_layers(TCP, layer, sport=port)
    _BOUND[port] = profile
