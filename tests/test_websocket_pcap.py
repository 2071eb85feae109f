"""pcaps of WebSocket sessions in tshark (issues 17 and 18): the real TCP stream (HTTP upgrade, masked
client frames), RSocket decoded inside binary messages, Ditto's signals labelled by ditto.lua (over
WebSocket text messages and TCP lines), and no expert warning the target did not cause."""

from __future__ import annotations

import asyncio
import json
import os
import random
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from rsio_tck.bindings.ditto.websocket import DittoFraming
from rsio_tck.bindings.rsio.wireshark_fields import decode
from rsio_tck.bindings.rsocket.wireshark_pdml import decode_rsocket
from rsio_tck.cli import app
from rsio_tck.errors import Side
from rsio_tck.monitor.trace import TraceRecord
from rsio_tck.reference_peer.api import Peer
from rsio_tck.report import RunRecorder
from rsio_tck.report.pcap import DEFAULT_PORT, write_pcap
from rsio_tck.scenarios import RunConfig, Verdict, load_directory, run_suite
from rsio_tck.websocket.link import WebSocketLink
from rsio_tck.wireshark import dissector_path
from rsio_tck.wireshark.tshark import run_tshark, tshark_binary

GOLDEN = Path(__file__).parent / "data" / "ditto" / "golden.jsonl"
SUBSCRIBER_ACTIONS = {"subscribeForPersistedEvents", "subscribe", "request", "cancel"}
SIGNALS = {"subscribeForPersistedEvents": "subscribe"}


@pytest.fixture(autouse=True)
def tshark() -> None:
    if tshark_binary() is None:
        message = "tshark is not installed (Debian: apt-get install tshark; `make install` does it)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message + ", and CI=true: the Wireshark tests must run")
        pytest.skip(message)


def ws_run(tmp_path: Path, binding: str, profile: str, ids: tuple[str, ...]) -> list[Any]:
    """Run ``ids`` against the reference peer over ws:// and write a run directory's pcaps."""
    scenarios = [s for s in load_directory(binding=binding) if s.id in ids]

    async def go() -> list[Any]:
        peer = Peer(binding=binding, profile=profile)
        server = await peer.listen("ws://127.0.0.1:0/tck")
        try:
            config = RunConfig(target=server.url, codec=profile, binding=binding, keep_trace=True)
            results = await run_suite(scenarios, config, jobs=3)
        finally:
            await peer.shutdown(timeout=2.0)
        recorder = RunRecorder(tmp_path, target=server.url, codec=profile, binding=binding, started=time.time(),
                               pcap_workers=0)
        for result in results:
            recorder.add(result)
        recorder.close()
        return results

    results = asyncio.run(asyncio.wait_for(go(), 60.0))
    assert all(r.verdict in (Verdict.PASS, Verdict.WARN) for r in results), "\n".join(r.explain() for r in results)
    return results


def fields(capture: Path, names: list[str], *, lua: tuple[str, ...] = (), filter_: str = "") -> list[list[str]]:
    args = [f"-Xlua_script:{dissector_path(name)}" for name in lua]
    args += ["-r", str(capture), "-T", "fields", *(x for name in names for x in ("-e", name))]
    if filter_:
        args += ["-Y", filter_]
    return [line.split("\t") for line in run_tshark(args, timeout=60).stdout.splitlines()]


def expert_anomalies(capture: Path, lua: tuple[str, ...] = ()) -> list[str]:
    args = [f"-Xlua_script:{dissector_path(name)}" for name in lua] + ["-r", str(capture), "-q", "-z", "expert"]
    return anomalies_of(run_tshark(args, timeout=60).stdout)


def anomalies_of(expert: str) -> list[str]:
    """The Errors and Warns sections of tshark's ``-z expert`` statistics.  They open with an empty line, so
    the first section (the most severe there is) starts after a newline and is matched without it."""
    return [s.strip("\n") for s in expert.split("\n\n") if s.strip("\n").startswith(("Errors", "Warns"))]


