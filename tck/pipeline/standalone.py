"""A Spark standalone cluster on loopback, started from the installed pyspark: a master and N workers.

Theory of operation: ``standalone_cluster(logs, workers=N)`` starts a master
(``spark-class org.apache.spark.deploy.master.Master``) on 127.0.0.1 with a
port of the system's choosing, reads its URL from its log, then starts N
workers (``...deploy.worker.Worker``, each ``--cores 1 --memory 1g`` unless
told otherwise) and waits until each has registered; it yields the master's
URL and stops them all on the way out, even on error.  ``wait_for_executors``
waits until an application on that master has its executors.  Every wait is
bounded (START_TIMEOUT) and ends in a ``StandaloneError`` naming the log to
read; the caller decides what that means (a test fails, a benchmark stops).

The daemons' environment is what their executors inherit, so they import the
kit the driver imports: ``PYSPARK_PYTHON`` (the driver's, or this interpreter)
and a ``PYTHONPATH`` that holds the directory this kit is imported from (unless
that is site-packages, which the interpreter has already).
Each daemon runs in a process group of its own, so stopping it (SIGTERM, then
SIGKILL) takes its executors and their Python workers with it.  No REST
server: it would take the fixed port 6066.

It is used by ``tests/test_pipeline_cluster.py`` and ``benchmarks/bench_pipeline.py
--standalone``; docs/pipeline.md ("Where Spark runs") shows the commands.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark import SparkContext

START_TIMEOUT = 180.0  # seconds for a master, a worker or an application's executors to come up, under load
STOP_TIMEOUT = 30.0
LOOPBACK = "127.0.0.1"
MASTER_URL = re.compile(r"Starting Spark master at (spark://127\.0\.0\.1:\d+)")


class StandaloneError(RuntimeError):
    """A daemon or an executor did not come up in time (or its process ended first)."""


def spark_home() -> Path:
    """The pyspark package's directory, which holds bin/spark-class and the jars."""
    import pyspark

    return Path(pyspark.__file__).parent


def daemon_env() -> dict[str, str]:
    """The environment of the master and workers, and so of the executors and their Python workers."""
    import rsio_tck

    kit_root = Path(rsio_tck.__file__).parent.parent  # a checkout's (or a shim's) directory, or site-packages
    path = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    if kit_root.name not in ("site-packages", "dist-packages") and str(kit_root) not in path:
        path.insert(0, str(kit_root))
    return {**os.environ, "SPARK_HOME": str(spark_home()), "SPARK_LOCAL_IP": LOOPBACK,
            "PYSPARK_PYTHON": os.environ.get("PYSPARK_PYTHON", sys.executable),
            "PYTHONPATH": os.pathsep.join(path),
            "SPARK_MASTER_OPTS": "-Dspark.master.rest.enabled=false"}


class Daemon:
    """A Spark deploy process in a process group of its own, its output copied to a log and watched."""

    def __init__(self, args: list[str], log: Path) -> None:
        self.log = log
        self.lines: list[str] = []
        self.changed = threading.Condition()
        self.process = subprocess.Popen([str(spark_home() / "bin" / "spark-class"), *args], env=daemon_env(),
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

    def wait_for(self, pattern: str, what: str, timeout: float = START_TIMEOUT) -> re.Match[str]:
        """The first line matching ``pattern``; StandaloneError when the process ends or ``timeout`` passes."""
        wanted = re.compile(pattern)
        deadline = time.monotonic() + timeout
        seen = 0
        with self.changed:
            while True:
                for line in self.lines[seen:]:
                    if found := wanted.search(line):
                        return found
                seen = len(self.lines)
                left = deadline - time.monotonic()
                if left <= 0 or not self.reader.is_alive():
                    why = "its process ended" if not self.reader.is_alive() else f"not within {timeout:g} s"
                    raise StandaloneError(f"the Spark {what} did not come up ({why}; log: {self.log})")
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


@contextlib.contextmanager
def standalone_cluster(logs: Path, workers: int = 1, cores: int = 1, memory: str = "1g",
                       timeout: float = START_TIMEOUT) -> Iterator[str]:
    """The URL of a master on loopback with ``workers`` registered workers; all stopped afterwards.

    The logs (master.log, worker-1.log, ...) and the workers' directories go under ``logs``.
    """
    logs.mkdir(parents=True, exist_ok=True)
    daemons: list[Daemon] = []
    try:
        master = Daemon(["org.apache.spark.deploy.master.Master", "--host", LOOPBACK, "--port", "0",
                         "--webui-port", "0"], logs / "master.log")
        daemons.append(master)
        url = master.wait_for(MASTER_URL.pattern, "master", timeout).group(1)
        master.wait_for(r"I have been elected leader", "master", timeout)
        for number in range(1, workers + 1):  # all started, then all waited for: they come up side by side
            daemons.append(Daemon(["org.apache.spark.deploy.worker.Worker", "--host", LOOPBACK, "--cores", str(cores),
                                   "--memory", memory, "--webui-port", "0", "--work-dir",
                                   str(logs / f"work-{number}"), url], logs / f"worker-{number}.log"))
        for number, worker in enumerate(daemons[1:], 1):
            worker.wait_for(r"Successfully registered with master", f"worker {number}", timeout)
        yield url
    finally:
        for daemon in reversed(daemons):
            daemon.stop()


def wait_for_executors(context: SparkContext, executors: int, timeout: float = START_TIMEOUT,
                       poll: float = 0.2) -> None:
    """Return once ``executors`` executors have joined the application; StandaloneError after ``timeout``."""
    deadline = time.monotonic() + timeout
    # The driver's block manager is counted too, hence the + 1.  No event tells of an executor's arrival
    # to Python: a poll interval, bounded by the deadline.
    while (joined := context._jsc.sc().getExecutorMemoryStatus().size() - 1) < executors:
        if time.monotonic() > deadline:
            raise StandaloneError(f"{joined} of {executors} executor(s) joined the application on "
                                  f"{context.master} within {timeout:g} s")
        time.sleep(poll)
