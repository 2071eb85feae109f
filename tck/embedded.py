"""Starting the reference peer as a local target (a child process on a free loopback port)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from types import TracebackType

from . import __version__
from .binding import DEFAULT_BINDING, get_binding, profile_of

_LISTENING = re.compile(r"listening on ((?:tcp|ws)://\S+)")

# The embedded peer reassembles at most this much of one split element: below the 1 MiB the
# SPLIT-5 scenario sends, so the suite drives the reference peer down its cancel path too
# (and above the 100 KB element of SPLIT-1's largest scenario).  ``extra`` may override it.
REASSEMBLY_LIMIT = 512 * 1024
# The embedded peer always splits a variable-size element longer than this (its default is
# 1 MiB): low enough that a tck/subscribe report of a 100 KB element takes that path, so the
# suite (TCK-104) reaches the peer's own splitting of long queued elements.
SPLIT_THRESHOLD = 64 * 1024


def reference_peer_name(faults: tuple[str, ...] | list[str] = (), binding: str = DEFAULT_BINDING) -> tuple[str, str]:
    """(name, version) that runs against the embedded peer record: each start has a new port, so its URL
    cannot name it across runs; a peer with faults switched on is another target, named with them, and
    so is the peer speaking another binding (RS-IO keeps its name of old)."""
    base = "rsio-reference-peer" if binding == DEFAULT_BINDING else f"{binding}-reference-peer"
    return base + "".join(f"+{fault}" for fault in sorted(faults)), __version__


class EmbeddedPeerError(RuntimeError):
    """The reference peer did not start; the message carries its output."""


class EmbeddedPeer:
    """``with EmbeddedPeer(codec="varint", faults=["dem-beyond-demand"]) as url: ...``

    ``binding``/``profile`` pick the wire (``EmbeddedPeer(binding="rsocket", profile="rsocket-1.0")``);
    ``codec`` is RS-IO's name for the profile, kept for RS-IO callers."""

    def __init__(self, codec: str | None = None, faults: tuple[str, ...] | list[str] = (), timeout: float = 15.0,
                 extra: tuple[str, ...] = (), *, binding: str = DEFAULT_BINDING, profile: str | None = None,
                 listen: str = "tcp://127.0.0.1:0") -> None:
        # A ValueError naming the choices now, not a peer that exits with a usage message.
        self.binding = binding
        self.profile = profile_of(get_binding(binding), profile if profile is not None else codec)
        self.codec = self.profile  # RS-IO's name for it
        self.faults = tuple(faults)
        self.timeout = timeout
        self.extra = extra
        self.listen = listen  # where the peer listens (port 0: a free one); ws://127.0.0.1:0/PATH for WebSocket
        self.url = ""
        self._process: subprocess.Popen[bytes] | None = None
        self._dir: tempfile.TemporaryDirectory[str] | None = None
        self._reader: threading.Thread | None = None
        self.log_path = Path()

    def start(self) -> str:
        self._dir = tempfile.TemporaryDirectory(prefix="rsio-peer-")
        self.log_path = Path(self._dir.name) / "log"
        command = [sys.executable, "-m", "rsio_tck.reference_peer", "--listen", self.listen,
                   "--binding", self.binding, "--profile", self.profile, "--max-reassembly", str(REASSEMBLY_LIMIT),
                   "--split-threshold", str(SPLIT_THRESHOLD), *self.extra]
        for fault in self.faults:
            command += ["--fault", fault]
        self._process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                         env={**os.environ, "PYTHONUNBUFFERED": "1"})
        listening = threading.Event()
        found: list[str] = []
        # One thread copies the peer's log (a line per connection) to a file, so the pipe never
        # fills, and signals the line that announces the listening URL: no polling, no sleep.
        self._reader = threading.Thread(target=self._copy_log, args=(listening, found), daemon=True)
        self._reader.start()
        if listening.wait(self.timeout) and found:
            self.url = found[0]
            return self.url
        if self._process.poll() is None:
            self._process.kill()
        self._process.wait(5)
        self._reader.join(5)
        output = self.log_path.read_text(errors="replace")[-2000:] if self.log_path.exists() else ""
        self.stop()
        raise EmbeddedPeerError(f"reference peer did not start ({' '.join(command)}):\n{output}")

    def _copy_log(self, listening: threading.Event, found: list[str]) -> None:
        process = self._process
        assert process is not None and process.stdout is not None
        with self.log_path.open("wb") as log:
            for line in process.stdout:
                log.write(line)
                log.flush()
                if not listening.is_set():
                    match = _LISTENING.search(line.decode(errors="replace"))
                    if match:
                        found.append(match.group(1))
                        listening.set()
        listening.set()  # the peer exited: start() stops waiting and reports its output

    def kill_now(self) -> None:
        """SIGKILL the peer without waiting: for a kit exiting at once (a second Ctrl-C), which must not leave
        its peer listening behind it."""
        if self._process is not None and self._process.poll() is None:
            self._process.kill()

    def stop(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(5)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait(5)
        self._process = None
        if self._reader is not None:
            self._reader.join(5)
            self._reader = None
        if self._dir is not None:
            self._dir.cleanup()
            self._dir = None

    def __enter__(self) -> str:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()
