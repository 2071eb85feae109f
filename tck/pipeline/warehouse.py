"""Writing the warehouse so that a full disk leaves its tables as they were and says so in one line.

Theory of operation.  Spark writes each table as a directory of Parquet files, from many tasks at
once, and a disk that fills up fails one task's write deep in the JVM: the driver gets a Py4J error
whose text is pages of Java stack traces, and the tables written so far are a mix of this run's and
the last one's.  So:

- ``staged`` gives the pipeline a staging directory, ``WAREHOUSE/.partial`` (inside the warehouse, so
  on its file system: a rename is a move, not a copy), to write every table into.  ``commit`` moves
  each finished table into place, replacing the old one, only after all of them were written and
  checked; any failure before removes the staging directory (giving its space back) and leaves the
  warehouse's previous tables, each whole.  The warehouse's other files are never touched.
- ``full_disk`` finds, in a failure's chain of causes (Python's ``__cause__``/``__context__``, a Py4J
  error's Java exception and its ``getCause()`` chain, pyspark's captured exceptions), the error that
  means a full disk: ENOSPC, EFBIG (past a file-size limit) or EDQUOT, by its errno or by its name or
  text in a Java message ("No space left on device", "File too large", "Disk quota exceeded").  It
  matches only those: any other failure goes on as it was.  ``staged`` turns a full disk into an
  ``OSError`` naming the warehouse, which the commands say in one line with exit 3.
"""

from __future__ import annotations

import errno
import os
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from ..output_files import FULL

STAGING = ".partial"  # in the warehouse; no table is named with a leading "."
CHAIN_MOST = 32  # causes looked at, at most (a cycle, or a very long chain, stops there)
_FULL_WORDS = re.compile("|".join([*(re.escape(os.strerror(code)) for code in FULL),
                                   *(rf"\b{errno.errorcode[code]}\b" for code in FULL)]))


def _java_throwable(exc: BaseException) -> Any:
    """The Java exception behind a Py4J error (``java_exception``) or a pyspark captured one (``_origin``)."""
    return getattr(exc, "java_exception", None) or getattr(exc, "_origin", None)


def _java_full(throwable: Any) -> int | None:
    """The full-disk errno named in a Java exception's chain of causes, or None."""
    from py4j.protocol import Py4JError

    for _ in range(CHAIN_MOST):
        if throwable is None:
            return None
        try:
            message = str(throwable.getMessage() or "")
            cause = throwable.getCause()
        except (Py4JError, AttributeError):  # the JVM is gone, or this is no throwable: no answer here
            return None
        code = _code_of(message)
        if code is not None:
            return code
        throwable = cause
    return None


def _code_of(message: str) -> int | None:
    found = _FULL_WORDS.search(message)
    if found is None:
        return None
    text = found.group(0)
    return next(code for code in FULL if text in (os.strerror(code), errno.errorcode[code]))


def full_disk(exc: BaseException) -> int | None:
    """The errno (ENOSPC, EFBIG, EDQUOT) if ``exc`` or one of its causes is a full disk, else None."""
    seen: set[int] = set()
    pending: list[BaseException] = [exc]
    while pending and len(seen) < CHAIN_MOST:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, OSError) and current.errno in FULL:
            return current.errno
        java = _java_throwable(current)
        if java is not None:
            code = _java_full(java)
            if code is not None:
                return code
        pending.extend(cause for cause in (current.__cause__, current.__context__, getattr(current, "_cause", None))
                       if isinstance(cause, BaseException))
    return None


@contextmanager
def staged(warehouse: Path) -> Iterator[Path]:
    """A fresh staging directory for ``warehouse``'s tables (``commit`` moves them into place); on any failure
    it is removed, and a full disk becomes an ``OSError`` naming ``warehouse`` (its errno and text)."""
    staging = warehouse / STAGING
    created = not warehouse.exists()
    try:
        shutil.rmtree(staging, ignore_errors=True)  # a killed run's leftovers
        staging.mkdir(parents=True)
        yield staging
    except BaseException as exc:
        shutil.rmtree(staging, ignore_errors=True)
        if created:  # leave no empty warehouse that was not there before
            with suppress(OSError):
                warehouse.rmdir()
        code = full_disk(exc)
        if code is not None:
            raise OSError(code, os.strerror(code), str(warehouse)) from exc
        if isinstance(exc, OSError) and not exc.filename:
            raise OSError(exc.errno, exc.strerror or str(exc), str(warehouse)) from exc
        raise


def commit(staging: Path, warehouse: Path) -> None:
    """Move every table of ``staging`` into ``warehouse``, each replacing the old one, and remove ``staging``.
    Renames take no room on most file systems; if one fails all the same, the tables moved so far are moved
    back (the old ones with them) before the error goes on."""
    done: list[tuple[Path, Path, Path | None]] = []  # (staged table, its place, the old table set aside)
    try:
        for table in sorted(p for p in staging.iterdir() if not p.name.startswith(".")):
            target, old = warehouse / table.name, staging / f".old-{table.name}"
            aside = old if target.exists() else None
            if aside is not None:
                target.rename(aside)
            done.append((table, target, aside))
            table.rename(target)
    except OSError:
        for table, target, aside in reversed(done):
            with suppress(OSError):
                if target.exists() and not table.exists():
                    target.rename(table)
                if aside is not None:
                    aside.rename(target)
        raise
    shutil.rmtree(staging, ignore_errors=True)
