"""The pipeline gives the same tables on every master, a real standalone cluster included, and loses nothing.

A Spark standalone master and one worker are started here, on loopback, from the venv's own pyspark, and
stopped at the end. The same run directories, named by relative paths as the README's examples do, go
through ``rsio-tck pipeline`` on ``local[1]``, ``local[2]`` and the cluster; the row counts and checksums
of the runs, results, violations and frames tables must be identical. Each pipeline is its own process
(its own JVM), so this module does not touch the Spark session the other pipeline tests share.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

pyspark = pytest.importorskip("pyspark")
# Three pipelines (each its own JVM) and a cluster starting, on a loaded two-core machine: minutes, not seconds.
pytestmark = pytest.mark.timeout(1200)

from rsio_tck.pipeline.completeness import Expected, LostData, check  # noqa: E402

SPARK_HOME = Path(pyspark.__file__).parent
START_TIMEOUT = 180.0  # seconds for the master and the worker to come up, on a loaded two-core machine
PIPELINE_TIMEOUT = 600.0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _env() -> dict[str, str]:
    return {**os.environ, "SPARK_HOME": str(SPARK_HOME), "SPARK_LOCAL_IP": "127.0.0.1",
            "PYSPARK_PYTHON": sys.executable, "SPARK_NO_DAEMONIZE": "1"}


class _Daemon:
    """A Spark deploy process whose log is watched for the line that says it is up."""

    def __init__(self, args: list[str], ready: str, log: Path) -> None:
        self.log = log.open("w")
        self.process = subprocess.Popen([str(SPARK_HOME / "bin" / "spark-class"), *args], env=_env(),
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.up = threading.Event()
        self.ready = ready
        threading.Thread(target=self._watch, daemon=True).start()

    def _watch(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.log.write(line)
            self.log.flush()
            if self.ready in line:
                self.up.set()
        self.up.set()  # ended: wait() then sees the process gone

    def wait(self, what: str) -> None:
        if not self.up.wait(START_TIMEOUT) or self.process.poll() is not None:
            pytest.fail(f"the Spark {what} did not come up within {START_TIMEOUT:g} s (log: {self.log.name})")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(30)
        self.log.close()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    logs = tmp_path_factory.mktemp("spark-logs")
    port = _free_port()
    master = _Daemon(["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port),
                      "--webui-port", str(_free_port())], "I have been elected leader", logs / "master.log")
    worker = None
    try:
        master.wait("master")
        url = f"spark://127.0.0.1:{port}"
        worker = _Daemon(["org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1", "--cores", "2",
                          "--memory", "2g", "--webui-port", str(_free_port()), "--work-dir", str(logs / "work"),
                          url], "Successfully registered with master", logs / "worker.log")
        worker.wait("worker")
        yield url
    finally:
        if worker is not None:
            worker.stop()
        master.stop()


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory holding two run directories (RS-IO and RSocket) the kit wrote against its reference peer."""
    base = tmp_path_factory.mktemp("cluster-runs")
    for binding, selection in (("rsio", "PACK-00 or ERR-00"), ("rsocket", "RSFLOW-00")):
        done = subprocess.run([sys.executable, "-m", "rsio_tck.cli", "run", "--binding", binding, "-k", selection,
                               "--report-dir", str(base / "reports"), "--quiet", "--jobs", "4"],
                              capture_output=True, text=True, timeout=PIPELINE_TIMEOUT)
        assert done.returncode in (0, 1), done.stdout + done.stderr
    assert len(list((base / "reports").iterdir())) == 2
    return base


def _pipeline(cwd: Path, master: str, warehouse: str) -> dict[str, object]:
    # Relative paths on purpose: the README's examples use them, and a cluster's executors do not share
    # the driver's working directory.
    done = subprocess.run([sys.executable, "-m", "rsio_tck.cli", "pipeline", "reports", "--warehouse", warehouse,
                           "--master", master], cwd=cwd, env=_env(), capture_output=True, text=True,
                          timeout=PIPELINE_TIMEOUT)
    assert done.returncode == 0, f"{master}: rc {done.returncode}\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    report: dict[str, object] = json.loads(done.stdout[done.stdout.index("{"):])
    return report


def test_local_one_local_two_and_a_standalone_cluster_give_identical_tables(runs: Path, cluster: str) -> None:
    reports = {master: _pipeline(runs, master, f"wh-{n}")
               for n, master in enumerate(("local[1]", "local[2]", cluster))}
    tables = {master: report["tables"] for master, report in reports.items()}
    first = tables["local[1]"]
    assert isinstance(first, dict) and set(first) == {"runs", "scenario_results", "violations", "frames"}
    assert first["runs"]["rows"] == 2 and first["frames"]["rows"] > 100
    assert first["violations"]["rows"] > 0  # the malformed-input scenarios: the kit breaks rules on purpose
    assert tables["local[2]"] == first
    assert tables[cluster] == first, "the standalone cluster's tables differ from local mode's"
    assert {report["offline_violations"] for report in reports.values()} == {reports["local[1]"]["offline_violations"]}


def test_frames_an_executor_cannot_read_are_exit_3_naming_the_run(runs: Path, tmp_path: Path) -> None:
    # A copy of one run whose trace is a directory: the driver sees a recorded connection, and the
    # executor cannot read it, as on a cluster whose executors do not see the driver's files.
    source = next(p for p in (runs / "reports").iterdir() if (p / "traces").is_dir())
    copy = tmp_path / "reports" / source.name
    subprocess.run(["cp", "-r", str(source), str(copy)], check=True, timeout=60)
    trace = sorted((copy / "traces").glob("*.trace"))[0]
    trace.unlink()
    trace.mkdir()
    (trace / "unreadable").write_bytes(b"x")
    done = subprocess.run([sys.executable, "-m", "rsio_tck.cli", "pipeline", "reports", "--warehouse", "wh",
                           "--master", "local[1]"], cwd=tmp_path, env=_env(), capture_output=True, text=True,
                          timeout=PIPELINE_TIMEOUT)
    assert done.returncode == 3, done.stdout[-1000:] + done.stderr[-2000:]
    errors = [line for line in done.stderr.splitlines() if line.startswith("error: pipeline:")]
    assert len(errors) == 1 and source.name in errors[0] and "1 of" in errors[0], done.stderr[-2000:]
    assert "Traceback" not in done.stderr


def test_check_names_lost_results_and_counts_lost_connections() -> None:
    class Rows:
        def __init__(self, rows: list[tuple[str, ...]]) -> None:
            self.rows = rows

        def select(self, *columns: str) -> Rows:
            return self

        def distinct(self) -> Rows:
            return self

        def collect(self) -> list[tuple[str, ...]]:
            return self.rows

    expected = Expected(results={"r1", "r2"}, connections={("r1", "A"), ("r1", "B"), ("r2", "A")})
    check(expected, Rows([("r1",), ("r2",)]), Rows([("r1", "A"), ("r1", "B"), ("r2", "A")]))  # type: ignore[arg-type]
    with pytest.raises(LostData, match=r"the results of 1 run\(s\) and the frames of 1 of 3 .*runs r2\b"):
        check(expected, Rows([("r1",)]), Rows([("r1", "A"), ("r1", "B")]))  # type: ignore[arg-type]
