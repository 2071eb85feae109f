"""The pipeline under faults: nothing lost, nothing half written presented as whole (issue 27, part 3).

A full disk under the warehouse (Spark's Parquet writer meets ENOSPC in the JVM) is one line naming the
warehouse and the cause, exit 3, with the warehouse's old tables and the run directories as they were.
A trace file cut inside its last record is ingested up to the cut, with a note, when its run did not run to its
end (interrupted); in any other run it is lost data: one line naming the run and the file, exit 3.
Where the tests run as root, the warehouse is on a small tmpfs filled but for a few kilobytes
(``test_full_disk.Full``); without the right to mount, the first table write gets a real ENOSPC from the JVM
writing ``/dev/full`` instead (a file-size limit on the shared session's JVM would fail its other files
first: it extracts its compression library to /tmp on first use).

The module is one of conftest's SPARK_MODULES: it shares the Spark session of the pipeline modules.
"""

from __future__ import annotations

import hashlib
import io
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgpack
import pytest

pytest.importorskip("pyspark")

from pipeline_spark import session  # noqa: E402
from test_full_disk import Full, _mount  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from rsio_tck.bindings.rsio.corpus import DEFAULT_TARGETS, write_run_dirs  # noqa: E402
from rsio_tck.cli import app  # noqa: E402
from rsio_tck.pipeline.ingest import read_table  # noqa: E402
from rsio_tck.pipeline.sources import connection_frames  # noqa: E402

FREE = 16 * 1024  # bytes left on the full disk: less than the first table of the small corpus takes


@pytest.fixture(scope="module")
def small_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Run directories of one target version (10 connections of 200 frames), on a disk with room."""
    root = tmp_path_factory.mktemp("runs") / "reports"
    write_run_dirs(root, targets=DEFAULT_TARGETS[:1], runs_per_version=1, frames=200)
    return root


@pytest.fixture
def full_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Full]:
    import subprocess

    where = tmp_path / "full"
    where.mkdir()
    if not _mount(where, "2m"):
        from rsio_tck.pipeline import pipeline

        def write_to_a_full_device(frame: Any, *args: Any, **kwargs: Any) -> None:
            jvm = session().sparkContext._jvm
            out = jvm.java.io.FileOutputStream("/dev/full")  # every write: ENOSPC, raised by the JVM
            try:
                out.write(bytearray(4096))
            finally:
                out.close()

        monkeypatch.setattr(pipeline, "write_table", write_to_a_full_device)
        yield Full(where, "dev-full")
        return
    try:
        yield Full(where, "tmpfs")
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True, timeout=30, check=False)


def _digests(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() for p in root.rglob("*") if p.is_file()}


@pytest.mark.parametrize("command", ["pipeline", "publish"])
def test_a_full_disk_under_the_warehouse_is_one_line_exit_3_and_the_old_tables_stay(
        command: str, small_runs: Path, full_disk: Full) -> None:
    spark = session()
    out = full_disk.path / "site"
    warehouse = out / "data"  # publish's default; given to pipeline as --warehouse
    spark.createDataFrame([("an older run",)], "run_id string").write.parquet(str(warehouse / "runs"))
    before = _digests(small_runs)
    full_disk.fill(FREE)
    args = ["pipeline", str(small_runs), "--warehouse", str(warehouse)] if command == "pipeline" else \
        ["publish", str(small_runs), "--out", str(out), "--no-build-reports"]
    done = CliRunner().invoke(app, args)
    assert done.exit_code == 3, (full_disk.mechanism, done.output[-3000:], repr(done.exception))
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert errors == [f"error: pipeline: cannot write the warehouse {warehouse.resolve()} (its tables are as they "
                      "were): No space left on device"], (full_disk.mechanism, done.stderr[-3000:])
    assert "Traceback" not in done.output and "Py4J" not in done.output
    # The old table is whole and alone: nothing of this run's tables, no staging directory, no site.
    assert sorted(p.name for p in warehouse.iterdir()) == ["runs"] and sorted(p.name for p in out.iterdir()) == ["data"]
    assert [row["run_id"] for row in spark.read.parquet(str(warehouse / "runs")).collect()] == ["an older run"]
    assert _digests(small_runs) == before


@pytest.fixture
def cut_run(small_runs: Path, tmp_path: Path) -> tuple[Path, Path, int]:
    """A copy of a small run whose first trace ends 3 bytes into a record, half its records before it: (the run,
    that trace, the frame rows of the whole trace)."""
    source = sorted(small_runs.iterdir())[0]
    run_dir = (tmp_path / "reports" / source.name).resolve()
    shutil.copytree(source, run_dir)
    trace = sorted((run_dir / "traces").glob("*.trace"))[0]
    whole_rows = len(list(connection_frames("trace", str(trace), run_dir.name, 0, trace.stem, "msgpack")))
    records = list(msgpack.Unpacker(io.BytesIO(trace.read_bytes()), raw=False))
    half = len(records) // 2
    trace.write_bytes(b"".join(msgpack.packb(r, use_bin_type=True) for r in records[:half])
                      + msgpack.packb(records[half], use_bin_type=True)[:3])
    return run_dir, trace, whole_rows


def test_a_trace_cut_with_its_interrupted_run_is_ingested_up_to_the_cut_and_noted(
        cut_run: tuple[Path, Path, int], tmp_path: Path) -> None:
    run_dir, trace, whole_rows = cut_run
    run = json.loads((run_dir / "run.json").read_text())
    run.update(interrupted=True, interruption={"signal": "SIGTERM", "at": run["started"] + 1, "running": [],
                                               "selected": run["scenarios"], "finished": run["scenarios"]})
    (run_dir / "run.json").write_text(json.dumps(run))
    session()
    done = CliRunner().invoke(app, ["pipeline", str(run_dir), "--warehouse", str(tmp_path / "wh"), "--no-judge"])
    assert done.exit_code == 0, done.output[-3000:]
    (note,) = [line for line in done.stderr.splitlines() if line.startswith("note:")]
    assert note.startswith(f"note: run {run_dir.name} did not run to its end, and its trace {trace} was cut with "
                           "it: the file ends inside trace record ") and note.endswith("ingested up to the cut")
    assert json.loads(done.stdout)["notes"] == [note.removeprefix("note: ")]
    cut_rows = len(list(connection_frames("trace", str(trace), run_dir.name, 0, trace.stem, "msgpack")))
    stored = read_table(session(), tmp_path / "wh", "frames").filter(f"scenario = '{trace.stem}'").count()
    assert 0 < stored == cut_rows < whole_rows  # every whole record's frames, none of the cut one's


def test_a_trace_cut_in_a_run_not_interrupted_is_lost_data_naming_the_run_and_file(
        cut_run: tuple[Path, Path, int], tmp_path: Path) -> None:
    run_dir, trace, _ = cut_run
    session()
    done = CliRunner().invoke(app, ["pipeline", str(run_dir), "--warehouse", str(tmp_path / "wh"), "--no-judge"])
    assert done.exit_code == 3, done.output[-3000:]
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "Traceback" not in done.output, done.stderr[-3000:]
    assert errors[0].startswith(f"error: pipeline: lost data: 1 trace file(s) of run(s) not interrupted end inside a "
                                f"record, the rest of their connection lost (runs {run_dir.name}; {trace}: the file "
                                "ends inside trace record "), errors[0]
    assert "executor" not in errors[0]  # no hint about storage the executors cannot see: the file is there, cut
    assert not (tmp_path / "wh").exists()  # no tables over a run that lost data
