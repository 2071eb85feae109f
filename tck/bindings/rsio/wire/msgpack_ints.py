"""MessagePack integers as values: every legal encoding of one, and reading one back.

Theory of operation: rsio-v0 defines the elements of the variable-size test
publishers as MessagePack-encoded *values* (section 8).  The MessagePack
specification lets a serializer write an integer in any format wide enough to
hold it, and only recommends the shortest.  So a judge compares the decoded
value, and the encoding's width is a separate, SHOULD-level question
(TCK-9).  ``forms`` lists every legal encoding of a value, narrowest first,
for the reference peer (which exercises the freedom) and for tests;
``read_int`` decodes one whole integer object, or says it is not one.
"""

from __future__ import annotations

import msgpack

# (first byte, bytes of payload, signed) of the fixed-width integer formats.
_FORMATS = ((0xCC, 1, False), (0xCD, 2, False), (0xCE, 4, False), (0xCF, 8, False),
            (0xD0, 1, True), (0xD1, 2, True), (0xD2, 4, True), (0xD3, 8, True))
INT_MIN, UINT_MAX = -(2**63), 2**64 - 1
MAX_INT_BYTES = 9  # the widest MessagePack integer: a format byte and 8 bytes


def shortest(value: int) -> bytes:
    """The shortest MessagePack encoding of ``value`` (what ``msgpack.packb`` writes)."""
    return msgpack.packb(value)


def forms(value: int) -> list[bytes]:
    """Every legal MessagePack encoding of ``value``, the shortest first, then by width."""
    if not INT_MIN <= value <= UINT_MAX:
        raise ValueError(f"{value} does not fit a MessagePack integer")
    out = [shortest(value)]
    for first, width, signed in _FORMATS:
        low, high = (-(2 ** (8 * width - 1)), 2 ** (8 * width - 1) - 1) if signed else (0, 2 ** (8 * width) - 1)
        if low <= value <= high:
            encoded = bytes((first,)) + value.to_bytes(width, "big", signed=signed)
            if encoded not in out:
                out.append(encoded)
    return sorted(out, key=len)


def read_int(data: bytes) -> int | None:
    """The integer ``data`` encodes as exactly one MessagePack object, in any width; else None."""
    if not data or len(data) > MAX_INT_BYTES:
        return None
    try:
        value = msgpack.unpackb(data)
    except (ValueError, msgpack.ExtraData, msgpack.FormatError, msgpack.StackError):
        return None
    return value if type(value) is int else None
