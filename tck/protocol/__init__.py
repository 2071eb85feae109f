"""The RS-IO protocol: its binding onto the Reactive Streams model, and a sans-IO endpoint."""

from ..bindings.rsio.mapping import STREAM_SIGNALS, apply_frame
from .connection import Connection, ConnectionState
from .events import ConnectionClosed, Ignored, ProtocolError, ReassemblyLimit

__all__ = [
    "STREAM_SIGNALS",
    "Connection",
    "ConnectionClosed",
    "ConnectionState",
    "Ignored",
    "ProtocolError",
    "ReassemblyLimit",
    "apply_frame",
]
