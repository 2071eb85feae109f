"""The Wireshark dissector against the kit's own decoder, through tshark; and the pcaps' TCP.

Every comparison reads one capture twice: tshark with the shipped ``rsio.lua``
(``rsio_tck.bindings.rsio.wireshark_fields.decode``), and the kit (``read_connections``, then
one decoder per direction).  Per TCP connection, both must list the same frames
in the same order: type, subscriber Id, frame length and element/data length,
and the same malformed frames (direction and rule).  Captures: the golden
vectors (tests/data/) under several segmentations, the malformed inputs of
test_wire_malformed.py, and a full run of the suite in each codec (the
reference peer chunks its writes at arbitrary bytes, so frames cross segments).

A full run's pcaps are joined into one capture for speed: every connection of a
run has its own client port, so they stay separate TCP streams (checked).

tshark is Debian's (the Makefile installs it); without it the tests skip, except
under CI=true, where a missing tshark fails them.
"""

from __future__ import annotations

import json
import os
import random
import re
import struct
import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import pytest
from test_wire_golden import load as load_golden
from test_wire_malformed import CASES, HUGE
from typer.testing import CliRunner

from rsio_tck.bindings.rsio.wire import get_codec
from rsio_tck.bindings.rsio.wire.frames import Frame, Goodbye, ServerHello, Subscribe
from rsio_tck.bindings.rsio.wire.limits import DEFAULT_LIMITS
from rsio_tck.bindings.rsio.wireshark_fields import Decoded, decode
from rsio_tck.cli import app
from rsio_tck.errors import ProtocolViolation, Side
from rsio_tck.monitor.trace import TraceRecord
from rsio_tck.report.pcap import read_connections, target_port, trace_packets, write_pcap_connections
from rsio_tck.wireshark import PLUGIN_DIR_ENV, dissector_path, dissectors
from rsio_tck.wireshark.tshark import FOREIGN_HEURISTICS, run_tshark, tshark_binary

CODECS = ("msgpack", "varint")
SERVER_PORT = 7878  # the dissector's default port
HELLO = {"msgpack": bytes.fromhex("010090"), "varint": bytes.fromhex("010000")}

# (sender port, type code, frame length, subscriber Id, element or data length)
Row = tuple[int, int, int, int | None, int | None]
Key = tuple[int, int]  # a connection: its two ports, sorted


def _key(port: int, other: int) -> Key:
    return (port, other) if port < other else (other, port)


TSHARK_FREE = {"test_dissector_limits_are_the_kits_default_limits",
               "test_every_fin_is_acknowledged_once_and_no_ack_is_repeated"}


@pytest.fixture(autouse=True)
def tshark(request: pytest.FixtureRequest) -> None:
    if tshark_binary() is None and request.function.__name__ not in TSHARK_FREE:
        message = "tshark is not installed (Debian: apt-get install tshark; `make install` does it)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message + ", and CI=true: the Wireshark tests must run")
        pytest.skip(message)


# -- the two views of one capture -----------------------------------------------------------


@dataclass
class View:
    frames: dict[Key, list[Row]]
    rejected: set[tuple[Key, int, str]]  # (connection, sender port, rule)


def _row(port: int, frame: Frame, length: int) -> Row:
    payload = getattr(frame, "element", None) if frame.code == 0x08 else getattr(frame, "data", None)
    return (port, frame.code, length, getattr(frame, "subscriber", None), None if payload is None else len(payload))


