"""The kit's other roles against the reference peer's hostile modes (issue 27), measured as ``run_kit`` is.

- listen mode (``run_listen``): ``rsio-tck run --listen`` whose client command is the hostile client
  (``rsio-peer --binding B --connect env --hostile MODE``, the URL from ``RSIO_URL``);
- the proxy (``run_proxy``): ``rsio-tck proxy`` between the binding's reference client and a hostile
  server (``HostileTarget``), or between a hostile client and the reference peer serving;
- the fuzzer (``run_fuzz``): ``rsio-tck fuzz --target`` a hostile server.

Each samples the kit's own process with psutil (``measure_pair``: the kit, and a companion process
started once the kit prints where it listens), kills what is still running at ``KILL_AFTER``, and
leaves the bounds to ``assert_role_bounded`` (under 60 s, under 200 MB, the exit codes the role has,
no traceback).  The hostile peers cap their own bytes and lifetime (``--hostile-max-bytes``,
``--hostile-max-seconds``), so nothing outlives a test.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from flood_target import Measured, sample_until_done
from hostile_target import KILL_AFTER, RSS_LIMIT, WALL_LIMIT, WS_PATHS, HostileTarget

PY = sys.executable
# Listen mode's client test cases of Ditto are the search profile's; the others run their default profile.
PROFILES = {"ditto": ("--profile", "search")}
# The binding's reference client program (listen mode's conforming client): RSIO_URL and RSIO_TESTCASE.
REFERENCE_CLIENTS = {
    "rsio": ("-m", "rsio_tck.reference_peer.rsio.client"),
    "rsocket": ("-m", "rsio_tck.reference_peer.rsocket.testcases"),
    "ditto": ("-m", "rsio_tck.reference_peer.ditto.testcases", "--profile", "search"),
}
FIRST_CASE = {"rsio": "stream-range", "rsocket": "stream-range", "ditto": "search-pages"}
LISTENING = re.compile(r"listening on ((?:tcp|ws)://[^\s,]+)")


def url_for(binding: str, transport: str) -> str:
    return "tcp://127.0.0.1:0" if transport == "tcp" else f"ws://127.0.0.1:0{WS_PATHS.get(binding, '/')}"


def hostile_client(binding: str, mode: str, *, connect: str = "env", max_bytes: int = 64 * 1024 * 1024,
                   max_seconds: float = 20.0) -> list[str]:
    """The hostile client's command (``connect``: a URL, or ``env`` for listen mode's RSIO_URL)."""
    return [PY, "-m", "rsio_tck.reference_peer", "--binding", binding, *PROFILES.get(binding, ()), "--connect",
            connect, "--hostile", mode, "--hostile-max-bytes", str(max_bytes), "--hostile-max-seconds",
            str(max_seconds), "-q"]


def measure_pair(command: list[str], limit: float, companion: Callable[[str], tuple[list[str], dict[str, str]]]
                 | None = None, interval: float = 0.02) -> tuple[Measured, str]:
    """Run the kit's ``command`` (killed after ``limit`` seconds), sampling its RSS; once it prints
    "listening on URL", start ``companion(URL)`` (command, extra environment), killed with the kit at the end.
    The measure, and the companion's output."""
    started = time.monotonic()
    # Unbuffered: the "listening on" line must come when printed, not when the kit exits.
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               env={**os.environ, "PYTHONUNBUFFERED": "1"})
    lines: list[str] = []
    other: list[subprocess.Popen[str]] = []
    other_output: list[str] = []

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.append(line)
            found = LISTENING.search(line)
            if found is not None and companion is not None and not other:
                argv, env = companion(found.group(1))
                child = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                         env={**os.environ, **env})
                other.append(child)
                threading.Thread(target=lambda out=child.stdout: other_output.append(out.read()),  # type: ignore[misc,union-attr]
                                 daemon=True).start()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    code, wall, peak, peak_tree = sample_until_done(process, started, limit, interval)
    for child in other:
        if child.poll() is None:
            child.kill()
        child.wait(10)
    reader.join(10)
    return Measured(code, wall, peak, peak_tree, "".join(lines)), "".join(other_output)


def results_of(report_dir: Path) -> list[dict[str, Any]]:
    runs = [p for p in report_dir.iterdir() if p.is_dir()] if report_dir.exists() else []
    lines = (runs[0] / "results.jsonl").read_text().splitlines() if len(runs) == 1 else []
    return [json.loads(line) for line in lines if line]


def run_listen(binding: str, transport: str, mode: str, report_dir: Path, cases: tuple[str, ...] = (), *,
               client_timeout: float = 20.0, max_bytes: int = 64 * 1024 * 1024,
               max_seconds: float = 20.0) -> tuple[Measured, list[dict[str, Any]]]:
    """``rsio-tck run --listen`` (``cases``: ``--client-test`` each; none: every case) with the hostile client as
    its client command; the measure and the results."""
    import shlex

    client = shlex.join(hostile_client(binding, mode, max_bytes=max_bytes, max_seconds=max_seconds))
    return _listen(binding, transport, client, client_timeout, report_dir, cases)


def _listen(binding: str, transport: str, client: str, client_timeout: float, report_dir: Path,
            cases: Iterable[str]) -> tuple[Measured, list[dict[str, Any]]]:
    """``rsio-tck run --listen`` with ``client`` as its client command (``--client-test`` each of ``cases``)."""
    command = [PY, "-m", "rsio_tck.cli", "run", "--binding", binding, *PROFILES.get(binding, ()), "--listen",
               url_for(binding, transport), "--client-command", client, "--client-timeout", str(client_timeout),
               "--report-dir", str(report_dir), "--quiet"]
    for case in cases:
        command += ["--client-test", case]
    measured, _ = measure_pair(command, KILL_AFTER)
    return measured, results_of(report_dir)


