"""RSocket in tshark: what the shipped ``rsocket.lua`` decodes in a capture, read back from tshark's PDML.

``decode_rsocket(capture)`` runs tshark once over a capture with RSocket's dissector loaded by path (and
any other binding's, ``also_load``), over the neutral plumbing of ``rsio_tck.wireshark.tshark``.  tshark
writes PDML, where each RSocket frame is its own element, so no field lists need lining up; frames come
back as ``RSocketFrame``s, malformed frames as ``Malformed`` (with the rule the dissector names), and the
``-z expert`` summary as ``ExpertEntry`` rows.  This is what the tests compare with the kit's own decoder.
"""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree
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


@dataclass(frozen=True, slots=True, kw_only=True)
class RSocketFrame:
    packet: int
    stream: int  # tcp.stream
    sender_port: int
    receiver_port: int
    profile: str
    code: int  # the frame type as on the wire (the draft's RESPONSE is 0x20)
    name: str
    stream_id: int
    size: int  # bytes on the wire, length prefix included
    flags: int  # the header's flag bits (1.0: the low 10 bits of the type word; the draft: its flags byte)
    metadata: int | None  # metadata bytes, None when the frame carries none
    data: int | None  # data bytes, None when the frame has no data area
    ignored: str | None  # the rule that makes the receiver ignore the frame
    follows: bool | None  # the F, C and N flags, where the frame type has them (the draft's N is implied)
    complete: bool | None
    next: bool | None


@dataclass(slots=True)
class RSocketDecoded:
    frames: list[RSocketFrame] = field(default_factory=list)
    malformed: list[Malformed] = field(default_factory=list)
    expert: list[ExpertEntry] = field(default_factory=list)
    undecoded: int = 0  # dissections showing bytes after a malformed frame, not decoded
    stderr: str = ""

    def anomalies(self) -> list[ExpertEntry]:
        return anomalies(self.expert)

    def lua_errors(self) -> list[ExpertEntry]:
        return lua_errors(self.expert)


def _pdml_packets(text: str) -> Iterable[ElementTree.Element]:
    root = ElementTree.fromstring(text)
    return root.iter("packet")


def _rsocket_frame(proto: ElementTree.Element, where: dict[str, int]) -> RSocketFrame | Malformed | None:
    shown: dict[str, str] = {}
    for item in proto.iter("field"):
        shown.setdefault(item.get("name", ""), item.get("show", ""))
    if "rsocket.rule" in shown:
        return Malformed(rule=shown["rsocket.rule"], **where)
    if "rsocket.type" not in shown:
        return None  # bytes not decoded, or a frame continuing beyond the segment without reassembly

    def number(name: str) -> int | None:
        return int(shown[name], 0) if name in shown else None

    def flag(name: str) -> bool | None:
        return shown[name] == "1" if name in shown else None

    return RSocketFrame(profile=shown["rsocket.profile"], code=int(shown["rsocket.type"], 0),
                        name=shown["rsocket.type_name"], stream_id=int(shown["rsocket.stream_id"]),
                        size=int(shown["rsocket.frame_size"]), flags=int(shown["rsocket.flags"], 0),
                        metadata=number("rsocket.metadata.size"), data=number("rsocket.data.size"),
                        ignored=shown.get("rsocket.ignored"), follows=flag("rsocket.flags.follows"),
                        complete=flag("rsocket.flags.complete"), next=flag("rsocket.flags.next"), **where)


def _read_rsocket_packet(packet: ElementTree.Element, out: RSocketDecoded) -> None:
    tcp: dict[str, str] = {}
    number = 0
    for proto in packet.findall("proto"):
        kind = proto.get("name")
        if kind == "geninfo":
            number = int(next(f.get("show", "0") for f in proto.iter("field") if f.get("name") == "num"))
        elif kind == "tcp":
            tcp = {f.get("name", ""): f.get("show", "") for f in proto.iter("field")
                   if f.get("name") in ("tcp.stream", "tcp.srcport", "tcp.dstport")}
        elif kind == "rsocket":
            where = {"packet": number, "stream": int(tcp.get("tcp.stream", "-1")),
                     "sender_port": int(tcp.get("tcp.srcport", "0")), "receiver_port": int(tcp.get("tcp.dstport", "0"))}
            found = _rsocket_frame(proto, where)
            if isinstance(found, RSocketFrame):
                out.frames.append(found)
            elif isinstance(found, Malformed):
                out.malformed.append(found)
            elif any(f.get("name") == "rsocket.undecoded" for f in proto.iter("field")):
                out.undecoded += 1


def decode_rsocket(capture: Path, *, prefs: Mapping[str, str] | None = None, two_pass: bool = False,
                   also_load: Iterable[str] = (), decode_as: Iterable[str] = (), timeout: float = 120.0) -> RSocketDecoded:
    """What tshark, with the RSocket dissector (and the dissectors of ``also_load``), decodes in ``capture``.

    ``decode_as`` items are tshark's ``-d`` arguments (``tcp.port==7000,rsocket``).
    """
    args = dissector_options(("rsocket", *also_load), prefs, decode_as)
    args += ["-r", str(capture), "-T", "pdml", "-J", "tcp rsocket", "-z", "expert"]
    if two_pass:
        args.append("-2")
    done = run_tshark(args, timeout=timeout)
    out = RSocketDecoded(stderr=done.stderr)
    end = done.stdout.find("</pdml>")
    if end < 0:
        raise TsharkError(f"tshark wrote no PDML for {capture}")
    end += len("</pdml>")
    for packet in _pdml_packets(done.stdout[:end]):
        _read_rsocket_packet(packet, out)
    out.expert = parse_expert(done.stdout[end:].splitlines())
    return out
