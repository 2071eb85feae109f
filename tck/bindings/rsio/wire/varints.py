"""Unsigned LEB128 varints, as the ``varint`` profile writes every integer (rsio-v0 section 1)."""

from __future__ import annotations

_U64 = 1 << 64

ONE_BYTE: tuple[bytes, ...] = tuple(bytes((i,)) for i in range(0x80))


def uvarint(value: int) -> bytes:
    """The minimal unsigned LEB128 encoding of ``value`` (0 <= value < 2^64)."""
    if 0 <= value < 0x80:
        return ONE_BYTE[value]
    if not 0 <= value < _U64:
        raise ValueError(f"{value} does not fit an unsigned varint (0..2^64-1)")
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


# read_uvarint returns these instead of a value (values are never negative).
INCOMPLETE, TOO_LONG, TOO_BIG = -1, -2, -3


def read_uvarint(buf: bytes | bytearray, pos: int, end: int) -> tuple[int, int]:
    """(value, position after it) of the varint at ``pos``; or (INCOMPLETE | TOO_LONG | TOO_BIG, pos).

    A tenth byte may carry only bit 63 (0x00 or 0x01): with its continuation bit
    set the varint is longer than 10 bytes, above 0x01 it is 2^64 or more.  Both
    are known as soon as the tenth byte arrives.
    """
    if pos >= end:
        return INCOMPLETE, pos
    b = buf[pos]
    if b < 0x80:
        return b, pos + 1
    value = b & 0x7F
    shift = 7
    p = pos + 1
    while p < end:
        b = buf[p]
        p += 1
        if shift == 63:
            if b & 0x80:
                return TOO_LONG, pos
            if b > 1:
                return TOO_BIG, pos
            return value | (b << 63), p
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, p
        shift += 7
    return INCOMPLETE, pos
