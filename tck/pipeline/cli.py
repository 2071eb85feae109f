"""Bodies of the pipeline commands of ``rsio-tck`` (registered in ``tck/cli.py``).

``pipeline RUN_DIRS...`` ingests run directories, judges their connections
offline and writes the base and derived tables as Parquet under
``--warehouse``.  ``publish RUN_DIRS...`` does the same and renders the static
multi-target site into ``--out``.  A RUN_DIRS entry is a run directory or a
directory of run directories (``reports/``).  ``--master`` chooses the Spark
master (default ``local[*]`` on 127.0.0.1; under spark-submit, spark-submit's).
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Any, NoReturn

import typer

from ..output_files import is_full, output_error_line


def _setup(run_dirs: list[Path], verbose: bool) -> list[Path]:
    """The run directories to read, checked; a missing path or a missing pyspark is exit 2, one line."""
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    import importlib.util

    from ..gate import GateError, guard
    from .sources import expand_run_dirs

    with guard():
        for path in run_dirs:
            if not path.exists():
                raise GateError(f"{path}: no such file or directory")
        # Resolved here, on the driver: executors on a cluster do not share its working directory.
        found = [path.resolve() for path in expand_run_dirs(run_dirs)]
        if not found:
            raise GateError(f"{', '.join(map(str, run_dirs))}: no run directory (with run.json, results.jsonl or fuzz.json) "
                            "there or one level below")
        if importlib.util.find_spec("pyspark") is None:
            raise GateError("the pipeline needs PySpark: pip install 'rsio-tck[pipeline]'")
    return found


def _lost(exc: Exception) -> NoReturn:
    """Runs read but their data lost on the way (completeness.LostData): one line, exit 3."""
    from ..gate import ExitCode

    typer.echo(f"error: pipeline: {exc}", err=True)
    raise typer.Exit(int(ExitCode.UNRUNNABLE))


def _notes(report: Any) -> None:
    """What was ingested only in part, as expected (a trace cut with its interrupted run), one line each."""
    for note in report.notes:
        typer.echo(f"note: {note}", err=True)


def _unwritten(exc: OSError, warehouse: Path) -> NoReturn:
    """Output that could not be written: one line naming it (the warehouse, whose old tables the pipeline left
    as they were, or a file of the site) and why; exit 3 for a full disk, else 2."""
    if exc.filename == str(warehouse.resolve()):
        line = f"pipeline: cannot write the warehouse {exc.filename} (its tables are as they were): " \
               f"{exc.strerror or exc}"
    else:
        line = output_error_line(exc)
    typer.echo(f"error: {line}", err=True)
    raise typer.Exit(3 if is_full(exc) else 2)


def _spark(master: str | None, verbose: bool = False) -> Any:
    """The Spark session; exit 3 with one line when Spark cannot start (no Java, a bad master URL).  Without
    ``-v`` the JVM's own log is off (but under spark-submit, whose settings are left alone): a failed task logs
    pages of Java stack traces, and the command says what failed in one line (or, for a failure it cannot
    name, in the exception's text, which holds the Java trace)."""
    from ..gate import ExitCode, GateError, guard, one_line
    from .spark_session import spark_session, under_spark_submit

    with guard():
        try:
            spark = spark_session(master)
        except Exception as exc:  # py4j and pyspark raise their own types (and RuntimeError without Java)
            raise GateError(f"Spark could not start (is Java installed? is --master right?): "
                            f"{one_line(exc)[:300]}", ExitCode.UNRUNNABLE) from None
    if not verbose and not under_spark_submit():
        spark.sparkContext.setLogLevel("OFF")
    return spark


def pipeline_command(
    run_dirs: list[Path] = typer.Argument(..., metavar="RUN_DIRS...", help="run directories, or directories holding them"),
    warehouse: Path = typer.Option(Path("warehouse"), metavar="DIR", help="where the Parquet tables are written"),
    master: str | None = typer.Option(None, metavar="URL", help="Spark master URL; default local[*] bound to 127.0.0.1"),
    judge: bool = typer.Option(True, help="judge every recorded connection offline with the monitor"),
    verbose: bool = typer.Option(False, "-v", help="log progress"),
) -> None:
    """Ingest run directories into Parquet tables (runs, results, violations, frames, derived tables)."""
    found = _setup(run_dirs, verbose)
    from .completeness import LostData
    from .pipeline import run_pipeline

    spark = _spark(master, verbose)
    try:
        report = run_pipeline(spark, found, warehouse, judge=judge)
    except LostData as exc:
        _lost(exc)
    except OSError as exc:  # a full disk under the warehouse: exit 3, one line
        _unwritten(exc, warehouse)
    _notes(report)
    typer.echo(json.dumps(report.to_json(), indent=1))


def publish_command(
    run_dirs: list[Path] = typer.Argument(..., metavar="RUN_DIRS...", help="run directories, or directories holding them"),
    out: Path = typer.Option(Path("site"), metavar="DIR", help="where the static site is written"),
    warehouse: Path | None = typer.Option(None, metavar="DIR", help="where the Parquet tables go; default OUT/data"),
    master: str | None = typer.Option(None, metavar="URL", help="Spark master URL; default local[*] bound to 127.0.0.1"),
    judge: bool = typer.Option(True, help="judge every recorded connection offline with the monitor"),
    build_reports: bool = typer.Option(True, help="build a missing per-run report with rsio_tck.report"),
    grid: Path | None = typer.Option(None, metavar="FILE", help="a client x server matrix.json (make interop) to "
                                     "publish as the grid page"),
    findings: Path | None = typer.Option(None, metavar="FILE", help="FINDINGS.md of a checkout with interop/ "
                                         "beside it: the findings behind the known failures"),
    verbose: bool = typer.Option(False, "-v", help="log progress"),
) -> None:
    """Build the static multi-target compliance site (scorecards, rule pages, per-target pages, site.json)."""
    found = _setup(run_dirs, verbose)
    from .completeness import LostData

    sources = _sources(findings)
    started = time.perf_counter()
    spark = _spark(master, verbose)
    try:
        index, report = publish_runs(spark, found, out, warehouse=warehouse, judge=judge, build_reports=build_reports,
                                     grid=grid, sources=sources)
    except LostData as exc:
        _lost(exc)
    except ValueError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    except OSError as exc:  # the tables or the site could not be written (a full disk: exit 3, as for a run)
        _unwritten(exc, warehouse or out / "data")
    _notes(report)
    typer.echo(f"site: {index}  ({report.runs} runs, {report.frames} frames, "
               f"{report.offline_violations} offline violations, {time.perf_counter() - started:.1f} s)")


def _sources(findings: Path | None) -> Any:
    """FINDINGS.md and the interop baselines beside it, read; a file that cannot be is exit 2, one line."""
    if findings is None:
        return None
    from ..findings.entries import FindingsError
    from ..findings.sources import read_sources
    from ..gate import GateError, guard

    with guard():
        try:
            return read_sources(findings)
        except FindingsError as exc:
            raise GateError(str(exc)) from None


def publish_runs(spark: Any, found: list[Path], out: Path, *, warehouse: Path | None = None, judge: bool = True,
                 build_reports: bool = True, grid: Path | None = None, sources: Any = None) -> tuple[Path, Any]:
    """One site from the run directories ``found``, in an open session (``make interop`` builds several in
    one): (its index page, the pipeline's report).  A ``grid`` that is no matrix is ValueError."""
    from .pipeline import collect_tables, run_pipeline
    from .publish import publish_site

    tables_dir = warehouse or out / "data"
    pairs = None
    if grid is not None:
        from .grid import read_grid

        pairs = read_grid(spark, grid)
    report = run_pipeline(spark, found, tables_dir, judge=judge)
    index = publish_site(collect_tables(spark, tables_dir), out, build_reports=build_reports, grid=pairs,
                         sources=sources)
    return index, report
