"""Starting the reference peer as a local target (a child process on a free loopback port)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import TracebackType


class EmbeddedPeerError(RuntimeError):
    """The reference peer did not start; the message carries its output."""


class EmbeddedPeer:
    """``with EmbeddedPeer(codec="varint", faults=["dem-beyond-demand"]) as url: ...``"""

    def __init__(self, codec: str = "msgpack", faults: tuple[str, ...] | list[str] = (), timeout: float = 15.0,
                 extra: tuple[str, ...] = ()) -> None:
        self.codec = codec
        self.faults = tuple(faults)
        self.timeout = timeout
        self.extra = extra
        self.url = ""
        self._process: subprocess.Popen[bytes] | None = None
        self._dir: tempfile.TemporaryDirectory[str] | None = None

    def start(self) -> str:
        self._dir = tempfile.TemporaryDirectory(prefix="rsio-peer-")
        port_file = Path(self._dir.name) / "port"
        log = Path(self._dir.name) / "log"
        command = [sys.executable, "-m", "reference_peer", "--listen", "tcp://127.0.0.1:0",
                   "--port-file", str(port_file), "--codec", self.codec, *self.extra]
        for fault in self.faults:
            command += ["--fault", fault]
        with log.open("wb") as out:
            self._process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT,
                                             env={**os.environ, "PYTHONUNBUFFERED": "1"})
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            if port_file.exists() and port_file.read_text().strip():
                self.url = f"tcp://127.0.0.1:{int(port_file.read_text().strip())}"
                return self.url
            if self._process.poll() is not None:
                break
            time.sleep(0.02)  # polling a file the child writes; bounded by the deadline
        output = log.read_text(errors="replace")[-2000:] if log.exists() else ""
        self.stop()
        raise EmbeddedPeerError(f"reference peer did not start ({' '.join(command)}):\n{output}")

    def stop(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(5)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait(5)
        self._process = None
        if self._dir is not None:
            self._dir.cleanup()
            self._dir = None

    def __enter__(self) -> str:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()
