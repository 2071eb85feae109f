"""RSocket faults of the wire: malformed frames (RS-FRAME) and broken fragment chains (RS-FRAG)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from rsio_tck.bindings.rsocket.frames import (
    Ext,
    Payload,
    RequestN,
    Setup,
)

from ...sources import End
from ..policy import Policy
from .declare import Base, fault, first_on_connection, once_per_flow

if TYPE_CHECKING:
    from ..connection import RSocketConnection
    from ..flows import Flow


def _raw_after_setup(name: str, rule: str, description: str, raw: Callable[[RSocketConnection], bytes]) -> None:
    declared = fault(name, rule, description)

    @declared.on("after_setup")
    def _send(p: Policy, base: Base, s: RSocketConnection, setup: Setup) -> None:
        base(s, setup)
        s.send_raw(raw(s))


def _frame(s: RSocketConnection, body: bytes) -> bytes:
    """``body`` (header and all) with the profile's length prefix."""
    if s.endpoint.draft:
        return (len(body) + 4).to_bytes(4, "big") + body
    return len(body).to_bytes(3, "big") + body


def _header(s: RSocketConnection, frame_type: int, flags: int, stream_id: int) -> bytes:
    if s.endpoint.draft:
        return bytes((0, flags & 0xFF)) + frame_type.to_bytes(2, "big") + stream_id.to_bytes(8, "big")
    return stream_id.to_bytes(4, "big") + ((frame_type << 10) | flags).to_bytes(2, "big")


_raw_after_setup("frame-push-without-m", "RS-FRAME-9", "sends a METADATA_PUSH without the M flag after the SETUP",
                 lambda s: _frame(s, _header(s, 0x0C, 0, 0) + b"push"))
_raw_after_setup("frame-unknown-type", "RS-FRAME-4", "sends a frame of type 0x30 without the I flag after the SETUP",
                 lambda s: _frame(s, _header(s, 0x30, 0, 0)))
_raw_after_setup("frame-short", "RS-FRAME-1", "sends a frame shorter than a frame header after the SETUP",
                 lambda s: _frame(s, b"\0\0"))
_raw_after_setup("frame-trailing-bytes", "RS-FRAME-7", "sends a REQUEST_N with two bytes after its last field",
                 lambda s: _frame(s, _header(s, 0x08, 0, 2) + (1).to_bytes(4 if not s.endpoint.draft else 8, "big")
                                  + b"\0\0"))
_raw_after_setup("frame-truncated-field", "RS-FRAME-6", "sends a REQUEST_N cut inside its request N",
                 lambda s: _frame(s, _header(s, 0x08, 0, 2) + b"\0\0"))
_raw_after_setup("frame-metadata-overrun", "RS-FRAME-5",
                 "sends a PAYLOAD whose metadata length runs past the end of the frame",
                 lambda s: _frame(s, _header(s, 0x0A, 0x100 | 0x20, 2) + b"\0\0\x10ab"))
_raw_after_setup("frame-ext-type-zero", "RS-FRAME-10", "sends an EXT frame with extended type 0 (I flag set)",
                 lambda s: s.endpoint.encode(Ext(stream_id=0, ignore=True, extended_type=0)))

reserved_bit = fault("frame-reserved-bit", "RS-FRAME-3", "sends a stream's first element with the stream id's reserved bit set")


@reserved_bit.on("emit")
def _reserved_bit(p: Policy, base: Base, s: RSocketConnection, flow: Flow, data: bytes, complete: bool) -> None:
    if s.endpoint.draft or not first_on_connection(p, "reserved-bit"):
        base(s, flow, data, complete)
        return
    raw = bytearray(s.endpoint.encode(Payload(stream_id=flow.sid, next=True, complete=complete, data=data)))
    raw[3] |= 0x80  # after the 3-byte length: the stream id's high bit
    s.send_raw(bytes(raw), standing_for=Payload(stream_id=flow.sid, next=True, complete=complete, data=data))
    flow.sent += 1
    if complete:
        s.forget_flow(flow)


cut_short = fault("frame-transport-ends-inside", "RS-FRAME-8",
                  "ends the connection in the middle of a frame when a stream completes")


@cut_short.on("finish")
def _cut_short(p: Policy, base: Base, s: RSocketConnection, flow: Flow, end: End) -> None:
    raw = s.endpoint.encode(Payload(stream_id=flow.sid, complete=True))
    s.send_raw(raw[: len(raw) - 3])
    s.forget_flow(flow)
    s.close("fault frame-transport-ends-inside")


broken_chain = fault("frag-interrupted", "RS-FRAG-1", "interrupts a fragmented element with a REQUEST_N on its stream")


@broken_chain.on("emit")
def _broken_chain(p: Policy, base: Base, s: RSocketConnection, flow: Flow, data: bytes, complete: bool) -> None:
    size = max(1, len(data) // 2)
    if len(data) < 2 or not once_per_flow(flow, "broken-chain"):
        base(s, flow, data, complete)
        return
    s.send_raw(s.endpoint.encode(Payload(stream_id=flow.sid, follows=True, next=True, data=data[:size])))
    s.send_raw(s.endpoint.encode(RequestN(stream_id=flow.sid, request_n=1)))
    s.send_raw(s.endpoint.encode(Payload(stream_id=flow.sid, next=True, complete=complete, data=data[size:])),
               standing_for=Payload(stream_id=flow.sid, next=True, complete=complete, data=data))
    flow.sent += 1
    if complete:
        s.forget_flow(flow)


metadata_late = fault("frag-metadata-after-data", "RS-FRAG-2",
                      "fragments an element so that a later fragment carries metadata after data")


@metadata_late.on("emit")
def _metadata_late(p: Policy, base: Base, s: RSocketConnection, flow: Flow, data: bytes, complete: bool) -> None:
    if not once_per_flow(flow, "metadata-late"):
        base(s, flow, data, complete)
        return
    s.send_raw(s.endpoint.encode(Payload(stream_id=flow.sid, follows=True, next=True, data=data)))
    s.send_raw(s.endpoint.encode(Payload(stream_id=flow.sid, next=True, complete=complete, metadata=b"late")),
               standing_for=Payload(stream_id=flow.sid, next=True, complete=complete, data=data))
    flow.sent += 1
    if complete:
        s.forget_flow(flow)




@cut_short.on("complete_together")
def _cut_short_separately(p: Policy, base: Base, s: RSocketConnection, flow: Flow) -> bool:
    return False  # the stream ends with a PAYLOAD C of its own, where this fault acts


# -- the draft's own framing (RS-DRAFT, and RS-FRAME-2 where its 31-bit length can exceed the limit) ------------

_raw_after_setup("frame-over-limit", "RS-FRAME-2",
                 "reactivesocket-draft: announces a frame of 2^24 bytes, over the 16,777,215-byte limit",
                 lambda s: (2**24 + 4).to_bytes(4, "big") + _header(s, 0x0A, 0, 2))
_raw_after_setup("draft-header-version", "RS-DRAFT-1", "reactivesocket-draft: a frame whose header has version 1",
                 lambda s: _frame(s, b"\x01" + _header(s, 0x0B, 0, 0)[1:]))
