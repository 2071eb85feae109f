"""Each binding's own report: only its rules, its notions and its wire statistics (issue 26, part 4).

A small real run per binding against the embedded reference peer (RS-IO's is the shared
run of ``report_run``); the statistics are checked against counts taken independently
from the same traces with the pipeline's frame rows.  The keepalive and empty-table cases
use made-up traces, so their times are exact.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from report_run import shared_run

from rsio_tck.binding import BINDING_NAMES, get_binding
from rsio_tck.capabilities import Capabilities
from rsio_tck.catalogue import RULES
from rsio_tck.embedded import EmbeddedPeer
from rsio_tck.errors import Side
from rsio_tck.monitor.trace import SENDERS, TraceRecord, read_trace
from rsio_tck.pipeline.framing import ELEMENT_TYPES, EOF, UNDECODABLE, frame_rows
from rsio_tck.report import RunRecorder, build
from rsio_tck.report.schema import check_run_dir
from rsio_tck.scenarios import RunConfig, load_directory, run_suite

CHOSEN = {
    # a stream, a channel (REQUEST_N both ways), fragments, a keepalive round-trip, a contract scenario
    "rsocket": ("RSIM-001", "RSIM-014", "RSFRAG-001", "RSKEEP-001", "RSFLOW-002", "DEM-001"),
    # streams, several requests, a cancel, a refused demand of 0, a contract scenario
    "ditto": ("DITTO-002", "DITTO-004", "DITTO-029", "DITTO-023", "DEM-001"),
}
RUN_ID = "20261124T000000000Z"  # a run directory is named by its run id (run.schema.json)
RUN_TIMEOUT = 120.0  # seconds the few scenarios of a run may take at most, loaded machine included


def _make_run(parent: Path, binding: str) -> Path:
    profile = get_binding(binding).profiles[0]
    scenarios = [s for s in load_directory(None, binding) if s.id in CHOSEN[binding]]
    assert len(scenarios) == len(CHOSEN[binding])
    caps = Capabilities.everything(binding)
    run_dir = parent / binding / RUN_ID
    with EmbeddedPeer(binding=binding, profile=profile) as url:
        recorder = RunRecorder(run_dir, target=url, codec=profile, binding=binding, started=time.time(),
                               capabilities=caps, pcap_workers=0)
        config = RunConfig(target=url, codec=profile, binding=binding, capabilities=caps, keep_trace=True)
        asyncio.run(asyncio.wait_for(run_suite(scenarios, config, jobs=2, on_result=recorder.add), RUN_TIMEOUT))
    recorder.finish(time.time(), len(scenarios))
    build(run_dir)
    return run_dir


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    parent = tmp_path_factory.mktemp("per-binding")
    yield {"rsio": shared_run(), **{binding: _make_run(parent, binding) for binding in CHOSEN}}


def _report(run_dir: Path) -> dict[str, Any]:
    return json.loads((run_dir / "report" / "report.json").read_text(encoding="utf-8"))


def _index(run_dir: Path) -> str:
    return (run_dir / "report" / "index.html").read_text(encoding="utf-8")


def _table(report: dict[str, Any], table_id: str) -> dict[str, Any]:
    tables = {t["id"]: t for t in report["wire"]}
    assert table_id in tables, f"no {table_id} table; the report has {sorted(tables)}"
    return tables[table_id]


def _rows(table: dict[str, Any]) -> dict[str, list[Any]]:
    return {row[0]: row[1:] for row in table["rows"]}


def _row_counts(run_dir: Path, binding: str) -> Counter[tuple[str, Side]]:
    """(row type, sender) -> frames, from the pipeline's frame rows of every trace of the run."""
    profile = _report(run_dir)["profile"]
    counts: Counter[tuple[str, Side]] = Counter()
    for trace in sorted((run_dir / "traces").glob("*.trace")):
        for row in frame_rows(list(read_trace(trace)), profile, binding):
            if row.type != EOF:
                counts[(row.type, SENDERS[row.direction])] += 1
    return counts


def _row_bytes(run_dir: Path, binding: str) -> Counter[str]:
    """Bytes of element frames ("element") and of the other frames ("other"), from the pipeline's frame rows."""
    profile = _report(run_dir)["profile"]
    sizes: Counter[str] = Counter()
    for trace in sorted((run_dir / "traces").glob("*.trace")):
        for row in frame_rows(list(read_trace(trace)), profile, binding):
            if row.type not in (EOF, UNDECODABLE):
                sizes["element" if row.type in ELEMENT_TYPES else "other"] += row.size
    return sizes


