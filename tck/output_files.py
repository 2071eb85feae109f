"""Writing the kit's output files so that a full disk loses nothing already written and says so in one line.

Theory of operation.  A write that fails (ENOSPC, EFBIG past a file-size limit,
EIO) fails inside a file object's ``write`` or ``close``, where Python's
``OSError`` names no file.  Every output of a run or a report goes through
this module instead, which

- names the file: the ``OSError`` it raises carries ``filename``, so the command
  says ``error: PATH: No space left on device`` (``output_error_line``);
- never leaves half of anything: ``write_text``/``write_bytes`` write beside the
  file and rename over it (the old file, or none, stays on failure), and
  ``ResultsLog`` appends each results.jsonl line with one ``os.write`` and, if
  the disk takes only part of it, cuts the file back to the last whole line.

So a reader of a run directory written on a disk that filled up finds whole
lines and whole files, and the run says which file it could not write.
"""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

# The errors that mean "the disk (or the file-size limit) is full": exit 3, not a usage error.
FULL = (errno.ENOSPC, errno.EFBIG, errno.EDQUOT)


def _named(exc: OSError, path: Path) -> OSError:
    """``exc`` as an OSError naming ``path`` (keeps errno and strerror)."""
    if exc.filename:
        return exc
    return OSError(exc.errno, exc.strerror or str(exc), str(path))


def write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` as ``path`` whole, or leave ``path`` as it was and raise an OSError naming it."""
    partial = path.with_name(f".{path.name}.partial")
    try:
        with partial.open("wb") as stream:
            stream.write(data)
        os.replace(partial, path)
    except OSError as exc:
        partial.unlink(missing_ok=True)
        raise _named(exc, path) from None


def write_text(path: Path, text: str) -> None:
    """``write_bytes`` of ``text`` in UTF-8."""
    write_bytes(path, text.encode("utf-8"))


def output_error_line(exc: OSError) -> str:
    """An output error as the kit says it: ``PATH: No space left on device``."""
    what = exc.strerror or str(exc)
    return f"{exc.filename}: {what}" if exc.filename else what


def is_full(exc: OSError) -> bool:
    return exc.errno in FULL


class ResultsLog:
    """results.jsonl, appended one whole line at a time (the only writer of that file during a run)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self._fd: int | None = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o644)
        except OSError as exc:
            raise _named(exc, path) from None
        self._size = 0

    def append(self, line: str) -> None:
        """Append ``line`` (a newline is added) whole, or not at all (OSError naming the file)."""
        assert self._fd is not None, "append() after close()"
        data = (line + "\n").encode("utf-8")
        try:
            written = os.write(self._fd, data)  # one call: a reader never sees two writers' lines interleaved
        except OSError as exc:
            self._cut_back()
            raise _named(exc, self.path) from None
        if written != len(data):  # the disk took part of it: leave no half line behind
            self._cut_back()
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(self.path))
        self._size += written

    def _cut_back(self) -> None:
        try:
            os.ftruncate(self._fd, self._size)  # type: ignore[arg-type]
        except OSError:
            pass  # nothing more can be done; the reader skips an unterminated last line

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def result_lines(text: str) -> tuple[list[tuple[int, str]], int | None]:
    """results.jsonl's non-empty lines, numbered, and the number of a cut last line if there is one (left out).

    The kit writes each line whole (``ResultsLog``), but a run directory from an older kit, or
    one written by a process killed in the middle of a write, may end in half a line: a last line with no
    newline that does not parse.  It is no result, and everything before it is: leaving it out loses nothing
    that was written whole, where refusing the whole report would."""
    lines = text.splitlines()
    cut = None
    if lines and not text.endswith("\n"):
        try:
            json.loads(lines[-1])
        except ValueError:
            cut = len(lines)
    return [(number, line) for number, line in enumerate(lines, 1) if line.strip() and number != cut], cut
