"""A trace file that ends inside a record is told from a whole one by every reader (issue 27, part 3).

``read_trace`` yields the whole records and raises ``TraceCut``; ``check-trace`` and ``report`` judge and show the
whole records and say, in a note, where the file was cut and whether that was to be expected (a run that did not
run to its end).  The pipeline's side (lost data unless the run was interrupted) is in test_pipeline_faults.
"""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import msgpack
import pytest
from typer.testing import CliRunner

from rsio_tck.bindings.rsio.corpus import DEFAULT_TARGETS, write_run_dirs
from rsio_tck.cli import app
from rsio_tck.errors import Side
from rsio_tck.monitor.trace import TraceCut, TraceRecord, read_trace, read_whole, write_trace
from rsio_tck.report.schema import check_run_dir


def _records(count: int) -> list[TraceRecord]:
    return [TraceRecord(t=i / 10, sender=Side.CLIENT if i % 2 else Side.SERVER, data=bytes([i]) * (i + 1))
            for i in range(count)] + [TraceRecord(t=count / 10, sender=Side.CLIENT, data=None)]


def _bytes(records: list[TraceRecord]) -> tuple[bytes, list[int]]:
    """The trace file of ``records`` and the offset where each record ends."""
    out, ends = io.BytesIO(), []
    for record in records:
        write_trace(out, [record])
        ends.append(out.tell())
    return out.getvalue(), ends


def test_a_file_cut_anywhere_gives_its_whole_records_and_says_where_it_was_cut() -> None:
    records = _records(6)
    data, ends = _bytes(records)
    for size in range(len(data) + 1):
        whole = sum(1 for end in ends if end <= size)
        got, cut = read_whole(io.BytesIO(data[:size]))
        assert got == records[:whole], size
        if size in (0, *ends):
            assert cut is None, size
        else:
            assert cut is not None and (cut.records, cut.whole, cut.size) == (whole, ([0, *ends])[whole], size), size
            assert f"the file ends inside trace record {whole}" in str(cut)


def test_read_trace_raises_the_cut_after_the_whole_records() -> None:
    data, ends = _bytes(_records(3))
    seen: list[TraceRecord] = []
    with pytest.raises(TraceCut):
        seen.extend(read_trace(io.BytesIO(data[: ends[1] + 2])))
    assert len(seen) == 2  # what came before the cut was yielded first


def test_bytes_that_are_no_record_are_still_a_format_error_not_a_cut() -> None:
    data, ends = _bytes(_records(3))
    from rsio_tck.monitor.trace import TraceFormatError

    with pytest.raises(TraceFormatError) as raised:
        read_whole(io.BytesIO(data[: ends[1]] + b"\xc1"))  # a byte MessagePack never uses
    assert not isinstance(raised.value, TraceCut) and "trace record 2 is not valid MessagePack" in str(raised.value)


def test_check_trace_judges_a_cut_file_up_to_the_cut_and_says_so(tmp_path: Path) -> None:
    runs = write_run_dirs(tmp_path / "runs", targets=DEFAULT_TARGETS[:1], runs_per_version=1, frames=20)
    trace = sorted((runs.runs[0] / "traces").glob("*.trace"))[0]
    whole = CliRunner().invoke(app, ["check-trace", str(trace)])
    data = trace.read_bytes()
    trace.write_bytes(data[:-3])
    done = CliRunner().invoke(app, ["check-trace", str(trace)])
    assert done.exit_code in (0, 1) and "Traceback" not in done.output, done.output
    (note,) = [line for line in done.stderr.splitlines() if line.startswith("note:")]
    assert note.startswith(f"note: {trace}: the file ends inside trace record ") and note.endswith("judged up to there")
    assert "note:" not in whole.stderr


@pytest.fixture
def cut_run(tmp_path: Path) -> tuple[Path, str]:
    """A run directory whose first trace ends 3 bytes into its last record: (the run, that scenario)."""
    runs = write_run_dirs(tmp_path / "runs", targets=DEFAULT_TARGETS[:1], runs_per_version=1, frames=20)
    run_dir = runs.runs[0]
    trace = sorted((run_dir / "traces").glob("*.trace"))[0]
    records = list(msgpack.Unpacker(io.BytesIO(trace.read_bytes()), raw=False))
    kept = b"".join(msgpack.packb(r, use_bin_type=True) for r in records[:-4])
    trace.write_bytes(kept + msgpack.packb(records[-4], use_bin_type=True)[:3])
    return run_dir, trace.stem


def _interrupt(run_dir: Path) -> None:
    run = json.loads((run_dir / "run.json").read_text())
    run.update(interrupted=True, interruption={"signal": "SIGTERM", "at": run["started"] + 1, "running": [],
                                               "selected": run["scenarios"], "finished": run["scenarios"]})
    (run_dir / "run.json").write_text(json.dumps(run))


@pytest.mark.parametrize("interrupted", [True, False])
def test_the_report_shows_a_cut_trace_up_to_the_cut_and_says_whether_that_was_expected(
        cut_run: tuple[Path, str], interrupted: bool) -> None:
    run_dir, scenario = cut_run
    if interrupted:
        _interrupt(run_dir)
    done = CliRunner().invoke(app, ["report", str(run_dir)])
    assert done.exit_code == 0 and "Traceback" not in done.output, done.output
    (note,) = [line for line in done.stderr.splitlines() if line.startswith("note:")]
    assert note.startswith(f"note: {run_dir}/traces/{scenario}.trace: the file ends inside trace record ")
    assert note.endswith("the run did not run to its end: it is shown and judged up to there" if interrupted else
                         "the run is not marked interrupted: the rest of its connection was lost; it is shown and "
                         "judged up to there")
    report = json.loads((run_dir / "report" / "report.json").read_text())
    (cut,) = report["cut_traces"]
    assert (cut["id"], cut["trace"], cut["expected"]) == (scenario, f"traces/{scenario}.trace", interrupted)
    assert 'id="cut-traces"' in (run_dir / "report" / "index.html").read_text()
    assert (run_dir / "pcaps" / f"{scenario}.pcap").stat().st_size > 0  # the pcap of its whole records
    assert check_run_dir(run_dir) == []


def test_a_whole_run_reports_no_cut_trace(cut_run: tuple[Path, str], tmp_path: Path) -> None:
    run_dir, scenario = cut_run
    whole = tmp_path / "whole"
    shutil.copytree(run_dir, whole)
    (whole / "traces" / f"{scenario}.trace").unlink()
    done = CliRunner().invoke(app, ["report", str(whole)])
    assert done.exit_code == 0 and "note:" not in done.stderr, done.output
    assert json.loads((whole / "report" / "report.json").read_text())["cut_traces"] == []
