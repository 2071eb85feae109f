"""``rsio-peer`` / ``python -m rsio_tck.reference_peer``: run the reference peer.

    rsio-peer --listen tcp://127.0.0.1:7878 [--codec varint] [--fault NAME]...
    rsio-peer --listen tcp://127.0.0.1:0 --port-file /tmp/port      # a free port, written to the file
    rsio-peer --listen tls://127.0.0.1:7879 [--cert C --key K]      # self-signed if none given
    rsio-peer --listen unix:/tmp/rsio.sock
    rsio-peer --listen ws://127.0.0.1:7880/rsio                     # WebSocket (wss:// like tls://)
    rsio-peer --stdio                                               # one connection on stdin/stdout
    rsio-peer --connect tcp://host:port [--subscribe NAME]          # the client role (ws://host:port/path too)
    rsio-peer --list-faults
    rsio-peer --binding rsocket --listen tcp://127.0.0.1:0 --hostile garbage   # misbehave on purpose
    rsio-peer --binding rsocket --connect tcp://127.0.0.1:7879 --hostile flood   # a hostile client (once)
    rsio-peer --binding ditto --connect env --hostile garbage       # ... to $RSIO_URL (listen mode's client command)
    rsio-peer --binding ditto --hostile list                        # every hostile mode, one line each
    rsio-peer --binding rsocket --profile rsocket-1.0 --listen tcp://127.0.0.1:7878   # another wire

The shell knows no wire: ``--binding`` picks the peer of ``peer_binding`` (RS-IO by
default; ``--codec`` is RS-IO's name for ``--profile``).  Exits 0 on SIGINT/SIGTERM after saying goodbye on every connection.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys
import tempfile
from pathlib import Path
from typing import Any

from rsio_tck.binding import get_binding

from .api import Peer, RemoteError
from .peer_binding import DEFAULT_PEER, PeerBinding, get_peer_binding, peer_names, peer_profile
from .tlscert import CertificateError, self_signed, server_context
from .transports import Target, TargetError, client_ssl_context

log = logging.getLogger("reference_peer")


def parser(peer: PeerBinding | None = None) -> argparse.ArgumentParser:
    """The command line; ``peer``'s own flags are added when its binding has any (``add_arguments``)."""
    p = argparse.ArgumentParser(prog="rsio-peer", description="The reference peer (RS-IO rsio-v0 by default).",
                                conflict_handler="resolve")
    mode = p.add_argument_group("what to do (one of)")
    mode.add_argument("--listen", action="append", default=[], metavar="URL",
                      help="serve on tcp://host:port, tls://host:port, ws://host:port/path, wss://host:port/path or unix:/path (repeatable)")
    mode.add_argument("--stdio", action="store_true", help="serve one connection on stdin/stdout")
    mode.add_argument("--connect", metavar="URL", help="connect as client (tcp://, tls://, ws://, wss://, unix:, exec:COMMAND)")
    mode.add_argument("--list-faults", action="store_true", help="print every fault with the rule it breaks")
    mode.add_argument("--capabilities", action="store_true", help="print the capabilities file and exit")
    mode.add_argument("--hostile", metavar="MODE",
                      help="with --listen (tcp:// or ws://): misbehave on every connection as MODE says, to test "
                           "the kit's bounds; with --connect: one connection as a hostile client, exit 1 when the "
                           "mode ends (--connect env: the URL in $RSIO_URL, for listen mode) ('list' prints the modes)")
    p.add_argument("--hostile-max-bytes", type=int, default=64 * 1024 * 1024, metavar="N",
                   help="with --hostile: bytes written per connection at most (default 64 MiB)")
    p.add_argument("--hostile-max-seconds", type=float, default=300.0, metavar="S",
                   help="with --hostile: seconds the process lives at most (default 300)")
    p.add_argument("--subscribe", metavar="NAME", help="with --connect: subscribe to NAME and print its elements")
    p.add_argument("--buffer", type=int, default=64, help="with --subscribe: elements requested ahead (default 64)")
    p.add_argument("--binding", choices=peer_names(), default=DEFAULT_PEER, metavar="NAME",
                   help=f"the wire: {', '.join(peer_names())} (default {DEFAULT_PEER})")
    p.add_argument("--profile", metavar="P", help="the binding's wire profile (default: the binding's first)")
    p.add_argument("--codec", metavar="C", help="RS-IO only: msgpack or varint (the same as --profile)")
    p.add_argument("--fault", action="append", default=[], metavar="NAME", help="switch on a fault (repeatable)")
    p.add_argument("--seed", type=int, default=0, help="seed of the freedoms' choices (default 0)")
    p.add_argument("--no-freedoms", action="store_true", help="one fixed habit instead of seeded freedoms")
    p.add_argument("--wide-ints", action="store_true",
                   help="write every integer element of the test publishers in its widest MessagePack form")
    p.add_argument("--tiny-writes", type=int, default=0, metavar="N",
                   help="write at most N bytes a write, each after the last left (a freedom TCP allows; seeded: "
                        "at most 1..N a connection; tiny for the first 4 KiB of each write, then up to 64 KiB)")
    p.add_argument("--ids", metavar="HABIT",
                   help="how the peer picks the ids it chooses, on every connection (the binding's choices; "
                        "RS-IO: fresh, lowest, highest, mirror, random; default: the seeded freedoms decide)")
    p.add_argument("--port-file", type=Path, help="write the bound TCP/TLS port to this file")
    p.add_argument("--cert", type=Path, help="TLS certificate (PEM) for a tls:// or wss:// listener")
    p.add_argument("--key", type=Path, help="TLS private key (PEM) for a tls:// listener")
    p.add_argument("--cafile", help="CA file to verify a tls:// server (or add ?insecure=1 to the URL)")
    p.add_argument("--max-subscriptions", type=int, default=256, help="concurrent subscriptions per connection")
    # Limits default to the binding's own (None here): the shell knows no wire.
    p.add_argument("--max-element", type=int, help="bytes of one element or part (default: the binding's)")
    p.add_argument("--max-frame", type=int, help="bytes of one frame (default: the binding's)")
    p.add_argument("--max-reassembly", type=int, help="bytes of one split element joined (default: the binding's)")
    p.add_argument("--split-threshold", type=int,
                   help="variable-size elements longer than this are always sent split (default: the binding's)")
    p.add_argument("--write-buffer", type=int, default=256 * 1024,
                   help="bytes buffered per connection before production pauses")
    p.add_argument("--stop-on", metavar="TEXT",
                   help="stop answering for good once TEXT arrives on any connection (say, a publisher name only one "
                        "scenario subscribes to): the event loop blocks, as a server's does when a handler never "
                        "returns; no connection, old or new, is read or answered again (the kit's tests of a "
                        "target that stops)")
    p.add_argument("-q", "--quiet", action="store_true", help="log warnings only")
    add_arguments = getattr(peer, "add_arguments", None)
    if add_arguments is not None:
        add_arguments(p.add_argument_group(f"{peer.name} options"))  # type: ignore[union-attr]
    return p