def run_proxy(binding: str, transport: str, mode: str, hostile: str, *, duration: float = 30.0,
              max_bytes: int = 64 * 1024 * 1024, max_seconds: float = 20.0) -> Measured:
    """``rsio-tck proxy`` for one connection: ``hostile`` "server" (the binding's reference client to a hostile
    server) or "client" (a hostile client to the reference peer)."""
    from rsio_tck.embedded import EmbeddedPeer

    profile = PROFILES.get(binding, ())

    def proxy(target: str) -> list[str]:
        return [PY, "-m", "rsio_tck.cli", "proxy", "--binding", binding, *profile, "--listen",
                url_for(binding, transport), "--target", target, "--max-connections", "1", "--duration",
                str(duration)]

    if hostile == "server":
        def reference_client(url: str) -> tuple[list[str], dict[str, str]]:
            return [PY, *REFERENCE_CLIENTS[binding]], {"RSIO_URL": url, "RSIO_TESTCASE": FIRST_CASE[binding]}

        with HostileTarget(binding, mode, transport, profile=profile[1] if profile else None,
                           max_bytes=max_bytes, max_seconds=KILL_AFTER + 30) as target:
            return measure_pair(proxy(target), KILL_AFTER, reference_client)[0]

    def hostile_one(url: str) -> tuple[list[str], dict[str, str]]:
        return hostile_client(binding, mode, connect=url, max_bytes=max_bytes, max_seconds=max_seconds), {}

    with EmbeddedPeer(binding=binding, profile=profile[1] if profile else None, listen=url_for(binding, transport)) \
            as serving:
        return measure_pair(proxy(serving), KILL_AFTER, hostile_one)[0]


def run_proxy_many(binding: str, transport: str, mode: str, clients: int, *extra: str, duration: float = 45.0,
                   max_bytes: int = 40 * 1024 * 1024, max_seconds: float = 30.0) -> Measured:
    """``rsio-tck proxy --max-connections CLIENTS`` (``extra``: more of its options) between ``clients`` hostile
    clients at once (``rsio-peer --connect URL --hostile MODE``, ``max_bytes`` each) and a server that reads and
    drops everything (``SinkTarget``), so the proxy relays and judges each client for as long as it writes."""
    import shlex

    from sink_target import SinkTarget

    profile = PROFILES.get(binding, ())

    def many(url: str) -> tuple[list[str], dict[str, str]]:
        one = shlex.join(hostile_client(binding, mode, connect=url, max_bytes=max_bytes, max_seconds=max_seconds))
        return ["sh", "-c", " & ".join([one] * clients) + " & wait"], {}

    with SinkTarget(transport, WS_PATHS.get(binding, "/"), max_seconds=KILL_AFTER + 30) as target:
        command = [PY, "-m", "rsio_tck.cli", "proxy", "--binding", binding, *profile, "--listen",
                   url_for(binding, transport), "--target", target, "--max-connections", str(clients),
                   "--duration", str(duration), *extra]
        return measure_pair(command, KILL_AFTER, many)[0]


def run_fuzz(binding: str, transport: str, mode: str, report_dir: Path, *extra: str,
             max_bytes: int = 64 * 1024 * 1024) -> Measured:
    """``rsio-tck fuzz --binding B --target`` a hostile server (its default 45 s time budget unless ``extra``
    says otherwise)."""
    profile = PROFILES.get(binding, ())
    with HostileTarget(binding, mode, transport, profile=profile[1] if profile else None, max_bytes=max_bytes,
                       max_seconds=KILL_AFTER + 30) as target:
        command = [PY, "-m", "rsio_tck.cli", "fuzz", "--binding", binding, *profile, "--target", target,
                   "--report-dir", str(report_dir), "--quiet", *extra]
        return measure_pair(command, KILL_AFTER)[0]


def assert_role_bounded(measured: Measured, what: str, exits: tuple[int, ...] = (1, 3)) -> None:
    """Ended by itself within the bounds, with one of ``exits``, and no traceback."""
    assert measured.returncode is not None, f"{what}: still running after {KILL_AFTER:g} s"
    assert measured.wall < WALL_LIMIT, f"{what}: {measured.wall:.1f} s"
    assert measured.peak_rss < RSS_LIMIT, f"{what}: peak RSS {measured.peak_rss / 2**20:.0f} MB"
    assert measured.returncode in exits, f"{what}: exit {measured.returncode}: {measured.output[-2000:]}"
    assert "Traceback" not in measured.output, measured.output[-3000:]


BY_CASE = Path(__file__).with_name("hostile_client_by_case.py")


def run_listen_modes(binding: str, transport: str, modes: dict[str, str], report_dir: Path, *,
                     client_timeout: float = 10.0, max_seconds: float = 4.0) -> tuple[Measured, list[dict[str, Any]]]:
    """One ``rsio-tck run --listen`` whose client is a different hostile mode in each case (``modes``: case ->
    mode; the cases named only, in that order)."""
    import shlex

    client = shlex.join([PY, str(BY_CASE), binding, str(max_seconds), *(f"{c}={m}" for c, m in modes.items()),
                         "--", *PROFILES.get(binding, ())])
    return _listen(binding, transport, client, client_timeout, report_dir, modes)