def fields_and_anomalies(capture: Path, names: list[str], lua: tuple[str, ...]) -> tuple[list[list[str]], list[str]]:
    """``fields`` of every packet and ``expert_anomalies`` from one tshark launch, not two: the launch (loading
    the Lua dissectors) is most of the cost on a small pcap.  tshark prints the rows, then the statistics after
    an empty line; no row is empty (its fields are joined by tabs)."""
    args = [f"-Xlua_script:{dissector_path(name)}" for name in lua]
    args += ["-r", str(capture), "-T", "fields", *(x for name in names for x in ("-e", name)), "-z", "expert"]
    out = run_tshark(args, timeout=60).stdout
    table, _, expert = out.partition("\n\n")
    return [line.split("\t") for line in table.splitlines()], anomalies_of("\n" + expert)


def v1_frames(stream: bytes) -> list[tuple[int, int]]:
    """(stream id, size with prefix) of each RSocket 1.0 frame of a length-prefixed stream."""
    out, at = [], 0
    while at + 3 <= len(stream):
        size = int.from_bytes(stream[at : at + 3], "big")
        out.append((int.from_bytes(stream[at + 3 : at + 7], "big") & 0x7FFFFFFF, size + 3))
        at += 3 + size
    return out


def test_an_rsocket_ws_run_pcap_shows_the_upgrade_masked_frames_and_rsocket_inside(tmp_path: Path) -> None:
    results = ws_run(tmp_path, "rsocket", "rsocket-1.0", ("DEM-001", "DEM-002", "STR-001", "RSFLOW-001"))
    for result in results:
        capture = tmp_path / "pcaps" / f"{result.id}.pcap"
        rows = fields(capture, ["tcp.srcport", "http.request.method", "http.response.code", "websocket.opcode",
                                "websocket.mask"])
        assert any(r[1] == "GET" for r in rows) and any(r[2] == "101" for r in rows)
        kit_port = rows[0][0]  # the SYN's sender
        data_frames = [r for r in rows if r[3] == "2"]  # binary messages
        assert data_frames and all((r[4] == "1") == (r[0] == kit_port) for r in data_frames)  # only the client masks
        decoded = decode_rsocket(capture)
        assert decoded.lua_errors() == [] and decoded.anomalies() == []
        for sender, port_is_kit in ((Side.CLIENT, True), (Side.SERVER, False)):
            stream = b"".join(r.data for r in result.trace if r.sender is sender and r.data)
            seen = [(f.stream_id, f.size) for f in decoded.frames if (str(f.sender_port) == kit_port) == port_is_kit]
            assert seen == v1_frames(stream)
        assert expert_anomalies(capture, ("rsocket",)) == []
    # On RS-IO's port (listen-mode pcaps use 7878) with every dissector loaded: RS-IO's declines the
    # HTTP upgrade, so the WebSocket and RSocket inside still decode.
    result = results[0]
    capture = tmp_path / "on-7878.pcap"
    write_pcap(capture, result.wire_trace, server_port=DEFAULT_PORT)
    decoded = decode_rsocket(capture, also_load=("rsio", "ditto"))
    assert decoded.lua_errors() == [] and decoded.anomalies() == [] and decoded.undecoded == 0
    streams = [b"".join(r.data for r in result.trace if r.sender is sender and r.data) for sender in Side]
    assert len(decoded.frames) == sum(len(v1_frames(stream)) for stream in streams) > 0


