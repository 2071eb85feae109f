"""The binding-neutral sans-IO connection (a shell over a binding's endpoint) and its events.

Theory of operation, after wsproto's ``WSConnection``: ``Connection`` asks the binding for an
endpoint (``Binding.endpoint``) and delegates to it: received bytes go in through
``receive_data`` and come out as events (the binding's frames, and the neutral events of
``events``: ``ProtocolError``, ``ConnectionClosed``, ...); frames go out through ``send`` and
``data_to_send``.  The endpoint judges both directions with the same judge the monitor uses, so
the reference peer and the kit's own endpoints keep their protocol state in one place.  No
sockets, no clocks.
"""

from .connection import Connection, Endpoint
from .events import ConnectionClosed, ConnectionState, Ignored, ProtocolError, ReassemblyLimit

__all__ = [
    "Connection",
    "ConnectionClosed",
    "ConnectionState",
    "Endpoint",
    "Ignored",
    "ProtocolError",
    "ReassemblyLimit",
]
