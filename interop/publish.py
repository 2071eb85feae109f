"""Step 5 of ``make interop``: several sites from one Spark session (``run.py`` starts it as a process of its
own, its output in ``OUT/logs/publish.log``).  Spark's start and first jobs are most of a small site's
cost, so one session for the server, client and Ditto sites saves a start and a warm-up per site.

Usage: python interop/publish.py SITES_JSON, a list of ``{"name", "runs": [DIR, ...], "out": DIR, "grid": FILE
or null}``.  Prints one line per site; exit 0 when every site was written, 1 when one failed, 3 when Spark
could not start.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path


def main() -> int:
    from rsio_tck.findings.entries import FindingsError
    from rsio_tck.findings.sources import read_sources
    from rsio_tck.gate import one_line
    from rsio_tck.pipeline.cli import publish_runs
    from rsio_tck.pipeline.sources import expand_run_dirs
    from rsio_tck.pipeline.spark_session import spark_session

    sites = json.loads(sys.argv[1])
    try:  # the findings behind the known failures: FINDINGS.md and the baselines of interop/
        sources = read_sources(Path(__file__).resolve().parent.parent / "FINDINGS.md")
    except FindingsError as exc:
        print(f"interop: publish: {exc}", flush=True)
        return 1
    try:
        spark = spark_session(None)
    except Exception as exc:  # py4j and pyspark raise their own types (and RuntimeError without Java)
        print(f"interop: publish: Spark could not start: {one_line(exc)[:300]}", flush=True)
        return 3
    failed = 0
    for site in sites:
        started = time.monotonic()
        try:
            index, report = publish_runs(spark, expand_run_dirs([Path(run) for run in site["runs"]]), Path(site["out"]),
                                         grid=Path(site["grid"]) if site.get("grid") else None, sources=sources)
        except Exception as exc:  # one site's failure is reported and the others are still written
            print(f"interop: site {site['name']}: FAILED: {one_line(exc)[:300]}", flush=True)
            failed += 1
            continue
        print(f"interop: site {site['name']}: {index} ({report.runs} runs, {report.frames} frames); "
              f"{time.monotonic() - started:.0f} s", flush=True)
    spark.stop()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