def kit_view(capture: Path, codec: str) -> View:
    """What the kit's decoder sees in ``capture``.

    Frame lengths come from re-encoding each frame; the sum over one feed must equal
    the bytes the decoder consumed, so a non-canonical encoding cannot slip through.
    """
    view = View(frames=defaultdict(list), rejected=set())
    for conn in read_connections(capture):
        key = _key(conn.client[1], conn.server[1])
        ports = {Side.CLIENT: conn.client[1], Side.SERVER: conn.server[1]}
        decoders = {side: get_codec(codec).decoder() for side in Side}
        encoders = {side: get_codec(codec).encoder() for side in Side}
        dead: set[Side] = set()
        for record in conn.records:
            if record.data is None or record.sender in dead:
                continue
            decoder, before = decoders[record.sender], decoders[record.sender].offset
            try:
                frames = decoder.feed(record.data)
            except ProtocolViolation as violation:
                frames = cast(list[Frame], decoder.salvaged)  # feed (not feed_runs) salvages frames only
                dead.add(record.sender)
                view.rejected.add((key, ports[record.sender], violation.rule))
            lengths = [len(encoders[record.sender].encode(frame)) for frame in frames]
            if record.sender not in dead:
                assert sum(lengths) == decoder.offset - before, f"{conn.name}: a frame is not canonically encoded"
            view.frames[key] += [_row(ports[record.sender], f, n) for f, n in zip(frames, lengths)]
    return view


def tshark_view(decoded: Decoded) -> View:
    view = View(frames=defaultdict(list), rejected=set())
    for frame in decoded.frames:
        row = (frame.sender_port, frame.code, frame.length, frame.subscriber, frame.payload)
        view.frames[_key(frame.sender_port, frame.receiver_port)].append(row)
    for bad in decoded.malformed:
        view.rejected.add((_key(bad.sender_port, bad.receiver_port), bad.sender_port, bad.rule))
    return view


def assert_same(kit: View, seen: View, connections: set[Key] | None = None) -> None:
    keys = set(kit.frames) | set(seen.frames) if connections is None else connections
    for key in sorted(keys):
        mine, theirs = kit.frames.get(key, []), seen.frames.get(key, [])
        if mine != theirs:
            at = next((i for i, (a, b) in enumerate(zip(mine, theirs)) if a != b), min(len(mine), len(theirs)))
            pytest.fail(f"connection {key}: the kit sees {len(mine)} frames, tshark {len(theirs)}; first difference "
                        f"at frame {at}: kit {mine[at:at + 2]}, tshark {theirs[at:at + 2]}")
    assert {r for r in kit.rejected if r[0] in keys} == {r for r in seen.rejected if r[0] in keys}


def write_capture(path: Path, connections: list[list[TraceRecord]], server_port: int = SERVER_PORT) -> None:
    # The kit's own writer: scapy's bytes (tests/test_report_pcap.py), built with struct, 20 times faster for
    # the captures of one-byte segments.
    write_pcap_connections(path, connections, server_port=server_port)


def chunks(data: bytes, how: str, rng: random.Random) -> list[bytes]:
    if how == "whole":
        return [data]  # segments of one MSS: frames cross segment boundaries
    sizes = {"bytes": lambda: 1, "random": lambda: rng.randint(1, 9)}[how]
    out, at = [], 0
    while at < len(data):
        step = sizes()
        out.append(data[at:at + step])
        at += step
    return out


# -- the dissector file ------------------------------------------------------------------------


def test_dissector_limits_are_the_kits_default_limits() -> None:
    lua = dissector_path("rsio").read_text("utf-8")
    found = {name: eval(expr, {}) for name, expr in re.findall(r"^local (MAX_[A-Z_]+) = ([0-9 *]+)$", lua, re.M)}
    assert found == {"MAX_ELEMENT": DEFAULT_LIMITS.max_element, "MAX_STRING": DEFAULT_LIMITS.max_string,
                     "MAX_ARRAY": DEFAULT_LIMITS.max_array, "MAX_ELEMENT_SIZE": DEFAULT_LIMITS.max_element_size,
                     "MAX_FRAME": DEFAULT_LIMITS.max_frame}


