"""What a WebSocket message carries per binding: the ``websocket_framing`` hook and its errors.

A binding's hook ``websocket_framing(profile)`` returns an object with:

- ``message_type``: ``"binary"`` or ``"text"``: the only type the binding's messages may have;
- ``max_message``: bytes of one message accepted at most (checked by the WebSocket parser
  on the frame header, before the payload is read: RFC 6455 close 1009 beyond it);
- ``rule``: the binding's rule broken by a message of the other type (None: no rule of
  its own; the connection still fails, close 1003);
- ``incoming(message) -> bytes``: one received message as the bytes the binding's decoder
  reads on TCP;
- ``outgoing(data) -> list[bytes | str]``: the binding's TCP byte stream as messages
  (a partial frame is kept until it is complete);
- ``stream`` (optional, default False): message boundaries mean nothing, so the receiver hands on
  each data frame's bytes as they arrive, without joining a fragmented message first.

``StreamFraming`` is the plain byte-stream framing (RS-IO's).
"""

from __future__ import annotations

from typing import Any, Protocol

from ..binding import get_binding
from ..errors import ProtocolViolation

MESSAGE_MAX = 64 * 1024  # bytes of one outgoing message of a byte-stream framing
DEFAULT_MAX_MESSAGE = 16 * 1024 * 1024


class Framing(Protocol):
    message_type: str
    max_message: int
    rule: str | None  # the binding's rule a message of the wrong type breaks (None: it names none)
    # The binding's rule a message over ``max_message`` breaks (the receiver's maximum: RSocket's RS-FRAME-2, Ditto's
    # DITTO-LINE-1).  None: ``max_message`` is the kit's own limit (RS-IO, whose message boundaries mean nothing).
    size_rule: str | None

    def incoming(self, message: bytes | str) -> bytes: ...

    def outgoing(self, data: bytes) -> list[bytes | str]: ...


class WebSocketError(Exception):
    """A WebSocket connection that failed: one line, the RFC 6455 close code sent (if any), and the
    binding's rule when one was broken (``violation``)."""

    def __init__(self, message: str, close_code: int | None = None,
                 violation: ProtocolViolation | None = None, *, kit_limit: bool = False) -> None:
        super().__init__(message)
        self.close_code = close_code
        self.violation = violation
        # The kit closed at a limit of its own that no spec sets (a ping flood, a message in too many frames):
        # what the peer did then breaks no rule, and what it could not do after the close is not charged.
        self.kit_limit = kit_limit

    def __str__(self) -> str:
        code = f" (close {self.close_code})" if self.close_code else ""
        return f"{self.args[0]}{code}"


class StreamFraming:
    """A byte stream in binary messages whose boundaries mean nothing (RS-IO): each write is one
    message (at most ``MESSAGE_MAX`` bytes), received messages are concatenated."""

    message_type = "binary"
    rule: str | None = None
    size_rule: str | None = None  # a message is no unit of RS-IO: its size breaks nothing, so the limit is the kit's
    stream = True  # a fragment's bytes are the stream's at once: a message need not be whole to be read

    def __init__(self, max_message: int = DEFAULT_MAX_MESSAGE) -> None:
        self.max_message = max_message

    def incoming(self, message: bytes | str) -> bytes:
        return message if isinstance(message, bytes) else message.encode()

    def outgoing(self, data: bytes) -> list[bytes | str]:
        return [data[i : i + MESSAGE_MAX] for i in range(0, len(data), MESSAGE_MAX)]


def framing_for(binding: Any, profile: str | None = None, limits: Any = None) -> Framing:
    """The binding's framing for ``profile`` (its default when None), its largest message the one ``limits`` allow
    (None: the binding's defaults); ValueError (one line) when the binding has no WebSocket framing."""
    if isinstance(binding, str):
        binding = get_binding(binding)
    hook = getattr(binding, "websocket_framing", None)
    if hook is None:
        raise ValueError(f"binding {binding.name!r} has no WebSocket framing (websocket_framing)")
    framing: Framing = hook(profile or binding.profiles[0], limits)
    return framing
