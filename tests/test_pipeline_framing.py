"""Frame rows without Spark: trace round trips, byte-exact cuts, judging rows, run-directory readers."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pyarrow as pa
import pytest

from rsio_tck.bindings.rsio.corpus import DEFAULT_TARGETS, TargetProfile, synthetic_connection, trace_records
from rsio_tck.bindings.rsio.wire import get_codec
from rsio_tck.bindings.rsio.wire.frames import ClientHello, Goodbye, OnNext, OnSubscribe, ServerHello, Subscribe
from rsio_tck.capabilities import TargetNameError, parse_target_name
from rsio_tck.errors import Side
from rsio_tck.monitor import Monitor, TraceRecord, read_trace, write_trace
from rsio_tck.pipeline.framing import frame_rows, judge_rows
from rsio_tck.pipeline.judge import judge_table
from rsio_tck.pipeline.sources import expand_run_dirs, fuzz_rows, signature, target_identity

C, S = Side.CLIENT, Side.SERVER


def _columns(rows):  # type: ignore[no-untyped-def]
    return [r.direction for r in rows], [r.data for r in rows], [r.t for r in rows], [r.type for r in rows]


def test_trace_round_trip_gives_the_generator_rows_for_every_profile() -> None:
    for profile in DEFAULT_TARGETS:
        rows, _ = synthetic_connection(11, 3, profile, 60)
        buffer = io.BytesIO()
        write_trace(buffer, trace_records(rows))
        buffer.seek(0)
        again = list(frame_rows(read_trace(buffer), profile.codec))
        key = [(r.seq, r.direction, r.type, r.id, r.size, r.payload, r.elements, r.data) for r in rows]
        assert [(r.seq, r.direction, r.type, r.id, r.size, r.payload, r.elements, r.data) for r in again] == key


def test_frames_coalesced_in_one_chunk_are_cut_at_their_boundaries() -> None:
    encoder = get_codec("msgpack").encoder()
    frames = [Subscribe(publisher="p", subscriber=1, initial_demand=2), OnSubscribe(subscriber=1),
              OnNext(subscriber=1, element=b"abcd")]
    c2s = encoder.encode(ClientHello(version=0)) + encoder.encode(frames[0])
    s2c_encoder = get_codec("msgpack").encoder()
    s2c = s2c_encoder.encode(ServerHello(version=0)) + s2c_encoder.encode(frames[1]) + s2c_encoder.encode(frames[2])
    rows = list(frame_rows([TraceRecord(t=0.1, sender=C, data=c2s), TraceRecord(t=0.2, sender=S, data=s2c[:3]),
                            TraceRecord(t=0.3, sender=S, data=s2c[3:])]))
    assert [r.type for r in rows] == ["clientHello", "subscribe", "serverHello", "onSubscribe", "onNext"]
    assert b"".join(r.data for r in rows if r.direction == "s2c") == s2c
    on_next = rows[-1]
    # 0x08, fixint Id 1, bin8 header of 2 bytes, 4 element bytes: 4 bytes of header for 4 of payload
    assert (on_next.size, on_next.payload, on_next.elements, on_next.id, on_next.t) == (8, 4, 1, 1, 0.3)


def test_garbage_becomes_an_undecodable_row_and_the_judge_still_reports_it() -> None:
    encoder = get_codec("msgpack").encoder()
    hello = encoder.encode(ServerHello(version=0))
    records = [TraceRecord(t=0.0, sender=C, data=get_codec("msgpack").encoder().encode(ClientHello(version=0))),
               TraceRecord(t=0.1, sender=S, data=hello + b"\x3f\x00\x01"), TraceRecord(t=0.2, sender=S, data=None)]
    rows = list(frame_rows(records))
    assert [r.type for r in rows] == ["clientHello", "serverHello", "undecodable", "eof"]
    assert rows[2].data == b"\x3f\x00\x01"
    expected = Monitor("msgpack").replay(records)
    found = judge_rows(*_columns(rows))
    assert [f.rule for f in found] == [f.rule for f in expected] and found


def test_the_judge_finds_the_planted_violation_in_a_synthetic_connection() -> None:
    profile = TargetProfile("faulty", fault_rate=1.0)
    rows, faulty = synthetic_connection(5, 1, profile, 50)
    assert faulty
    found = judge_rows(*_columns(rows))
    assert [(f.rule, f.side) for f in found] == [("DEM-1", S)]
    planted = [r for r in rows if r.type == "onNext"][-1]
    assert found[0].t == planted.t


def test_judge_table_walks_connections_across_batches() -> None:
    profiles = [TargetProfile("ok"), TargetProfile("faulty", fault_rate=1.0)]
    columns: dict[str, list] = {k: [] for k in ("run_id", "scenario", "connection", "direction", "type", "t", "data")}  # type: ignore[type-arg]
    for number in range(40):
        rows, _ = synthetic_connection(2, number, profiles[number % 2], 30)
        for row in rows:
            for key, value in (("run_id", "r1"), ("scenario", f"s{number}"), ("connection", number),
                               ("direction", row.direction), ("type", row.type), ("t", row.t), ("data", row.data)):
                columns[key].append(value)
    table = pa.table(columns)
    found, judged = judge_table(pa.Table.from_batches(table.to_batches(max_chunksize=17)))
    assert judged == 40
    assert sorted(found.column("connection").to_pylist()) == list(range(1, 40, 2))
    assert set(found.column("source").to_pylist()) == {"offline"}


def test_target_identity_prefers_the_given_name_then_the_claimed_one_then_the_url_with_its_port() -> None:
    claimed = {"fingerprint": {"capabilities": {"implementation": "acme", "version": "2.1"}},
               "target": "tcp://127.0.0.1:4000"}
    assert target_identity(claimed) == ("acme", "2.1")
    assert target_identity({**claimed, "target_name": "acme-fork", "target_version": "3"}) == ("acme-fork", "3")
    unnamed = {"implementation": "(no capabilities file)", "target": "tcp://127.0.0.1:4000", "target_name": None,
               "fingerprint": {"capabilities": {"implementation": "(no capabilities file)", "version": ""}}}
    assert target_identity(unnamed) == ("tcp://127.0.0.1:4000", "unknown")
    assert target_identity({**unnamed, "target": "tcp://127.0.0.1:4001"}) == ("tcp://127.0.0.1:4001", "unknown")
    assert target_identity({**unnamed, "target": "tls://[::1]:853/x"}) == ("tls://[::1]:853", "unknown")
    assert target_identity({**unnamed, "target": "unix:/run/peer.sock"}) == ("unix:/run/peer.sock", "unknown")
    assert target_identity({**unnamed, "target_name": "widget"}) == ("widget", "unknown")
    assert target_identity({**unnamed, "target_name": "widget", "target_version": "0.9"}) == ("widget", "0.9")


def test_parse_target_name_splits_at_the_last_at_and_refuses_empty_parts() -> None:
    assert parse_target_name("acme@2.1") == ("acme", "2.1")
    assert parse_target_name("acme") == ("acme", None)
    assert parse_target_name("me@host@1.0") == ("me@host", "1.0")
    for bad, problem in (("", "name is empty"), ("@1.0", "name is empty"), ("acme@", "version after '@' is empty"),
                         ("ac\nme", "control characters")):
        with pytest.raises(TargetNameError, match=problem) as caught:
            parse_target_name(bad)
        assert str(caught.value).startswith("--name ")


def test_signature_drops_numbers_so_repeats_group() -> None:
    a = signature("DEM-1", "sent onNext for Id 830 with outstanding demand 0")
    assert a == signature("DEM-1", "sent onNext for Id 12 with outstanding demand 3")
    assert a != signature("DEM-2", "sent onNext for Id 12 with outstanding demand 3")


def test_run_dirs_are_found_below_a_reports_directory_and_fuzz_rows_read(tmp_path: Path) -> None:
    run = tmp_path / "reports" / "20260101T000000000Z"
    run.mkdir(parents=True)
    (run / "results.jsonl").write_text("")
    (run / "fuzz.json").write_text(json.dumps({"findings": [
        {"rule": "ERR-7", "signature": "ERR-7: type", "side": "server", "message": "m", "scenario_file": "f.yaml",
         "count": 3}]}))
    (tmp_path / "reports" / "notes").mkdir()
    assert expand_run_dirs([tmp_path / "reports", run]) == [run]
    assert [(r["rule"], r["count"]) for r in fuzz_rows(run, "x")] == [("ERR-7", 3)]


def test_a_pcap_without_a_trace_gives_the_same_frames(tmp_path: Path) -> None:
    from rsio_tck.pipeline.sources import connection_frames, connection_work
    from rsio_tck.report.pcap import write_pcap

    rows, _ = synthetic_connection(4, 2, DEFAULT_TARGETS[1], 40)
    (tmp_path / "pcaps").mkdir()
    write_pcap(tmp_path / "pcaps" / "only-pcap.pcap", list(trace_records(rows)))
    (work,) = connection_work(tmp_path, "run", "msgpack")
    assert work[0] == "pcap"
    frames = [f for f in connection_frames(*work) if f["type"] != "eof"]
    assert [(f["type"], f["size"], f["data"]) for f in frames] == [
        (r.type, r.size, r.data) for r in rows if r.type != "eof"]
    assert {f["origin"] for f in frames} == {"pcap"}


def test_bytes_after_a_wire_error_keep_their_place_in_time() -> None:
    # the kit's malformed subscribe arrives before the target's goodbye; judged in that order, the
    # target's close after its goodbye is not a BYE-3 (the kit's direction is already dead)
    s2c = get_codec("msgpack").encoder()
    records = [TraceRecord(t=0.0, sender=C, data=get_codec("msgpack").encoder().encode(ClientHello(version=0))),
               TraceRecord(t=0.1, sender=S, data=s2c.encode(ServerHello(version=0))),
               TraceRecord(t=0.2, sender=C, data=bytes.fromhex("04010100")),
               TraceRecord(t=0.3, sender=S, data=s2c.encode(Goodbye(reason="bad subscribe"))),
               TraceRecord(t=0.4, sender=S, data=None), TraceRecord(t=0.5, sender=C, data=None)]
    rows = list(frame_rows(records))
    assert [(r.type, r.t) for r in rows][2:4] == [("undecodable", 0.2), ("goodbye", 0.3)]
    expected = [(f.rule, f.side, f.frame_index) for f in Monitor("msgpack").replay(records)]
    assert [(f.rule, f.side, f.frame_index) for f in judge_rows(*_columns(rows))] == expected
    assert ("BYE-3", S) not in [(rule, side) for rule, side, _ in expected]


def test_an_end_by_a_reset_is_a_row_of_its_own_and_judged_as_the_monitor_judges_it() -> None:
    # SPEC.md decision y: an orderly end inside a frame is ERR-6; a reset leaves the cut frame unjudged.
    half = get_codec("msgpack").encoder(None).encode(OnNext(subscriber=1, element=b"\xa3abc"))[:3]
    for reset, end, expected in ((False, "eof", ["ERR-6"]), (True, "reset", [])):
        records = [TraceRecord(t=0.0, sender=Side.SERVER, data=half),
                   TraceRecord(t=0.1, sender=Side.SERVER, data=None, reset=reset)]
        rows = list(frame_rows(records))
        assert rows[-1].type == end, rows
        assert [f.rule for f in judge_rows(*_columns(rows))] == expected
        assert [f.rule for f in Monitor("msgpack").replay(records)] == expected