def test_the_dissector_loads_and_registers_its_fields() -> None:
    done = run_tshark(["-G", "fields", f"-Xlua_script:{dissector_path('rsio')}"], timeout=60)
    rows = [line.split("\t") for line in done.stdout.splitlines()]
    fields = {row[2] for row in rows if row[0] == "F"}
    assert {"rsio.type", "rsio.subscriber", "rsio.length", "rsio.element", "rsio.demand", "rsio.rule"} <= fields
    assert ["P", "RS-IO (Reactive Streams IO)", "rsio"] in rows


# -- golden vectors ------------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["whole", "bytes", "random"])
@pytest.mark.parametrize("codec", CODECS)
def test_golden_vectors_decode_as_the_kit_decodes_them(tmp_path: Path, codec: str, how: str) -> None:
    vectors = load_golden(codec)
    stream = b"".join(data for _, data, _ in vectors)
    records = [TraceRecord(t=i * 1e-3, sender=Side.SERVER, data=piece)
               for i, piece in enumerate(chunks(stream, how, random.Random(18)))]
    capture = tmp_path / "golden.pcap"
    write_capture(capture, [records])
    kit = kit_view(capture, codec)
    expected = [_row(SERVER_PORT, frame, len(data)) for _, data, frame in vectors]
    assert kit.frames[(SERVER_PORT, 40000)] == expected  # the kit reads the golden file as written
    for two_pass in (False, True):  # the second pass reads what the first recorded (fixed-size frames)
        decoded = decode(capture, prefs={"rsio.codec": codec}, two_pass=two_pass)
        assert decoded.lua_errors() == [] and decoded.anomalies() == []
        assert_same(kit, tshark_view(decoded))


@pytest.mark.parametrize("codec", CODECS)
def test_the_heuristic_finds_a_stream_on_any_port_and_picks_its_codec(tmp_path: Path, codec: str) -> None:
    """The client's hello arrives one byte a segment; the codec preference stays at auto."""
    vectors = load_golden(codec)
    records = [TraceRecord(t=0.0, sender=Side.CLIENT, data=HELLO[codec][i:i + 1]) for i in range(3)]
    records += [TraceRecord(t=0.1, sender=Side.SERVER, data=piece)
                for piece in chunks(b"".join(data for _, data, _ in vectors), "random", random.Random(7))]
    capture = tmp_path / "heuristic.pcap"
    write_capture(capture, [records], server_port=41234)
    decoded = decode(capture)
    kit, seen = kit_view(capture, codec), tshark_view(decoded)
    assert len(seen.frames[(40000, 41234)]) == len(vectors) + 1
    assert_same(kit, seen)


@pytest.mark.parametrize("codec", CODECS)
def test_the_heuristic_finds_every_stream_whose_only_hello_is_the_servers(tmp_path: Path, codec: str) -> None:
    """Several connections to one server, whose hello comes first in each; in the last the client
    sends no hello at all (HS-004: subscribe first, the target answers goodbye).

    The server's endpoint is the same in every connection, so the heuristic must judge the first
    bytes of each direction of each stream, not of each sender: a full run flaked when an earlier
    stream where the server spoke first had used up the server's one try.
    """
    encoder = get_codec(codec).encoder()
    server_hello = encoder.encode(ServerHello(version=0, extensions=()))
    subscribe = encoder.encode(Subscribe(publisher="tck/range?count=1", subscriber=1, initial_demand=1))
    goodbye = encoder.encode(Goodbye(reason="[HS-1] a stream frame before its own hello"))
    polite = [TraceRecord(t=0.0, sender=Side.SERVER, data=server_hello),
              TraceRecord(t=0.1, sender=Side.CLIENT, data=HELLO[codec] + subscribe)]
    rude = [TraceRecord(t=0.0, sender=Side.SERVER, data=server_hello),
            TraceRecord(t=0.1, sender=Side.CLIENT, data=subscribe),
            TraceRecord(t=0.2, sender=Side.SERVER, data=goodbye)]
    capture = tmp_path / "server-first.pcap"
    write_capture(capture, [polite, polite, rude], server_port=41234)
    kit = kit_view(capture, codec)
    assert [len(kit.frames[(40000 + i, 41234)]) for i in range(3)] == [3, 3, 3]
    for two_pass in (False, True):
        decoded = decode(capture, two_pass=two_pass)
        assert decoded.lua_errors() == []
        assert_same(kit, tshark_view(decoded))


