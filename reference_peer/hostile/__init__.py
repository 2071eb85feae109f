"""Hostile targets: the reference peer misbehaving on purpose, to prove the kit stays bounded.

Theory of operation.  ``rsio-peer --binding B --listen URL --hostile MODE`` does not run
the binding's session at all: a small driver (``driver.py``) accepts each connection,
reads the kit's opening, and then does what the mode says (``modes.py``): random bytes,
a flood of valid frames, a frame whose header announces the largest length and then
trickles, silence, a half-close, and so on.  The driver and the modes know no wire.
What they need of one comes from the binding's peer module as a ``HostileMaterial``
(``material.py``): the answer to the kit's opening, one valid frame, the start of a
frame announcing the largest length, a filler byte, the binding's WebSocket framing,
and the binding's own modes (``Burst``: bytes written once, then others again and
again).  ``carriers.py`` writes those bytes on TCP as they are, or over ws:// inside
proper WebSocket frames after a proper upgrade (``rsio_tck.websocket``).

``rsio-peer --binding B --connect URL --hostile MODE`` runs the same modes as a client, once
(``connect_hostile``): it sends the binding's client opening (``HostileMaterial.hello``, RSocket's
SETUP, a Ditto subscribe), then misbehaves; it is the client command of listen mode's hostile
tests, and a proxy's hostile client.

Nothing runs forever: each connection writes at most ``max_bytes``, and the process
lives at most ``max_seconds`` (``--hostile-max-bytes``, ``--hostile-max-seconds``).
"""

from .driver import HostileError, client_hello, connect_hostile, serve_hostile
from .material import Burst, HostileMaterial
from .modes import MODES, describe_modes

__all__ = ["MODES", "Burst", "HostileError", "HostileMaterial", "client_hello", "connect_hostile", "describe_modes",
           "serve_hostile"]