def test_an_rsio_ws_run_pcap_dissects_with_websocket_frames_and_no_warning(tmp_path: Path) -> None:
    results = ws_run(tmp_path, "rsio", "msgpack", ("DEM-001", "HS-001", "STR-001"))
    for result in results:
        capture = tmp_path / "pcaps" / f"{result.id}.pcap"
        rows = fields(capture, ["websocket.opcode", "websocket.payload_length", "websocket.payload_length_ext_16",
                                "websocket.payload_length_ext_64"], filter_="websocket")
        # Several frames in one segment: tshark joins each field's values with commas.
        frames = [values for row in rows for values in zip(*(cell.split(",") for cell in row[:2]))]
        binary = [r for r in frames if r[0] == "2"]
        assert all(int(r[1]) < 126 for r in binary)  # the scenarios' messages are short: no extended length
        sizes = [int(r[1]) for r in binary]
        judged = sum(len(r.data) for r in result.trace if r.data)
        assert binary and sum(sizes) == judged  # every byte of the stream, in messages
        assert expert_anomalies(capture, ("rsio",)) == []
        decoded = decode(capture)  # rsio.lua decodes the frames inside the messages
        assert decoded.lua_errors() == [] and decoded.malformed == []
        kit_port = fields(capture, ["tcp.srcport"])[0][0]
        for sender, is_kit in ((Side.CLIENT, True), (Side.SERVER, False)):
            stream = b"".join(r.data for r in result.trace if r.sender is sender and r.data)
            seen = sum(f.length for f in decoded.frames if (str(f.sender_port) == kit_port) == is_kit)
            assert seen == len(stream)
        assert (tmp_path / "traces" / f"{result.id}.trace").is_file()
        assert (tmp_path / "traces" / "wire" / f"{result.id}.trace").is_file()


def test_rsio_frames_spanning_websocket_messages_are_decoded_whole(tmp_path: Path) -> None:
    """RS-IO's message boundaries mean nothing: frames cut anywhere across messages decode as the kit's."""
    from rsio_tck.binding import get_binding
    from rsio_tck.bindings.rsio.wire.frames import ClientHello, OnNext, Request, ServerHello, Subscribe
    from rsio_tck.websocket.framing import StreamFraming

    codec = get_binding("rsio").encoder("msgpack")
    client_frames = [ClientHello(version=0, extensions=()), Subscribe(publisher="tck/range", subscriber=1,
                     initial_demand=3), Request(subscriber=1, demand=2)]
    server_frames = [ServerHello(version=0, extensions=())] + [OnNext(subscriber=1, element=bytes([i]) * 300)
                                                                for i in range(5)]
    client = WebSocketLink(Side.CLIENT, StreamFraming(), uri="ws://192.0.2.2:7878/rsio")
    server = WebSocketLink(Side.SERVER, StreamFraming())
    records: list[TraceRecord] = []
    rng = random.Random(18)

    def pump() -> None:
        for me, link, peer in ((Side.CLIENT, client, server), (Side.SERVER, server, client)):
            for chunk in link.data_to_send():
                records.append(TraceRecord(t=len(records) * 0.001, sender=me, data=chunk or None))
                if chunk:
                    peer.receive_data(chunk)

    pump()
    pump()
    for link, frames in ((client, client_frames), (server, server_frames)):
        stream = b"".join(codec.encode(f) for f in frames)
        at = 0
        while at < len(stream):  # one message per piece, cut anywhere (the hello one byte at a time)
            step = 1 if at < 3 else rng.randint(1, 120)
            link.send(stream[at : at + step])
            at += step
        pump()
    capture = tmp_path / "rsio-ws.pcap"
    write_pcap(capture, records, server_port=8080)
    decoded = decode(capture)
    assert decoded.lua_errors() == [] and decoded.malformed == []
    assert [f.code for f in decoded.frames] == [0x01, 0x04, 0x05, 0x02] + [0x08] * 5
    assert [f.payload for f in decoded.frames if f.code == 0x08] == [300] * 5


def golden_envelopes() -> list[dict[str, Any]]:
    return [json.loads(line) for line in GOLDEN.read_text(encoding="utf-8").splitlines() if line.strip()]


def expected_labels(envelopes: list[dict[str, Any]]) -> list[list[str]]:
    out = []
    for e in envelopes:
        action = e["topic"].rsplit("/", 1)[-1]
        value = e.get("value") if isinstance(e.get("value"), dict) else {}
        demand = value.get("demand")
        out.append([SIGNALS.get(action, action), str(value.get("subscriptionId", "")),
                    "" if demand is None else str(demand)])
    return out


