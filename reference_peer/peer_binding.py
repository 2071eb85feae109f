"""The reference peer's side of the seam: what a binding's peer module exposes, and how the shell finds it.

Theory of operation.  The peer's shell (``__main__``, ``api``, ``transports``) knows
URLs, listeners, signals and the application API; it knows no wire.  For the wire it
asks ``get_peer_binding(name)``, which imports the module the binding declares
(``Binding.peer_module``, the kit's one registry: ``rsio_tck.binding``) when first
asked (so the shell imports no binding module) and returns that module's attribute
``PEER``.  The names are the registry's (``binding_names``): the kit's bindings and
those registered from outside (``RSIO_TCK_BINDINGS``).

The entry point a binding's peer module must expose (RS-IO's is ``rsio_tck.reference_peer.rsio``;
RSocket's, ``rsio_tck.reference_peer.rsocket``, follows the same shape)::

    PEER.name: str                       # "rsio", "rsocket"
    PEER.profiles: tuple[str, ...]       # the binding's wire profiles, first = default
    PEER.faults: Mapping[str, fault]     # every deliberate fault; a fault has .rule and .description
    PEER.capabilities: Path              # the capabilities file the peer prints (--capabilities)
    PEER.deliberate_warnings: frozenset[str]  # SHOULD rules the peer departs from on purpose
                                         # (its freedoms); the fuzzer and self-check accept them

    PEER.config(profile: str, options: Mapping[str, Any]) -> config
        # The binding's peer settings from the shell's command-line options (keys:
        # max_element, max_frame, max_reassembly, max_subscriptions, write_buffer,
        # freedoms, seed, wide_ints, ids, tiny_writes, faults, split_threshold; take what applies).
        # ValueError (one line) for a bad value or an unknown fault.  The config
        # object must have .faults (tuple[str, ...]), .goodbye_timeout and .linger
        # (seconds), and .profile or .codec (the wire profile, for the log).

    PEER.publishers(*, test_publishers: bool) -> publisher table
        # the publisher names: .add(path, entry), .remove(path), .names(), .resolve(name)
    PEER.app_publisher(source, element_size: int) -> entry
        # an application publisher (async generator function or RS Publisher) for .add

    PEER.connection(role: Side, context, number: int, label: str) -> asyncio.Protocol
        # One connection, in either role.  ``context`` is the ``api.Peer`` (has .config,
        # .publishers, .connection_started(s), .connection_ended(s, reason), .abort_all(reason),
        # .stop_serving(reason)).  The session has: .config; .closed (Future[str], why it
        # ended); .ready (Future[None], handshake done); .goodbye(reason) (orderly close:
        # RS-IO goodbye, RSocket ERROR[CONNECTION_CLOSE]); .shutdown(reason); .abort(reason);
        # and .subscriptions with .subscribe(name, inflow, initial_demand) -> id,
        # .request(id, n), .cancel(id), calling back inflow.on_subscribe(element_size),
        # inflow.on_elements(list[bytes], packed), inflow.on_end(error: str | None).

    PEER.show(element: bytes) -> str     # one received element as the client prints it

    PEER.add_arguments(parser)           # optional: the binding's own flags (e.g. RSocket's --mtu);
                                         # PEER.config then finds them in options["args"]
    PEER.hostile_material(profile) -> reference_peer.hostile.HostileMaterial
                                         # optional: the binding's bytes for ``--hostile MODE``
                                         # (the answer to the kit's opening, one valid frame, a huge
                                         # header, the binding's own modes); the driver knows no wire

The transports hand a session bytes through asyncio's ``Protocol`` calls
(``connection_made``, ``data_received``, ``eof_received``, ``pause_writing``,
``resume_writing``, ``connection_lost``), whatever the URL: tcp, tls, unix, exec, stdio.

A module without ``PEER`` may instead expose the stream-shaped entry point
(``StreamPeer`` adapts it; the server role only; Ditto's peer, ``rsio_tck.reference_peer.ditto``,
is one, serving both its profiles as the publisher)::

    async serve_connection(reader, writer, config, number=0) -> str   # why the connection ended
    make_config(args: argparse.Namespace) -> config   # reads profile, fault, seed, no_freedoms, tiny_writes, its own flags
    FAULTS: Mapping[str, fault]                        # .rule, .description
    add_arguments(parser)                              # optional: its own flags
    DELIBERATE_WARNINGS: frozenset[str]                # optional
    hostile_material(profile) -> HostileMaterial       # optional (``--hostile``)
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
from collections.abc import Callable, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol

from rsio_tck.binding import DEFAULT_BINDING, binding_names, get_binding
from rsio_tck.errors import Side

DEFAULT_PEER = DEFAULT_BINDING


def peer_names() -> tuple[str, ...]:
    """The bindings whose peer the shell may be asked for: every binding of the registry."""
    return binding_names()


class PeerBinding(Protocol):
    name: str
    profiles: tuple[str, ...]
    faults: Mapping[str, Any]
    capabilities: Path
    deliberate_warnings: frozenset[str]

    def config(self, profile: str, options: Mapping[str, Any]) -> Any: ...

    def publishers(self, *, test_publishers: bool) -> Any: ...

    def app_publisher(self, source: Any, element_size: int) -> Any: ...

    def connection(self, role: Side, context: Any, number: int, label: str) -> Any: ...

    def show(self, element: bytes) -> str: ...


def get_peer_binding(name: str) -> PeerBinding:
    """The peer for binding ``name`` (the module its ``peer_module`` names); ValueError (one line) if
    unknown or not available."""
    path = get_binding(name).peer_module
    try:
        module = importlib.import_module(path)
    except ModuleNotFoundError as exc:
        if exc.name is not None and path.startswith(exc.name):
            raise ValueError(f"the reference peer does not speak {name!r} yet (no module {path})") from None
        raise
    peer = getattr(module, "PEER", None)
    if peer is not None:
        return peer  # type: ignore[no-any-return]
    if hasattr(module, "serve_connection") and hasattr(module, "make_config"):
        return StreamPeer(name, module)
    raise ValueError(f"the reference peer does not speak {name!r} yet ({path} has no PEER)")


def peer_profile(peer: PeerBinding, profile: str | None) -> str:
    """``profile`` checked against the peer binding's (None: its default); ValueError names the choices."""
    if profile is None:
        return peer.profiles[0]
    if profile not in peer.profiles:
        raise ValueError(f"binding {peer.name!r} has no profile {profile!r}; choose one of {', '.join(peer.profiles)}")
    return profile


