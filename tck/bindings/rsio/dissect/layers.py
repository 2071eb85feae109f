"""Scapy ``Packet`` classes for RS-IO: one per message type (rsio-v0 section 2) and codec.

The classes are generated from one table, ``MESSAGES``, so the two codecs cannot
drift apart: ``packet_class("msgpack", "onNext")`` is ``MsgpackOnNext``,
``packet_class("varint", 0x05)`` is ``VarintRequest``.  Field names are the tck
frame attributes (``subscriber``, ``initial_demand`` ...); a string, byte array or
array field ``x`` has its header in ``x_len`` / ``x_count`` (``None`` = computed),
and the type code is the field ``type``, so a mutator can set any of them to a
value the body does not match.

Two message shapes depend on state the frame does not carry: a fixed-size
``onNext`` (raw element of ``elementSize`` bytes, ``MsgpackOnNextFixed``) and
``onNextPacked`` (``count * elementSize`` raw bytes).  For dissection these get a
subclass per element size (``sized_class``), which ``rsio_tck.dissect.stream`` picks
from the ``onSubscribe`` frames seen earlier in the same direction.

``from_frame`` turns a tck frame into a packet (``bytes(pkt)`` is exactly the tck
codec's encoding) and ``to_frame`` a dissected packet back into a frame.
"""

from __future__ import annotations

import contextvars
from functools import cache
from typing import Any

from scapy.fields import ByteField, Field, FieldListField, StrLenField
from scapy.packet import Packet

from ..wire.frames import FRAME_BY_CODE, Frame, OnNext, OnNextPacked, describe
from .fields import IncompleteField, MsgpackHeaderField, MsgpackIntField, VarintField

INT, STR, BIN, IDS, RAW, PACKED = "int", "String", "Bytes", "Array[Id]", "raw", "packed"

# code -> (class stem, fields as (attribute, kind)).  RAW/PACKED are the fixed-size shapes.
MESSAGES: dict[int, tuple[str, tuple[tuple[str, str], ...]]] = {
    0x01: ("ClientHello", (("version", INT), ("extensions", IDS))),
    0x02: ("ServerHello", (("version", INT), ("extensions", IDS))),
    0x03: ("Goodbye", (("reason", STR),)),
    0x04: ("Subscribe", (("publisher", STR), ("subscriber", INT), ("initial_demand", INT))),
    0x05: ("Request", (("subscriber", INT), ("demand", INT))),
    0x06: ("Cancel", (("subscriber", INT),)),
    0x07: ("OnSubscribe", (("subscriber", INT), ("element_size", INT))),
    0x08: ("OnNext", (("subscriber", INT), ("element", BIN))),
    0x09: ("OnComplete", (("subscriber", INT),)),
    0x0A: ("OnError", (("subscriber", INT), ("error", STR))),
    0x0B: ("OnNextPacked", (("subscriber", INT), ("count", INT), ("data", PACKED))),
    0x0C: ("OnNextPart", (("subscriber", INT), ("element", INT), ("data", BIN))),
    0x0D: ("OnNextLastPart", (("subscriber", INT), ("element", INT), ("data", BIN))),
}
FIXED_ONNEXT: tuple[tuple[str, str], ...] = (("subscriber", INT), ("element", RAW))
CODEC_PREFIX = {"msgpack": "Msgpack", "varint": "Varint"}

# While set, frames keep what follows them as padding instead of dissecting it
# (used to measure one frame at a time).
MEASURING: contextvars.ContextVar[bool] = contextvars.ContextVar("rsio_measuring", default=False)


class BodyField(StrLenField):
    """Bytes whose length another field gives; raises when fewer bytes remain (frame not whole)."""

    def getfield(self, pkt: Any, s: bytes) -> tuple[bytes, bytes]:
        length = self.length_from(pkt)  # type: ignore[misc]
        if length < 0 or length > len(s):
            raise IncompleteField(f"{self.name}: {length} bytes announced, {len(s)} remain")
        return s[length:], self.m2i(pkt, s[:length])


class RSIOFrame(Packet):
    """What every RS-IO frame packet shares: its codec, type code, and the way back to a tck frame."""

    rsio_codec = ""
    rsio_code = 0
    rsio_size = 0  # elementSize of a fixed-size onNext / onNextPacked class, 0 otherwise
    rsio_layout: tuple[tuple[str, str], ...] = ()

    def extract_padding(self, s: bytes) -> tuple[bytes, bytes]:
        return (b"", s) if MEASURING.get() else (s, b"")

    # What follows a frame in the same segment: the stream dispatcher, which
    # ``stream.py`` sets here (it imports this module, so this one cannot import it).
    next_layer: type[Packet] | None = None

    def guess_payload_class(self, payload: bytes) -> type[Packet]:
        assert RSIOFrame.next_layer is not None, "rsio_tck.bindings.rsio.dissect.stream sets it on import"
        return RSIOFrame.next_layer

    def to_frame(self) -> Frame:
        """The tck frame this packet carries (ValueError when a field holds what a frame cannot)."""
        cls = FRAME_BY_CODE.get(self.getfieldval("type"))
        if cls is None:
            raise ValueError(f"type code {self.getfieldval('type')!r} names no version-0 message")
        values: dict[str, Any] = {}
        for attr, kind in self.rsio_layout:
            value = self.getfieldval(attr)
            if kind == STR:
                value = bytes(value).decode("utf-8")
            elif kind in (BIN, RAW, PACKED):
                value = bytes(value)
            elif kind == IDS:
                value = tuple(value)
            values[attr] = value
        return cls(**values)

    def mysummary(self) -> str:
        try:
            return describe(self.to_frame())
        except (ValueError, TypeError):
            return f"{self.__class__.__name__} (malformed)"


