"""The pipeline gives the same tables on every master, a real standalone cluster included, and loses nothing.

A Spark standalone master and one worker (one core, 1 GB) are started here, on loopback, from the venv's
own pyspark, and stopped at the end, even on failure.  The same run directories, written by the kit against
its reference peer, go through ``rsio-tck pipeline`` on ``local[1]`` (named by an absolute path),
``local[2]`` and the cluster (named relatively, as the README's examples do: the cluster's executors work
in a directory of their own, which is how issue 27's cluster read 6 runs and 0 frames).  The row counts and
checksums of the runs, results, violations and frames tables must be identical.

The module runs in the Spark unit of ``make test`` (tests/conftest.py): the three masters are three
contexts, one after the other, in the JVM the other pipeline tests share, which saves a JVM start and its
warm-up each; ``pipeline_spark.session()`` switches back to local[2] for whoever comes next.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import msgpack
import pytest

pyspark = pytest.importorskip("pyspark")

from pipeline_spark import session  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

import rsio_tck  # noqa: E402
from rsio_tck.cli import app  # noqa: E402
from rsio_tck.pipeline.session import spark_session  # noqa: E402

SPARK_HOME = Path(pyspark.__file__).parent
START_TIMEOUT = 180.0  # seconds for the master, the worker or the application's executor to come up, under load
STOP_TIMEOUT = 30.0
MASTER_URL = re.compile(r"Starting Spark master at (spark://127\.0\.0\.1:\d+)")
TABLES = {"runs", "scenario_results", "violations", "frames"}


def _env() -> dict[str, str]:
    # The worker's executors inherit this environment: the venv's Python (PYSPARK_PYTHON) and its PYTHONPATH,
    # so they import the kit the driver imports.  No REST server: it would take the fixed port 6066.
    return {**os.environ, "SPARK_HOME": str(SPARK_HOME), "SPARK_LOCAL_IP": "127.0.0.1",
            "PYSPARK_PYTHON": os.environ.get("PYSPARK_PYTHON", sys.executable),
            "SPARK_MASTER_OPTS": "-Dspark.master.rest.enabled=false"}


class _Daemon:
    """A Spark deploy process in a process group of its own, its output copied to a log and watched."""

    def __init__(self, args: list[str], log: Path) -> None:
        self.log = log
        self.lines: list[str] = []
        self.changed = threading.Condition()
        self.process = subprocess.Popen([str(SPARK_HOME / "bin" / "spark-class"), *args], env=_env(),
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                        start_new_session=True)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        with self.log.open("w") as copy:
            for line in self.process.stdout:
                copy.write(line)
                copy.flush()
                with self.changed:
                    self.lines.append(line)
                    self.changed.notify_all()
        with self.changed:  # ended: a waiter stops waiting
            self.changed.notify_all()

    def wait_for(self, pattern: str, what: str) -> re.Match[str]:
        """The first line matching ``pattern``; fails the test when the process ends or START_TIMEOUT passes."""
        wanted = re.compile(pattern)
        deadline = time.monotonic() + START_TIMEOUT
        seen = 0
        with self.changed:
            while True:
                for line in self.lines[seen:]:
                    if found := wanted.search(line):
                        return found
                seen = len(self.lines)
                left = deadline - time.monotonic()
                if left <= 0 or not self.reader.is_alive():
                    pytest.fail(f"the Spark {what} did not come up within {START_TIMEOUT:g} s (log: {self.log})")
                self.changed.wait(left)

    def stop(self) -> None:
        """SIGTERM to the whole group (a worker's executors and their Python workers with it), then SIGKILL."""
        for sig in (signal.SIGTERM, signal.SIGKILL):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, sig)
            try:
                self.process.wait(STOP_TIMEOUT)
                break
            except subprocess.TimeoutExpired:
                continue
        self.reader.join(STOP_TIMEOUT)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The URL of a standalone master with one registered worker, both on loopback, stopped afterwards."""
    logs = tmp_path_factory.mktemp("spark-cluster")
    daemons: list[_Daemon] = []
    try:
        master = _Daemon(["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", "0",
                          "--webui-port", "0"], logs / "master.log")
        daemons.append(master)
        url = master.wait_for(MASTER_URL.pattern, "master").group(1)
        master.wait_for(r"I have been elected leader", "master")
        worker = _Daemon(["org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1", "--cores", "1",
                          "--memory", "1g", "--webui-port", "0", "--work-dir", str(logs / "work"), url],
                         logs / "worker.log")
        daemons.append(worker)
        worker.wait_for(r"Successfully registered with master", "worker")
        yield url
    finally:
        try:  # the application first: a driver whose master vanished under it logs errors into the next test
            session()
        finally:
            for daemon in reversed(daemons):
                daemon.stop()


def _cluster_session(url: str) -> None:
    """The process's session switched to the cluster, its executor registered and importing this kit."""
    spark = spark_session(url)
    context = spark.sparkContext
    assert context.master == url
    deadline = time.monotonic() + START_TIMEOUT
    while context._jsc.sc().getExecutorMemoryStatus().size() < 2:  # the driver's block manager, and one more
        if time.monotonic() > deadline:
            pytest.fail(f"no executor joined the application on {url} within {START_TIMEOUT:g} s")
        time.sleep(0.2)  # a poll interval; the deadline bounds the wait
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
