"""The reference peer: a conforming RS-IO implementation on asyncio, with switchable faults.

It is the kit's default target and a usable Python implementation of RS-IO:
``Peer`` publishes by name, listens and connects over ``tcp://``, ``tls://``,
``unix:`` and ``exec:``; ``PeerConnection.subscribe`` consumes a remote
publisher with backpressure.  See ``api.py`` for an example and
``python -m rsio_tck.reference_peer --help`` for the command line.
"""

from .api import Peer, PeerConnection, RemoteError, RemoteSubscription, Server
from .appflows import Publisher, Subscriber, Subscription
from .config import PeerConfig
from .faults import FAULTS, Fault

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
