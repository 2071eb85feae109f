"""The two framings of Ditto Protocol messages: JSON lines on TCP, text messages on WebSocket.

Theory of operation.  On TCP (the kit's reference peer, bindings.md §3) every
message is one JSON text ended by ``\\n``.  ``LineDecoder.feed`` takes any
chunking of the byte stream and returns every message it completes.  It keeps
only the line in progress, and judges its length *before* adding a chunk to
it: a line longer than ``DittoLimits.max_message`` fails (DITTO-LINE-1) as soon
as the bytes without a newline exceed the limit, so a peer that never sends a
newline cannot grow the buffer.  ``eof`` reports a line cut short
(DITTO-LINE-2).  After a violation the decoder is dead: every later ``feed``
raises it again, and ``salvaged`` holds the messages that feed completed
before the bad line.  Offsets in violations are byte offsets of the line's
start in the stream.

On WebSocket (Ditto's ``/ws/2``) one text message is one message: no I/O
here, ``decode_websocket_text`` decodes what the WebSocket library delivered.
Ditto's WebSocket also carries plain-text control messages
(``START-SEND-EVENTS``, ``JWT-TOKEN?...``, their ``:ACK``s); those decode to
``ControlMessage`` rather than failing as bad JSON.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...errors import ProtocolViolation
from .codec import DEFAULT_LIMITS, DittoLimits, decode_message, encode_message, violation
from .messages import Decoded


def encode_line(message: Decoded) -> bytes:
    """One message as a TCP line: UTF-8 JSON and ``\\n``."""
    return encode_message(message).encode("utf-8") + b"\n"


def _at(exc: ProtocolViolation, offset: int) -> ProtocolViolation:
    if exc.offset is not None:
        return exc
    return ProtocolViolation(rule=exc.rule, side=exc.side, message=exc.message, offset=offset)


class LineDecoder:
    """Incremental decoder of the TCP framing: ``feed`` any chunk, get every message it completes."""

    def __init__(self, limits: DittoLimits | None = None) -> None:
        self.limits = limits or DEFAULT_LIMITS
        self.offset = 0  # stream offset of the line in progress
        self.salvaged: list[Decoded] = []
        self._line = bytearray()
        self._dead: ProtocolViolation | None = None

    @property
    def held(self) -> int:
        """Bytes of the line in progress kept."""
        return len(self._line)

    def feed(self, data: bytes) -> list[Decoded]:
        if self._dead is not None:
            raise self._dead.again()
        out: list[Decoded] = []
        try:
            self._feed(bytes(data), out)
        except ProtocolViolation as exc:
            self._dead = _at(exc, self.offset).again()  # kept without the traceback of a raise (``again``)
            self.salvaged = out
            raise self._dead.again() from None
        return out

    def _feed(self, data: bytes, out: list[Decoded]) -> None:
        limit = self.limits.max_message
        line = self._line
        start = 0
        while True:
            end = data.find(b"\n", start)
            stop = len(data) if end < 0 else end
            # Judge the length before buffering: the line so far plus this piece of it.
            if len(line) + stop - start > limit:
                raise violation("DITTO-LINE-1", f"line of more than {limit} bytes (no newline within the limit)")
            if end < 0:
                line += data[start:]
                return
            if line:
                line += data[start:end]
                text = bytes(line)
                line.clear()
            else:
                text = data[start:end]
            out.append(decode_message(text, self.limits))
            self.offset += len(text) + 1
            start = end + 1

    def eof(self) -> None:
        """The transport ended: a line in progress is truncated (DITTO-LINE-2)."""
        if self._dead is None and self._line:
            self._dead = violation(
                "DITTO-LINE-2", f"stream ended inside a line ({len(self._line)} bytes without a newline)", self.offset
            )
            raise self._dead.again()


# -- WebSocket --------------------------------------------------------------------------------

_CONTROL = re.compile(
    r"(?P<name>(?:START|STOP)-SEND-(?:EVENTS|MESSAGES|LIVE-COMMANDS|LIVE-EVENTS|POLICY-ANNOUNCEMENTS)(?::ACK)?"
    r"|JWT-TOKEN)(?:\?(?P<query>.*))?",
    re.DOTALL,
)


@dataclass(frozen=True, slots=True, kw_only=True)
class ControlMessage:
    """A plain-text control message of Ditto's WebSocket binding, e.g. ``START-SEND-EVENTS?namespaces=tck``."""

    name: str
    query: str | None = None

    def __str__(self) -> str:
        return self.name if self.query is None else f"{self.name}?{self.query}"


def decode_websocket_text(text: str, limits: DittoLimits = DEFAULT_LIMITS) -> Decoded | ControlMessage:
    """One WebSocket text message: a control message, or one Ditto Protocol message (``decode_message``)."""
    if len(text) <= limits.max_message:
        control = _CONTROL.fullmatch(text)
        if control is not None:
            return ControlMessage(name=control["name"], query=control["query"])
    return decode_message(text, limits)


def encode_websocket_text(message: Decoded | ControlMessage) -> str:
    """One WebSocket text message."""
    if isinstance(message, ControlMessage):
        return str(message)
    return encode_message(message)
