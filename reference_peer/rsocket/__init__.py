"""The RSocket reference peer: a conforming RSocket implementation on asyncio, with switchable faults.

It serves the test publishers of bindings.md §2 as responder over either wire
profile (``rsocket-1.0``, ``reactivesocket-draft``): request-stream
(``tck/range``, ``tck/infinite``, ``tck/error``, ``tck/large``, ``tck/fixed``),
request-response (the first element, an empty completion, or the error),
fire-and-forget (``tck/fnf?key=K``, counted; ``tck/fnf-count?key=K`` answers the
count), request-channel ``tck/echo``, metadata push (ignored); an unknown name
gets ERROR[APPLICATION_ERROR] on its stream.  As requester it serves
``tck/subscribe?to=NAME&request=S``: it opens REQUEST_STREAM NAME to the kit
(an even stream id) and sends each element it receives as an element of the
outer stream.  Fragmentation (``mtu``), keepalive and lease are handled by the
sans-IO endpoint (``rsio_tck.bindings.rsocket.endpoint``).

Entry points for the peer's shell (``--binding rsocket``):

- ``PeerConfig``: the settings (frozen dataclass; ``config.py``);
- ``add_arguments(parser)``: the command-line flags this binding adds
  (``--profile``, ``--mtu``, ``--lease-ttl``, ``--lease-requests``, ``--enforce-lifetime``);
- ``make_config(args)``: a ``PeerConfig`` from parsed arguments; it reads the
  shell's common flags when present (``fault``, ``seed``, ``no_freedoms``) and this
  binding's (``profile``, ``mtu``, ...), with defaults for any that is absent;
- ``async serve_connection(reader, writer, config, number=0) -> str``: serve one
  accepted connection (asyncio streams) until it ends; returns why it ended;
- ``client.connect(url, config)`` / ``client.run_interaction(...)`` /
  ``client.run_client(url, config, interaction, name, n)``: the client role;
- ``FAULTS``: every fault, each naming the rule it breaks; ``list_faults()``;
- ``DELIBERATE_WARNINGS``: SHOULD rules the fault-free peer departs from on purpose (none);
- ``capabilities.json`` (next to this file): what the peer claims, in the RSocket capabilities format.

Its own command line: ``python -m rsio_tck.reference_peer.rsocket --listen tcp://127.0.0.1:PORT``
(``--help`` for the rest, ``--connect URL --interaction stream --name NAME`` for the client).

What the peer decided where bindings.md §2 and the spec leave a choice:

- ``tck/subscribe``: each element of the inner stream is sent on as an element of the
  outer stream (no report map, unlike RS-IO); the inner completion completes the outer
  stream once its elements are out, an inner ERROR becomes ERROR[APPLICATION_ERROR] with
  the same text, ``cancel:N`` completes after N.  ``all``/``cancel:N`` request 2^31-1 and
  top up 2^30 each time as many arrived (RSocket has no unbounded request).
- ``tck/echo``: the peer grants the channel's inbound 16 payloads ahead (REQUEST_N) and
  re-grants as echoes go out; a channel whose REQUEST_CHANNEL has C completes at once.
- Request N = 0 (REQUEST_STREAM or REQUEST_N): ERROR[INVALID] on that stream (the draft:
  APPLICATION_ERROR, its ERROR has no code).
- LEASE: granted on a SETUP with L, with ``lease_ttl_ms``/``lease_requests``; renewed at
  half its time, or at the next tick once half its requests are used, so a burst beyond
  the grant is rejected (ERROR[REJECTED]; the draft ignores such a request).
- ``tck/fnf`` counts are per peer (shared by its connections), kept in ``PeerConfig.fnf_counts``.
- Freedoms (``freedoms.py``): N|C on the last element or a separate C, chunked writes,
  fragment sizes below the MTU.  None of them draws a warning (``DELIBERATE_WARNINGS`` is empty).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rsio_tck.bindings.rsocket import PROFILE_NAMES

from ..tiny_writes import checked as checked_tiny_writes
from .config import PeerConfig
from .connection import RSocketConnection, serve_connection
from .faults import FAULTS, Fault
from .freedoms import Freedoms

CAPABILITIES = Path(__file__).with_name("capabilities.json")
DELIBERATE_WARNINGS: frozenset[str] = frozenset()  # its freedoms are all legal: the kit warns of none


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """This binding's flags (the shell adds --fault, --seed, --no-freedoms itself)."""
    parser.add_argument("--profile", choices=PROFILE_NAMES, default="rsocket-1.0", help="RSocket wire profile")
    parser.add_argument("--mtu", type=int, default=None,
                        help="largest frame this peer sends (bytes, without length prefix); larger payloads fragment")
    parser.add_argument("--lease-ttl", type=int, default=PeerConfig().lease_ttl_ms,
                        help="time-to-live (ms) of the LEASEs granted to a client whose SETUP asks for leases")
    parser.add_argument("--lease-requests", type=int, default=PeerConfig().lease_requests,
                        help="number of requests of each LEASE granted")
    parser.add_argument("--enforce-lifetime", action="store_true",
                        help="close a connection that sends nothing for the max lifetime of its SETUP")


