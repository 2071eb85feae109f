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
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from a checkout

from rsio_tck.wire import get_codec  # noqa: E402
from rsio_tck.wire.frames import OnNext, OnNextPart, ServerHello  # noqa: E402

MODES = ("whole", "split", "chatter")
BATCH = 64 * 1024  # bytes handed to the transport per write


def flood_batch(mode: str, codec: str, start: int) -> bytes:
    """About ``BATCH`` bytes of frames; ``start`` numbers the Ids of ``chatter``."""
    encoder = get_codec(codec).encoder(None)
    if mode == "whole":
        frame = encoder.encode(OnNext(subscriber=1, element=b"\x2a" * 16))
        return frame * (BATCH // len(frame))
    if mode == "split":
        frame = encoder.encode(OnNextPart(subscriber=1, data=b"\x2a" * 1024))
        return frame * (BATCH // len(frame))
    out = bytearray()
    sid = start
    while len(out) < BATCH:
        out += encoder.encode(OnNext(subscriber=sid, element=b"\x2a"))
        sid += 1
    return bytes(out)


async def serve(mode: str, codec: str, max_bytes: int, port_file: Path | None) -> asyncio.Server:
    hello = get_codec(codec).encoder(None).encode(ServerHello(version=0))
    fixed = flood_batch(mode, codec, 1) if mode != "chatter" else b""

    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(reader.read(64), 5.0)  # the clientHello (not checked)
            writer.write(hello)
            written, sid = 0, 1
            while written < max_bytes:
                batch = fixed or flood_batch(mode, codec, sid)
                sid += BATCH
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
