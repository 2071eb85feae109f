"""The compliance data pipeline on Spark: many run directories in, Parquet tables and a published site out.

Layers, bottom up: ``framing`` (trace <-> frame rows, judging rows with the
monitor), ``sources`` (one run-directory file -> rows), ``corpus`` (synthetic
corpora), then the Spark jobs: ``session``, ``ingest``, ``judge``, ``derive``,
``pipeline``; ``publish`` renders the site and ``cli`` holds the commands.
Modules that need Spark import it themselves, so this package imports
without PySpark installed.
"""