def ditto_ws_records(envelopes: list[dict[str, Any]]) -> list[TraceRecord]:
    """A WebSocket session carrying the envelopes (subscriber's from the client), as raw bytes."""
    client = WebSocketLink(Side.CLIENT, DittoFraming(), uri="ws://192.0.2.2:8080/ws/2")
    server = WebSocketLink(Side.SERVER, DittoFraming(), path="/ws/2")
    records: list[TraceRecord] = []

    def pump() -> None:
        for me, link, peer in ((Side.CLIENT, client, server), (Side.SERVER, server, client)):
            for chunk in link.data_to_send():
                records.append(TraceRecord(t=len(records) * 0.001, sender=me, data=chunk or None))
                if chunk:
                    peer.receive_data(chunk)
                else:
                    peer.receive_eof()

    pump()
    pump()
    for envelope in envelopes:
        sender = client if envelope["topic"].rsplit("/", 1)[-1] in SUBSCRIBER_ACTIONS else server
        sender.send(json.dumps(envelope).encode() + b"\n")
        pump()
    client.close()
    pump()
    pump()
    assert client.failure is None and server.failure is None
    return records


def test_ditto_lua_labels_each_golden_envelope_in_websocket_text_messages(tmp_path: Path) -> None:
    envelopes = golden_envelopes()
    capture = tmp_path / "ditto-ws.pcap"
    write_pcap(capture, ditto_ws_records(envelopes), server_port=8080)
    rows = fields(capture, ["ditto.signal", "ditto.subscription_id", "ditto.demand"], lua=("ditto",),
                  filter_="ditto")
    assert rows == expected_labels(envelopes)
    assert expert_anomalies(capture, ("ditto",)) == []


def test_ditto_lua_labels_tcp_lines_split_across_segments(tmp_path: Path) -> None:
    envelopes = golden_envelopes()
    rng = random.Random(18)
    records: list[TraceRecord] = []
    for envelope in envelopes:
        sender = Side.CLIENT if envelope["topic"].rsplit("/", 1)[-1] in SUBSCRIBER_ACTIONS else Side.SERVER
        line = json.dumps(envelope).encode() + b"\n"
        at = 0
        while at < len(line):  # a line in pieces, each its own segment
            step = rng.randint(20, 200)
            records.append(TraceRecord(t=len(records) * 0.001, sender=sender, data=line[at : at + step]))
            at += step
    capture = tmp_path / "ditto-tcp.pcap"
    write_pcap(capture, records, server_port=DEFAULT_PORT)  # a port no dissector of Wireshark's claims
    rows = fields(capture, ["ditto.signal", "ditto.subscription_id", "ditto.demand"], lua=("ditto",), filter_="ditto")
    # Each line's last piece is its own segment: TCP reassembles one line per packet.
    assert rows == expected_labels(envelopes)
    assert expert_anomalies(capture, ("ditto",)) == []


def test_wireshark_path_names_the_ditto_dissector() -> None:
    result = CliRunner().invoke(app, ["wireshark", "path", "ditto"])
    assert result.exit_code == 0 and Path(result.output.strip()) == dissector_path("ditto")
    assert dissector_path("ditto").name == "ditto.lua"


RS_SIGNALS = {"subscribe", "request", "cancel", "created", "next", "complete", "failed"}


def ditto_run(tmp_path: Path, profile: str, scheme: str) -> list[Any]:
    """Every Ditto scenario of ``profile`` against the reference peer over ``scheme`` (tcp or ws), with pcaps."""
    scenarios = load_directory(binding="ditto")

    async def go() -> list[Any]:
        peer = Peer(binding="ditto", profile=profile)
        server = await peer.listen("ws://127.0.0.1:0/ws/2" if scheme == "ws" else "tcp://127.0.0.1:0")
        try:
            config = RunConfig(target=server.url, codec=profile, binding="ditto", keep_trace=True)
            results = await run_suite(scenarios, config, jobs=4)
        finally:
            await peer.shutdown(timeout=2.0)
        recorder = RunRecorder(tmp_path, target=server.url, codec=profile, binding="ditto", started=time.time(),
                               pcap_workers=0)
        for result in results:
            recorder.add(result)
        recorder.close()
        return results

    results = asyncio.run(asyncio.wait_for(go(), 240.0))
    assert all(r.verdict in (Verdict.PASS, Verdict.SKIP) for r in results), "\n".join(r.explain() for r in results)
    return [r for r in results if r.verdict is Verdict.PASS]


