"""Dissecting RS-IO byte streams: ``dissect(data, codec)`` and TCP captures after ``bind_rsio``.

Theory of operation.  Frames carry no length, so where one ends is known only by
parsing it, and two shapes (fixed-size ``onNext``, ``onNextPacked``) need the
``elementSize`` announced by an earlier ``onSubscribe`` in the same direction.
``plan`` therefore walks a buffer once, frame by frame: it picks the class from
the type code (and, for 0x08/0x0B, the subscriber's known element size), measures
the frame by dissecting it with ``MEASURING`` set (what follows becomes padding),
and feeds the decoded frame to an ``ElementSizes`` tracker.  The first frame
that is unknown or not whole ends the plan; the rest is ``Raw``.

For captures, ``bind_rsio(port, codec)`` binds ``RSIOStream`` to TCP sport/dport.
``RSIOStream.dispatch_hook`` keeps one ``DirectionState`` per (server port,
client port, direction): element sizes, and the bytes of a frame cut off at the
end of the previous segment.  On the first RS-IO layer of a segment it plans
the whole segment (carry included) and then hands out the planned classes one
per layer: ``RSIOContinuation`` for the bytes that finish a carried frame, frame
classes, and ``Raw`` for a trailing partial frame (kept as the next carry).  A
TCP sequence number that does not continue the previous segment resets the state
(a new connection, or the same capture read again).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from scapy.config import conf
from scapy.fields import StrLenField
from scapy.layers.inet import TCP
from scapy.packet import Packet, Raw, bind_layers

from ..wire.codec import ElementSizes
from ..wire.limits import DEFAULT_LIMITS
from .fields import IncompleteField, MsgpackIntField, VarintField, read_uvarint
from .layers import CLASSES, MEASURING, RSIOFrame, sized_class

_WINDOW = 512  # first try to measure a frame within this many bytes
_MAX_CARRY = DEFAULT_LIMITS.max_frame + 1024


@dataclass
class DirectionState:
    """What one direction of one connection has shown so far."""

    sizes: ElementSizes = field(default_factory=lambda: ElementSizes(DEFAULT_LIMITS.max_streams))
    carry: bytes = b""
    next_seq: int | None = None
    pending: deque[type[Packet]] = field(default_factory=deque)


def _type_code(codec: str, data: bytes) -> tuple[int, int]:
    if codec == "msgpack":
        return data[0], 1
    return read_uvarint(data)


def _subscriber(codec: str, data: bytes) -> Any:
    parser = MsgpackIntField("s", 0) if codec == "msgpack" else VarintField("s", 0)
    return parser.getfield(None, data)[1]


def frame_class(codec: str, data: bytes, sizes: ElementSizes) -> type[RSIOFrame] | None:
    """The class of the frame at the start of ``data``; None for an unknown type code."""
    try:
        code, used = _type_code(codec, data)
    except IncompleteField:
        return None
    if code not in CLASSES[codec]:
        return None
    if code in (0x08, 0x0B):
        try:
            size = sizes.sizes.get(_subscriber(codec, data[used : used + 16]), 0)
        except (IncompleteField, TypeError):
            size = 0
        if code == 0x08 and size:
            return sized_class(codec, 0x08, size)
        if code == 0x0B:
            return sized_class(codec, 0x0B, size) if size else None
    return CLASSES[codec][code]


def measure(cls: type[Packet], data: bytes) -> tuple[Packet, int] | None:
    """(packet, length) of the ``cls`` frame at the start of ``data``; None if it is not whole."""
    token = MEASURING.set(True)
    try:
        for chunk in (data[:_WINDOW], data) if len(data) > _WINDOW else (data,):
            try:
                pkt = cls(chunk)
            except Exception:
                continue
            return pkt, len(chunk) - len(bytes(pkt.payload))
        return None
    finally:
        MEASURING.reset(token)


def plan(codec: str, data: bytes, sizes: ElementSizes) -> tuple[list[tuple[type[RSIOFrame], int, int]], int]:
    """The whole frames at the start of ``data`` as (class, start, end), and where the rest begins."""
    out: list[tuple[type[RSIOFrame], int, int]] = []
    pos = 0
    while pos < len(data):
        rest = data[pos:]
        cls = frame_class(codec, rest, sizes)
        if cls is None:
            break
        measured = measure(cls, rest)
        if measured is None:
            break
        pkt, length = measured
        try:
            sizes.track(pkt.to_frame())  # type: ignore[attr-defined]
        except Exception:  # a mutated frame: nothing to learn from it
            pass
        out.append((cls, pos, pos + length))
        pos += length
    return out, pos


def dissect(data: bytes, codec: str = "msgpack") -> list[Packet]:
    """Every whole frame of ``data`` as a packet, and a ``Raw`` for what follows the last one."""
    if codec not in CLASSES:
        raise ValueError(f"unknown codec {codec!r}")
    frames, rest = plan(codec, data, ElementSizes(DEFAULT_LIMITS.max_streams))
    out: list[Packet] = [cls(data[start:end]) for cls, start, end in frames]
    if rest < len(data):
        out.append(Raw(data[rest:]))
    return out


class RSIOContinuation(Packet):
    """The bytes at the start of a TCP segment that finish a frame begun in the previous segment."""

    name = "RS-IO continuation"
    rsio_length = 0
    fields_desc = [StrLenField("data", b"", length_from=lambda pkt: pkt.rsio_length)]

    def extract_padding(self, s: bytes) -> tuple[bytes, bytes]:
        return s, b""

    def guess_payload_class(self, payload: bytes) -> type[Packet]:
        return RSIOStream


@cache
def _continuation(length: int) -> type[Packet]:
    metaclass: Any = type(Packet)
    cls: type[Packet] = metaclass(f"RSIOContinuation{length}", (RSIOContinuation,), {"rsio_length": length, "__module__": __name__})
    return cls


_BOUND: dict[int, str] = {}  # server port -> codec
_STATES: dict[tuple[int, int, str], DirectionState] = {}


def _segment_classes(codec: str, payload: bytes, tcp: Any) -> deque[type[Packet]]:
    sport, dport = int(tcp.sport), int(tcp.dport)
    server, client, direction = (sport, dport, "s2c") if sport in _BOUND else (dport, sport, "c2s")
    state = _STATES.setdefault((server, client, direction), DirectionState())
    seq = int(tcp.seq)
    if state.next_seq != seq:
        state.sizes, state.carry = ElementSizes(DEFAULT_LIMITS.max_streams), b""
    state.next_seq = (seq + len(payload)) & 0xFFFFFFFF
    carried = len(state.carry)
    data = state.carry + payload
    frames, rest = plan(codec, data, state.sizes)
    classes: deque[type[Packet]] = deque()
    for cls, start, end in frames:
        if start < carried:
            classes.append(_continuation(end - carried))
        else:
            classes.append(cls)
    if rest < len(data):
        classes.append(conf.raw_layer)
        tail = data[rest:]
        known = frame_class(codec, tail, state.sizes) is not None
        state.carry = tail if known and len(tail) <= _MAX_CARRY else b""
    else:
        state.carry = b""
    if rest < carried:  # the carried frame is still not whole: this segment is all continuation of it
        classes = deque([conf.raw_layer])
    return classes


_PENDING: deque[type[Packet]] = deque()  # classes still to hand out for the segment being dissected


class RSIOStream(Packet):
    """Dispatcher bound to TCP by ``bind_rsio``: each layer becomes the next planned frame class."""

    name = "RS-IO"

    @classmethod
    def dispatch_hook(cls, _pkt: bytes | None = None, *args: Any, **kargs: Any) -> type[Packet]:
        if not _pkt:
            return cls
        under = kargs.get("_underlayer")
        if isinstance(under, TCP):
            port = int(under.sport) if int(under.sport) in _BOUND else int(under.dport)
            codec = _BOUND.get(port)
            if codec is None:
                return conf.raw_layer
            _PENDING.clear()
            _PENDING.extend(_segment_classes(codec, bytes(_pkt), under))
        return _PENDING.popleft() if _PENDING else conf.raw_layer


RSIOFrame.next_layer = RSIOStream

def bind_rsio(port: int, codec: str = "msgpack") -> None:
    """Dissect TCP payloads to or from ``port`` as RS-IO frames in ``codec`` (rdpcap, Ether(bytes))."""
    if codec not in CLASSES:
        raise ValueError(f"unknown codec {codec!r}")
    if port not in _BOUND:
        bind_layers(TCP, RSIOStream, dport=port)
        bind_layers(TCP, RSIOStream, sport=port)
    _BOUND[port] = codec
    for key in [key for key in _STATES if key[0] == port]:
        del _STATES[key]
