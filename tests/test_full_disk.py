"""A full disk while the kit writes a run, a report or a site: one error line naming the file, exit 3, and
what was already written stays readable (issue 27, part 3).

Mechanism.  Where the tests run as root (this project's VMs and CI), ``full_dir`` mounts a small tmpfs and
fills it but for a few kilobytes: the kit then meets a real ENOSPC, "No space left on device", at whichever
write comes first.  Without the right to mount, the kit's runs get ``RLIMIT_FSIZE`` instead (set in the child
by ``preexec_fn``, SIGXFSZ ignored so the write fails rather than killing it): a write past the limit fails
with EFBIG, "File too large", which the kit treats the same; and the in-process tests (publish, the results
log) inject the failing write.  Every test says which mechanism it got through ``Full.mechanism``;
RSIO_TEST_NO_MOUNT=1 forces the fallback where mounting works.
"""

from __future__ import annotations

import errno
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from rsio_tck.output_files import ResultsLog
from rsio_tck.report.rundir import file_stem
from rsio_tck.report.schema import check_run_dir

FREE = 48 * 1024  # bytes left free on the full disk: a few scenarios' files fit, the run's do not
FILE_LIMIT = 6 * 1024  # RLIMIT_FSIZE of the fallback: bytes one file may hold
RUN_DEADLINE = 300.0  # seconds for a kit run under load
MESSAGES = ("No space left on device", "File too large")


@dataclass
class Full:
    path: Path
    mechanism: str  # "tmpfs" (real ENOSPC) or "rlimit" (EFBIG in the kit's child processes)

    def preexec(self) -> Any:
        if self.mechanism == "tmpfs":
            return None

        def limit() -> None:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_LIMIT, FILE_LIMIT))

        return limit

    def fill(self, free: int = FREE) -> None:
        """Leave ``free`` bytes free (tmpfs only: the rlimit needs no filling)."""
        if self.mechanism != "tmpfs":
            return
        stat = os.statvfs(self.path)
        spare = stat.f_bavail * stat.f_frsize - free
        if spare > 0:
            with (self.path / "filler").open("wb") as stream:
                stream.write(b"\0" * spare)


def _mount(where: Path, size: str) -> bool:
    if os.geteuid() != 0 or shutil.which("mount") is None or os.environ.get("RSIO_TEST_NO_MOUNT"):
        return False
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True,
                          timeout=30, check=False)
    return done.returncode == 0


@pytest.fixture
def full_dir(tmp_path: Path) -> Iterator[Full]:
    where = tmp_path / "full"
    where.mkdir()
    if not _mount(where, "1m"):
        yield Full(where, "rlimit")
        return
    try:
        yield Full(where, "tmpfs")
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True, timeout=30, check=False)


def kit(full: Full, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rsio_tck.cli", *args], capture_output=True, text=True,
                          timeout=RUN_DEADLINE, preexec_fn=full.preexec(), env={**os.environ, "COLUMNS": "200"},
                          check=False)


