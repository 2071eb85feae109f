"""Running tshark with the kit's dissectors, and reading back what it decoded.

``decode(capture)`` runs tshark once over a capture with the shipped dissector
loaded by path (``-X lua_script:``) and asks for a few fields per packet plus
the ``-z expert`` summary.  Frames come back as ``WireFrame``s (packet, sender
port, type code, frame length, subscriber Id, element/data length) in capture
order, malformed frames as ``Malformed`` (with the rule the dissector names),
and the expert summary as ``ExpertEntry`` rows.  This is what the tests compare
with the kit's own decoder; it needs no Wireshark GUI.

``decode_rsocket(capture)`` does the same for RSocket: tshark writes PDML
there, where each RSocket frame is its own element, so no field lists need
lining up; frames come back as ``RSocketFrame``s.

Per packet, tshark prints every occurrence of a field joined by commas, one
list per field.  Every RS-IO frame has a type and a length, so those two lists
line up with the frames; the others are matched by type (a subscriber Id for
every type but the hellos and goodbye, an element length for onNext, a data
length for onNextPacked and the parts).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ElementTree
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from . import dissector_path

# tshark says this on stderr whenever it runs as root (containers, CI); it is no failure.
_ROOT_WARNING = re.compile(r'^Running as user "root" and group "root"\. This could be dangerous\.$')
_EXPERT_HEADER = re.compile(r"^(Errors|Warns|Notes|Chats|Comments) \((\d+)\)$")
_EXPERT_ROW = re.compile(r"^\s+(\d+)\s+(\S+)\s+(\S+)\s+(.*)$")
_FIELDS = ("frame.number", "tcp.stream", "tcp.srcport", "tcp.dstport", "rsio.type", "rsio.length", "rsio.subscriber",
           "rsio.element.length", "rsio.data.length", "rsio.rule")
_NO_SUBSCRIBER = {0x01, 0x02, 0x03}
_DATA_TYPES = {0x0B, 0x0C, 0x0D}


class TsharkError(Exception):
    """tshark is missing, failed or timed out; the message is one line (plus tshark's own words)."""


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


@dataclass(frozen=True, slots=True, kw_only=True)
class Malformed:
    packet: int
    stream: int
    sender_port: int
    receiver_port: int
    rule: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ExpertEntry:
    severity: str  # Errors, Warns, Notes, Chats, Comments
    group: str
    protocol: str
    summary: str
    count: int


@dataclass(slots=True)
class Decoded:
    frames: list[WireFrame] = field(default_factory=list)
    malformed: list[Malformed] = field(default_factory=list)
    expert: list[ExpertEntry] = field(default_factory=list)
    stderr: str = ""

    def anomalies(self) -> list[ExpertEntry]:
        """The expert summary's warnings and errors."""
        return [entry for entry in self.expert if entry.severity in ("Errors", "Warns")]

    def lua_errors(self) -> list[ExpertEntry]:
        """A dissector that crashed: Wireshark reports each Lua error as an expert error."""
        return [entry for entry in self.expert if entry.summary.startswith("Lua Error")]


# Wireshark's classic-STUN heuristic (RFC 3489 has no magic cookie) claims any TCP stream whose first
# bytes happen to look like a STUN header, before a Lua heuristic gets to see it; a varint RS-IO stream
# sometimes does.  The kit's own comparisons switch it off; the documentation (docs/wireshark.md) tells users the same.
FOREIGN_HEURISTICS = ("classicstun_tcp",)


def tshark_binary() -> str | None:
    return shutil.which("tshark")


def run_tshark(args: Iterable[str], *, timeout: float = 120.0) -> subprocess.CompletedProcess[str]:
    """tshark with ``args``; TsharkError if it is missing, times out or fails.  stderr loses the root warning."""
    binary = tshark_binary()
    if binary is None:
        raise TsharkError("tshark is not installed (Debian: apt-get install tshark)")
    command = [binary, *args]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                              env={**os.environ, "LC_ALL": "C.UTF-8"})
    except subprocess.TimeoutExpired:
        raise TsharkError(f"tshark took more than {timeout:.0f} s: {' '.join(command)}") from None
    stderr = "\n".join(line for line in done.stderr.splitlines() if not _ROOT_WARNING.match(line))
    done.stderr = stderr
    if done.returncode != 0 or "Lua: Error" in stderr:
        raise TsharkError(f"tshark failed (exit {done.returncode}): {' '.join(command)}\n{stderr.strip()}")
    return done


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


def _parse_expert(lines: list[str]) -> list[ExpertEntry]:
    entries: list[ExpertEntry] = []
    severity = ""
    for line in lines:
        header = _EXPERT_HEADER.match(line)
        if header:
            severity = header[1]
            continue
        row = _EXPERT_ROW.match(line)
        if row and severity and row[1].isdigit():
            entries.append(ExpertEntry(severity=severity, group=row[2], protocol=row[3], summary=row[4].strip(),
                                       count=int(row[1])))
    return entries


def decode(capture: Path, *, bindings: Iterable[str] = ("rsio",), prefs: Mapping[str, str] | None = None,
           two_pass: bool = False, timeout: float = 120.0) -> Decoded:
    """What tshark, with the kit's dissectors, decodes in ``capture``."""
    args = [f"-Xlua_script:{dissector_path(binding)}" for binding in bindings]
    for heuristic in FOREIGN_HEURISTICS:
        args += ["--disable-heuristic", heuristic]
    for name, value in (prefs or {}).items():
        args += ["-o", f"{name}:{value}"]
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
    out.expert = _parse_expert(tail)
    return out


# -- RSocket ------------------------------------------------------------------------------------


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
        return [entry for entry in self.expert if entry.severity in ("Errors", "Warns")]

    def lua_errors(self) -> list[ExpertEntry]:
        return [entry for entry in self.expert if entry.summary.startswith("Lua Error")]


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
    args = [f"-Xlua_script:{dissector_path(binding)}" for binding in ("rsocket", *also_load)]
    for heuristic in FOREIGN_HEURISTICS:
        args += ["--disable-heuristic", heuristic]
    for name, value in (prefs or {}).items():
        args += ["-o", f"{name}:{value}"]
    for rule in decode_as:
        args += ["-d", rule]
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
    out.expert = _parse_expert(done.stdout[end:].splitlines())
    return out
