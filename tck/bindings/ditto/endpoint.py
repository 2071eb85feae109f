"""Ditto's sans-IO endpoint: one connection for one role, over the TCP line framing.

Theory of operation.  ``send`` judges a message with the Ditto judge as its sender
would (raising ``ProtocolViolation`` when ``check``), encodes it as one line and
queues it; ``send_raw`` queues bytes unjudged (faults).  ``receive_data`` decodes
lines (any chunking), judges them as the peer's, and returns the messages.  When
the peer breaks a rule the endpoint queues the binding's close (SPEC.md, decision
DITTO-f: one error envelope ``_/_/things/twin/errors`` with status 400 naming the
rule and the offending message's correlation-id), returns a ``ProtocolError``
event, and stops accepting input; the caller then closes the transport.
``receive_message`` takes one WebSocket message: text is decoded as one message,
binary is DITTO-WS-1.
"""

from __future__ import annotations

from typing import Any

from ...errors import ProtocolViolation, Side
from ...protocol.events import ConnectionClosed, ConnectionState, ProtocolError
from .codec import DEFAULT_LIMITS, DittoLimits
from .framing import LineDecoder, encode_line
from .judge import DittoJudge
from .messages import Envelope
from .topic import parse_topic

ERROR_TOPIC = "_/_/things/twin/errors"
VIOLATION_CODE = "ditto:protocol.violation"


def error_envelope(violation: ProtocolViolation, correlation_id: Any = None) -> Envelope:
    """The error response the endpoint sends for a peer's violation (decision DITTO-f)."""
    headers = {"correlation-id": correlation_id} if isinstance(correlation_id, str) else {}
    return Envelope(topic=parse_topic(ERROR_TOPIC), headers=headers, path="/", status=400,
                    value={"status": 400, "error": VIOLATION_CODE, "message": f"{violation.rule}: {violation.message}"})


class Endpoint:
    def __init__(self, role: Side, profile: str = "streaming", limits: DittoLimits | None = None, *,
                 contract: bool = False) -> None:
        self.role = role
        self.peer = Side.SERVER if role is Side.CLIENT else Side.CLIENT
        self.profile = profile
        self.limits = limits if isinstance(limits, DittoLimits) else DEFAULT_LIMITS
        self.judge = DittoJudge(profile, self.limits, contract=contract)
        self.decoder = LineDecoder(self.limits)
        self.state = ConnectionState.OPEN
        self.error: ProtocolViolation | None = None
        self._out = bytearray()
        self._index = 0

    def send(self, message: Any, *, check: bool = True) -> None:
        found: list[ProtocolViolation] = []
        self._index = self.judge.judge(self.role, [message], 0.0, self._index, lambda v, i, f: found.append(v))
        if check and found:
            raise found[0]
        raw = getattr(message, "raw_text", None)  # the scenario adapter's raw lines (faults)
        self._out += raw.encode("utf-8") + b"\n" if raw is not None else encode_line(message)

    def send_raw(self, data: bytes) -> None:
        self._out += data

    def data_to_send(self) -> bytes:
        out, self._out = bytes(self._out), bytearray()
        return out

    def receive_data(self, data: bytes) -> list[Any]:
        if self.state is not ConnectionState.OPEN:
            return []
        try:
            messages = self.decoder.feed(data)
        except ProtocolViolation as exc:
            events: list[Any] = self._judged(self.decoder.salvaged)
            if self.state is ConnectionState.OPEN:
                events.append(self._fail(self.judge.wire_error(self.peer, exc) or exc, None))
            return events
        return self._judged(messages)

    def receive_message(self, message: bytes | str) -> list[Any]:
        """One WebSocket message: text is one Ditto Protocol message; binary breaks DITTO-WS-1."""
        if isinstance(message, (bytes, bytearray)):
            return [self._fail(ProtocolViolation(rule="DITTO-WS-1", side=self.peer,
                                                 message=f"{self.peer}: a binary WebSocket message "
                                                 f"({len(message)} bytes); Ditto messages are text"), None)]
        return self.receive_data(message.replace("\n", "\r").encode("utf-8") + b"\n")

    def receive_eof(self) -> list[Any]:
        events: list[Any] = []
        if self.state is ConnectionState.OPEN:
            try:
                self.decoder.eof()
            except ProtocolViolation as exc:
                events.append(self._fail(exc, None))
        broken = self.judge.close(self.peer)
        if broken and self.error is None:
            self.error = broken[0]
        self.state = ConnectionState.CLOSED
        events.append(ConnectionClosed(orderly=self.error is None, reason="peer closed"))
        return events

    def _judged(self, messages: list[Any]) -> list[Any]:
        events: list[Any] = []
        for message in messages:
            found: list[ProtocolViolation] = []

            def collect(violation: ProtocolViolation, index: int | None, frame: Any,
                        found: list[ProtocolViolation] = found) -> None:
                found.append(violation)

            self._index = self.judge.judge(self.peer, [message], 0.0, self._index, collect)
            events.append(message)
            if found:
                events.append(self._fail(found[0], getattr(message, "correlation_id", None)))
                break
        return events

    def _fail(self, violation: ProtocolViolation, correlation_id: Any) -> ProtocolError:
        self.error = violation
        self._out += encode_line(error_envelope(violation, correlation_id))
        self.state = ConnectionState.CLOSING
        return ProtocolError(violation=violation)
