"""Byte-level mutation of kit frames with the scapy RS-IO layer (``rsio_tck.dissect``).

A valid frame the kit could send is built as a packet, then mutated: cut short,
one bit flipped, a string/bytes length announcing more than follows (a few
bytes, or 4 GiB), a type code from the reserved or extension range, a wrong
field type (msgpack), an Id of 2^63 or an over-long varint (varint).  The result is classified
with the tck decoder of the receiving side: a protocol error now, a frame left
incomplete (the kit then half-closes, which makes it a truncated frame), or
valid frames, which hypothesis rejects (``assume``) because a valid frame is no
longer a malformed-input test.  Returns (bytes, incomplete, rule broken).
"""

from __future__ import annotations

from typing import Any

from hypothesis import assume
from hypothesis import strategies as st

from ....errors import ProtocolViolation
from ..dissect import from_frame
from ..wire import get_codec
from ..wire.frames import Cancel, ClientHello, Frame, Goodbye, Request, Subscribe

BASES: tuple[Frame, ...] = (
    Subscribe(publisher="tck/range?count=2", subscriber=1, initial_demand=2),
    Request(subscriber=1, demand=5),
    Cancel(subscriber=9),
    Goodbye(reason="bye"),
    ClientHello(version=0, extensions=(1,)),
)
LENGTH_FIELDS = {"subscribe": "publisher_len", "goodbye": "reason_len"}
MUTATIONS = ("truncate", "type-code", "bit-flip", "length", "field-type")


def classify(codec: str, data: bytes) -> tuple[str, str]:
    """("error" | "incomplete" | "valid", rule) for ``data`` arriving after a handshake."""
    decoder = get_codec(codec).decoder()
    try:
        decoder.feed(data)
    except ProtocolViolation as violation:
        return "error", violation.rule
    try:
        decoder.eof()
    except ProtocolViolation as violation:
        return "incomplete", violation.rule
    return "valid", ""


def mutated(draw: Any, codec: str) -> bytes:
    base = draw(st.sampled_from(BASES))
    pkt = from_frame(base, codec)
    data = bytes(pkt)
    how = draw(st.sampled_from(MUTATIONS))
    if how == "truncate":
        return data[: draw(st.integers(1, len(data) - 1))]
    if how == "bit-flip":
        index, bit = draw(st.integers(0, len(data) - 1)), draw(st.integers(0, 7))
        return data[:index] + bytes((data[index] ^ (1 << bit),)) + data[index + 1 :]
    if how == "type-code":
        code = draw(st.sampled_from((0x0E, 0x3F, 0x40, 0x7F, 0x00, 0x20)))
        pkt.type = code
        return bytes(pkt)
    if how == "length":
        name = LENGTH_FIELDS.get(base.wire_name)
        if name is None:
            assume(False)
            return data
        body = bytes(getattr(pkt, name.removesuffix("_len")))
        setattr(pkt, name, draw(st.sampled_from((len(body) + 1, len(body) + 7, 0xFFFFFFFF))))
        return bytes(pkt)
    # field-type: an Id that is not an integer (msgpack) or a varint over 10 bytes (varint)
    assume("subscriber" in [f.name for f in pkt.fields_desc])
    if codec == "msgpack":
        pkt.subscriber = draw(st.sampled_from(("x", b"\x01", 1.5, -1)))
        return bytes(pkt)
    if draw(st.booleans()):
        pkt.subscriber = 2**63  # one past the largest Id (ERR-9)
        return bytes(pkt)
    head = bytes(pkt)[:1]
    return head + b"\x80" * 10 + b"\x01" + bytes(pkt)[2:]


def malformed_input(draw: Any, codec: str) -> tuple[bytes, bool, str]:
    data = mutated(draw, codec)
    verdict, rule = classify(codec, data)
    assume(verdict != "valid")
    return data, verdict == "incomplete", rule
