"""Elements per second from the reference peer over loopback TCP, against a bare asyncio socket.

Two streams, each requested with demand 2^63-1 by a client that counts
elements straight from the bytes (msgpack's C unpacker; no frame objects) and
checks the final onComplete:

- ``tck/range``: small variable-size elements (MessagePack ints), one onNext each;
- ``tck/fixed?size=8``: 8-byte elements, packed.

The baseline is a bare asyncio server, in its own process like the peer, that
writes the same frames (precomputed; for the packed stream one 256 KiB frame
repeated) as fast as ``drain`` allows.  The figure is the ratio.  The peer runs
with its default settings (freedoms on, seed 0).  Codec: msgpack.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import msgpack

from rsio_tck.bindings.rsio.wire import get_codec
from rsio_tck.bindings.rsio.wire.frames import (
    ClientHello,
    Goodbye,
    OnComplete,
    OnNext,
    OnNextPacked,
    OnSubscribe,
    ServerHello,
    Subscribe,
)
from rsio_tck.semantics.demand import UNBOUNDED

PACK = 32_768  # elements per packed frame (256 KiB), as the peer packs at most
RANGE_COUNT = 2_000_000
FIXED_COUNT = 1800 * PACK  # 59 M elements: whole frames for the bare server
GOALS = {"range": 1e6, "fixed": 20e6}


# -- the counting client ----------------------------------------------------------------------


class ElementCounter:
    """Counts elements of subscription 1 from raw msgpack-profile bytes; stops at its terminal signal."""

    def __init__(self) -> None:
        self.unpacker = msgpack.Unpacker(max_buffer_size=64 * 1024 * 1024)
        self.sizes: dict[int, int] = {}
        self.elements = 0
        self.done: str | None = None  # "onComplete", or what went wrong
        self._frame: list[int] = []  # code and fields of a frame cut off by the end of a read
        self._raw = 0  # raw element bytes still to skip

    def feed(self, data: bytes) -> None:
        u = self.unpacker
        u.feed(data)
        unpack, skip = u.unpack, u.read_bytes
        frame = self._frame
        try:
            while self.done is None:
                if self._raw:
                    self._raw -= len(skip(self._raw))
                    if self._raw:
                        return
                if not frame:
                    frame.append(unpack())
                code = frame[0]
                if code == 0x08:  # onNext
                    if len(frame) == 1:
                        frame.append(unpack())
                    size = self.sizes.get(frame[1], 0)
                    if size:
                        self._raw = size
                    else:
                        unpack()
                    self.elements += 1
                elif code == 0x0B:  # onNextPacked
                    while len(frame) < 3:
                        frame.append(unpack())
                    self._raw = frame[2] * self.sizes[frame[1]]
                    self.elements += frame[2]
                elif code in (0x02, 0x07, 0x0C, 0x0D, 0x0A):  # two or three fields
                    want = 4 if code in (0x0C, 0x0D) else 3
                    while len(frame) < want:
                        frame.append(unpack())
                    if code == 0x07:
                        self.sizes[frame[1]] = frame[2]
                    elif code == 0x0D:
                        self.elements += 1
                    elif code == 0x0A:
                        self.done = f"onError({frame[2]!r})"
                elif code == 0x09:  # onComplete
                    while len(frame) < 2:
                        frame.append(unpack())
                    self.done = "onComplete"
                else:
                    self.done = f"unexpected frame type {code:#x}"
                frame.clear()
        except msgpack.OutOfData:
            return


def measure(port: int, name: str, expected: int) -> float:
    """Subscribe with demand 2^63-1, count until onComplete; elements per second."""
    encoder = get_codec("msgpack").encoder()
    request = encoder.encode(ClientHello(version=0)) + encoder.encode(
        Subscribe(publisher=name, subscriber=1, initial_demand=UNBOUNDED))
    counter = ElementCounter()
    buffer = bytearray(1 << 20)
    view = memoryview(buffer)
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        started = time.perf_counter()
        sock.sendall(request)
        while counter.done is None:
            n = sock.recv_into(buffer)
            if not n:
                break
            counter.feed(view[:n].tobytes())
        elapsed = time.perf_counter() - started
        sock.sendall(encoder.encode(Goodbye(reason="done")))
    if counter.done != "onComplete" or counter.elements != expected:
        raise RuntimeError(f"{name}: {counter.elements} elements, ended by {counter.done}; expected {expected}")
    return expected / elapsed


# -- the bare server (run as a child process) ------------------------------------------------------


def stream_bytes(kind: str, count: int) -> tuple[bytes, bytes, int]:
    """(preamble + body, frame repeated, repetitions) the bare server writes for ``kind``."""
    encoder = get_codec("msgpack").encoder()
    head = encoder.encode(ServerHello(version=0))
    if kind == "range":
        head += encoder.encode(OnSubscribe(subscriber=1, element_size=0))
        body = b"".join(encoder.encode(OnNext(subscriber=1, element=msgpack.packb(i))) for i in range(count))
        return head + body, b"", 0
    head += encoder.encode(OnSubscribe(subscriber=1, element_size=8))
    frame = encoder.encode(OnNextPacked(subscriber=1, count=PACK, data=bytes(8 * PACK)))
    assert count % PACK == 0
    return head, frame, count // PACK


async def bare_server(port_file: Path, kind: str, count: int) -> None:
    head, frame, repeat = stream_bytes(kind, count)
    tail = get_codec("msgpack").encoder().encode(OnComplete(subscriber=1))
    finished = asyncio.Event()

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(4096)  # the hello and subscribe
        for start in range(0, len(head), 1 << 18):
            writer.write(head[start : start + (1 << 18)])
            await writer.drain()
        for _ in range(repeat):
            writer.write(frame)
            await writer.drain()
        writer.write(tail)
        await writer.drain()
        writer.close()
        await writer.wait_closed()
        finished.set()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    temporary = port_file.with_name(port_file.name + ".tmp")
    temporary.write_text(str(server.sockets[0].getsockname()[1]))
    os.replace(temporary, port_file)
    await finished.wait()


# -- running both ---------------------------------------------------------------------------------


def _spawn(command: list[str], port_file: Path) -> tuple[subprocess.Popen[bytes], int]:
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               env={**os.environ, "PYTHONUNBUFFERED": "1"})
    deadline = time.monotonic() + 60
    while not (port_file.exists() and port_file.read_text().strip()):
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"{command[:4]} did not start")
        time.sleep(0.02)
    return process, int(port_file.read_text())


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def main(runs: int = 2) -> dict[str, float]:
    """Print elements/s of the peer and of a bare asyncio socket; returns the figures."""
    cases = {"range": (f"tck/range?count={RANGE_COUNT}", RANGE_COUNT),
             "fixed": (f"tck/fixed?size=8&count={FIXED_COUNT}", FIXED_COUNT)}
    print(f"reference peer over loopback TCP, msgpack, demand 2^63-1, best of {runs} (benchmarks/bench_peer.py)")
    figures: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="rsio-bench-") as scratch:
        port_file = Path(scratch) / "peer.port"
        peer, peer_port = _spawn([sys.executable, "-m", "rsio_tck.reference_peer", "--listen", "tcp://127.0.0.1:0",
                                  "--port-file", str(port_file), "--quiet"], port_file)
        try:
            for kind, (name, count) in cases.items():
                peer_rate = max(measure(peer_port, name, count) for _ in range(runs))
                bare_rate = 0.0
                for run in range(runs):
                    bare_file = Path(scratch) / f"bare-{kind}-{run}.port"
                    bare, bare_port = _spawn([sys.executable, "-m", "benchmarks.bench_peer", "--bare",
                                              str(bare_file), kind, str(count)], bare_file)
                    try:
                        bare_rate = max(bare_rate, measure(bare_port, name, count))
                    finally:
                        _stop(bare)
                figures[f"{kind}_elements_per_s"] = peer_rate
                figures[f"{kind}_bare_elements_per_s"] = bare_rate
                figures[f"{kind}_ratio"] = peer_rate / bare_rate
                goal = GOALS[kind]
                verdict = "meets" if peer_rate >= goal else "MISSES"
                what = "small variable-size (tck/range)" if kind == "range" else "packed 8-byte (tck/fixed)"
                print(f"  {what:32s} peer {peer_rate / 1e6:6.2f} M elements/s; bare asyncio socket "
                      f"{bare_rate / 1e6:6.2f} M/s; ratio {peer_rate / bare_rate:6.1%}; "
                      f"goal {goal / 1e6:g} M/s: {verdict}")
        finally:
            _stop(peer)
    return figures


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--bare":
        asyncio.run(bare_server(Path(sys.argv[2]), sys.argv[3], int(sys.argv[4])))
    else:
        main()
