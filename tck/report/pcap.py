"""Traces as pcaps, and pcaps as traces: synthetic TCP out, TCP reassembly in.

Writing: a trace (``TraceRecord``s of one connection) becomes a capture of a
made-up TCP connection between the kit (client) and the target (server):
explicit Ethernet addresses, a SYN / SYN-ACK / ACK handshake, every record's
bytes as segments of at most ``MSS`` bytes with correct sequence and
acknowledgement numbers, a FIN where a direction ended and the last ACKs.
Packet times are ``base + t``.  ``write_pcap`` builds the bytes with ``struct``
(the bytes scapy writes, some twenty times faster) and streams them to the file,
stopping after ``PCAP_MAX_PACKETS`` (a truncated capture ends with a RST from
the kit, so tools see it end); a trace's truncation marker ends the capture the
same way.  ``trace_packets`` gives scapy's packets, for whoever looks at the
layers.  Nothing is ever sent or sniffed.

Reading (``read_connections``): any capture (ours, or tcpdump between two
implementations); a plain Ethernet/IPv4 pcap is read with ``struct``
(``pcap_raw``), any other with scapy (``connections``), to the same segments.  Packets are taken in capture order; each TCP connection is
keyed by its two endpoints, its client is the side that sent the SYN (without
one, the side with the higher port).  Each direction is reassembled by sequence
number: out-of-order segments wait until the gap before them is filled,
retransmitted bytes are dropped, and bytes become a ``TraceRecord`` at the time
of the packet that made them contiguous, so the two directions interleave as
the capture saw them.  What could not be reassembled (a gap never filled) is
reported in ``Connection.notes``.
"""

from __future__ import annotations

import array
import socket
import struct
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..binding import DEFAULT_BINDING
from ..errors import Side
from ..monitor.trace import TraceRecord
from .pcap_raw import Segment

KIT_MAC, TARGET_MAC = "02:00:00:00:00:01", "02:00:00:00:00:02"
KIT_IP, TARGET_IP = "192.0.2.1", "192.0.2.2"  # TEST-NET-1: documentation addresses
DEFAULT_PORT = 7878
MSS = 1460
SEQ_MOD = 2**32
PCAP_MAX_PACKETS = 8192  # packets one capture holds at most (about 11 MiB of payload)


def _scapy() -> Any:
    """Scapy's layers, imported on first use (it is slow to import), with the RS-IO layer bound if present."""
    from scapy.layers.inet import IP, TCP
    from scapy.layers.inet6 import IPv6
    from scapy.layers.l2 import Ether
    from scapy.utils import rdpcap, wrpcap

    return Ether, IP, IPv6, TCP, rdpcap, wrpcap


def bind_layer(port: int, profile: str | None = None, binding: str = DEFAULT_BINDING) -> bool:
    """Let ``rdpcap`` dissect ``binding``'s payloads on ``port``, when the binding has a scapy layer
    (``rsio_tck.dissect``); False when it has none (the payloads stay ``Raw``)."""
    from ..dissect import bind_layer as bind

    try:
        bind(binding, port, profile)
    except (ValueError, ImportError):
        return False
    return True


def bind_rsio_layer(port: int, codec: str = "msgpack") -> bool:
    """The default binding's (RS-IO's) name for ``bind_layer``."""
    return bind_layer(port, codec, DEFAULT_BINDING)


def target_port(url: str) -> int:
    """The TCP port of a tcp:// or tls:// target, else the default the captures use."""
    from ..transport import Target, TargetError

    try:
        return Target.parse(url).port or DEFAULT_PORT
    except TargetError:
        return DEFAULT_PORT


@dataclass
class _Sender:
    mac: str
    ip: str
    port: int
    seq: int
    fin: bool = False
    fin_acked: bool = False  # a later packet of the peer acknowledged our FIN


def trace_packets(records: Iterable[TraceRecord], *, server_port: int = DEFAULT_PORT, client_port: int = 40000,
                  base: float = 0.0, isn: tuple[int, int] = (1000, 5000000),
                  max_packets: int = PCAP_MAX_PACKETS) -> list[Any]:
    """The packets of one connection carrying ``records``: handshake, data both ways, FINs."""
    return list(iter_trace_packets(records, server_port=server_port, client_port=client_port, base=base, isn=isn,
                                   max_packets=max_packets))