@pytest.mark.parametrize("binding", BINDING_NAMES)
def test_only_the_runs_binding_rules_are_listed_and_counted(runs: dict[str, Path], binding: str) -> None:
    run_dir = runs[binding]
    report, index = _report(run_dir), _index(run_dir)
    own = set(get_binding(binding).rules())
    listed = {row["id"] for area in report["areas"] for row in area["rules"]}
    assert report["binding"] == binding and listed == own
    assert all(area["rules"] for area in report["areas"])  # no area without one of the binding's rules
    shown = set(re.findall(r'<tr id="rule-([^"]+)"', index))
    assert shown == own, sorted(shown ^ own)[:10]
    tested = sum(1 for area in report["areas"] for row in area["rules"] if row["outcome"] not in ("untested", "skip"))
    assert report["rules_total"] == len(own) < len(RULES) and report["rules_tested"] == tested > 0
    assert f"{tested} of {len(own)} {report['badge']['label']} rules" in index
    assert check_run_dir(run_dir) == []  # report.json, with its new fields, meets its schema


@pytest.mark.parametrize("binding", BINDING_NAMES)
def test_no_none_and_no_empty_table_in_the_rendered_report(runs: dict[str, Path], binding: str) -> None:
    pages = [run_dir_page for run_dir_page in (runs[binding] / "report").rglob("*.html")]
    assert len(pages) > 1
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert not re.search(r"\bNone\b|>none<", text), f"{page.name} shows None"
    index = _index(runs[binding])
    assert "<h2>Wire statistics</h2>" in index
    for table in _report(runs[binding])["wire"]:
        assert table["rows"] and all(cell is not None for row in table["rows"] for cell in row)
        assert f'id="wire-{table["id"]}"' in index


def test_the_rsio_report_keeps_its_hello_spec_and_statistics(runs: dict[str, Path]) -> None:
    run_dir = runs["rsio"]
    report, index = _report(run_dir), _index(run_dir)
    notions = {n["label"]: n["value"] for n in report["notions"]}
    assert notions["target hello"] == "serverHello(version=0, extensions=[]) 020090"
    assert notions["SPEC"] == "rsio-v0/1" and notions["codec"] == "msgpack"
    assert "<td>target hello</td><td>serverHello(version=0, extensions=[]) 020090</td>" in index
    rows = _row_counts(run_dir, "rsio")
    wire = _rows(_table(report, "totals"))
    assert wire["frames"] == [sum(n for (kind, _), n in rows.items() if kind != UNDECODABLE)]
    sizes = _row_bytes(run_dir, "rsio")  # the pipeline's own sizes: the same measures, the same numbers
    assert wire["bytes"] == [sum(sizes.values())] and wire["element frame bytes"] == [sizes["element"]]
    assert wire["elements"][0] > 0 and 0 < wire["header overhead"][0] < 1
    by_type = _rows(_table(report, "frames-by-type"))
    assert by_type["onNext"] == [rows[("onNext", Side.CLIENT)], rows[("onNext", Side.SERVER)],
                                 rows[("onNext", Side.CLIENT)] + rows[("onNext", Side.SERVER)]]


@pytest.mark.parametrize("binding", sorted(CHOSEN))
def test_other_bindings_show_their_own_protocol_and_no_rsio_notion(runs: dict[str, Path], binding: str) -> None:
    run_dir = runs[binding]
    report, index = _report(run_dir), _index(run_dir)
    notions = {n["label"]: n["value"] for n in report["notions"]}
    assert notions["profile"] == get_binding(binding).profiles[0] == report["profile"]
    assert notions["protocol"].startswith("RSocket Protocol 1.0" if binding == "rsocket" else "Ditto Protocol")
    for rsio_notion in ("target hello", "serverHello", "rsio-v0", "kit / SPEC", "<td>codec</td>"):
        assert rsio_notion not in index


