"""Events a ``Connection`` reports besides the frames it received.

Received frames are events themselves (an application reads ``Subscribe``,
``Request``, ``OnNext`` ... directly).  These classes report what the
connection decided on the application's behalf.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..bindings.rsio.wire.frames import Frame
from ..errors import ProtocolViolation


@dataclass(frozen=True, slots=True, kw_only=True)
class ProtocolError:
    """The peer broke a rule; the connection queued ``goodbye`` and is closing."""

    violation: ProtocolViolation


@dataclass(frozen=True, slots=True, kw_only=True)
class Ignored:
    """A frame the protocol says to ignore, and the rule that says so (request or cancel
    for an Id that is unknown, cancelled or ended: STR-7; parts in flight after a cancel).

    Reported so an application can log it; a conforming one does nothing else with it.
    """

    frame: Frame
    rule: str
    why: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ReassemblyLimit:
    """A split element outgrew the reassembly limit: the connection sent cancel (SPLIT-5)."""

    subscriber: int
    size: int
    limit: int


@dataclass(frozen=True, slots=True, kw_only=True)
class ConnectionClosed:
    """The transport ended; ``orderly`` if goodbyes were exchanged first."""

    orderly: bool
    reason: str


Event = object  # a received frame, or one of the classes above
