"""``python -m rsio_tck.reference_peer.rsocket``: run the RSocket reference peer on its own.

    python -m rsio_tck.reference_peer.rsocket --listen tcp://127.0.0.1:7878 [--profile reactivesocket-draft]
        [--mtu 256] [--fault NAME]... [--seed N] [--no-freedoms] [--port-file FILE]
    python -m rsio_tck.reference_peer.rsocket --connect tcp://host:port --interaction stream \\
        --name 'tck/range?count=3' [--request 16]
    python -m rsio_tck.reference_peer.rsocket --list-faults

The client prints each element as UTF-8 text (hex when it is not), then exits
0 on completion, 1 on an error from the server.  Bad flags or an unreachable
target: one line on stderr, exit 2.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal
import sys
from pathlib import Path

from rsio_tck.transport import Target, TargetError

from . import add_arguments, list_faults, make_config, serve_connection
from .client import INTERACTIONS, run_client
from .config import PeerConfig

log = logging.getLogger("reference_peer.rsocket")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m rsio_tck.reference_peer.rsocket",
                                description="The RSocket reference peer (bindings.md §2).")
    mode = p.add_argument_group("what to do (one of)")
    mode.add_argument("--listen", metavar="URL", help="serve on tcp://host:port")
    mode.add_argument("--connect", metavar="URL", help="connect as client to tcp://host:port")
    mode.add_argument("--list-faults", action="store_true", help="print every fault with the rule it breaks")
    p.add_argument("--interaction", choices=INTERACTIONS, default="stream", help="with --connect: what to request")
    p.add_argument("--name", default="tck/range?count=10", help="with --connect: the publisher name")
    p.add_argument("--request", type=int, default=16, help="with --connect: request N (and each later batch)")
    p.add_argument("--lease", action="store_true", help="with --connect: the SETUP asks for leases")
    p.add_argument("--keepalive", type=int, default=PeerConfig().keepalive_ms, metavar="MS",
                   help="with --connect: the SETUP's keepalive interval (ms; max lifetime is three times it)")
    p.add_argument("--fault", action="append", default=[], metavar="NAME", help="switch on a fault (repeatable)")
    p.add_argument("--seed", type=int, default=0, help="seed of the freedoms' choices (default 0)")
    p.add_argument("--no-freedoms", action="store_true", help="one fixed habit instead of seeded freedoms")
    p.add_argument("--port-file", type=Path, help="write the bound TCP port to this file")
    p.add_argument("-q", "--quiet", action="store_true", help="log warnings only")
    add_arguments(p)
    return p


def _show(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.hex()


async def listen(url: str, config: PeerConfig, port_file: Path | None) -> int:
    target = Target.parse(url)
    if target.scheme != "tcp":
        raise TargetError(f"{url}: the RSocket peer listens on tcp:// only")
    numbers = iter(range(1, 2**63))
    connections: set[asyncio.Task[str]] = set()

    async def accepted(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        connections.add(task)  # type: ignore[arg-type]
        try:
            await serve_connection(reader, writer, config, next(numbers))
        finally:
            connections.discard(task)  # type: ignore[arg-type]

    server = await asyncio.start_server(accepted, target.host, target.port, reuse_address=True)
    port = server.sockets[0].getsockname()[1]
    log.info("rsocket peer listening on tcp://%s:%d (%s%s)", target.host, port, config.profile,
             f", faults: {', '.join(config.faults)}" if config.faults else "")
    if port_file is not None:
        temporary = port_file.with_name(port_file.name + ".tmp")
        temporary.write_text(f"{port}\n")
        os.replace(temporary, port_file)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    async with server:
        await stop.wait()
    for task in list(connections):
        task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await asyncio.gather(*connections, return_exceptions=True)
    return 0


async def connect(args: argparse.Namespace, config: PeerConfig) -> int:
    outcome = await run_client(args.connect, config, args.interaction, args.name, args.request)
    for element in outcome.elements:
        print(_show(element), flush=True)
    if outcome.error is not None:
        print(f"onError: {outcome.error}", file=sys.stderr)
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.list_faults:
        print(list_faults())
        return 0
    if (args.listen is None) == (args.connect is None):
        parser().error("give exactly one of --listen, --connect (or --list-faults)")
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING if args.quiet else logging.INFO,
                        format="rsocket-peer[%(process)d] %(message)s")
    try:
        config = make_config(args)
        return asyncio.run(listen(args.listen, config, args.port_file) if args.listen else connect(args, config))
    except (TimeoutError, ValueError, TargetError, OSError, ConnectionError) as exc:
        print(f"rsocket-peer: {exc or type(exc).__name__}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