class StreamPeer:
    """A ``PeerBinding`` over a module with the stream-shaped entry point (``serve_connection``)."""

    def __init__(self, name: str, module: ModuleType) -> None:
        self.name = name
        self.module = module
        self.profiles: tuple[str, ...] = tuple(get_binding(name).profiles)
        self.faults: Mapping[str, Any] = getattr(module, "FAULTS", {})
        self.capabilities = Path(module.__file__ or ".").with_name("capabilities.json")
        self.deliberate_warnings: frozenset[str] = frozenset(getattr(module, "DELIBERATE_WARNINGS", ()))
        adder = getattr(module, "add_arguments", None)
        if adder is not None:
            self.add_arguments: Callable[[argparse.ArgumentParser], None] = adder
        material = getattr(module, "hostile_material", None)
        if material is not None:
            self.hostile_material: Callable[[str], Any] = material

    def config(self, profile: str, options: Mapping[str, Any]) -> Any:
        args = argparse.Namespace(**vars(options.get("args") or argparse.Namespace()))
        args.profile = profile
        args.fault = list(options.get("faults", ()))
        args.seed = options.get("seed", 0)
        args.no_freedoms = not options.get("freedoms", True)
        args.tiny_writes = options.get("tiny_writes", getattr(args, "tiny_writes", 0)) or 0
        return self.module.make_config(args)

    def publishers(self, *, test_publishers: bool) -> Any:
        return _TestPublishersOnly(self.name)

    def app_publisher(self, source: Any, element_size: int) -> Any:
        raise ValueError(f"the {self.name} reference peer serves only the test publishers")

    def connection(self, role: Side, context: Any, number: int, label: str) -> Any:
        if role is not Side.SERVER:
            raise ValueError(f"the {self.name} reference peer's shell serves only the server role here "
                             f"(python -m {self.module.__name__} --connect for the client)")
        return StreamConnection(self.module.serve_connection, context, number, label)

    def show(self, element: bytes) -> str:
        try:
            return element.decode("utf-8")
        except UnicodeDecodeError:
            return element.hex()


class _TestPublishersOnly:
    def __init__(self, name: str) -> None:
        self.name = name

    def add(self, path: str, entry: Any) -> None:
        raise ValueError(f"the {self.name} reference peer serves only the test publishers")

    def remove(self, path: str) -> None:
        pass

    def names(self) -> list[str]:
        return []


class StreamConnection(asyncio.StreamReaderProtocol):
    """One accepted connection served by ``serve(reader, writer, config, number) -> reason``."""

    def __init__(self, serve: Callable[..., Any], context: Any, number: int, label: str) -> None:
        loop = asyncio.get_running_loop()
        self.reader = asyncio.StreamReader(limit=1 << 20)
        super().__init__(self.reader, self._connected)
        self.serve, self.context, self.number, self.label = serve, context, number, label
        self.config = context.config
        self.closed: asyncio.Future[str] = loop.create_future()
        self.ready: asyncio.Future[None] = loop.create_future()
        self.writer: asyncio.StreamWriter | None = None
        self.subscriptions = None  # the server role subscribes to nothing

    def _connected(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> Any:
        self.writer = writer
        self.context.connection_started(self)
        self.ready.set_result(None)
        return self._run(reader, writer)  # StreamReaderProtocol runs it as a task

    async def _run(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            reason = str(await self.serve(reader, writer, self.config, self.number))
        except Exception as exc:  # a session that fails must still end: its reason is the failure
            reason = f"session failed: {type(exc).__name__}: {exc}"
        self.context.connection_ended(self, reason)
        if not self.closed.done():
            self.closed.set_result(reason)

    def goodbye(self, reason: str) -> None:
        self.shutdown(reason)

    def shutdown(self, reason: str = "peer shutting down") -> None:
        if self.writer is not None and not self.writer.is_closing():
            self.writer.close()
        elif self.writer is None and not self.closed.done():
            self.closed.set_result(reason)

    def abort(self, reason: str) -> None:
        if self.writer is not None:
            self.writer.transport.abort()
        if not self.closed.done():
            self.closed.set_result(reason)
