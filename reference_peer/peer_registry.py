"""Which module serves the reference peer for each binding: one registry, by dotted path.

Theory of operation.  The peer's shell (``__main__``, ``api``, ``transports``) knows
URLs, listeners, signals and the application API; it knows no wire.  For the wire it
asks ``get_peer_binding(name)``, which imports the module ``PEERS[name]`` names when
first asked (so the shell imports no binding module) and returns that module's
attribute ``PEER``.  The names are the kit's bindings (``rsio_tck.binding.REGISTRY``).

The entry point a binding's peer module must expose (RS-IO's is ``reference_peer/rsio.py``;
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
        # freedoms, seed, wide_ints, faults, split_threshold; take what applies).
        # ValueError (one line) for a bad value or an unknown fault.  The config
        # object must have .faults (tuple[str, ...]), .goodbye_timeout and .linger
        # (seconds), and .profile or .codec (the wire profile, for the log).

    PEER.publishers(*, test_publishers: bool) -> registry
        # the publisher names: .add(path, entry), .remove(path), .names(), .resolve(name)
    PEER.app_publisher(source, element_size: int) -> entry
        # an application publisher (async generator function or RS Publisher) for .add

    PEER.session(role: Side, context, number: int, label: str) -> asyncio.Protocol
        # One connection, in either role.  ``context`` is the ``api.Peer`` (has .config,
        # .registry, .session_started(s), .session_ended(s, reason), .abort_all(reason),
        # .stop_serving(reason)).  The session has: .config; .closed (Future[str], why it
        # ended); .ready (Future[None], handshake done); .goodbye(reason) (orderly close:
        # RS-IO goodbye, RSocket ERROR[CONNECTION_CLOSE]); .shutdown(reason); .abort(reason);
        # and .subscriptions with .subscribe(name, inflow, initial_demand) -> id,
        # .request(id, n), .cancel(id), calling back inflow.on_subscribe(element_size),
        # inflow.on_elements(list[bytes], packed), inflow.on_end(error: str | None).

    PEER.show(element: bytes) -> str     # one received element as the client prints it

The transports hand a session bytes through asyncio's ``Protocol`` calls
(``connection_made``, ``data_received``, ``eof_received``, ``pause_writing``,
``resume_writing``, ``connection_lost``), whatever the URL: tcp, tls, unix, exec, stdio.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from rsio_tck.binding import DEFAULT_BINDING
from rsio_tck.errors import Side

PEERS: dict[str, str] = {
    "rsio": "rsio_tck.reference_peer.rsio",
    "rsocket": "rsio_tck.reference_peer.rsocket",
}
DEFAULT_PEER = DEFAULT_BINDING


class PeerBinding(Protocol):
    name: str
    profiles: tuple[str, ...]
    faults: Mapping[str, Any]
    capabilities: Path
    deliberate_warnings: frozenset[str]

    def config(self, profile: str, options: Mapping[str, Any]) -> Any: ...

    def publishers(self, *, test_publishers: bool) -> Any: ...

    def app_publisher(self, source: Any, element_size: int) -> Any: ...

    def session(self, role: Side, context: Any, number: int, label: str) -> Any: ...

    def show(self, element: bytes) -> str: ...


def get_peer_binding(name: str) -> PeerBinding:
    """The peer for binding ``name``; ValueError (one line) if unknown or not available."""
    path = PEERS.get(name)
    if path is None:
        raise ValueError(f"unknown binding {name!r}; choose one of {', '.join(PEERS)}")
    try:
        module = importlib.import_module(path)
    except ModuleNotFoundError as exc:
        if exc.name is not None and path.startswith(exc.name):
            raise ValueError(f"the reference peer does not speak {name!r} yet (no module {path})") from None
        raise
    peer = getattr(module, "PEER", None)
    if peer is None:
        raise ValueError(f"the reference peer does not speak {name!r} yet ({path} has no PEER)")
    return peer  # type: ignore[no-any-return]


def peer_profile(peer: PeerBinding, profile: str | None) -> str:
    """``profile`` checked against the peer binding's (None: its default); ValueError names the choices."""
    if profile is None:
        return peer.profiles[0]
    if profile not in peer.profiles:
        raise ValueError(f"binding {peer.name!r} has no profile {profile!r}; choose one of {', '.join(peer.profiles)}")
    return profile
