"""One Spark session and one published synthetic corpus, shared by every pipeline test module.

Nothing starts until a pipeline test asks: ``session()`` builds the session on
first use (local[2] on 127.0.0.1, small shuffles, no whole-stage codegen: the
corpora are tiny, so compile time would dominate) and stops it at exit.  A
test may switch the process to another master (one JVM, one context at a
time); the next ``session()`` switches back.
``published()`` writes a synthetic corpus as run directories and runs the real
``rsio-tck publish`` command over it once; tests then read the site and the
Parquet tables it left.
"""

from __future__ import annotations

import atexit
import functools
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyspark")

from typer.testing import CliRunner  # noqa: E402

from rsio_tck.bindings.rsio.corpus import CorpusSummary, write_run_dirs  # noqa: E402

SEED = 7
RUNS_PER_VERSION = 4


_SESSIONS: list[Any] = []  # every shared session built, the current one last


def session():  # type: ignore[no-untyped-def]
    """The shared local[2] session, built again when a test (test_pipeline_cluster) left another master active."""
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("RSIO_SHUFFLE_PARTITIONS", "2")
    os.environ.setdefault("RSIO_DRIVER_MEMORY", "1g")
    from rsio_tck.pipeline.spark_session import spark_session

    spark = spark_session("local[2]")  # the active session when it is local[2]
    if not _SESSIONS or _SESSIONS[-1] is not spark:
        spark.conf.set("spark.sql.codegen.wholeStage", "false")
        if not _SESSIONS:
            atexit.register(_stop)
        _SESSIONS.append(spark)
    return spark


def _stop() -> None:
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        active.stop()


@dataclass
class Published:
    root: Path
    corpus: CorpusSummary
    site: Path
    warehouse: Path
    output: str


@functools.cache
def published() -> Published:
    root = Path(tempfile.mkdtemp(prefix="rsio-pipeline-"))
    atexit.register(shutil.rmtree, root, True)
    corpus = write_run_dirs(root / "reports", seed=SEED, runs_per_version=RUNS_PER_VERSION, frames=40)
    first = corpus.runs[RUNS_PER_VERSION - 1]  # the latest run of alpha 1.0
    (first / "report").mkdir()
    (first / "report" / "index.html").write_text("<html>per-run report of alpha 1.0</html>")
    shared = {"rule": "ERR-7", "signature": "ERR-7: type code 0x3f", "side": "server", "message": "invalid type code",
              "scenario_file": "fuzz-findings/err7.yaml", "count": 2}
    for run_dir, extra in ((corpus.runs[0], []), (corpus.runs[-1], [dict(shared, signature="DEM-1: more", rule="DEM-1",
                                                                          count=5)])):
        (run_dir / "fuzz.json").write_text(json.dumps({"schema": "rsio-tck/fuzz/v1", "run_id": run_dir.name,
                                                       "target": "t", "seed": 1, "examples": 100, "elapsed": 1.0,
                                                       "findings": [shared, *extra]}))
    session()
    from rsio_tck.cli import app

    result = CliRunner().invoke(app, ["publish", str(root / "reports"), "--out", str(root / "site"),
                                      "--warehouse", str(root / "warehouse"), "--no-build-reports"])
    assert result.exit_code == 0, result.output + repr(result.exception)
    return Published(root, corpus, root / "site", root / "warehouse", result.output)


def table(name: str) -> list[dict]:  # type: ignore[type-arg]
    from rsio_tck.pipeline.ingest import read_table

    return [row.asDict(recursive=True) for row in read_table(session(), published().warehouse, name).collect()]
