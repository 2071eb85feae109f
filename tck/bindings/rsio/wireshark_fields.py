"""RS-IO in tshark: what the shipped ``rsio.lua`` decodes in a capture, read back as tshark's field lists.

``decode(capture)`` runs tshark once over a capture with RS-IO's dissector loaded by path and asks
for a few fields per packet plus the ``-z expert`` summary (``rsio_tck.wireshark.tshark``: the neutral
plumbing).  Frames come back as ``WireFrame``s (packet, sender port, type code, frame length, subscriber
Id, element/data length) in capture order, malformed frames as ``Malformed`` (with the rule the dissector
names), and the expert summary as ``ExpertEntry`` rows.  This is what the tests compare with the kit's own
decoder.

Per packet, tshark prints every occurrence of a field joined by commas, one list per field.  Every RS-IO
frame has a type and a length, so those two lists line up with the frames; the others are matched by type
(a subscriber Id for every type but the hellos and goodbye, an element length for onNext, a data length
for onNextPacked and the parts).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ...wireshark.tshark import (
    ExpertEntry,
    Malformed,
    TsharkError,
    anomalies,
    dissector_options,
    lua_errors,
    parse_expert,
    run_tshark,
)

_FIELDS = ("frame.number", "tcp.stream", "tcp.srcport", "tcp.dstport", "rsio.type", "rsio.length", "rsio.subscriber",
           "rsio.element.length", "rsio.data.length", "rsio.rule")
_NO_SUBSCRIBER = {0x01, 0x02, 0x03}
_DATA_TYPES = {0x0B, 0x0C, 0x0D}


@dataclass(frozen=True, slots=True, kw_only=True)
class WireFrame:
    packet: int
    stream: int  # tcp.stream
    sender_port: int
    receiver_port: int
    code: int
    length: int
    subscriber: int | None
    payload: int | None  # element length (onNext) or data length (onNextPacked, parts)


@dataclass(slots=True)
class Decoded:
    frames: list[WireFrame] = field(default_factory=list)
    malformed: list[Malformed] = field(default_factory=list)
    expert: list[ExpertEntry] = field(default_factory=list)
    stderr: str = ""

    def anomalies(self) -> list[ExpertEntry]:
        """The expert summary's warnings and errors."""
        return anomalies(self.expert)

    def lua_errors(self) -> list[ExpertEntry]:
        """A dissector that crashed: Wireshark reports each Lua error as an expert error."""
        return lua_errors(self.expert)


def _ints(text: str) -> list[int]:
    return [int(item, 0) for item in text.split(",") if item]


def _parse_packet(values: list[str], out: Decoded) -> None:
    number, stream, port, peer = int(values[0]), int(values[1] or -1), int(values[2] or 0), int(values[3] or 0)
    types, lengths, subscribers = _ints(values[4]), _ints(values[5]), _ints(values[6])
    elements, data = _ints(values[7]), _ints(values[8])
    if len(types) != len(lengths):
        raise TsharkError(f"packet {number}: {len(types)} RS-IO types but {len(lengths)} lengths")
    for code, length in zip(types, lengths):
        try:
            subscriber = None if code in _NO_SUBSCRIBER else subscribers.pop(0)
            payload = elements.pop(0) if code == 0x08 else data.pop(0) if code in _DATA_TYPES else None
        except IndexError:
            raise TsharkError(f"packet {number}: a frame of type 0x{code:02x} lacks a field tshark should list") from None
        out.frames.append(WireFrame(packet=number, stream=stream, sender_port=port, receiver_port=peer, code=code,
                                    length=length, subscriber=subscriber, payload=payload))
    for rule in filter(None, values[9].split(",")):
        out.malformed.append(Malformed(packet=number, stream=stream, sender_port=port, receiver_port=peer, rule=rule))


def decode(capture: Path, *, bindings: Iterable[str] = ("rsio",), prefs: Mapping[str, str] | None = None,
           two_pass: bool = False, timeout: float = 120.0) -> Decoded:
    """What tshark, with the dissectors of ``bindings`` (RS-IO's among them), decodes of RS-IO in ``capture``."""
    args = dissector_options(bindings, prefs)
    args += ["-r", str(capture), "-T", "fields", "-E", "occurrence=a", "-E", "aggregator=,", "-z", "expert"]
    for name in _FIELDS:
        args += ["-e", name]
    if two_pass:
        args.append("-2")
    done = run_tshark(args, timeout=timeout)
    out = Decoded(stderr=done.stderr)
    lines = done.stdout.splitlines()
    tail: list[str] = []
    for index, line in enumerate(lines):
        values = line.split("\t")
        if len(values) != len(_FIELDS) or not values[0].isdigit():
            tail = lines[index:]  # the -z expert summary follows the packets
            break
        _parse_packet(values, out)
    out.expert = parse_expert(tail)
    return out
