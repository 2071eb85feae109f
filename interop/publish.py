"""Step 5 of ``make interop``: several sites from one Spark session (``run.py`` starts it as a process of its
own, its output in ``OUT/logs/publish.log``).  Spark's start and first jobs are most of a small site's
cost, so one session for the server, client and Ditto sites saves a start and a warm-up per site.

Usage: python interop/publish.py SITES_JSON, a list of ``{"name", "runs": [DIR, ...], "out": DIR, "grid": FILE
or null}``; or python interop/publish.py --stdin, the same sites one JSON object a line on stdin, as their
run directories are written, then the line ``{"pages": true}`` (or the end of input).  Prints one line per
site; exit 0 when every site was written, 1 when one failed, 3 when Spark could not start.

Two halves: the pipeline over a site's run directories (ingest, judge offline, derive: the Spark jobs, most
of the time), then the pages of every site (``publish_site``), which need the client x server grid.  With
``--stdin``, Spark starts at once, beside ``run.py``'s first steps, each site's pipeline runs as soon as
``run.py`` sends it (its roles are done), and the pages wait for the last line, which ``run.py`` writes once
``matrix.json`` is written.  The two halves are ``rsio_tck.pipeline.cli.publish_runs``'s, with its defaults.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def main() -> int:
    from rsio_tck.findings.entries import FindingsError
    from rsio_tck.findings.sources import read_sources
    from rsio_tck.gate import one_line
    from rsio_tck.pipeline.grid import read_grid
    from rsio_tck.pipeline.pipeline import collect_tables, run_pipeline
    from rsio_tck.pipeline.publish import publish_site
    from rsio_tck.pipeline.sources import expand_run_dirs
    from rsio_tck.pipeline.spark_session import spark_session

    incremental = sys.argv[1:] == ["--stdin"]
    given: list[dict[str, Any]] = [] if incremental else json.loads(sys.argv[1])
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
    judged: list[tuple[dict[str, Any], Any, float]] = []  # (site, the pipeline's report, its seconds)
    for site in sites_from_stdin() if incremental else given:
        started = time.monotonic()
        try:
            report = run_pipeline(spark, expand_run_dirs([Path(run) for run in site["runs"]]),
                                  Path(site["out"]) / "data")
        except Exception as exc:  # one site's failure is reported and the others are still written
            print(f"interop: site {site['name']}: FAILED: {one_line(exc)[:300]}", flush=True)
            failed += 1
            continue
        judged.append((site, report, time.monotonic() - started))
    for site, report, seconds in judged:
        started = time.monotonic()
        try:
            grid = read_grid(spark, Path(site["grid"])) if site.get("grid") and Path(site["grid"]).is_file() else None
            index = publish_site(collect_tables(spark, Path(site["out"]) / "data"), Path(site["out"]), grid=grid,
                                 sources=sources)
        except Exception as exc:
            print(f"interop: site {site['name']}: FAILED: {one_line(exc)[:300]}", flush=True)
            failed += 1
            continue
        print(f"interop: site {site['name']}: {index} ({report.runs} runs, {report.frames} frames); pipeline "
              f"{seconds:.0f} s, pages {time.monotonic() - started:.0f} s", flush=True)
    spark.stop()
    return 1 if failed else 0


def sites_from_stdin() -> Iterator[dict[str, Any]]:
    """The sites ``run.py`` sends, one JSON object a line, until ``{"pages": true}`` or the end of input (run.py
    stopped): a pipe, read as its writer writes, bounded by run.py's time-out on this process."""
    for line in sys.stdin:
        site = json.loads(line)
        if site.get("pages"):
            return
        yield site


if __name__ == "__main__":
    sys.exit(main())