def make_config(args: argparse.Namespace) -> PeerConfig:
    """A ``PeerConfig`` from parsed arguments; flags that are absent take their defaults.  ValueError: a bad value."""
    defaults = PeerConfig()
    profile = getattr(args, "profile", None) or defaults.profile
    if profile not in PROFILE_NAMES:
        raise ValueError(f"--profile {profile!r}: choose one of {', '.join(PROFILE_NAMES)}")
    mtu = getattr(args, "mtu", None)
    if mtu is not None and mtu < 64:
        raise ValueError(f"--mtu {mtu}: at least 64 bytes")
    keepalive = getattr(args, "keepalive", None) or defaults.keepalive_ms
    if not 0 < keepalive <= 2**31 // 3:
        raise ValueError(f"--keepalive {keepalive}: between 1 and {2**31 // 3} ms")
    faults = tuple(getattr(args, "fault", None) or ())
    unknown = [name for name in faults if name not in FAULTS]
    if unknown:
        raise ValueError(f"--fault {unknown[0]!r}: no such RSocket fault (--list-faults shows them)")
    ids = getattr(args, "ids", None)
    Freedoms(False, 0, 0, profile=profile, ids=ids)  # ValueError: an unknown choice, or one the profile forbids
    return PeerConfig(profile=profile, mtu=mtu, faults=faults, seed=getattr(args, "seed", 0) or 0, ids=ids,
                      freedoms=not getattr(args, "no_freedoms", False),
                      tiny_writes=checked_tiny_writes(getattr(args, "tiny_writes", 0) or 0),
                      lease_ttl_ms=getattr(args, "lease_ttl", None) or defaults.lease_ttl_ms,
                      lease_requests=getattr(args, "lease_requests", None) or defaults.lease_requests,
                      enforce_lifetime=bool(getattr(args, "enforce_lifetime", False)),
                      lease=bool(getattr(args, "lease", False)), keepalive_ms=keepalive,
                      lifetime_ms=3 * keepalive)


def hostile_material(profile: str) -> Any:
    """This binding's bytes for the hostile modes (``--hostile``; ``hostile.py``, imported when asked)."""
    from .hostile import hostile_material as material

    return material(profile)


def list_faults() -> str:
    width = max(map(len, FAULTS), default=0)
    return "\n".join(f"{name:<{width}}  {fault.rule:<14} {fault.description}" for name, fault in FAULTS.items())


__all__ = ["CAPABILITIES", "DELIBERATE_WARNINGS", "FAULTS", "PROFILE_NAMES", "Fault", "PeerConfig", "RSocketConnection", "add_arguments", "hostile_material", "list_faults", "make_config",
           "serve_connection"]
