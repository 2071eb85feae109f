"""The reference peer: a conforming implementation of every binding on asyncio, with switchable faults.

Theory of operation.  This package is the binding-neutral shell: ``__main__`` (the
command line), ``api`` (``Peer``: publish by name, listen and connect over ``tcp://``,
``tls://``, ``unix:``, ``exec:`` and ``stdio``), ``transports``, ``tlscert``,
``tiny_writes``, ``hostile/`` (the hostile modes' driver), ``sources`` (where a
publication's elements come from) and ``fault_model`` (the shape of a deliberate fault).
The wire is a binding's: ``peer_binding`` imports the peer of the binding asked for
(``rsio/``, ``rsocket/``, ``ditto/``, each with the same layout: ``connection``,
``policy``, ``publishers``, ``faults/``, ``freedoms``, ``config``, ``hostile``), so
importing this package loads no binding.  See ``api.py`` for an example and
``python -m rsio_tck.reference_peer --help`` for the command line.

The RS-IO peer's library names (``PeerConfig``, ``Publisher``, ``Subscriber``,
``Subscription``, ``FAULTS``) live in ``rsio_tck.reference_peer.rsio``; they are still
importable from here, and their module is imported only when one of them is asked for.
"""

from __future__ import annotations

import importlib
from typing import Any

from .api import Peer, PeerConnection, RemoteError, RemoteSubscription, Server
from .fault_model import Fault

# The RS-IO peer's names this package gave before the peers had folders of their own.
_RSIO_NAMES = frozenset({"FAULTS", "PeerConfig", "Publisher", "Subscriber", "Subscription"})


def __getattr__(name: str) -> Any:
    # By module path, as peer_binding imports a peer: the shell names no binding module in an import.
    if name not in _RSIO_NAMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.rsio"), name)


__all__ = [
    "FAULTS",
    "Fault",
    "Peer",
    "PeerConfig",
    "PeerConnection",
    "Publisher",
    "RemoteError",
    "RemoteSubscription",
    "Server",
    "Subscriber",
    "Subscription",
]
