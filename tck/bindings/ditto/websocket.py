"""Ditto over WebSocket: one Ditto Protocol envelope per text message (Ditto's ``/ws/2``).

The binding's decoder stays the TCP one (JSON lines, ``framing.LineDecoder``):
``incoming`` turns one text message into one line, every raw LF replaced by CR
(both are JSON whitespace outside strings and both illegal raw inside them, so the
message stays valid exactly when it was), then one LF; ``outgoing`` sends each
complete line of the encoder's stream as one text message, without its LF.  A
binary message breaks DITTO-WS-1.  ``max_message`` is one byte over the codec's
limit, so a message just over it is judged by the codec (DITTO-LINE-1) and only a
larger one fails the WebSocket (close 1009) before its payload is read.
"""

from __future__ import annotations

from .codec import DEFAULT_LIMITS, DittoLimits


class DittoFraming:
    message_type = "text"
    rule: str | None = "DITTO-WS-1"
    size_rule: str | None = "DITTO-LINE-1"  # a text message is one line: over the receiver's maximum

    def __init__(self, limits: DittoLimits | None = None) -> None:
        self.max_message = (limits or DEFAULT_LIMITS).max_message + 1
        self._line = bytearray()

    def incoming(self, message: bytes | str) -> bytes:
        data = message.encode("utf-8", "surrogatepass") if isinstance(message, str) else message
        return data.replace(b"\n", b"\r") + b"\n"

    def outgoing(self, data: bytes) -> list[bytes | str]:
        line = self._line
        line += data
        *complete, rest = bytes(line).split(b"\n")
        line[:] = rest
        return list(complete)


def websocket_framing(profile: str, limits: DittoLimits | None = None) -> DittoFraming:
    """The ``websocket_framing`` hook of the Ditto binding (both profiles frame alike)."""
    return DittoFraming(limits if isinstance(limits, DittoLimits) else None)
