"""The pipeline gives the same tables on every master, a real standalone cluster included, and loses nothing.

A Spark standalone master and one worker (one core, 1 GB) are started here, on loopback, from the venv's
own pyspark (``rsio_tck.pipeline.standalone``), and stopped at the end, even on failure.  The same run
directories, written by the kit against its reference peer, go through ``rsio-tck pipeline`` on ``local[1]``
(named by an absolute path), ``local[2]`` and the cluster (named relatively, as the README's examples do:
the cluster's executors work in a directory of their own, which is how issue 27's cluster read 6 runs and
0 frames).  The row counts and checksums of the runs, results, violations and frames tables must be identical.

The module runs in the Spark unit of ``make test`` (tests/conftest.py): the three masters are three
contexts, one after the other, in the JVM the other pipeline tests share, which saves a JVM start and its
warm-up each; ``pipeline_spark.session()`` switches back to local[2] for whoever comes next.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import msgpack
import pytest

pyspark = pytest.importorskip("pyspark")

from pipeline_spark import session  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

import rsio_tck  # noqa: E402
from rsio_tck.cli import app  # noqa: E402
from rsio_tck.pipeline.spark_session import spark_session  # noqa: E402
from rsio_tck.pipeline.standalone import StandaloneError, standalone_cluster, wait_for_executors  # noqa: E402

TABLES = {"runs", "scenario_results", "violations", "frames"}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The URL of a standalone master with one registered worker, both on loopback, stopped afterwards."""
    try:
        with standalone_cluster(tmp_path_factory.mktemp("spark-cluster"), workers=1) as url:
            try:
                yield url
            finally:  # the application first: a driver whose master vanished under it logs errors into the next test
                session()
    except StandaloneError as exc:
        pytest.fail(str(exc))


def _cluster_session(url: str) -> None:
    """The process's session switched to the cluster, its executor registered and importing this kit."""
    spark = spark_session(url)
    context = spark.sparkContext
    assert context.master == url
    try:
        wait_for_executors(context, 1)
    except StandaloneError as exc:
        pytest.fail(str(exc))
    cwd, kit = context.parallelize([0], 1).map(
        lambda _: (os.getcwd(), __import__("rsio_tck").__file__)).collect()[0]
    assert kit == rsio_tck.__file__, "the executor imports another copy of the kit"
    assert Path(cwd) != Path.cwd(), "the executor shares the driver's working directory: a relative path proves nothing"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory whose reports/ holds two run directories (RS-IO and RSocket) against the reference peer."""
    base = tmp_path_factory.mktemp("cluster-runs")
    for binding, selection in (("rsio", "PACK-00 or ERR-00"), ("rsocket", "RSFLOW-00")):
        done = CliRunner().invoke(app, ["run", "--binding", binding, "-k", selection, "--report-dir",
                                        str(base / "reports"), "--quiet", "--jobs", "4"])
        assert done.exit_code in (0, 1), done.output
    assert len(list((base / "reports").iterdir())) == 2
    return base


def _pipeline(cwd: Path, run_dirs: str, master: str, warehouse: str) -> dict[str, object]:
    with contextlib.chdir(cwd):
        done = CliRunner().invoke(app, ["pipeline", run_dirs, "--warehouse", warehouse, "--master", master])
    assert done.exit_code == 0, f"{master}: exit {done.exit_code}\n{done.output[-3000:]}\n{done.exception!r}"
    report: dict[str, object] = json.loads(done.stdout[done.stdout.index("{"):])
    return report


def test_local_one_local_two_and_a_standalone_cluster_give_identical_tables(runs: Path, cluster: str) -> None:
    reports = {"local[1]": _pipeline(runs, str(runs / "reports"), "local[1]", "wh-1"),
               "local[2]": _pipeline(runs, "reports", "local[2]", "wh-2")}
    _cluster_session(cluster)
    reports[cluster] = _pipeline(runs, "reports", cluster, "wh-cluster")
    tables = {master: report["tables"] for master, report in reports.items()}
    first = tables["local[1]"]
    assert isinstance(first, dict) and set(first) == TABLES
    assert first["runs"]["rows"] == 2 and first["frames"]["rows"] > 100
    assert first["violations"]["rows"] > 0  # the malformed-input scenarios: the kit breaks rules on purpose
    assert tables["local[2]"] == first
    assert tables[cluster] == first, "the standalone cluster's tables differ from local mode's"
    assert len({report["offline_violations"] for report in reports.values()}) == 1


def _copy_with(runs: Path, tmp_path: Path, spoil: str) -> tuple[Path, str]:
    """A copy of the RS-IO run whose first trace is spoiled: (the copies' directory, the run's id)."""
    source = next(p for p in (runs / "reports").iterdir() if '"rsio"' in (p / "run.json").read_text())
    copy = tmp_path / "reports" / source.name
    shutil.copytree(source, copy)
    trace = sorted((copy / "traces").glob("*.trace"))[0]
    if spoil == "missing":  # listed by the driver, gone for the executor: a dangling link
        trace.unlink()
        trace.symlink_to(tmp_path / "elsewhere" / trace.name)
    else:  # its first half of records whole, then a byte MessagePack never uses: the rest cannot be read
        records = list(msgpack.Unpacker(io.BytesIO(trace.read_bytes()), raw=False))
        trace.write_bytes(b"".join(msgpack.packb(r, use_bin_type=True) for r in records[:len(records) // 2]) + b"\xc1")
    return tmp_path, source.name


@pytest.mark.parametrize("spoil", ["missing", "cut"])
def test_frames_the_executors_cannot_read_whole_are_exit_3_naming_the_run(runs: Path, tmp_path: Path,
                                                                          spoil: str) -> None:
    cwd, run_id = _copy_with(runs, tmp_path, spoil)
    session()  # the shared local[2]
    with contextlib.chdir(cwd):
        done = CliRunner().invoke(app, ["pipeline", "reports", "--warehouse", "wh", "--master", "local[2]"])
    assert done.exit_code == 3, done.output[-3000:]
    errors = [line for line in done.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and errors[0].startswith("error: pipeline: lost data: 1 of "), done.stderr[-2000:]
    assert f"(runs {run_id};" in errors[0] and "could not be read whole" in errors[0]
    assert "Traceback" not in done.output
