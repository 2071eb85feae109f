"""Reading the TCP segments of a plain capture with ``struct``, without scapy.

Theory of operation: ``pcap.read_connections`` needs, per TCP segment, its two
endpoints, its flags, its sequence number, its payload and its time.  For the
captures the kit writes itself (``pcap.write_pcap``) and for most tcpdump
captures of one TCP conversation -- classic pcap, Ethernet, IPv4, TCP -- those
are a few fixed offsets: ``segments`` reads them with ``struct``, where scapy
dissected every packet (and every payload with the binding's layer) to read the
same fields (the interop run's 707 captures, read and reassembled: 0.4 s, not
15.3 s).  The fields are exactly the ones scapy gives: the payload is bounded by
the IP total length (Ethernet padding dropped) and by what was captured; the time is scapy's decimal
``sec + usec * 10^-6`` (or ``nsec * 10^-9``) as a float.

Anything else -- pcapng, gzip, another link type, IPv6, VLAN tags, IP
fragments or headers that do not add up, any IP protocol but TCP, a
record cut short -- raises ``NotPlain``, and the caller reads the whole file
with scapy as before: this reader never guesses.  ``tests/test_report_pcap_raw.py``
holds the two readers to the same connections on every capture it can read.
"""

from __future__ import annotations

import struct
from decimal import Decimal
from pathlib import Path

Endpoint = tuple[str, int]
# (source, destination, flags as letters of F S R P A, sequence number, payload, time in seconds)
Segment = tuple[Endpoint, Endpoint, str, int, bytes, float]

_MAGIC = {b"\xd4\xc3\xb2\xa1": ("<", -6), b"\xa1\xb2\xc3\xd4": (">", -6),
          b"\x4d\x3c\xb2\xa1": ("<", -9), b"\xa1\xb2\x3c\x4d": (">", -9)}
ETHERNET = 1
IPV4, ARP = 0x0800, 0x0806
TCP = 6
MAX_CAPLEN = 0xFFFF  # scapy cuts a record to its MTU: longer ones go to it
_FLAGS = ["".join(letter for bit, letter in ((1, "F"), (2, "S"), (4, "R"), (8, "P"), (16, "A")) if bits & bit)
          for bits in range(256)]


class NotPlain(ValueError):
    """The capture is not one ``segments`` reads (the message says why): read it with scapy."""


def segments(path: Path) -> list[Segment]:
    """The TCP segments of a classic Ethernet/IPv4 pcap, in capture order; ``NotPlain`` for any other file."""
    data = path.read_bytes()
    if len(data) < 24 or data[:4] not in _MAGIC:
        raise NotPlain("not a classic pcap file")
    endian, exponent = _MAGIC[data[:4]]
    power = Decimal(10) ** exponent
    if struct.unpack_from(endian + "I", data, 20)[0] != ETHERNET:
        raise NotPlain("not an Ethernet capture")
    record = struct.Struct(endian + "IIII")
    ip_header = struct.Struct("!BBHHHBBH4s4s")
    tcp_header = struct.Struct("!HHIIBB")
    out: list[Segment] = []
    pos, end = 24, len(data)
    while pos < end:
        if pos + 16 > end:
            raise NotPlain("a record header cut short")
        sec, frac, caplen, _wirelen = record.unpack_from(data, pos)
        pos += 16
        if caplen > MAX_CAPLEN or pos + caplen > end:
            raise NotPlain("a record longer than scapy reads, or cut short")
        frame = data[pos : pos + caplen]
        pos += caplen
        if len(frame) < 14:
            raise NotPlain("a frame shorter than its Ethernet header")
        ethertype = int.from_bytes(frame[12:14], "big")
        if ethertype == ARP:
            continue
        if ethertype != IPV4 or len(frame) < 34:
            raise NotPlain(f"ethertype {ethertype:#06x}")
        version_ihl, _tos, total, _ident, fragment, _ttl, proto, _sum, src, dst = ip_header.unpack_from(frame, 14)
        ihl = (version_ihl & 0x0F) * 4
        if version_ihl >> 4 != 4 or ihl < 20 or fragment & 0x3FFF:
            raise NotPlain("an IPv4 header scapy may read otherwise (options, fragments)")
        if proto != TCP:
            raise NotPlain(f"IP protocol {proto}")
        start = 14 + ihl
        if total < ihl + 20 or len(frame) < start + 20:
            raise NotPlain("a TCP header cut short")
        sport, dport, seq, _ack, offset, bits = tcp_header.unpack_from(frame, start)
        header = (offset >> 4) * 4
        stop = min(len(frame), 14 + total)
        if header < 20 or start + header > stop:
            raise NotPlain("a TCP header longer than its segment")
        t = float(sec + power * frac)
        out.append(((_ip(src), sport), (_ip(dst), dport), _FLAGS[bits], seq, frame[start + header : stop], t))
    return out


def _ip(raw: bytes) -> str:
    return f"{raw[0]}.{raw[1]}.{raw[2]}.{raw[3]}"
