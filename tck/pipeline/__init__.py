"""The compliance data pipeline on Spark: many run directories in, Parquet tables and a published site out.

Theory of operation.  The pipeline reads what runs left behind and never a live connection:
``framing`` turns traces into frame rows and judges rows with the monitor, ``sources`` turns one
run-directory file into rows; then the Spark jobs, in ``spark_session`` (the one shared Spark
session, local on loopback unless a master is given): ``ingest``, ``judge``, ``derive`` and
``pipeline``, with ``warehouse`` writing the tables; ``publish`` renders the site and ``cli``
holds the commands.  Modules that need Spark import it themselves, so this package imports
without PySpark installed.
"""