def _scapy_packet(me: _Sender, peer: _Sender, flags: str, when: float, payload: bytes, ack: bool) -> Any:
    """One packet as scapy builds it (``trace_packets``: tests and tools that look at the layers)."""
    Ether, IP, _IPv6, TCP, _rd, _wr = _scapy()
    tcp = TCP(sport=me.port, dport=peer.port, flags=flags, seq=me.seq % SEQ_MOD,
              ack=peer.seq % SEQ_MOD if ack else 0, window=65535)
    if payload:
        tcp.add_payload(payload)  # add_payload, not "/": "/" copies every layer (slow for big traces)
    ip = IP(src=me.ip, dst=peer.ip)
    ip.add_payload(tcp)
    built = Ether(src=me.mac, dst=peer.mac)
    built.add_payload(ip)
    built.time = when
    return built


_TCP_FLAGS = {"F": 0x01, "S": 0x02, "R": 0x04, "P": 0x08, "A": 0x10}


def _checksum(data: bytes) -> bytes:
    """RFC 1071's checksum, summed over native 16-bit words and stored in native order (its byte-order
    independence, section 2(B)): the C-speed ``array`` sum instead of a Python loop."""
    if len(data) % 2:
        data += b"\0"
    total = sum(array.array("H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return struct.pack("=H", ~total & 0xFFFF)


def _raw_packet(me: _Sender, peer: _Sender, flags: str, when: float, payload: bytes, ack: bool) -> tuple[float, bytes]:
    """The same packet's bytes, byte for byte what scapy writes (``tests/test_report_pcap.py`` holds them
    equal), built with ``struct``: scapy's ~1 ms a packet made a run's pcaps of 4 MiB traces (120 of them,
    against a target that sends random bytes) take minutes after the last scenario ended."""
    src, dst = socket.inet_aton(me.ip), socket.inet_aton(peer.ip)
    bits = sum(_TCP_FLAGS[flag] for flag in flags)
    tcp = struct.pack("!HHIIBBH", me.port, peer.port, me.seq % SEQ_MOD, peer.seq % SEQ_MOD if ack else 0,
                      5 << 4, bits, 65535)
    pseudo = src + dst + struct.pack("!BBH", 0, 6, 20 + len(payload))
    tcp += _checksum(pseudo + tcp + b"\0\0\0\0" + payload) + b"\0\0"
    ip = struct.pack("!BBHHHBB", 0x45, 0, 40 + len(payload), 1, 0, 64, 6)
    ip += _checksum(ip + b"\0\0" + src + dst) + src + dst
    ether = bytes.fromhex(peer.mac.replace(":", "")) + bytes.fromhex(me.mac.replace(":", "")) + b"\x08\x00"
    return when, ether + ip + tcp + payload


def iter_trace_packets(records: Iterable[TraceRecord], *, server_port: int = DEFAULT_PORT, client_port: int = 40000,
                       base: float = 0.0, isn: tuple[int, int] = (1000, 5000000),
                       max_packets: int = PCAP_MAX_PACKETS, build: Any = _scapy_packet) -> Iterator[Any]:
    """As ``trace_packets``, one packet at a time; at most ``max_packets`` (then a RST ends the capture).
    ``build(me, peer, flags, time, payload, ack)`` makes each packet (scapy's, or ``_raw_packet``'s bytes)."""
    ends = {Side.CLIENT: _Sender(KIT_MAC, KIT_IP, client_port, isn[0]),
            Side.SERVER: _Sender(TARGET_MAC, TARGET_IP, server_port, isn[1])}
    emitted = 0

    def packet(sender: Side, flags: str, t: float, payload: bytes = b"", *, ack: bool = True) -> Any:
        nonlocal emitted
        me, peer = ends[sender], ends[Side.SERVER if sender is Side.CLIENT else Side.CLIENT]
        built = build(me, peer, flags, base + t, payload, ack)
        me.seq += len(payload) + (1 if "S" in flags or "F" in flags else 0)
        peer.fin_acked = peer.fin_acked or (ack and peer.fin)
        emitted += 1
        return built

    stream = iter(records)
    first = next(stream, None)
    t0 = first.t if first is not None else 0.0
    yield packet(Side.CLIENT, "S", t0, ack=False)
    yield packet(Side.SERVER, "SA", t0)
    yield packet(Side.CLIENT, "A", t0)
    t = t0
    for record in _chain([first] if first is not None else [], stream):
        t = max(record.t, t)
        end = ends[record.sender]
        if record.truncated:
            yield packet(Side.CLIENT, "RA", t)  # the trace was cut here: the kit's RST ends it for every tool
            return
        if end.fin:
            continue
        if record.data is None and record.reset:
            yield packet(record.sender, "RA", t)  # a reset ends both directions: nothing follows it
            return
        if record.data is None:
            yield packet(record.sender, "FA", t)
            end.fin = True
            continue
        for start in range(0, len(record.data), MSS):
            if emitted >= max_packets - 1:
                yield packet(Side.CLIENT, "RA", t)  # the capture's own cap: cut the same way
                return
            yield packet(record.sender, "PA", t, record.data[start : start + MSS])
    # Acknowledge each FIN that no later packet of the receiver did (a FIN-ACK answering a FIN
    # already acknowledges it: a second ACK would be a duplicate, which Wireshark flags).
    for side in (Side.CLIENT, Side.SERVER):
        if ends[side].fin and not ends[side].fin_acked:
            yield packet(Side.SERVER if side is Side.CLIENT else Side.CLIENT, "A", t)


def _chain(first: list[TraceRecord], rest: Iterator[TraceRecord]) -> Iterator[TraceRecord]:
    yield from first
    yield from rest


def write_pcap(path: Path, records: Iterable[TraceRecord], **kwargs: Any) -> int:
    """Write the capture packet by packet (never the whole list in memory); returns the packet count.
    The file is what scapy's ``PcapWriter`` writes (little-endian pcap 2.4, Ethernet, microseconds)."""
    return _write(path, iter_trace_packets(records, build=_raw_packet, **kwargs))


def write_pcap_connections(path: Path, connections: Iterable[Iterable[TraceRecord]], *, server_port: int = DEFAULT_PORT,
                           first_client_port: int = 40000) -> int:
    """Several connections in one capture, one after the other: connection ``i`` from client port
    ``first_client_port + i``, its times ``i`` seconds on (what scapy's ``wrpcap`` of their ``trace_packets``
    writes, as ``write_pcap``); returns the packet count."""
    packets = (packet for index, records in enumerate(connections)
               for packet in iter_trace_packets(records, build=_raw_packet, server_port=server_port,
                                                client_port=first_client_port + index, base=index))
    return _write(path, packets)


def _write(path: Path, packets: Iterable[tuple[float, bytes]]) -> int:
    count = 0
    with path.open("wb") as stream:
        stream.write(struct.pack("<IHHIIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for when, frame in packets:
            sec = int(when)
            stream.write(struct.pack("<IIII", sec, int(round((when - sec) * 1_000_000)), len(frame), len(frame)))
            stream.write(frame)
            count += 1
    return count


# -- reading -------------------------------------------------------------------------------


@dataclass
class _Direction:
    """One direction's reassembly: bytes before ``next`` have been delivered."""

    base: int | None = None  # sequence number of the first payload byte
    next: int = 0  # relative offset of the next byte to deliver
    pending: dict[int, bytes] = field(default_factory=dict)
    fin_at: int | None = None
    ended: bool = False

    def offset(self, seq: int) -> int:
        assert self.base is not None
        return (seq - self.base) % SEQ_MOD

    def add(self, seq: int, payload: bytes, fin: bool) -> tuple[bytes, bool]:
        """Take a segment; return the bytes it made deliverable and whether the direction ended."""
        if self.base is None:
            self.base = seq
        start = self.offset(seq)
        if start > SEQ_MOD // 2:  # before base: an old retransmission
            start -= SEQ_MOD
        if payload and start == self.next and not self.pending:
            # The next bytes in order, nothing waiting (nearly every segment): what the loop below would deliver.
            self.next += len(payload)
            if fin:
                self.fin_at = self.next
            ended = not self.ended and self.fin_at is not None and self.next >= self.fin_at
            self.ended = self.ended or ended
            return payload, ended
        if payload and start + len(payload) > self.next:
            self.pending[start] = max(payload, self.pending.get(start, b""), key=len)
        if fin:
            self.fin_at = start + len(payload)
        out = bytearray()
        progressed = True
        while progressed:
            progressed = False
            for begin in sorted(self.pending):
                if begin > self.next:
                    break
                chunk = self.pending.pop(begin)
                if begin + len(chunk) > self.next:
                    out += chunk[self.next - begin :]
                    self.next = begin + len(chunk)
                progressed = True
        ended = not self.ended and self.fin_at is not None and self.next >= self.fin_at
        self.ended = self.ended or ended
        return bytes(out), ended


@dataclass
class Connection:
    """One TCP connection of a capture, reassembled as a trace."""

    client: tuple[str, int]
    server: tuple[str, int]
    records: list[TraceRecord] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    saw_syn: bool = False

    @property
    def name(self) -> str:
        return f"{self.client[0]}:{self.client[1]} -> {self.server[0]}:{self.server[1]}"


def _endpoints(packet: Any, ip_layers: tuple[Any, ...], tcp_layer: Any) -> tuple[tuple[str, int], tuple[str, int]] | None:
    for layer in ip_layers:
        if packet.haslayer(layer) and packet.haslayer(tcp_layer):
            ip, tcp = packet[layer], packet[tcp_layer]
            return (str(ip.src), int(tcp.sport)), (str(ip.dst), int(tcp.dport))
    return None


def _payload(tcp: Any) -> bytes:
    """The TCP payload as captured (not as a bound dissector would rebuild it)."""
    raw = getattr(tcp, "original", None)
    if raw:
        return bytes(raw[int(tcp.dataofs) * 4 :])
    return bytes(tcp.payload) if tcp.payload else b""


def connections(packets: Iterable[Any]) -> list[Connection]:
    """Every TCP connection of ``packets`` (scapy's, in capture order), each direction reassembled."""
    return _reassembled(_scapy_segments(packets))


def _scapy_segments(packets: Iterable[Any]) -> Iterator[Segment]:
    """(source, destination, flags, seq, payload, time) of each TCP segment among scapy's ``packets``."""
    _Ether, IP, IPv6, TCP, _rd, _wr = _scapy()
    for packet in packets:
        ends = _endpoints(packet, (IP, IPv6), TCP)
        if ends is None:
            continue
        tcp = packet[TCP]
        yield ends[0], ends[1], str(tcp.flags), int(tcp.seq), _payload(tcp), float(packet.time)


def _reassembled(segments: Iterable[Segment]) -> list[Connection]:
    """Every TCP connection of ``segments`` (in capture order), each direction reassembled."""
    found: dict[frozenset[tuple[str, int]], tuple[Connection, dict[tuple[str, int], _Direction]]] = {}
    t0: float | None = None
    for src, dst, flags, seq, payload, t in segments:
        ends = (src, dst)
        t0 = t if t0 is None else t0
        key = frozenset(ends)
        if key not in found or ("S" in flags and "A" not in flags and found[key][0].records):
            client, server = (src, dst) if "S" in flags and "A" not in flags else sorted(ends, key=lambda e: -e[1])
            found[key] = (Connection(client=client, server=server, saw_syn="S" in flags), {})
        conn, directions = found[key]
        direction = directions.setdefault(src, _Direction())
        if "S" in flags:
            direction.base = (seq + 1) % SEQ_MOD
            if "A" not in flags and src != conn.client:
                conn.client, conn.server = src, dst
            conn.saw_syn = True
            continue
        if "R" in flags:
            conn.notes.append(f"{src[0]}:{src[1]} reset the connection at {t - t0:.6f} s")
        data, ended = direction.add(seq, payload, "F" in flags)
        sender = Side.CLIENT if src == conn.client else Side.SERVER
        if data:
            conn.records.append(TraceRecord(t=t - t0, sender=sender, data=data))
        if ended:
            conn.records.append(TraceRecord(t=t - t0, sender=sender, data=None))
    out = []
    for conn, directions in found.values():
        if not conn.saw_syn:
            conn.notes.append("no SYN in the capture: the side with the higher port is taken as the client")
        for src, direction in directions.items():
            if direction.pending:
                missing = min(direction.pending) - direction.next
                conn.notes.append(f"{src[0]}:{src[1]}: {missing} bytes never captured at offset {direction.next}; "
                                  f"{sum(map(len, direction.pending.values()))} bytes after the gap not judged")
        out.append(conn)
    return out


def read_connections(path: Path, before_scapy: Callable[[], object] | None = None) -> list[Connection]:
    """Every TCP connection of the capture at ``path``: read with ``struct`` when it is a plain Ethernet/IPv4
    pcap (``pcap_raw``: the kit's own captures, most of tcpdump's), else with scapy, after ``before_scapy``
    (``check-pcap`` binds the binding's layer there: importing scapy takes a second or two, which a plain
    capture does not pay)."""
    from .pcap_raw import NotPlain, segments

    try:
        return _reassembled(segments(path))
    except NotPlain:
        if before_scapy is not None:
            before_scapy()
        return connections(_scapy()[4](str(path)))


def iter_payload_packets(path: Path) -> Iterator[Any]:
    """Packets of a capture that carry TCP payload (for inspection and tests)."""
    _Ether, _IP, _IPv6, TCP, rdpcap, _wr = _scapy()
    for packet in rdpcap(str(path)):
        if packet.haslayer(TCP) and bytes(packet[TCP].payload):
            yield packet