def list_faults(peer: PeerBinding | None = None) -> str:
    faults = (peer or get_peer_binding(DEFAULT_PEER)).faults
    if not faults:
        return ""
    width = max(map(len, faults))
    return "\n".join(f"{name:<{width}}  {fault.rule:<8} {fault.description}" for name, fault in faults.items())


def profile_from(args: argparse.Namespace, peer: PeerBinding) -> str:
    """``--profile``, or RS-IO's ``--codec``; ValueError (one line) for a bad combination."""
    if args.codec is not None:
        if get_binding(peer.name).profile_word != "codec":  # only a binding whose profiles are codecs
            raise ValueError(f"--codec is RS-IO's; for --binding {peer.name} use --profile")
        if args.profile is not None and args.profile != args.codec:
            raise ValueError(f"--codec {args.codec} and --profile {args.profile} disagree; give one")
        return peer_profile(peer, args.codec)
    return peer_profile(peer, args.profile)


def config_from(args: argparse.Namespace, peer: PeerBinding | None = None) -> Any:
    peer = peer or get_peer_binding(args.binding)
    # None: the binding's default for that option.
    options = {"args": args, "max_element": args.max_element, "max_frame": args.max_frame, "max_reassembly": args.max_reassembly,
               "max_subscriptions": args.max_subscriptions, "write_buffer": args.write_buffer,
               "freedoms": not args.no_freedoms, "seed": args.seed, "wide_ints": args.wide_ints,
               "tiny_writes": args.tiny_writes,
               "ids": args.ids,
               "faults": tuple(args.fault), "split_threshold": args.split_threshold}
    return peer.config(profile_from(args, peer), options)


