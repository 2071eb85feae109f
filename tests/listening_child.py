"""A server under test run as a child process: ``with ListeningChild(command, "what") as url:``.

The child prints ``listening on URL`` as its first stdout line once it listens (EOF if it died first); the
context gives that URL and kills the child on exit, so a test that fails cannot leave it running.
"""

from __future__ import annotations

import re
import subprocess
from types import TracebackType


class ListeningChild:
    def __init__(self, command: list[str], what: str) -> None:
        self.command = command
        self.what = what
        self.process: subprocess.Popen[str] | None = None

    def __enter__(self) -> str:
        self.process = subprocess.Popen(self.command, stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        line = self.process.stdout.readline()  # printed once listening (EOF if it died)
        found = re.search(r"listening on (\S+)", line)
        if found is None:
            self.__exit__(None, None, None)
            raise RuntimeError(f"{self.what} did not start: {line!r}")
        return found.group(1)

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
        if self.process is not None:
            self.process.wait(10)