def test_rsocket_statistics_match_the_traces(runs: dict[str, Path]) -> None:
    run_dir = runs["rsocket"]
    report = _report(run_dir)
    rows = _row_counts(run_dir, "rsocket")
    by_type = _rows(_table(report, "frames-by-type"))
    expected = {kind for kind, _ in rows}
    assert set(by_type) == expected and {"SETUP", "PAYLOAD", "REQUEST_N", "KEEPALIVE"} <= expected
    for kind, counts in by_type.items():
        assert counts == [rows[(kind, Side.CLIENT)], rows[(kind, Side.SERVER)],
                          rows[(kind, Side.CLIENT)] + rows[(kind, Side.SERVER)]], kind
    fragments = _rows(_table(report, "fragmentation"))
    frames, with_f, payloads, fragmented, share = fragments["server \u2192 client"]
    assert with_f > 0 and fragmented > 0 and share == fragmented / payloads and frames == with_f + payloads
    credit = _rows(_table(report, "credit-per-stream"))
    streams, grants, total, least, most = credit["client"]
    assert grants >= rows[("REQUEST_N", Side.CLIENT)] and least <= total / streams <= most
    asked, answered, *times = _rows(_table(report, "keepalive-round-trips"))["client"]
    assert asked >= answered >= 1 and all(t >= 0 for t in times)
    index = _index(run_dir)
    payload = by_type["PAYLOAD"]
    assert f"<tr><td>PAYLOAD</td><td class=\"n\">{payload[0]}</td><td class=\"n\">{payload[1]}</td>" in index


def test_ditto_statistics_match_the_traces(runs: dict[str, Path]) -> None:
    run_dir = runs["ditto"]
    report = _report(run_dir)
    rows = _row_counts(run_dir, "ditto")  # the pipeline's Ditto rows are typed by contract signal
    by_signal = _rows(_table(report, "envelopes-by-signal"))
    assert "streaming next (onNext)" in by_signal and "streaming request (request)" in by_signal
    per_signal: Counter[tuple[str, Side]] = Counter()
    for name, (client, server, _total) in by_signal.items():
        signal = name.rsplit("(", 1)[1].rstrip(")")
        per_signal[(signal, Side.CLIENT)] += client
        per_signal[(signal, Side.SERVER)] += server
    assert +per_signal == +rows
    subscriptions, requests, total, least, most, nexts = _rows(_table(report, "demand-per-subscription"))["client"]
    assert requests == rows[("request", Side.CLIENT)] and nexts == rows[("onNext", Side.SERVER)]
    assert subscriptions == 5 and least == 0 < most <= total  # DITTO-023's only demand was 0


def _trace(binding: str, frames: list[tuple[float, Side, Any]]) -> list[TraceRecord]:
    chosen = get_binding(binding)
    encoders = {side: chosen.encoder(chosen.profiles[0]) for side in Side}
    return [TraceRecord(t=t, sender=side, data=encoders[side].encode(frame)) for t, side, frame in frames]


def test_keepalive_round_trips_pair_each_ask_with_the_next_answer() -> None:
    from rsio_tck.bindings.rsocket.frames import Keepalive, Setup

    binding = get_binding("rsocket")
    setup = Setup(keepalive_interval=1000, max_lifetime=10000, metadata_mime=b"text/plain",
                  data_mime=b"text/plain")
    trace = _trace("rsocket", [(0.0, Side.CLIENT, setup),
                               (1.0, Side.CLIENT, Keepalive(respond=True, data=b"a")),
                               (1.25, Side.SERVER, Keepalive(data=b"a")),
                               (2.0, Side.CLIENT, Keepalive(respond=True, data=b"b")),
                               (2.0, Side.SERVER, Keepalive(respond=True, data=b"c"))])  # the second ask: unanswered
    tables = {t.id: t for t in binding.report_statistics("rsocket-1.0", [trace])}
    # A SETUP and keepalives only: no payload, no credit, so those tables are left out.
    assert set(tables) == {"frames-by-type", "keepalive-round-trips"}
    rows = {row[0]: row[1:] for row in tables["keepalive-round-trips"].rows}
    assert rows["client"] == (2, 1, 250.0, 250.0, 250.0)
    assert rows["server"] == (1, 0, "-", "-", "-")


def test_no_traffic_gives_no_tables() -> None:
    for binding in BINDING_NAMES:
        chosen = get_binding(binding)
        assert chosen.report_statistics(chosen.profiles[0], []) == []


def test_the_neutral_report_code_never_names_a_binding() -> None:
    """The seam rule: what differs between bindings comes from the binding object, never from a test of its name."""
    report = Path(__file__).resolve().parents[1] / "tck" / "report"
    sources = [report / name for name in ("model.py", "html.py", "traffic.py")] + sorted((report / "templates").iterdir())
    for source in sources:
        text = source.read_text(encoding="utf-8")
        for name in BINDING_NAMES:
            assert not re.search(rf"[\"']{name}[\"']", text), f"{source.name} names the binding {name!r}"