async def run_hostile(args: argparse.Namespace, peer: PeerBinding) -> int:
    """``--hostile MODE``: the binding's material in the neutral hostile driver, on every --listen URL."""
    from .hostile import serve_hostile

    material = peer.hostile_material(profile_from(args, peer))  # type: ignore[attr-defined]
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)

    def listening(url: str, port: int) -> None:
        if args.port_file is not None and port:
            write_port(args.port_file, port)
        target = Target.parse(url)
        print(f"listening on {target.scheme}://{target.host}:{port}{target.path if target.websocket else ''}",
              flush=True)  # the URL with the port bound (tests read this line)

    await serve_hostile(args.listen, material, args.hostile, max_bytes=args.hostile_max_bytes,
                        max_seconds=args.hostile_max_seconds, seed=args.seed, stop=stop, on_listening=listening)
    return 0


async def run_hostile_client(args: argparse.Namespace, peer: PeerBinding) -> int:
    """``--connect URL --hostile MODE``: one connection as a hostile client (listen mode's client command, a
    proxy's client); exit 1 once the mode ended: a hostile client never performs a test case."""
    from .hostile import client_hello, connect_hostile

    url = args.connect
    if url == "env":
        url = os.environ.get("RSIO_URL", "")
        if not url:
            raise ValueError("--connect env: RSIO_URL is not set")
    profile = profile_from(args, peer)
    material = peer.hostile_material(profile)  # type: ignore[attr-defined]
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    why = await connect_hostile(url, material, args.hostile, hello=client_hello(material, peer.name, profile),
                                max_bytes=args.hostile_max_bytes, max_seconds=args.hostile_max_seconds,
                                seed=args.seed, stop=stop)
    print(f"hostile client ({args.hostile}) to {url}: {why}", flush=True)
    return 1


def write_port(path: Path, port: int) -> None:
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(f"{port}\n")
    os.replace(temporary, path)  # the reader never sees a half-written file


def stop_answering(marker: str) -> None:
    """Block the event loop for good (``--stop-on``): every connection, and every new one the kernel still
    accepts, goes unread and unanswered.  SIGTERM and SIGINT get their default action back, so the process
    still ends when asked to (asyncio's handlers would need the blocked loop)."""
    log.warning("--stop-on %r seen: the peer stops answering every connection, new ones too", marker)
    for handler in logging.getLogger().handlers:
        handler.flush()
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    while True:
        signal.pause()


async def run(args: argparse.Namespace, config: Any) -> int:
    peer = Peer(config, binding=args.binding)
    if args.stop_on:
        peer.watch_for(args.stop_on.encode("utf-8"), lambda: stop_answering(args.stop_on))
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    habit = "freedoms off" if not config.freedoms else f"freedoms on, seed {config.seed}"
    if getattr(config, "tiny_writes", 0):
        habit += f", tiny writes of at most {config.tiny_writes} bytes"
    faults = f", faults: {', '.join(config.faults)}" if config.faults else ""
    if args.stdio:
        served = asyncio.ensure_future(peer.serve_stdio())
        stopped = asyncio.ensure_future(stop.wait())
        await asyncio.wait({served, stopped}, return_when=asyncio.FIRST_COMPLETED)
        stopped.cancel()
        await peer.shutdown()
        return 0
    if args.connect:
        return await run_client(peer, args, stop)
    with tempfile.TemporaryDirectory(prefix="rsio-peer-tls-") as scratch:
        for url in args.listen:
            context = None
            if Target.parse(url).scheme in ("tls", "wss"):
                cert, key = args.cert, args.key
                if cert is None or key is None:
                    cert, key = self_signed(Path(scratch), Target.parse(url).host)
                    log.info("tls: self-signed certificate %s", cert)
                context = server_context(cert, key)
            server = await peer.listen(url, ssl_context=context)
            profile = getattr(config, "profile", None) or getattr(config, "codec", "?")
            log.info("listening on %s (%s %s, %s%s)", server.url, args.binding, profile, habit, faults)
            if args.port_file is not None and server.port:
                write_port(args.port_file, server.port)
        await stop.wait()
        log.info("shutting down: goodbye to %d connection(s)", len(peer.connections))
        await peer.shutdown()
    return 0


