"""Events a ``Connection`` (any binding's endpoint) reports besides the frames it received.

Received frames are events themselves (an RS-IO application reads ``Subscribe``,
``Request``, ``OnNext`` ...; an RSocket one ``RequestStream``, ``Payload`` ...
directly).  These classes report what the endpoint decided on the application's
behalf; they name no binding's frame classes (a frame field is whatever frame
value the binding decodes).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

from ..errors import ProtocolViolation


class ConnectionState(Enum):
    OPEN = "open"
    CLOSING = "closing"  # the binding's close sent (RS-IO goodbye): waiting for the peer's, or for the close
    CLOSED = "closed"  # nothing more to send; the I/O layer should close


@dataclass(frozen=True, slots=True, kw_only=True)
class ProtocolError:
    """The peer broke a rule; the endpoint queued the binding's close (RS-IO ``goodbye``;
    RSocket ERROR[CONNECTION_ERROR] on stream 0) and accepts no more input."""

    violation: ProtocolViolation


@dataclass(frozen=True, slots=True, kw_only=True)
class Ignored:
    """A frame the protocol says to ignore, and the rule that says so (request or cancel
    for an Id that is unknown, cancelled or ended: STR-7; parts in flight after a cancel).

    Reported so an application can log it; a conforming one does nothing else with it.
    """

    frame: Any  # the binding's frame value
    rule: str
    why: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ReassemblyLimit:
    """A split (RS-IO) or fragmented (RSocket) element outgrew the reassembly limit: the
    endpoint cancelled that stream (RS-IO SPLIT-5)."""

    subscriber: int
    size: int
    limit: int


@dataclass(frozen=True, slots=True, kw_only=True)
class ConnectionClosed:
    """The transport ended; ``orderly`` if the binding's close was exchanged first (RS-IO goodbyes)."""

    orderly: bool
    reason: str


Event = object  # a received frame, or one of the classes above
