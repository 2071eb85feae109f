"""The ndjson wire: messages, the line codec, and the judge of one connection (sans-IO).

A message is one JSON object on one line (``\\n``-terminated, UTF-8)::

    {"op": "subscribe", "id": 1, "publisher": "tck/range?count=3", "n": 3}    subscriber
    {"op": "request", "id": 1, "n": 2}                                          subscriber
    {"op": "cancel", "id": 1}                                                   subscriber
    {"op": "next", "id": 1, "value": 0}                                         publisher
    {"op": "complete", "id": 1}                                                 publisher
    {"op": "error", "id": 1, "message": "boom"}                                 publisher

``id`` is the subscriber's number for the subscription (an integer), ``n`` a demand (an integer;
2^63-1 or more is unbounded), ``value`` an element (any JSON value; the test publishers send
integers).  A line that is not such an object breaks NDJ-LINE-1.  The judge (``NdjsonJudge``)
keeps one record per id and reports every broken rule; it holds no clock.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from rsio_tck.binding import Found, Keep
from rsio_tck.errors import ProtocolViolation, Side

UNBOUNDED = 2**63 - 1
MAX_LINE = 1 << 20  # bytes of one line, the receiver's limit
# op -> (the side that sends it, its fields besides op and id, each with its JSON type)
OPS: dict[str, tuple[Side, dict[str, type | tuple[type, ...]]]] = {
    "subscribe": (Side.CLIENT, {"publisher": str, "n": int}),
    "request": (Side.CLIENT, {"n": int}),
    "cancel": (Side.CLIENT, {}),
    "next": (Side.SERVER, {"value": (int, float, str, bool, list, dict, type(None))}),
    "complete": (Side.SERVER, {}),
    "error": (Side.SERVER, {"message": str}),
}


@dataclass(frozen=True, slots=True)
class Message:
    op: str
    id: int
    publisher: str | None = None  # subscribe
    n: int | None = None  # subscribe (initial demand), request
    value: Any = None  # next
    message: str | None = None  # error

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"op": self.op, "id": self.id}
        for name in OPS[self.op][1]:
            out[name] = getattr(self, name)
        return out


def line_violation(text: str, side: Side | None = None) -> ProtocolViolation:
    return ProtocolViolation(rule="NDJ-LINE-1", side=side, message=text)


def decode_line(line: bytes) -> Message:
    """One line (without its ``\\n``) as a message; ProtocolViolation NDJ-LINE-1 if it is not one."""
    try:
        value = json.loads(line)
    except ValueError:
        raise line_violation(f"a line that is not JSON: {line[:60]!r}") from None
    if not isinstance(value, dict) or value.get("op") not in OPS:
        raise line_violation(f"a line that is no message of a known op: {line[:60]!r}")
    op = value["op"]
    if not isinstance(value.get("id"), int) or isinstance(value.get("id"), bool):
        raise line_violation(f"{op} without an integer id")
    fields: dict[str, Any] = {}
    for name, kind in OPS[op][1].items():
        field = value.get(name)
        if name not in value or not isinstance(field, kind) or (kind is int and isinstance(field, bool)):
            raise line_violation(f"{op} whose {name!r} is missing or of the wrong type")
        fields[name] = field
    return Message(op=op, id=value["id"], **fields)


class LineDecoder:
    """Incremental: bytes in any chunking, whole messages out."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self.salvaged: list[Any] = []
        self._dead: ProtocolViolation | None = None

    @property
    def held(self) -> int:
        return len(self._buffer)

    def feed(self, data: bytes) -> list[Any]:
        if self._dead is not None:
            raise self._dead.again()
        self._buffer += data
        out: list[Any] = []
        while (end := self._buffer.find(b"\n")) >= 0:
            line = bytes(self._buffer[:end])
            del self._buffer[:end + 1]
            try:
                out.append(decode_line(line))
            except ProtocolViolation as exc:
                self.salvaged, self._dead = out, exc.again()
                raise
        if len(self._buffer) > MAX_LINE:
            self.salvaged, self._dead = out, line_violation(f"a line longer than {MAX_LINE} bytes")
            raise self._dead.again()
        return out

    def eof(self) -> None:
        if self._buffer and self._dead is None:
            raise line_violation(f"the stream ended inside a line ({len(self._buffer)} bytes)")


class LineEncoder:
    def encode(self, message: Any) -> bytes:
        return json.dumps(message.to_json(), separators=(",", ":")).encode("utf-8") + b"\n"


def add_demand(demand: int, n: int) -> int:
    return min(demand + n, UNBOUNDED)


@dataclass
class Stream:
    """The judge's record of one id: what the subscriber granted and what the publisher sent."""

    publisher: str
    demand: int
    delivered: int = 0
    cancelled: bool = False
    ended: bool = False


class NdjsonJudge:
    """Both sides of one connection, judged line by line (``rsio_tck.binding.ConnectionJudge``)."""

    held = 0  # lines are whole when the decoder gives them: nothing is kept here

    def __init__(self, keep: Keep | None = None) -> None:
        self.model: dict[int, Stream] = {}
        self.keep = keep

    def let_go(self, side: Side) -> None:
        pass

    def judge(self, sender: Side, frames: Iterable[Any], t: float, index: int, found: Found) -> int:
        for frame in frames:
            if self.keep is not None:
                self.keep(index, sender, t, frame)
            for violation in self._apply(sender, frame):
                found(violation, index, frame)
            index += 1
        return index

    def _apply(self, sender: Side, message: Message) -> list[ProtocolViolation]:
        if OPS[message.op][0] is not sender:
            return [line_violation(f"the {sender} sent {message.op}, which only its peer sends", sender)]
        stream = self.model.get(message.id)
        live = stream is not None and not stream.cancelled and not stream.ended
        if message.op == "subscribe":
            if live:
                return [ProtocolViolation(rule="NDJ-SUB-5", side=sender,
                                          message=f"subscribe with id {message.id}, which is live")]
            self.model[message.id] = Stream(str(message.publisher), add_demand(0, max(int(message.n or 0), 0)))
            return []
        if message.op in ("request", "cancel"):
            if stream is not None and live:
                if message.op == "cancel":
                    stream.cancelled = True
                elif (message.n or 0) > 0:
                    stream.demand = add_demand(stream.demand, int(message.n or 0))
            return []
        if stream is None:
            return [ProtocolViolation(rule="NDJ-SUB-1", side=sender,
                                      message=f"{message.op} for id {message.id}, which was never subscribed")]
        if stream.ended:
            return [ProtocolViolation(rule="NDJ-SUB-2", side=sender,
                                      message=f"{message.op} for id {message.id} after its terminal signal")]
        if message.op == "next":
            stream.delivered += 1
            if stream.demand != UNBOUNDED and stream.delivered > stream.demand:
                return [ProtocolViolation(rule="NDJ-DEM-1", side=sender,
                                          message=f"next #{stream.delivered} for id {message.id} with demand "
                                                  f"{stream.demand}")]
            return []
        stream.ended = True
        return []

    def wire_error(self, sender: Side, violation: ProtocolViolation) -> ProtocolViolation | None:
        return violation.with_side(sender)

    def close(self, side: Side) -> list[ProtocolViolation]:
        return []