def one_error_line(stderr: str, under: Path) -> str:
    """The run's one error line, checked: it names a file under ``under`` and says the disk is full."""
    errors = [line for line in stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "Traceback" not in stderr, stderr[-3000:]
    assert errors[0].startswith(f"error: {under}") and errors[0].endswith(MESSAGES), errors[0]
    return errors[0]


def test_a_run_into_a_full_report_dir_is_one_line_and_exit_3(full_dir: Full) -> None:
    full_dir.fill()
    done = kit(full_dir, "run", "--jobs", "2", "--quiet", "--report-dir", str(full_dir.path / "reports"))
    assert done.returncode == 3, (full_dir.mechanism, done.stderr[-3000:])
    one_error_line(done.stderr, full_dir.path / "reports")
    (run_dir,) = list((full_dir.path / "reports").iterdir())
    text = (run_dir / "results.jsonl").read_text()
    assert text == "" or text.endswith("\n")  # no half line
    for line in text.splitlines():  # what was written stays readable: each line whole, its transcript there
        result = json.loads(line)
        assert (run_dir / "transcripts" / f"{file_stem(result['id'])}.txt").is_file()
    assert not list(run_dir.rglob(".*.partial"))


@pytest.fixture(scope="module")
def small_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small run directory written on a disk with room."""
    reports = tmp_path_factory.mktemp("small") / "reports"
    done = subprocess.run([sys.executable, "-m", "rsio_tck.cli", "run", "-k", "BYE", "--jobs", "2", "--quiet",
                           "--report-dir", str(reports)], capture_output=True, text=True, timeout=RUN_DEADLINE,
                          check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    (run_dir,) = list(reports.iterdir())
    shutil.rmtree(run_dir / "report")
    return run_dir


def test_a_report_into_a_full_dir_is_one_line_and_exit_3(full_dir: Full, small_run: Path) -> None:
    run_dir = full_dir.path / small_run.name
    shutil.copytree(small_run, run_dir)
    full_dir.fill()
    done = kit(full_dir, "report", str(run_dir))
    assert done.returncode == 3, (full_dir.mechanism, done.stderr[-3000:])
    one_error_line(done.stderr, run_dir / "report")
    assert check_run_dir(run_dir) == []  # the run's own files are untouched and valid
    assert not list(run_dir.rglob(".*.partial"))


def _empty_tables() -> dict[str, list[dict[str, Any]]]:
    names = ("runs", "matrix_latest", "matrix_history", "run_summary", "flakiness", "wire_stats", "latency",
             "violations_by_rule", "violations_by_signature", "fuzz_dedup", "frame_types")
    return {name: [] for name in names}


def test_publish_into_a_full_dir_is_one_line_and_exit_3(full_dir: Full, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The site's own writes (``publish_site``) into a full --out; Spark is left out (its Parquet tables go
    elsewhere with --warehouse): the pipeline's tables are stood in by empty ones."""
    from rsio_tck.pipeline import cli as pipeline_cli
    from rsio_tck.pipeline import publish

    if full_dir.mechanism != "tmpfs":  # no mount: inject the full disk into the site's writer
        def full(path: Path, text: str) -> None:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))

        monkeypatch.setattr(publish, "write_text", full)
    full_dir.fill()
    (tmp_path / "runs").mkdir()

    def publish_runs(spark: Any, found: list[Path], out: Path, **options: Any) -> tuple[Path, Any]:
        return publish.publish_site(_empty_tables(), out, build_reports=False), None

    monkeypatch.setattr(pipeline_cli, "_spark", lambda master, verbose=False: None)
    monkeypatch.setattr(pipeline_cli, "_setup", lambda run_dirs, verbose: [])
    monkeypatch.setattr(pipeline_cli, "publish_runs", publish_runs)
    from rsio_tck.cli import app

    site = full_dir.path / "site"
    big = "x" * (2 * FREE)  # more than the disk has left, in the first page the site writes
    monkeypatch.setattr(publish, "site_data", lambda tables, _real=publish.site_data: {**_real(tables), "pad": big})
    outcome = CliRunner().invoke(app, ["publish", str(tmp_path / "runs"), "--out", str(site)])
    assert outcome.exit_code == 3, (full_dir.mechanism, outcome.output)
    one_error_line(outcome.output, site)


