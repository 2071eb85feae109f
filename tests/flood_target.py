"""A hostile RS-IO target that floods, for the kit's bounded-memory tests and ``make bench``.

Run as a script (``python tests/flood_target.py --mode whole``): it listens on a
free loopback port, prints ``listening on tcp://127.0.0.1:PORT`` and, on every
connection, answers the kit's clientHello with serverHello, then writes frames
for subscriber Id 1 as fast as the socket takes them, never reading again:

- ``whole``: valid ``onNext`` frames (the flood of issue 15);
- ``split``: ``onNextPart`` frames of one split element that never ends (reassembly);
- ``chatter``: ``onNext`` frames for ever-new Ids, each its own inbox key and
  transcript line (nothing for the run fast paths to fold).

The loop stops by itself: each connection writes at most ``--max-bytes`` and the
whole process lives at most ``--max-seconds``, so a test that forgets it cannot
leave it running.

Imported (by ``tests/test_flood.py`` and ``benchmarks/bench_flood.py``), it also
gives ``FloodTarget`` (the script as a child process) and ``measure`` (run a
command, sampling its peak RSS with psutil).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import re
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from a checkout

from rsio_tck.bindings.rsio.wire import get_codec  # noqa: E402
from rsio_tck.bindings.rsio.wire.frames import OnNext, OnNextPart, ServerHello  # noqa: E402

MODES = ("whole", "split", "chatter")
BATCH = 64 * 1024  # bytes handed to the transport per write


def flood_batch(mode: str, codec: str, start: int) -> bytes:
    """About ``BATCH`` bytes of frames; ``start`` numbers the Ids of ``chatter``."""
    encoder = get_codec(codec).encoder(None)
    if mode == "whole":
        frame = encoder.encode(OnNext(subscriber=1, element=b"\x2a" * 16))
        return frame * (BATCH // len(frame))
    if mode == "split":
        frame = encoder.encode(OnNextPart(subscriber=1, element=1, data=b"\x2a" * 1024))
        return frame * (BATCH // len(frame))
    out = bytearray()
    sid = start
    while len(out) < BATCH:
        out += encoder.encode(OnNext(subscriber=sid, element=b"\x2a"))
        sid += 1
    return bytes(out)


async def serve(mode: str, codec: str, max_bytes: int, port_file: Path | None) -> asyncio.Server:
    hello = get_codec(codec).encoder(None).encode(ServerHello(version=0))
    # Batches made once, so the target's own CPU never slows it down (chatter cycles through 16
    # batches of ever-new Ids, then starts over: still a new Id per frame for 16 batches).
    batches = [flood_batch(mode, codec, 1 + n * BATCH) for n in range(16 if mode == "chatter" else 1)]

    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(reader.read(64), 5.0)  # the clientHello (not checked)
            writer.write(hello)
            written, number = 0, 0
            while written < max_bytes:
                batch = batches[number % len(batches)]
                number += 1
                writer.write(batch)
                written += len(batch)
                await asyncio.wait_for(writer.drain(), 30.0)
                await asyncio.sleep(0)  # drain returns at once while the socket takes data: let other connections in
        except (ConnectionError, TimeoutError, OSError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(connection, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    url = f"tcp://127.0.0.1:{port}"
    if port_file is not None:
        port_file.write_text(url)
    print(f"listening on {url}", flush=True)
    return server


async def main_async(args: argparse.Namespace) -> None:
    server = await serve(args.mode, args.codec, args.max_bytes, args.port_file)
    deadline = time.monotonic() + args.max_seconds
    async with server:
        await asyncio.sleep(max(0.0, deadline - time.monotonic()))  # the process's own time cap


class FloodTarget:
    """``with FloodTarget("whole") as url:`` the flooding target as a child process."""

    def __init__(self, mode: str = "whole", codec: str = "msgpack", max_bytes: int = 1 << 30,
                 max_seconds: float = 300.0) -> None:
        self.command = [sys.executable, str(Path(__file__).resolve()), "--mode", mode, "--codec", codec,
                        "--max-bytes", str(max_bytes), "--max-seconds", str(max_seconds)]
        self.process: subprocess.Popen[str] | None = None

    def __enter__(self) -> str:
        self.process = subprocess.Popen(self.command, stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        line = self.process.stdout.readline()  # the first line, printed once listening (or EOF if it died)
        found = re.search(r"listening on (tcp://\S+)", line)
        if found is None:
            self.__exit__(None, None, None)
            raise RuntimeError(f"flood target did not start: {line!r}")
        return found.group(1)

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)


@dataclass
class Measured:
    returncode: int | None  # None: killed at the time limit
    wall: float  # seconds
    peak_rss: int  # bytes, the command's own process
    peak_tree_rss: int  # bytes, the command and its children together (pcap workers, a spawned peer)
    output: str


def sample_until_done(process: subprocess.Popen[str], started: float, limit: float,
                      interval: float = 0.02) -> tuple[int | None, float, int, int]:
    """Sample ``process``'s RSS (its own, and with its children) every ``interval`` seconds until it ends or
    ``limit`` seconds from ``started`` pass, then kill it and its children if it is still running.
    Its exit code (None: killed), the wall time, and the two peaks."""
    import psutil

    watched = psutil.Process(process.pid)
    peak = peak_tree = 0
    while process.poll() is None and time.monotonic() - started < limit:
        try:
            own = watched.memory_info().rss
            children = 0
            for child in watched.children(recursive=True):
                with contextlib.suppress(psutil.Error):
                    children += child.memory_info().rss
        except psutil.Error:
            break  # it ended between poll() and the sample
        peak, peak_tree = max(peak, own), max(peak_tree, own + children)
        time.sleep(interval)  # the sampling period, not synchronisation
    killed = process.poll() is None
    if killed:
        for child in watched.children(recursive=True):
            with contextlib.suppress(psutil.Error):
                child.kill()
        process.kill()
    process.wait(30)
    return None if killed else process.returncode, time.monotonic() - started, peak, peak_tree


def measure(command: list[str], limit: float, interval: float = 0.02, cwd: Path | None = None) -> Measured:
    """Run ``command`` (killed after ``limit`` seconds), sampling its RSS every ``interval`` seconds."""
    started = time.monotonic()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=cwd)
    chunks: list[str] = []
    assert process.stdout is not None
    reader = threading.Thread(target=lambda: chunks.append(process.stdout.read()), daemon=True)  # type: ignore[union-attr]
    reader.start()
    code, wall, peak, peak_tree = sample_until_done(process, started, limit, interval)
    reader.join(10)
    return Measured(code, wall, peak, peak_tree, "".join(chunks))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=MODES, default="whole")
    parser.add_argument("--codec", default="msgpack")
    parser.add_argument("--max-bytes", type=int, default=1 << 30, help="bytes written per connection at most")
    parser.add_argument("--max-seconds", type=float, default=300.0, help="seconds the target lives at most")
    parser.add_argument("--port-file", type=Path)
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
