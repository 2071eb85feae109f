"""The pipeline under faults: nothing lost, nothing half written presented as whole (issue 27, part 3).

A full disk under the warehouse (Spark's Parquet writer meets ENOSPC in the JVM) is one line naming the
warehouse and the cause, exit 3, with the warehouse's old tables and the run directories as they were.
Where the tests run as root, the warehouse is on a small tmpfs filled but for a few kilobytes
(``test_full_disk.Full``); without the right to mount, the first table write gets a real ENOSPC from the JVM
writing ``/dev/full`` instead (a file-size limit on the shared session's JVM would fail its other files
first: it extracts its compression library to /tmp on first use).

The module is one of conftest's SPARK_MODULES: it shares the Spark session of the pipeline modules.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyspark")

from pipeline_spark import session  # noqa: E402
from test_full_disk import Full, _mount  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from rsio_tck.bindings.rsio.corpus import DEFAULT_TARGETS, write_run_dirs  # noqa: E402
from rsio_tck.cli import app  # noqa: E402

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