# -- malformed input ---------------------------------------------------------------------------


@pytest.mark.parametrize("codec", CODECS)
def test_malformed_frames_show_as_malformed_frames_not_as_dissector_errors(tmp_path: Path, codec: str) -> None:
    """Each malformed input of test_wire_malformed.py on its own connection, whole and one byte a segment."""
    cases = [(bytes.fromhex(h), rule, eof) for c, h, rule, eof in CASES if c == codec]
    cases += [(bytes.fromhex(h), "ERR-8", False) for h in HUGE[codec]]
    connections = []
    for data, _, _ in cases:
        connections.append([TraceRecord(t=0.0, sender=Side.SERVER, data=data)])
        connections.append([TraceRecord(t=0.0, sender=Side.SERVER, data=data[i:i + 1]) for i in range(len(data))])
    capture = tmp_path / "malformed.pcap"
    write_capture(capture, connections)
    decoded = decode(capture, prefs={"rsio.codec": codec})
    assert decoded.lua_errors() == []
    kit, seen = kit_view(capture, codec), tshark_view(decoded)
    assert_same(kit, seen)
    for index, (data, rule, eof) in enumerate(cases):
        for key in ((SERVER_PORT, 40000 + 2 * index), (SERVER_PORT, 40001 + 2 * index)):
            rules = [r for k, _, r in seen.rejected if k == key]
            # A frame cut off by the end of its stream is not malformed to the dissector: TCP holds
            # the bytes for a reassembly that never completes (the kit reports ERR-6 at eof).
            assert rules == ([] if eof else [rule]), f"{data.hex(' ')} on connection {key}"
    malformed = [e for e in decoded.anomalies() if e.group == "Malformed" and e.protocol == "RSIO"]
    assert sum(e.count for e in malformed) == len(seen.rejected) == 2 * sum(not eof for _, _, eof in cases)
    assert sum(e.count for e in decoded.anomalies()) == len(seen.rejected)


# -- a full run of the suite, each codec ---------------------------------------------------------


@dataclass
class FullRun:
    codec: str
    capture: Path  # every pcap of the run, joined
    pcaps: int
    port: int  # the target's
    kit: View


def join_pcaps(pcaps: list[Path], out: Path) -> None:
    """Classic pcap files with one link type, one after the other (what mergecap -a does)."""
    with out.open("wb") as sink:
        header: bytes | None = None
        for pcap in pcaps:
            data = pcap.read_bytes()
            assert data[:4] in (b"\xd4\xc3\xb2\xa1", b"\xa1\xb2\xc3\xd4"), f"{pcap}: not a classic pcap"
            if header is None:
                header = data[:24]
                sink.write(header)
            assert struct.unpack("<I", data[20:24]) == struct.unpack("<I", header[20:24]), f"{pcap}: link type"
            sink.write(data[24:])


