"""The Spark session the pipeline runs in: local mode on loopback by default, any master on request.

Theory of operation: ``spark_session(master)`` returns the active session when
one exists (spark-submit starts one, and the tests share one), otherwise it
builds one.  Without a master it runs ``local[*]`` bound to 127.0.0.1 with the
UI off, and points ``PYSPARK_PYTHON`` at the interpreter running the kit, so
Python workers see the same installed packages.  Under spark-submit the master
and every other setting come from spark-submit and are left alone.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = logging.getLogger(__name__)

LOCAL_MASTER = "local[*]"
LOOPBACK = "127.0.0.1"


def local_settings(master: str) -> dict[str, str]:
    """Settings for a session this process starts itself."""
    settings = {
        "spark.master": master,
        "spark.app.name": "rsio-tck-pipeline",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        "spark.sql.sources.partitionOverwriteMode": "dynamic",
        "spark.sql.shuffle.partitions": os.environ.get("RSIO_SHUFFLE_PARTITIONS", "8"),
        "spark.driver.memory": os.environ.get("RSIO_DRIVER_MEMORY", "4g"),
        "spark.python.worker.reuse": "true",
    }
    if master.startswith("local"):
        settings["spark.driver.host"] = LOOPBACK
        settings["spark.driver.bindAddress"] = LOOPBACK
    return settings


def under_spark_submit() -> bool:
    """spark-submit launched this interpreter (it passes its JVM's gateway)."""
    return "PYSPARK_GATEWAY_PORT" in os.environ


def spark_session(master: str | None = None) -> SparkSession:
    """The pipeline's session; ``master`` None means local mode (or whatever spark-submit chose)."""
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None and (master is None or active.sparkContext.master == master):
        return active
    if active is not None:
        active.stop()
    builder = SparkSession.builder
    if under_spark_submit() and master is None:
        return builder.getOrCreate()
    chosen = master or LOCAL_MASTER
    if chosen.startswith("local"):
        os.environ.setdefault("SPARK_LOCAL_IP", LOOPBACK)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    for key, value in local_settings(chosen).items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    log.info("spark session on %s", session.sparkContext.master)
    return session
