"""Provisional rule IDs of the RSocket wire layer, in one table.

These are not in SPEC.md yet: a later change moves them into the catalogue
(tck/rules.py, checked against SPEC.md) with the rest of the RSocket rules.
Until then every ``ProtocolViolation`` the RSocket codecs raise, and every
``IgnoredFrame`` they return, names one of these IDs.  ``source`` is the section
of Protocol.md (RSocket 1.0) or of seed 001 (the ReactiveSocket draft) the rule
comes from; rules marked "kit" are the kit's own resource limits, not the spec's.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class Rule:
    title: str
    source: str


RULES: dict[str, Rule] = {
    "RS-FRAME-1": Rule(
        title="a frame is at least as long as its frame header",
        source="Protocol.md, Frame Header Format; seed 001, Frame Header Format",
    ),
    "RS-FRAME-2": Rule(
        title="a frame is at most 16,777,215 bytes, and no larger than the receiver's configured maximum",
        source="Protocol.md, Max Frame Size; Framing Format",
    ),
    "RS-FRAME-3": Rule(
        title="a reserved bit (the high bit of the stream id, of a 31-bit or 63-bit field, the draft's R bit) is 0",
        source="Protocol.md, Frame Header Format and each frame's layout; seed 001, Frame Header Format",
    ),
    "RS-FRAME-4": Rule(
        title="a frame type the receiver does not understand, without the I flag, is an error",
        source="Protocol.md, Handling Ignore Flag; Frame Types",
    ),
    "RS-FRAME-5": Rule(
        title="a metadata length (and every other length inside a frame) fits in the frame",
        source="Protocol.md, Metadata Optional Header; SETUP Frame; RESUME Frame",
    ),
    "RS-FRAME-6": Rule(
        title="a frame holds every fixed field of its type",
        source="Protocol.md, each frame's Frame Contents",
    ),
    "RS-FRAME-7": Rule(
        title="a frame with no data area ends after its last field",
        source="Protocol.md, CANCEL, REQUEST_N, RESUME, RESUME_OK, LEASE Frame Contents",
    ),
    "RS-FRAME-8": Rule(
        title="the transport does not end inside a frame",
        source="Protocol.md, Framing Format (a length-prefixed frame is whole)",
    ),
    "RS-FRAME-9": Rule(
        title="METADATA_PUSH has the M flag set",
        source="Protocol.md, METADATA_PUSH Frame",
    ),
    "RS-IGNORE-1": Rule(
        title="a frame of a type not understood, with the I flag set, is ignored",
        source="Protocol.md, Handling Ignore Flag; seed 001, Frame Header Format (I)gnore",
    ),
    "RS-IGNORE-2": Rule(
        title="an invalid metadata length on a frame with the I flag set makes the frame ignored, not an error",
        source="Protocol.md, Metadata Optional Header",
    ),
    "RS-DRAFT-1": Rule(
        title="the header's version is 0",
        source="seed 001, Frame Header Format (Version: current version is 0)",
    ),
    "RS-DRAFT-2": Rule(
        title="a frame whose metadata length exceeds the frame (or is below its own 4-byte header) is ignored",
        source="seed 001, Metadata Optional Header",
    ),
    "RS-FRAG-1": Rule(
        title="while a fragmented request or payload is in progress on a stream, its next fragment is a PAYLOAD",
        source="Protocol.md, Fragmentation And Reassembly (REQUEST Frames, PAYLOAD Frame)",
    ),
    "RS-FRAG-2": Rule(
        title="across the fragments of one payload, all metadata comes before any data",
        source="Protocol.md, Fragmentation And Reassembly",
    ),
    "RS-LIMIT-1": Rule(
        title="kit: a reassembled payload stays within the receiver's configured maximum",
        source="kit (Protocol.md, Handling the Unexpected: reassembly must assume an infinite stream)",
    ),
}


def rule_title(rule: str) -> str:
    """``"RS-FRAME-1: a frame is at least ..."`` for messages and reports."""
    return f"{rule}: {RULES[rule].title}"
