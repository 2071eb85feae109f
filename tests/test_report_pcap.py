"""pcaps: synthetic TCP written from traces, reassembled from any capture, judged by check-pcap."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from report_run import shared_run
from scapy.layers.inet import IP, TCP
from scapy.layers.l2 import Ether
from scapy.packet import Raw
from scapy.utils import rdpcap, wrpcap
from typer.testing import CliRunner

from rsio_tck.cli import app
from rsio_tck.errors import Side
from rsio_tck.monitor import Monitor, TraceRecord, read_trace
from rsio_tck.report.pcap import KIT_MAC, TARGET_MAC, bind_rsio_layer, connections, read_connections, trace_packets


@pytest.fixture(scope="module")
def run_dir() -> Path:
    return shared_run()


def _streams(records: list[TraceRecord]) -> dict[Side, bytes]:
    return {side: b"".join(r.data for r in records if r.sender is side and r.data is not None) for side in Side}


def _judged(records: list[TraceRecord]) -> list[tuple[str, str, int | None]]:
    monitor = Monitor("msgpack")
    monitor.replay(records)
    return [(f.rule, str(f.side), f.frame_index) for f in monitor.findings]


@pytest.mark.parametrize("scenario", ["HS-001", "DEM-001", "DEM-003"])
def test_pcap_round_trip_gives_the_trace_back(run_dir: Path, scenario: str) -> None:
    trace = list(read_trace(run_dir / "traces" / f"{scenario}.trace"))
    found = read_connections(run_dir / "pcaps" / f"{scenario}.pcap")
    assert len(found) == 1 and found[0].notes == []
    conn = found[0]
    assert conn.client[0] == "192.0.2.1" and conn.saw_syn
    assert _streams(conn.records) == _streams(trace)
    assert [r.sender for r in conn.records if r.data is None] == [r.sender for r in trace if r.data is None]
    assert _judged(conn.records) == _judged(trace)
    if scenario == "DEM-001":
        assert any(rule == "DEM-1" and side == "server" for rule, side, _ in _judged(conn.records))


def test_pcap_has_handshake_explicit_macs_and_exact_sequence_numbers(run_dir: Path) -> None:
    packets = rdpcap(str(run_dir / "pcaps" / "DEM-001.pcap"))
    flags = [str(p[TCP].flags) for p in packets]
    assert flags[:3] == ["S", "SA", "A"] and flags.count("FA") == 2
    assert all(p[Ether].src in (KIT_MAC, TARGET_MAC) and p[Ether].dst in (KIT_MAC, TARGET_MAC) for p in packets)
    client = (packets[0][IP].src, packets[0][TCP].sport)
    next_seq = {client: packets[0][TCP].seq + 1, "server": packets[1][TCP].seq + 1}
    assert packets[1][TCP].ack == next_seq[client]
    for packet in packets[2:]:
        mine = client if (packet[IP].src, packet[TCP].sport) == client else "server"
        theirs = "server" if mine == client else client
        assert packet[TCP].seq == next_seq[mine]
        assert packet[TCP].ack == next_seq[theirs]
        length = len(bytes(packet[TCP].payload)) if packet.haslayer(Raw) else 0
        next_seq[mine] += length + (1 if "F" in str(packet[TCP].flags) else 0)
    times = [float(p.time) for p in packets]
    assert times == sorted(times)


def test_reassembly_survives_reordering_duplicates_and_overlaps(run_dir: Path) -> None:
    trace = list(read_trace(run_dir / "traces" / "DEM-003.trace"))
    packets = trace_packets(trace, server_port=7878)
    handshake, rest = packets[:3], packets[3:]
    mangled = []
    for packet in rest:  # split each data segment into two overlapping retransmitted halves
        payload = bytes(packet[TCP].payload) if packet.haslayer(Raw) else b""
        if len(payload) >= 4:
            first, second = packet.copy(), packet.copy()
            first[TCP].remove_payload()
            first[TCP].add_payload(payload[: len(payload) // 2 + 1])
            first[TCP].flags = "A"
            second[TCP].seq = packet[TCP].seq + len(payload) // 2
            second[TCP].remove_payload()
            second[TCP].add_payload(payload[len(payload) // 2 :])
            mangled += [second, first, packet]  # late first half, then a full retransmission
        else:
            mangled.append(packet)
    random.Random(5).shuffle(mangled)
    conn = connections(handshake + mangled)[0]
    assert conn.notes == []
    assert _streams(conn.records) == _streams(trace)


def test_a_capture_without_syn_and_with_a_gap_is_reported(run_dir: Path) -> None:
    trace = list(read_trace(run_dir / "traces" / "DEM-003.trace"))
    packets = trace_packets(trace, server_port=7878, client_port=50000)[3:]
    data = [i for i, p in enumerate(packets) if p.haslayer(Raw) and p[IP].src == "192.0.2.2"]
    del packets[data[1]]
    conn = connections(packets)[0]
    assert conn.client == ("192.0.2.1", 50000)
    assert any("no SYN" in note for note in conn.notes)
    assert any("never captured" in note for note in conn.notes)


def test_check_pcap_judges_every_connection_and_fails_on_violations(run_dir: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    clean = runner.invoke(app, ["check-pcap", str(run_dir / "pcaps" / "HS-001.pcap")])
    assert clean.exit_code == 0, clean.output
    assert "0 violations" in clean.output
    both = tmp_path / "both.pcap"
    wrpcap(str(both), list(rdpcap(str(run_dir / "pcaps" / "HS-001.pcap")))
           + list(rdpcap(str(run_dir / "pcaps" / "DEM-001.pcap"))))
    faulty = runner.invoke(app, ["check-pcap", str(both)])
    assert faulty.exit_code == 1, faulty.output
    assert "2 connection(s) judged" in faulty.output and "DEM-1" in faulty.output
    broken = tmp_path / "not.pcap"
    broken.write_bytes(b"not a capture")
    assert runner.invoke(app, ["check-pcap", str(broken)]).exit_code == 2


def test_rsio_layer_dissects_payloads_when_present(run_dir: Path) -> None:
    pytest.importorskip("rsio_tck.dissect", reason="the RS-IO scapy layer (tck.dissect) is not in this tree")
    assert bind_rsio_layer(7878)
    packets = trace_packets(list(read_trace(run_dir / "traces" / "HS-001.trace")), server_port=7878)
    tmp = run_dir / "dissect-check.pcap"
    wrpcap(str(tmp), packets)
    try:
        dissected = [p for p in rdpcap(str(tmp)) if p.haslayer(TCP) and len(p[TCP].payload)]
        # The target may chunk its writes at any byte (a 1-byte segment stays Raw until the
        # rest arrives); the kit writes its frames whole, so some segment dissects as RS-IO.
        assert dissected and any(not isinstance(p[TCP].payload, Raw) for p in dissected)
        conn = read_connections(tmp)[0]  # payload bytes are the captured ones, whatever dissects them
        assert _streams(conn.records) == _streams(list(read_trace(run_dir / "traces" / "HS-001.trace")))
    finally:
        tmp.unlink()


def test_write_pcap_writes_the_bytes_scapy_writes(tmp_path: Path) -> None:
    """``write_pcap`` builds packets with ``struct`` for speed: byte for byte scapy's ``PcapWriter`` output of
    ``iter_trace_packets``' packets (checksums, odd lengths, FINs, a truncation marker, fractional times)."""
    from scapy.utils import PcapWriter

    from rsio_tck.report.pcap import iter_trace_packets, write_pcap

    records = [TraceRecord(t=0.0, sender=Side.CLIENT, data=b"\x01" * 3001),
               TraceRecord(t=0.000123456, sender=Side.SERVER, data=bytes(range(256)) * 7 + b"\xff"),
               TraceRecord(t=1.5, sender=Side.SERVER, data=None),
               TraceRecord(t=1.75, sender=Side.CLIENT, data=b"x"),
               TraceRecord(t=2.0, sender=Side.CLIENT, data=None)]
    for trace in (records, [*records[:2], TraceRecord(t=0.5, sender=Side.SERVER, data=None, truncated=True)]):
        fast, slow = tmp_path / "fast.pcap", tmp_path / "slow.pcap"
        write_pcap(fast, trace, base=1_700_000_000.987654321, server_port=7878, client_port=40123)
        with PcapWriter(str(slow), sync=False) as writer:
            for packet in iter_trace_packets(trace, base=1_700_000_000.987654321, server_port=7878, client_port=40123):
                writer.write(packet)
        assert fast.read_bytes() == slow.read_bytes()


def test_write_pcap_connections_writes_the_bytes_scapy_writes(tmp_path: Path) -> None:
    """Several connections in one capture (the Wireshark tests' captures): byte for byte what scapy's ``wrpcap``
    writes of each connection's ``trace_packets``, one after the other, client port and times shifted per
    connection."""
    from rsio_tck.report.pcap import trace_packets, write_pcap_connections

    first = [TraceRecord(t=0.0, sender=Side.CLIENT, data=b"ab"), TraceRecord(t=0.25, sender=Side.SERVER, data=b"c"),
             TraceRecord(t=0.5, sender=Side.CLIENT, data=None)]
    second = [TraceRecord(t=0.125, sender=Side.SERVER, data=bytes(range(256)) * 9),
              TraceRecord(t=0.75, sender=Side.SERVER, data=None, reset=True)]
    fast, slow = tmp_path / "fast.pcap", tmp_path / "slow.pcap"
    count = write_pcap_connections(fast, [first, second, []], server_port=7878)
    packets = [packet for index, trace in enumerate([first, second, []])
               for packet in trace_packets(trace, server_port=7878, client_port=40000 + index, base=index)]
    wrpcap(str(slow), packets)
    assert count == len(packets) and fast.read_bytes() == slow.read_bytes()
