"""The pipeline on a run directory the kit itself wrote (``rsio-tck run`` against the embedded reference peer)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

pytest.importorskip("pyspark")

from pipeline_spark import session  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from rsio_tck import __version__  # noqa: E402
from rsio_tck.cli import app  # noqa: E402
from rsio_tck.monitor.monitor import check_trace  # noqa: E402
from rsio_tck.pipeline.ingest import read_table  # noqa: E402
from rsio_tck.pipeline.pipeline import run_pipeline  # noqa: E402
from rsio_tck.reference_peer.rsio.freedoms import DELIBERATE_WARNINGS  # noqa: E402


def test_a_real_run_directory_becomes_tables_and_the_peer_passes_the_offline_judge(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["run", "-k", "PACK or ERR-00", "--report-dir", str(tmp_path / "reports"),
                                      "--quiet", "--jobs", "4"])
    assert result.exit_code in (0, 1), result.output
    (run_dir,) = list((tmp_path / "reports").iterdir())
    lines = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines() if line.strip()]
    traces = list((run_dir / "traces").glob("*.trace"))
    assert lines and traces
    spark = session()
    report = run_pipeline(spark, [run_dir], tmp_path / "warehouse")
    assert report.runs == 1 and report.frames > 10 * len(traces)
    runs = read_table(spark, tmp_path / "warehouse", "runs").collect()
    assert runs[0]["target"] == "rsio-reference-peer" and runs[0]["codec"] == "msgpack"  # named by the kit
    assert runs[0]["target_version"] == __version__ and runs[0]["target_url"].startswith("tcp://127.0.0.1:")
    assert read_table(spark, tmp_path / "warehouse", "scenario_results").count() == len(lines)
    frames = read_table(spark, tmp_path / "warehouse", "frames")
    assert frames.select("run_id", "connection").distinct().count() == len(traces)
    types = {row["type"] for row in frames.select("type").distinct().collect()}
    assert {"clientHello", "serverHello", "subscribe", "onSubscribe", "onNextPacked"} <= types
    violations = read_table(spark, tmp_path / "warehouse", "violations").filter("source = 'offline'").collect()
    expected = Counter((f.rule, str(f.side)) for trace in traces for f in check_trace(trace, "msgpack").findings)
    assert expected  # the malformed-input scenarios make the kit break rules on purpose
    assert Counter((v["rule"], v["side"]) for v in violations) == expected  # same findings as check-trace
    online_server = sum(len([v for v in line["violations"] if v.get("source") == "monitor"
                             and v.get("rule") not in DELIBERATE_WARNINGS]) for line in lines)
    assert expected.get(("BYE-3", "server"), 0) == 0 and online_server == 0  # the reference peer conforms
    wire = read_table(spark, tmp_path / "warehouse", "wire_stats").collect()
    assert wire[0]["packed_share"] > 0 and wire[0]["frames"] == frames.filter("type NOT IN ('eof', 'undecodable')").count()
