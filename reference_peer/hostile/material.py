"""What a binding lends the neutral hostile driver: its bytes, never its logic."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

# How a run of bytes travels (``carriers``):
FRAMES = "frames"  # whole frames of the binding's TCP stream (over WebSocket: the binding's framing)
RAW = "raw"  # bytes as they are on TCP; over WebSocket each write is one message of the binding's type
ENDLESS = "endless"  # one message that never ends: on TCP the bytes; over WebSocket continuation frames, no FIN


@dataclass(frozen=True)
class Burst:
    """A binding's own hostile mode: ``prefix`` written once after the opening, then ``repeat`` again
    and again, as fast as the socket takes it, until the connection's byte budget is spent."""

    description: str
    repeat: bytes
    prefix: bytes = b""
    form: str = FRAMES  # FRAMES, RAW or ENDLESS, for prefix and repeat alike
    transports: tuple[str, ...] = ("tcp", "ws")  # where the mode makes sense


@dataclass(frozen=True)
class HostileMaterial:
    """One binding profile's material for the hostile modes (its peer module's ``hostile_material``)."""

    answer: Callable[[bytes], bytes]  # the kit's opening bytes -> whole frames to answer with (b"": none)
    frame: bytes  # one valid frame, as the binding's TCP stream carries it (prefix and all)
    huge_header: bytes  # the start of a frame announcing the largest length the binding allows
    filler: bytes  # one byte that continues a frame in progress (the huge one, an endless message)
    framing: Callable[[], Any]  # a fresh WebSocket framing of the binding (``rsio_tck.websocket.Framing``)
    modes: Mapping[str, Burst] = field(default_factory=dict)  # the binding's own modes, by name
    # The client role's opening (``--connect``): whole frames a client starts a connection with (RSocket's
    # SETUP, a Ditto subscribe).  None: the kit's own opening for the binding (its scenario adapter's
    # ``opening()``, encoded), which a binding without a hello of its own (Ditto) must replace.
    hello: bytes | None = None