def test_a_results_line_the_disk_takes_only_part_of_is_cut_back(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Injected: ``os.write`` takes half a line, as a disk with a few bytes left does.  The log cuts the file
    back to its last whole line and says which file is full."""
    from rsio_tck import output_files

    log = ResultsLog(tmp_path / "results.jsonl")
    log.append(json.dumps({"id": "A"}))
    real = os.write
    monkeypatch.setattr(output_files.os, "write", lambda fd, data: real(fd, data[: len(data) // 2]))
    with pytest.raises(OSError) as raised:
        log.append(json.dumps({"id": "B", "padding": "y" * 100}))
    log.close()
    assert raised.value.errno == errno.ENOSPC and raised.value.filename == str(tmp_path / "results.jsonl")
    assert (tmp_path / "results.jsonl").read_text() == '{"id": "A"}\n'


class _Throwable:
    """A stand-in for the Java exception of a Py4J error: ``getMessage`` and ``getCause``, as py4j proxies them."""

    def __init__(self, message: str | None, cause: _Throwable | None = None) -> None:
        self.message, self.cause = message, cause

    def getMessage(self) -> str | None:  # noqa: N802 (Java's name)
        return self.message

    def getCause(self) -> _Throwable | None:  # noqa: N802
        return self.cause


class _JavaError(Exception):
    def __init__(self, java: _Throwable) -> None:
        super().__init__("An error occurred while calling o44.parquet.")
        self.java_exception = java


def _spark_write_failure(cause: str) -> _JavaError:
    """The chain Spark 4 gives for a task that could not write a Parquet file (seen on a full tmpfs)."""
    return _JavaError(_Throwable("[TASK_WRITE_FAILED] Task failed while writing rows to file:/w/runs.",
                                 _Throwable("Unable to close resource",
                                            _Throwable(f"java.io.IOException: {cause}", _Throwable(cause)))))


@pytest.mark.parametrize(("cause", "code"), [("No space left on device", errno.ENOSPC), ("File too large", errno.EFBIG),
                                             ("Disk quota exceeded", errno.EDQUOT),
                                             ("ENOSPC: write failed", errno.ENOSPC)])
def test_a_full_disk_is_found_in_a_spark_failures_chain_of_causes(cause: str, code: int) -> None:
    pytest.importorskip("py4j")
    from rsio_tck.pipeline.warehouse import full_disk

    assert full_disk(_spark_write_failure(cause)) == code
    try:  # under Python exceptions raised from it, too
        try:
            raise _spark_write_failure(cause)
        except _JavaError as exc:
            raise RuntimeError("the pipeline failed") from exc
    except RuntimeError as wrapped:
        assert full_disk(wrapped) == code
    assert full_disk(OSError(code, os.strerror(code))) == code


def test_other_failures_are_no_full_disk() -> None:
    pytest.importorskip("py4j")
    from py4j.protocol import Py4JNetworkError

    from rsio_tck.pipeline.warehouse import full_disk

    class Gone(_Throwable):
        def getMessage(self) -> str | None:  # noqa: N802
            raise Py4JNetworkError("Answer from Java side is empty")

    assert full_disk(_spark_write_failure("Permission denied")) is None
    assert full_disk(_JavaError(_Throwable(None))) is None
    assert full_disk(_JavaError(Gone("x"))) is None  # the JVM is gone: no answer, the failure goes on as it was
    assert full_disk(OSError(errno.EACCES, "Permission denied")) is None
    assert full_disk(ValueError("No space left on device")) is None  # only errors that carry an errno or a Java cause


def test_the_warehouse_tables_are_replaced_only_when_all_are_written(tmp_path: Path) -> None:
    from rsio_tck.pipeline.warehouse import commit, staged

    warehouse = tmp_path / "warehouse"
    (warehouse / "runs").mkdir(parents=True)
    (warehouse / "runs" / "old.parquet").write_text("old")
    (warehouse / "notes.txt").write_text("the user's")
    with pytest.raises(OSError) as raised, staged(warehouse) as staging:
        (staging / "runs").mkdir()
        (staging / "runs" / "new.parquet").write_text("new")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))  # the disk filled up before all were written
    assert raised.value.errno == errno.ENOSPC and raised.value.filename == str(warehouse)
    assert sorted(p.name for p in warehouse.iterdir()) == ["notes.txt", "runs"]
    assert [p.name for p in (warehouse / "runs").iterdir()] == ["old.parquet"]
    with staged(warehouse) as staging:
        for name in ("runs", "frames"):
            (staging / name).mkdir()
            (staging / name / "new.parquet").write_text("new")
        commit(staging, warehouse)
    assert sorted(p.name for p in warehouse.iterdir()) == ["frames", "notes.txt", "runs"]
    assert [p.name for p in (warehouse / "runs").iterdir()] == ["new.parquet"]
