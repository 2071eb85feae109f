"""RSocket over WebSocket: one frame per binary message, with no length prefix (RSocket Protocol.md,
"Framing": a message-oriented transport carries the frame length itself).

The binding's decoder stays the TCP one: ``incoming`` puts back the length prefix the
transport left out, ``outgoing`` takes it off each complete frame of the stream the
encoder wrote (a partial frame waits for the rest).  A prefix the profile refuses
(the draft's length below its header) cannot be split: the rest of the stream goes
out as one message, as it was written (the kit's faults send such bytes on purpose).
"""

from __future__ import annotations

from typing import Any

from ...errors import ProtocolViolation
from .codec import RSocketLimits


class RSocketFraming:
    message_type = "binary"
    rule: str | None = None  # RSocket names no rule for a text message; the connection fails (close 1003)
    size_rule: str | None = "RS-FRAME-2"  # a message is one frame: over the receiver's configured maximum

    def __init__(self, profile: Any, limits: RSocketLimits | None = None) -> None:
        self.profile = profile
        self.max_message = (limits or RSocketLimits()).max_frame
        self._buffer = bytearray()

    def incoming(self, message: bytes | str) -> bytes:
        data = message if isinstance(message, bytes) else message.encode()
        return self.profile.build_prefix(len(data)) + data  # type: ignore[no-any-return]

    def outgoing(self, data: bytes) -> list[bytes | str]:
        buffer, prefix = self._buffer, self.profile.prefix_size
        buffer += data
        out: list[bytes | str] = []
        start = 0
        while len(buffer) - start >= prefix:
            try:
                size = self.profile.frame_size(buffer[start : start + prefix], None)
            except ProtocolViolation:
                out.append(bytes(buffer[start:]))
                start = len(buffer)
                break
            if len(buffer) - start - prefix < size:
                break
            out.append(bytes(buffer[start + prefix : start + prefix + size]))
            start += prefix + size
        del buffer[:start]
        return out
