"""The binding-neutral sans-IO connection (a shell over a binding's endpoint) and its events."""

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