def signal_envelopes(result: Any, sender: Side) -> list[dict[str, Any]]:
    """The Reactive Streams envelopes ``sender`` wrote in a scenario's judged stream, in order."""
    out = []
    for line in b"".join(r.data for r in result.trace if r.data and r.sender is sender).split(b"\n"):
        try:
            envelope = json.loads(line)
        except ValueError:
            continue  # a control message, or the kit's malformed input on purpose
        if isinstance(envelope, dict) and isinstance(envelope.get("topic"), str):
            if SIGNALS.get(action := envelope["topic"].rsplit("/", 1)[-1], action) in RS_SIGNALS:
                out.append(envelope)
    return out


# A whole run, then three tshark launches (each loading the Lua dissectors) per scenario: some 200 processes of
# CPU-bound work, not a wait.  Alone on this 2-core machine it takes about 85 s; beside two busy loops and three
# other test workers over 120 s (pytest's default bound here), so it gets the bound of the other whole-run tshark tests.
@pytest.mark.slow  # a whole Ditto run a profile and transport, each pcap labelled through tshark
@pytest.mark.timeout(900)
@pytest.mark.parametrize(("profile", "scheme"), [("streaming", "ws"), ("search", "ws"), ("streaming", "tcp")])
def test_a_full_ditto_run_pcaps_are_labelled_as_the_kit_reads_them_without_warnings(
        tmp_path: Path, profile: str, scheme: str) -> None:
    """Issue 18: over every pcap of a full Ditto run, ditto.lua labels the same signals, subscription ids and
    demands, in order, as the kit's own decoder reads from the judged stream; no expert warning or error."""
    results = ditto_run(tmp_path, profile, scheme)
    assert len(results) >= (20 if profile == "search" else 60)
    labelled = 0
    for result in results:
        capture = tmp_path / "pcaps" / f"{result.id}.pcap"
        # One tshark launch a pcap: every packet's fields (no display filter, which would also filter the expert
        # statistics; a packet without ditto has no signal and is dropped below) and the expert statistics.
        table, anomalies = fields_and_anomalies(capture, ["tcp.srcport", "ditto.signal", "ditto.subscription_id",
                                                          "ditto.demand"], ("ditto",))
        kit_port = table[0][0]  # the SYN's sender
        rows = [r for r in per_message(table) if r[1] in RS_SIGNALS]
        for sender, is_kit in ((Side.CLIENT, True), (Side.SERVER, False)):
            seen = [r[1:] for r in rows if (r[0] == kit_port) == is_kit]
            assert seen == expected_labels(signal_envelopes(result, sender)), (result.id, sender)
        labelled += len(rows)
        assert anomalies == [] or result.id in MALFORMED_ON_PURPOSE, (result.id, anomalies)
    assert labelled > 10 * len(results) // 2


def per_message(rows: list[list[str]]) -> list[list[str]]:
    """tshark's fields, one row per labelled message: a packet holding several messages gives each field's
    values comma-separated (an absent demand is an empty value)."""
    out = []
    for port, signals, ids, demands in rows:
        names = signals.split(",")
        id_values, demand_values = iter(ids.split(",") if ids else []), iter(demands.split(",") if demands else [])
        # A subscribe names no subscriptionId and only a request carries a demand: align the values by signal.
        out += [[port, name, "" if name == "subscribe" else next(id_values, ""),
                 next(demand_values, "") if name == "request" else ""] for name in names]
        assert next(id_values, None) is None and next(demand_values, None) is None, (signals, ids, demands)
    return out


# Scenarios whose kit input is malformed on purpose (what Wireshark flags there is the kit's, not the target's).
MALFORMED_ON_PURPOSE = {"DITTO-040", "DITTO-041"}