@pytest.fixture(scope="module", params=CODECS)
def full_run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> FullRun:
    codec = request.param
    reports = tmp_path_factory.mktemp(f"run-{codec}")
    done = subprocess.run([sys.executable, "-m", "rsio_tck.cli", "run", "--report-dir", str(reports), "--quiet",
                           "--codec", codec], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    (run_dir,) = [p for p in reports.iterdir() if p.is_dir()]
    pcaps = sorted((run_dir / "pcaps").glob("*.pcap"))
    assert len(pcaps) > 100
    capture = reports / "all.pcap"
    join_pcaps(pcaps, capture)
    port = target_port(json.loads((run_dir / "run.json").read_text())["target"])
    return FullRun(codec=codec, capture=capture, pcaps=len(pcaps), port=port, kit=kit_view(capture, codec))


@pytest.mark.timeout(900)
def test_a_full_run_decodes_as_the_kit_decodes_it(full_run: FullRun) -> None:
    decoded = decode(full_run.capture, prefs={"rsio.tcp_port": str(full_run.port)}, timeout=600)
    seen = tshark_view(decoded)
    streams = {f.stream for f in decoded.frames} | {bad.stream for bad in decoded.malformed}
    assert len(full_run.kit.frames) == full_run.pcaps == len(streams)  # one TCP stream per pcap
    assert sum(map(len, seen.frames.values())) > 1000
    assert_same(full_run.kit, seen)
    # No pcap draws a warning or an error except the malformed frames the kit itself rejects: those
    # the ERR and EXT scenarios send on purpose (the reference peer, the target here, sends none).
    assert decoded.lua_errors() == []
    anomalies = decoded.anomalies()
    assert all(e.group == "Malformed" and e.protocol == "RSIO" for e in anomalies), anomalies
    assert sum(e.count for e in anomalies) == len(full_run.kit.rejected)
    assert all(port != full_run.port for _, port, _ in full_run.kit.rejected)  # all sent by the kit


@pytest.mark.timeout(900)
def test_the_heuristic_recognises_every_stream_of_a_full_run_that_has_a_hello(full_run: FullRun) -> None:
    """No port given, codec auto; with tshark's second pass (-2), which dissects every packet again as
    the GUI does when a packet is clicked, reading what the first pass recorded.

    The heuristic recognises a stream by a hello at the start of one direction, either one; the
    second pass then also shows frames sent before it (HS-004 sends subscribe first, and no hello:
    its only hello is the target's).  A stream without any
    hello (HS-004 again, when the target answers goodbye at once) is left to the port preference.
    """
    decoded = decode(full_run.capture, two_pass=True, timeout=600)
    assert decoded.lua_errors() == []
    with_hello = {key for key, rows in full_run.kit.frames.items() if any(row[1] in (0x01, 0x02) for row in rows)}
    assert len(full_run.kit.frames) - len(with_hello) <= 2
    assert_same(full_run.kit, tshark_view(decoded), with_hello)


@pytest.mark.timeout(900)
def test_no_pcap_of_a_full_run_draws_a_tcp_warning(full_run: FullRun) -> None:
    """Wireshark alone (no dissector): not a warning, not an error, not a duplicate ACK."""
    done = run_tshark([*(a for h in FOREIGN_HEURISTICS for a in ("--disable-heuristic", h)),
                       "-r", str(full_run.capture), "-q", "-z", "expert"], timeout=300)
    assert not re.search(r"^(Errors|Warns) \(", done.stdout, re.M), done.stdout
    assert "Duplicate ACK" not in done.stdout and "Previous segment" not in done.stdout
    closes = re.search(r"^\s+(\d+)\s+Sequence\s+TCP\s+This frame initiates the connection closing$", done.stdout, re.M)
    assert closes is not None and int(closes[1]) >= full_run.pcaps - 5


@pytest.mark.parametrize("closing", [(Side.CLIENT, Side.SERVER), (Side.SERVER, Side.CLIENT), (Side.CLIENT,)])
def test_every_fin_is_acknowledged_once_and_no_ack_is_repeated(closing: tuple[Side, ...]) -> None:
    """What Wireshark flags as a duplicate ACK: a pure ACK repeating its sender's previous ACK number."""
    from scapy.layers.inet import TCP

    records = [TraceRecord(t=0.0, sender=Side.CLIENT, data=HELLO["msgpack"]),
               TraceRecord(t=0.1, sender=Side.SERVER, data=bytes.fromhex("020090"))]
    records += [TraceRecord(t=0.2 + i / 10, sender=side, data=None) for i, side in enumerate(closing)]
    packets = trace_packets(records, server_port=SERVER_PORT)
    last_ack: dict[int, int] = {}
    fins: dict[int, int] = {}  # sender port -> the sequence number acknowledging its FIN
    acked: set[int] = set()
    for packet in packets:
        tcp = packet[TCP]
        flags, payload = str(tcp.flags), bytes(tcp.payload)
        if "A" in flags and not payload and "S" not in flags and "F" not in flags:
            assert last_ack.get(tcp.sport) != tcp.ack, f"duplicate ACK from port {tcp.sport}"
        if "A" in flags:
            last_ack[tcp.sport] = tcp.ack
            acked |= {port for port, seq in fins.items() if port != tcp.sport and tcp.ack == seq}
        if "F" in flags:
            fins[tcp.sport] = tcp.seq + 1
    assert set(fins) == acked and len(fins) == len(closing)


# -- the command line --------------------------------------------------------------------------


def test_wireshark_install_copies_the_dissectors_into_the_plugin_folder(tmp_path: Path) -> None:
    folder = tmp_path / "plugins"
    result = CliRunner().invoke(app, ["wireshark", "install", "--plugin-dir", str(folder)])
    assert result.exit_code == 0, result.output
    for dissector in dissectors().values():
        installed = folder / dissector.lua.name
        assert installed.read_bytes() == dissector_path(dissector.binding).read_bytes()
        assert str(installed) in result.output
    by_env = tmp_path / "from-env"
    result = CliRunner().invoke(app, ["wireshark", "install"], env={PLUGIN_DIR_ENV: str(by_env)})
    assert result.exit_code == 0 and (by_env / "rsio.lua").is_file()
    result = CliRunner().invoke(app, ["wireshark", "path", "--plugin-dir"], env={PLUGIN_DIR_ENV: str(by_env)})
    assert result.output.strip() == str(by_env)


def test_wireshark_loads_what_install_put_in_the_default_folder(tmp_path: Path) -> None:
    """No override: the personal plugin folder under $HOME, where Wireshark looks by itself."""
    env = {key: value for key, value in os.environ.items() if key != PLUGIN_DIR_ENV}
    result = CliRunner().invoke(app, ["wireshark", "install"], env={"HOME": str(tmp_path), PLUGIN_DIR_ENV: None})
    assert result.exit_code == 0, result.output
    installed = tmp_path / ".local" / "lib" / "wireshark" / "plugins" / "rsio.lua"
    assert installed.is_file()
    done = subprocess.run([str(tshark_binary()), "-G", "plugins"], capture_output=True, text=True, timeout=60,
                          env={**env, "HOME": str(tmp_path)})
    assert done.returncode == 0 and str(installed) in done.stdout


def test_wireshark_install_into_a_file_is_a_one_line_error(tmp_path: Path) -> None:
    blocker = tmp_path / "plugins"
    blocker.write_text("not a folder")
    result = CliRunner().invoke(app, ["wireshark", "install", "--plugin-dir", str(blocker)])
    assert result.exit_code == 2
    assert "not a folder" in result.output and "Traceback" not in result.output


def test_wireshark_path_prints_files_tshark_can_load(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["wireshark", "path"])
    assert result.exit_code == 0
    paths = [Path(line) for line in result.output.splitlines()]
    assert paths == [dissector_path(name) for name in dissectors()] and all(p.is_file() for p in paths)
    result = CliRunner().invoke(app, ["wireshark", "path", "nosuch"])
    assert result.exit_code == 2 and "no Wireshark dissector for 'nosuch'" in result.output
    capture = tmp_path / "one.pcap"
    write_capture(capture, [[TraceRecord(t=0.0, sender=Side.CLIENT, data=HELLO["msgpack"] + bytes.fromhex("05010a"))]],
                  server_port=45678)
    done = run_tshark([f"-Xlua_script:{paths[0]}", "-r", str(capture)], timeout=60)
    assert "clientHello, request(1)" in done.stdout
