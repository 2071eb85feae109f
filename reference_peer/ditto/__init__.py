"""The Ditto reference peer: Ditto's streaming-subscription and search protocols as publisher, with switchable faults.

It plays the side of Ditto (bindings.md §3) on every connection, for both
profiles at once (the subscribe's topic decides): the test publishers
``tck/range``, ``tck/infinite`` and ``tck/error`` behind
``subscribeForPersistedEvents``, and the search collection
``eq(attributes/tck,N)`` with ``size(n)`` pages behind ``search/subscribe``
(``publishers.py``).  Over TCP one JSON envelope per line; over WebSocket
(``ws://HOST:PORT/ws/2``) the binding's framing hook turns each text message
into such a line and back, so the sans-IO session (``connection.py``) is the same.

Entry points for the peer's shell (``--binding ditto``, the stream-shaped entry
point of ``peer_binding``):

- ``PeerConfig`` (``config.py``), ``add_arguments(parser)``, ``make_config(args)``;
- ``async serve_connection(reader, writer, config, number=0) -> str``;
- ``FAULTS``: every fault, each naming the Ditto rule it breaks; ``list_faults()``;
- ``DELIBERATE_WARNINGS``: SHOULD rules the fault-free peer departs from on purpose (none);
- ``capabilities.json`` (next to this file): what the peer claims.

What the peer decided where Ditto's pages and bindings.md §3 leave a choice:

- every subscribe gets ``created`` (one without a correlation-id too); a subscribe the peer
  cannot serve (unknown publisher, bad filter or option, too many subscriptions) fails with 4xx after the
  subscriber's first request, never before it (Ditto's guarantee);
- a request or cancel naming no live subscription is ignored (an answer would be an
  event for an id not announced); publisher-side messages and other topics from the
  remote are answered with a Ditto error envelope (``unknown/unknown/things/twin/errors``,
  status 400), and so is a line that is not a Ditto Protocol message: the connection
  stays.  A line over the limit is answered 413 and ends the connection;
- the WebSocket binding's control messages ``START-SEND-*``/``STOP-SEND-*`` are
  acknowledged (``…:ACK``); ``JWT-TOKEN`` is taken silently;
- the ``failed`` of demand <= 0 carries status 400 and Ditto 3.8.0's error code
  (``streaming.subscription.protocol.error`` / ``thing-search:subscription.protocol.error``);
- freedoms (``freedoms.py``): subscriptionId style, ``complete`` with or after the last
  item, interleaving of several subscriptions, events within demand after ``cancel``
  (at once or late), the correlation-id of events and of a ``created`` answering a
  subscribe that named none, short search pages, an empty result's ``complete`` in a
  later write, chunked writes; ``--freedom NAME`` forces one on every connection;
- search results in Ditto's default order, ``sort(+thingId)``: thingIds as strings;
  a valid RQL filter other than the test collection's matches nothing (``complete``),
  one that is not RQL fails 400 (``rql.py``).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rsio_tck.bindings.ditto import PROFILE_NAMES

from ..tiny_writes import checked as checked_tiny_writes
from .config import PeerConfig
from .faults import FAULTS, Fault
from .freedoms import FORCEABLE, ID_CHOICES
from .shell import serve_connection

CAPABILITIES = Path(__file__).with_name("capabilities.json")
DELIBERATE_WARNINGS: frozenset[str] = frozenset()  # its freedoms are all legal: the kit warns of none


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """This binding's flags (the shell adds --fault, --seed, --no-freedoms, --max-subscriptions itself)."""
    parser.add_argument("--max-line", type=int, default=None,
                        help="bytes of one received line (one message) before the connection ends (default 16 MiB)")
    parser.add_argument("--freedom", action="append", default=None, metavar="NAME",
                        help=f"use this freedom on every connection (repeatable): {', '.join(FORCEABLE)}")


def make_config(args: argparse.Namespace) -> PeerConfig:
    """A ``PeerConfig`` from parsed arguments; flags that are absent take their defaults.  ValueError: a bad value."""
    from rsio_tck.bindings.ditto import DittoLimits

    defaults = PeerConfig()
    profile = getattr(args, "profile", None) or defaults.profile
    if profile not in PROFILE_NAMES:
        raise ValueError(f"--profile {profile!r}: choose one of {', '.join(PROFILE_NAMES)}")
    faults = tuple(getattr(args, "fault", None) or ())
    unknown = [name for name in faults if name not in FAULTS]
    if unknown:
        raise ValueError(f"--fault {unknown[0]!r}: no such Ditto fault (--list-faults shows them)")
    max_line = getattr(args, "max_line", None)
    if max_line is not None and max_line < 1024:
        raise ValueError(f"--max-line {max_line}: at least 1024 bytes")
    subscriptions = getattr(args, "max_subscriptions", None) or defaults.max_subscriptions
    if subscriptions < 1:
        raise ValueError(f"--max-subscriptions {subscriptions}: at least 1")
    write_buffer = getattr(args, "write_buffer", None) or defaults.write_high
    forced = tuple(getattr(args, "freedom", None) or ())
    unknown_freedoms = [name for name in forced if name not in FORCEABLE]
    if unknown_freedoms:
        raise ValueError(f"--freedom {unknown_freedoms[0]!r}: choose from {', '.join(FORCEABLE)}")
    ids = getattr(args, "ids", None)
    if ids is not None and ids not in ID_CHOICES:
        raise ValueError(f"--ids {ids!r}: the Ditto peer gives subscriptionIds {', '.join(ID_CHOICES)}")
    return PeerConfig(profile=profile, faults=faults, seed=getattr(args, "seed", 0) or 0, ids=ids,
                      freedoms=not getattr(args, "no_freedoms", False), forced_freedoms=forced,
                      max_subscriptions=subscriptions,
                      tiny_writes=checked_tiny_writes(getattr(args, "tiny_writes", 0) or 0),
                      limits=DittoLimits(max_message=max_line) if max_line else defaults.limits,
                      write_high=max(4096, write_buffer))


def hostile_material(profile: str) -> Any:
    """This binding's bytes for the hostile modes (``--hostile``; ``hostile.py``, imported when asked)."""
    from .hostile import hostile_material as material

    return material(profile)


def list_faults() -> str:
    width = max(map(len, FAULTS), default=0)
    return "\n".join(f"{name:<{width}}  {fault.rule:<15} {fault.description}" for name, fault in FAULTS.items())


__all__ = ["CAPABILITIES", "DELIBERATE_WARNINGS", "FAULTS", "PROFILE_NAMES", "Fault", "PeerConfig", "add_arguments", "hostile_material",
           "list_faults", "make_config", "serve_connection"]