def _length_of(attr: str) -> Any:
    return lambda pkt: pkt.getfieldval(f"{attr}_len")


def _fields(codec: str, code: int, layout: tuple[tuple[str, str], ...]) -> list[Field[Any, Any]]:
    integer = MsgpackIntField if codec == "msgpack" else VarintField
    out: list[Field[Any, Any]] = [ByteField("type", code) if codec == "msgpack" else VarintField("type", code)]
    for attr, kind in layout:
        if kind == INT:
            out.append(integer(attr, 0))
        elif kind in (STR, BIN):
            if codec == "msgpack":
                family = "str" if kind == STR else "bin"
                out.append(MsgpackHeaderField(f"{attr}_len", None, family, length_of=attr))
            else:
                out.append(VarintField(f"{attr}_len", None, length_of=attr))
            out.append(BodyField(attr, b"", length_from=_length_of(attr)))
        elif kind == IDS:
            if codec == "msgpack":
                out.append(MsgpackHeaderField(f"{attr}_count", None, "array", count_of=attr))
            else:
                out.append(VarintField(f"{attr}_count", None, count_of=attr))
            count_from: Any = lambda pkt, a=attr: pkt.getfieldval(f"{a}_count")  # noqa: E731
            out.append(FieldListField(attr, [], integer("id", 0), count_from=count_from))
        elif kind == RAW:
            out.append(BodyField(attr, b"", length_from=lambda pkt: pkt.rsio_size))
        else:  # PACKED
            out.append(BodyField(attr, b"", length_from=lambda pkt: int(pkt.getfieldval("count")) * pkt.rsio_size))
    return out


def _make(codec: str, code: int, stem: str, layout: tuple[tuple[str, str], ...]) -> type[RSIOFrame]:
    name = CODEC_PREFIX[codec] + stem
    namespace = {
        "name": f"RS-IO {stem[0].lower() + stem[1:]} ({codec})",
        "fields_desc": _fields(codec, code, layout),
        "rsio_codec": codec,
        "rsio_code": code,
        "rsio_layout": layout,
        "__module__": __name__,
    }
    metaclass: Any = type(RSIOFrame)
    cls: type[RSIOFrame] = metaclass(name, (RSIOFrame,), namespace)
    return cls


CLASSES: dict[str, dict[int, type[RSIOFrame]]] = {
    codec: {code: _make(codec, code, stem, layout) for code, (stem, layout) in MESSAGES.items()} for codec in CODEC_PREFIX
}
FIXED_CLASSES: dict[str, type[RSIOFrame]] = {
    codec: _make(codec, 0x08, "OnNextFixed", FIXED_ONNEXT) for codec in CODEC_PREFIX
}
for _codec, _by_code in CLASSES.items():
    for _cls in (*_by_code.values(), FIXED_CLASSES[_codec]):
        globals()[_cls.__name__] = _cls


def packet_class(codec: str, message: int | str, fixed: bool = False) -> type[RSIOFrame]:
    """The packet class of ``message`` (type code or wire name, e.g. ``"onNext"``) in ``codec``."""
    if codec not in CLASSES:
        raise ValueError(f"unknown codec {codec!r}")
    if isinstance(message, str):
        matches = [code for code, (stem, _) in MESSAGES.items() if stem[0].lower() + stem[1:] == message]
        if not matches:
            raise ValueError(f"unknown message {message!r}")
        message = matches[0]
    if fixed and message == 0x08:
        return FIXED_CLASSES[codec]
    return CLASSES[codec][message]


@cache
def sized_class(codec: str, code: int, size: int) -> type[RSIOFrame]:
    """A fixed-size onNext (code 0x08) or onNextPacked (0x0B) class that dissects ``size``-byte elements."""
    base = FIXED_CLASSES[codec] if code == 0x08 else CLASSES[codec][0x0B]
    metaclass: Any = type(RSIOFrame)
    cls: type[RSIOFrame] = metaclass(f"{base.__name__}{size}", (base,), {"rsio_size": size, "__module__": __name__})
    return cls


def from_frame(frame: Frame, codec: str, element_size: int = 0) -> RSIOFrame:
    """The packet for ``frame``; ``element_size > 0`` makes an onNext fixed-size (raw element)."""
    values: dict[str, Any] = {}
    for attr, kind in MESSAGES[frame.code][1]:
        value = getattr(frame, attr)
        values[attr] = list(value) if kind == IDS else value.encode("utf-8") if kind == STR else value
    if isinstance(frame, OnNext) and element_size > 0:
        return sized_class(codec, 0x08, element_size)(**values)
    if isinstance(frame, OnNextPacked):
        return sized_class(codec, 0x0B, len(frame.data) // max(frame.count, 1))(**values)
    return CLASSES[codec][frame.code](**values)
