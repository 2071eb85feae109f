"""Scapy fields for the two RS-IO wire profiles (rsio-v0 section 1).

``msgpack``: integers are MessagePack ints (packed by the ``msgpack`` library, so
they come out exactly as the tck codec writes them); strings, byte arrays and
arrays are a MessagePack *header* (``MsgpackHeaderField``: the family's type byte
and announced length) followed by the body.  Keeping header and body apart lets a
mutator announce a length the body does not have (past the end, 4 GiB).

``varint``: every integer and every length is an unsigned LEB128 varint
(``VarintField``); a length field left at ``None`` is computed from its body.

Every ``getfield`` raises ``IncompleteField`` when the bytes run out, so a frame
cut off at the end of a capture fails to dissect and scapy keeps it as ``Raw``.
"""

from __future__ import annotations

from typing import Any

import msgpack
from scapy.fields import Field

from ..wire.varint_codec import uvarint

_pack = msgpack.Packer(use_bin_type=True).pack


class IncompleteField(ValueError):
    """The bytes ended (or are malformed) inside a field: the frame is not whole."""


def read_uvarint(data: bytes) -> tuple[int, int]:
    """(value, bytes used) of the varint at the start of ``data``; at most 10 bytes, below 2^64."""
    value = 0
    for index, byte in enumerate(data[:10]):
        value |= (byte & 0x7F) << (7 * index)
        if byte < 0x80:
            if value >= 1 << 64:
                raise IncompleteField("varint of 2^64 or more")
            return value, index + 1
    raise IncompleteField("varint cut off" if len(data) < 10 else "varint longer than 10 bytes")


def derived_length(pkt: Any, x: Any, length_of: str | None, count_of: str | None) -> int:
    """A length or count field left as None takes the size of the field it describes."""
    if x is None and pkt is not None:
        if length_of is not None:
            value = pkt.getfieldval(length_of)
            return len(value.encode("utf-8") if isinstance(value, str) else value or b"")
        if count_of is not None:
            return len(pkt.getfieldval(count_of) or [])
    return 0 if x is None else int(x)


class VarintField(Field[int, int]):
    """An unsigned LEB128 integer (a value, a type code, a length or a count)."""

    __slots__ = ["length_of", "count_of"]

    def __init__(self, name: str, default: int | None, length_of: str | None = None, count_of: str | None = None):
        super().__init__(name, default, fmt="B")
        self.length_of = length_of
        self.count_of = count_of

    def i2m(self, pkt: Any, x: Any) -> int:
        return derived_length(pkt, x, self.length_of, self.count_of)

    def addfield(self, pkt: Any, s: bytes, val: Any) -> bytes:
        return s + uvarint(self.i2m(pkt, val))

    def getfield(self, pkt: Any, s: bytes) -> tuple[bytes, int]:
        value, used = read_uvarint(s)
        return s[used:], value

    def randval(self) -> Any:
        from scapy.volatile import RandLong

        return RandLong()


class MsgpackIntField(Field[Any, Any]):
    """One MessagePack object, normally an int (a mutated stream may hold any object here)."""

    def __init__(self, name: str, default: Any):
        super().__init__(name, default, fmt="B")

    def addfield(self, pkt: Any, s: bytes, val: Any) -> bytes:
        return s + _pack(0 if val is None else val)

    def getfield(self, pkt: Any, s: bytes) -> tuple[bytes, Any]:
        unpacker = msgpack.Unpacker(raw=False, use_list=False, strict_map_key=False, max_buffer_size=max(len(s), 1))
        unpacker.feed(s)
        try:
            value = unpacker.unpack()
        except (msgpack.OutOfData, ValueError, msgpack.FormatError, msgpack.StackError) as exc:
            raise IncompleteField(f"MessagePack object cut off or malformed: {exc!r}") from None
        return s[unpacker.tell() :], value


# (type byte, width of the length in bytes, largest length) per MessagePack family, smallest first.
_HEADERS: dict[str, tuple[tuple[int, int, int], ...]] = {
    "bin": ((0xC4, 1, 0xFF), (0xC5, 2, 0xFFFF), (0xC6, 4, 0xFFFFFFFF)),
    "str": ((0xA0, 0, 31), (0xD9, 1, 0xFF), (0xDA, 2, 0xFFFF), (0xDB, 4, 0xFFFFFFFF)),
    "array": ((0x90, 0, 15), (0xDC, 2, 0xFFFF), (0xDD, 4, 0xFFFFFFFF)),
}


def msgpack_header(family: str, length: int) -> bytes:
    """The smallest MessagePack header of ``family`` announcing ``length`` (as msgpack-python writes it)."""
    for byte, width, largest in _HEADERS[family]:
        if length <= largest:
            if width == 0:
                return bytes((byte | length,))
            return bytes((byte,)) + length.to_bytes(width, "big")
    raise ValueError(f"{family} length {length} does not fit a MessagePack header")


def read_msgpack_header(family: str, s: bytes) -> tuple[int, int]:
    """(announced length, header size) of a ``family`` header at the start of ``s``."""
    if not s:
        raise IncompleteField(f"{family} header cut off")
    first = s[0]
    for byte, width, _largest in _HEADERS[family]:
        if width == 0 and byte <= first <= byte | (0x1F if family == "str" else 0x0F):
            return first & (0x1F if family == "str" else 0x0F), 1
        if first == byte:
            if len(s) < 1 + width:
                raise IncompleteField(f"{family} header cut off")
            return int.from_bytes(s[1 : 1 + width], "big"), 1 + width
    raise IncompleteField(f"byte 0x{first:02x} does not start a MessagePack {family}")


class MsgpackHeaderField(Field[int, int]):
    """The header of a MessagePack str/bin/array: its length (or count) is the field's value.

    ``None`` means "the length of the body field", encoded as msgpack-python would.
    """

    __slots__ = ["family", "length_of", "count_of"]

    def __init__(self, name: str, default: int | None, family: str, length_of: str | None = None, count_of: str | None = None):
        super().__init__(name, default, fmt="B")
        self.family = family
        self.length_of = length_of
        self.count_of = count_of

    def i2m(self, pkt: Any, x: Any) -> int:
        return derived_length(pkt, x, self.length_of, self.count_of)

    def addfield(self, pkt: Any, s: bytes, val: Any) -> bytes:
        return s + msgpack_header(self.family, self.i2m(pkt, val))

    def getfield(self, pkt: Any, s: bytes) -> tuple[bytes, int]:
        length, used = read_msgpack_header(self.family, s)
        return s[used:], length
