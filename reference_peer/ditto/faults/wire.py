"""Ditto faults of the wire: the envelope (DITTO-ENV), headers (DITTO-HDR), the topic (DITTO-TOPIC), the
payload schemas (DITTO-STREAM, DITTO-SEARCH) and the line framing (DITTO-LINE).

Each one rewrites the first message of one kind on the connection (a ``created``
unless said otherwise) on its way out: the JSON object the codec wrote is
changed, or the bytes replaced, in the ``encode`` hook.  The session and the
codec stay correct; only the bytes differ.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rsio_tck.bindings.ditto import Decoded, Envelope, to_json_object
from rsio_tck.bindings.ditto.codec import DEFAULT_MAX_MESSAGE

from ..policy import Policy
from .declare import Base, fault, first_on_connection

if TYPE_CHECKING:
    from ..connection import DittoConnection

Mutate = Callable[[dict[str, Any]], Any]  # the new JSON object, or bytes to send as they are (no newline added)


def wire(name: str, rule: str, description: str, mutate: Mutate, *, action: str = "created",
         profile: str | None = None) -> None:
    """A fault rewriting the first ``action`` message (of ``profile``, when given) on each connection."""
    declared = fault(name, rule, description, profiles=(profile,) if profile else ())

    @declared.on("encode")
    def _encode(p: Policy, base: Base, s: DittoConnection, message: Decoded) -> bytes:
        topic = message.topic
        if isinstance(message, Envelope) or topic.action != action or profile not in (None, topic.criterion) \
                or not first_on_connection(p, name):
            return bytes(base(s, message))
        changed = mutate(to_json_object(message))
        if isinstance(changed, bytes):
            return changed
        return json.dumps(changed, separators=(",", ":")).encode() + b"\n"


def _topic(change: Callable[[list[str]], list[str]]) -> Mutate:
    def mutate(obj: dict[str, Any]) -> dict[str, Any]:
        return {**obj, "topic": "/".join(change(obj["topic"].split("/")))}
    return mutate


def _value(change: Callable[[dict[str, Any]], dict[str, Any]]) -> Mutate:
    def mutate(obj: dict[str, Any]) -> dict[str, Any]:
        return {**obj, "value": change(dict(obj["value"]))}
    return mutate


def _without(key: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    return lambda value: {k: v for k, v in value.items() if k != key}


def _header_twice(obj: dict[str, Any]) -> dict[str, Any]:
    cid = obj["headers"].get("correlation-id", "x")
    return {**obj, "headers": {"correlation-id": cid, "Correlation-ID": cid}}


# -- the envelope (DITTO-ENV) -------------------------------------------------------------------------
wire("env-not-json", "DITTO-ENV-1", "created is cut short: not a JSON text",
     lambda obj: json.dumps(obj, separators=(",", ":")).encode()[:-1] + b"\n")
wire("env-not-utf8", "DITTO-ENV-1", "created carries a byte that is not UTF-8",
     lambda obj: json.dumps(obj, separators=(",", ":")).encode().replace(b'"topic"', b'"t\xffopic"', 1) + b"\n")
wire("env-array", "DITTO-ENV-2", "created is a JSON array holding the envelope", lambda obj: [obj])
wire("env-no-topic", "DITTO-ENV-3", "created has no topic", lambda obj: {k: v for k, v in obj.items() if k != "topic"})
wire("env-headers-array", "DITTO-ENV-4", "created's headers are an array",
     lambda obj: {**obj, "headers": [obj["headers"]]})
wire("env-path-not-pointer", "DITTO-ENV-5", "created's path is not a JSON Pointer", lambda obj: {**obj, "path": "~2x"})
wire("env-status-999", "DITTO-ENV-6", "created carries status 999", lambda obj: {**obj, "status": 999})
wire("env-no-value", "DITTO-ENV-7", "created has no value", lambda obj: {k: v for k, v in obj.items() if k != "value"})
wire("env-path-not-root", "DITTO-ENV-8", "created's path is /subscriptionId, not /",
     lambda obj: {**obj, "path": "/subscriptionId"})
wire("env-fields-number", "DITTO-ENV-9", "created carries fields as a number", lambda obj: {**obj, "fields": 1})
# -- headers (DITTO-HDR) -----------------------------------------------------------------------------------
wire("hdr-case-twice", "DITTO-HDR-1", "created names correlation-id twice in different case", _header_twice)
wire("hdr-correlation-id-number", "DITTO-HDR-2", "created's correlation-id is a number",
     lambda obj: {**obj, "headers": {**obj["headers"], "correlation-id": 42}})
# -- the topic (DITTO-TOPIC) ------------------------------------------------------------------------------
wire("topic-empty-name", "DITTO-TOPIC-1", "created's topic has an empty entity name",
     _topic(lambda parts: [parts[0], "", *parts[2:]]))
wire("topic-unknown-group", "DITTO-TOPIC-2", "created's topic has the group gadgets",
     _topic(lambda parts: [*parts[:2], "gadgets", *parts[3:]]))
wire("topic-no-channel", "DITTO-TOPIC-3", "created's things topic has no channel",
     _topic(lambda parts: [*parts[:3], *parts[4:]]))
wire("topic-unknown-criterion", "DITTO-TOPIC-4", "created's topic has the criterion streams",
     _topic(lambda parts: [*parts[:4], "streams", *parts[5:]]))
wire("topic-unknown-action", "DITTO-TOPIC-5", "created's topic has the action made",
     _topic(lambda parts: [*parts[:5], "made"]))
wire("topic-search-live", "DITTO-TOPIC-6", "search: created on the live channel",
     _topic(lambda parts: [*parts[:3], "live", *parts[4:]]), profile="search")
wire("topic-streaming-live", "DITTO-TOPIC-7", "streaming: created on the live channel",
     _topic(lambda parts: [*parts[:3], "live", *parts[4:]]), profile="streaming")
# -- payloads (DITTO-STREAM, DITTO-SEARCH) ---------------------------------------------------------------
wire("streaming-created-no-id", "DITTO-STREAM-3", "streaming: created's value has no subscriptionId",
     _value(_without("subscriptionId")), profile="streaming")
wire("streaming-next-no-item", "DITTO-STREAM-4", "streaming: the first next has no item",
     _value(_without("item")), action="next", profile="streaming")
wire("streaming-failed-error-text", "DITTO-STREAM-5", "streaming: failed carries its error as a string",
     _value(lambda value: {**value, "error": "failed"}), action="failed", profile="streaming")
wire("search-created-id-number", "DITTO-SEARCH-3", "search: created's subscriptionId is a number",
     _value(lambda value: {**value, "subscriptionId": 7}), profile="search")
wire("search-next-items-object", "DITTO-SEARCH-4", "search: the first next carries items as an object",
     _value(lambda value: {**value, "items": {"0": value["items"][0] if value["items"] else {}}}), action="next",
     profile="search")
wire("search-failed-no-error", "DITTO-SEARCH-5", "search: failed has no error",
     _value(_without("error")), action="failed", profile="search")

# -- the line framing (DITTO-LINE) -------------------------------------------------------------------------
long_line = fault("line-over-limit", "DITTO-LINE-1",
                  f"after the first created, a line of {DEFAULT_MAX_MESSAGE + 1} bytes (the kit's default limit + 1)")


@long_line.on("created")
def _long_line(p: Policy, base: Base, s: DittoConnection, sub: Any) -> None:
    base(s, sub)
    if first_on_connection(p, "long-line"):
        s.send_raw(b'{"topic":"' + b"x" * (DEFAULT_MAX_MESSAGE - 10) + b'"}\n')


cut = fault("line-cut-at-close", "DITTO-LINE-2",
            "the first complete or failed is cut in the middle of its line and the connection closes")


@cut.on("encode")
def _cut(p: Policy, base: Base, s: DittoConnection, message: Decoded) -> bytes:
    data: bytes = base(s, message)
    if message.topic.action in ("complete", "failed") and first_on_connection(p, "cut"):
        s.closing = "line-cut-at-close: the line is cut short on purpose"
        return data[: len(data) // 2]
    return data
