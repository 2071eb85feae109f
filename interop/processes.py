"""The processes ``make interop`` starts: a fixture server, a kit run, a build.  Every wait is bounded.

A kit run's and a build's output go to a log file of their own (``OUT/logs/``), because ``run.py`` runs
several at once: the console gets one summary line per step, and a failing step names its log.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
START_TIMEOUT = 60.0  # a server's listening socket (the JVM is slow on a loaded machine)
# How often the socket table is read while a server starts: its port listening is its readiness.  A compiled
# server listens within about 0.1 s; a 0.1 s poll added up to 0.1 s to each of a run's ~70 server starts.
READY_POLL = 0.02


DIFFERENCES: list[str] = []  # what made a step fail, said again at the end (CI keeps only the output's tail)


def say(line: str) -> None:
    print(f"interop: {line}", flush=True)


def differs(line: str) -> None:
    """Say ``line`` now and again in run.py's summary."""
    DIFFERENCES.append(line)
    say(line)


def kit(*args: str, timeout: float, log: Path | None = None) -> int:
    """``rsio-tck ARGS``, its output appended to ``log`` (discarded when None): the run directory holds the
    transcripts.  Exit 3 when it timed out."""
    return _python(["-m", "rsio_tck.cli", *args], f"rsio-tck {' '.join(args)}", timeout, log)


def script(name: str, *args: str, timeout: float, log: Path) -> int:
    """``python interop/NAME ARGS`` (a step of its own, e.g. ``isolation.py``), as ``kit``."""
    return _python([str(HERE / name), *args], f"{name} {' '.join(args)}", timeout, log)


def _python(arguments: list[str], shown: str, timeout: float, log: Path | None) -> int:
    command = [sys.executable, *arguments]
    try:
        if log is None:
            return subprocess.run(command, cwd=ROOT, timeout=timeout, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL).returncode
        log.parent.mkdir(parents=True, exist_ok=True)
        with log.open("a", encoding="utf-8") as stream:
            stream.write(f"$ {shown}\n")
            stream.flush()
            return subprocess.run(command, cwd=ROOT, timeout=timeout, stdout=stream, stderr=subprocess.STDOUT).returncode
    except subprocess.TimeoutExpired:
        say(f"timed out after {timeout:.0f} s: {shown}")
        return 3


def build(name: str, log: Path, timeout: float) -> float | None:
    """``interop/NAME/build.sh`` (cached by itself), output to ``log``; its time, or None when it failed."""
    started = time.monotonic()
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("w", encoding="utf-8") as stream:
        try:
            ok = subprocess.run([str(HERE / name / "build.sh")], stdout=stream, stderr=subprocess.STDOUT,
                                timeout=timeout).returncode == 0
        except subprocess.TimeoutExpired:
            ok = False
    if not ok:
        tail = log.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-3:]
        say(f"build {name}: FAILED ({log}): {' | '.join(tail)}")
        return None
    took = time.monotonic() - started
    say(f"build {name}: {took:.0f} s")
    return took


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Server:
    """``interop/NAME/server PORT`` as a context manager; waits for its listening socket."""

    def __init__(self, name: str) -> None:
        self.name, self.port = name, free_port()
        self.process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> str:
        self.process = subprocess.Popen([str(HERE / self.name / "server"), str(self.port)],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline and self.process.poll() is None:
            if listening(self.port):
                return f"tcp://127.0.0.1:{self.port}"
            time.sleep(READY_POLL)  # polling the kernel's socket table, not synchronising with the server's output
        self.__exit__()
        raise RuntimeError(f"{self.name} server did not listen on port {self.port} within {START_TIMEOUT:.0f} s")

    def died(self) -> bool:
        return self.process is not None and self.process.poll() is not None

    def __exit__(self, *exc: object) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, 15)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, 9)
                self.process.wait(10)


def listening(port: int) -> bool:
    """Whether something listens on 127.0.0.1:port, read from /proc (no connection: a bare connect
    is a test of its own for some servers)."""
    want = f":{port:04X}"
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        if any(line.split()[1].endswith(want) and line.split()[3] == "0A" for line in lines):
            return True
    return False