async def run_client(peer: Peer, args: argparse.Namespace, stop: asyncio.Event) -> int:
    target = Target.parse(args.connect)
    context = client_ssl_context(target, args.cafile) if target.scheme in ("tls", "wss") else None
    connection = await peer.connect(args.connect, ssl_context=context)
    if args.subscribe is None:
        stopped: asyncio.Future[object] = asyncio.ensure_future(stop.wait())
        closed: asyncio.Future[object] = connection.closed  # type: ignore[assignment]
        await asyncio.wait({stopped, closed}, return_when=asyncio.FIRST_COMPLETED)
        stopped.cancel()
        if not connection.closed.done():
            await connection.close("client stopping")
        return 0
    code = 0
    try:
        async with connection.subscribe(args.subscribe, buffer=args.buffer) as elements:
            async for element in elements:
                print(peer.binding.show(element), flush=True)
                if stop.is_set():
                    break
    except RemoteError as error:
        print(f"onError: {error}", file=sys.stderr)
        code = 1
    await connection.close("done")
    return code


def main(argv: list[str] | None = None) -> int:
    first, _ = parser().parse_known_args(argv)  # --binding first: it decides which flags exist
    try:
        peer = get_peer_binding(first.binding)
    except ValueError as exc:
        print(f"rsio-peer: --binding: {exc}", file=sys.stderr)
        return 2
    args = parser(peer).parse_args(argv)
    if args.list_faults:
        print(list_faults(peer))
        return 0
    if args.capabilities:
        try:
            print(peer.capabilities.read_text(encoding="utf-8"), end="")
        except OSError as exc:
            print(f"rsio-peer: --capabilities: the {peer.name} peer has no capabilities file "
                  f"({exc.strerror or exc})", file=sys.stderr)
            return 2
        return 0
    if args.hostile is not None:
        return hostile_main(args, peer)
    if sum(map(bool, (args.listen, args.stdio, args.connect))) != 1:
        parser(peer).error("give exactly one of --listen, --stdio, --connect (or --list-faults)")
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING if args.quiet else logging.INFO,
                        format="rsio-peer[%(process)d] %(message)s")
    try:
        config = config_from(args, peer)
        return asyncio.run(run(args, config))
    except (ValueError, TargetError, CertificateError, OSError) as exc:
        print(f"rsio-peer: {exc}", file=sys.stderr)
        return 2


def hostile_main(args: argparse.Namespace, peer: PeerBinding) -> int:
    from .hostile import HostileError, describe_modes

    material = getattr(peer, "hostile_material", None)
    if material is None:
        print(f"rsio-peer: --hostile: the {peer.name} peer has no hostile modes", file=sys.stderr)
        return 2
    if args.hostile == "list":
        print(describe_modes(material(peer_profile(peer, None)).modes))
        return 0
    if sum(map(bool, (args.listen, args.stdio, args.connect))) != 1 or args.stdio:
        parser(peer).error("--hostile MODE needs --listen URL or --connect URL (tcp:// or ws://), and not --stdio")
    if args.hostile_max_bytes < 1 or args.hostile_max_seconds <= 0:
        parser(peer).error("--hostile-max-bytes and --hostile-max-seconds must be positive")
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING if args.quiet else logging.INFO,
                        format="rsio-peer[%(process)d] %(message)s")
    try:
        return asyncio.run(run_hostile_client(args, peer) if args.connect else run_hostile(args, peer))
    except (HostileError, ValueError, TargetError, OSError) as exc:
        print(f"rsio-peer: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
