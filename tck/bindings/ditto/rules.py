"""Provisional rule IDs of the Ditto wire layer, in one table.

These are not in SPEC.md yet: a later change moves them into the catalogue
(tck/rules.py, checked against SPEC.md) with the rest of the Ditto rules.
Until then every ``ProtocolViolation`` the Ditto codec raises names one of these
IDs.  ``source`` is the Ditto documentation page and section (or JSON Schema)
the rule comes from; rules marked "kit" are the kit's own framing and resource
limits, not Ditto's.  The rules about *who may send what when* (``created``
always comes, no ``complete`` before the first ``request``, demand > 0, ...)
are judged above the codec and are not here.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class Rule:
    title: str
    source: str


_SPEC = "protocol-specification.md"
_TOPIC = "protocol-specification-topic.md"
_STREAMING = "protocol-specification-streaming-subscription.md"
_SEARCH = "protocol-specification-things-search.md"

RULES: dict[str, Rule] = {
    # -- the envelope -------------------------------------------------------------------
    "DITTO-ENV-1": Rule(
        title="a Ditto Protocol message is one JSON text in UTF-8",
        source=f"{_SPEC}, Ditto Protocol envelope (the envelope is JSON); httpapi-protocol-bindings-websocket.md, "
        "WebSocket protocol format",
    ),
    "DITTO-ENV-2": Rule(
        title="a Ditto Protocol message is a JSON object",
        source=f"{_SPEC}, Ditto Protocol envelope; httpapi-protocol-bindings-websocket.md, WebSocket protocol format",
    ),
    "DITTO-ENV-3": Rule(
        title="the envelope has a topic, a string",
        source=f"{_SPEC}, Topic (every message contains a topic); {_TOPIC}, Overview",
    ),
    "DITTO-ENV-4": Rule(
        title="headers, when present, is a JSON object",
        source=f"{_SPEC}, Headers",
    ),
    "DITTO-ENV-5": Rule(
        title="path, when present, is a string holding a JSON Pointer",
        source=f"{_SPEC}, Path",
    ),
    "DITTO-ENV-6": Rule(
        title="status, when present, is an integer HTTP status code (100 to 599)",
        source=f"{_SPEC}, Status; protocol-specification-errors.md, Error response format",
    ),
    "DITTO-ENV-7": Rule(
        title="a streaming-subscription or search message has a value",
        source=f"{_STREAMING} and {_SEARCH}, the field table of each command and event (value)",
    ),
    "DITTO-ENV-8": Rule(
        title="a streaming-subscription or search message has the path /",
        source=f"{_STREAMING} and {_SEARCH}, the field table of each command and event (path)",
    ),
    "DITTO-ENV-9": Rule(
        title="fields, when present, is a string (a comma-separated list of Thing fields)",
        source=f"{_SEARCH}, Subscribe (fields)",
    ),
    # -- headers --------------------------------------------------------------------------
    "DITTO-HDR-1": Rule(
        title="no two header names differ only in capitalisation",
        source=f"{_SPEC}, Headers (header names are case-insensitive; two such names are undefined behaviour)",
    ),
    "DITTO-HDR-2": Rule(
        title="the correlation-id header, when present, is a string",
        source=f"{_SPEC}, Headers, Pre-defined headers (correlation-id: String)",
    ),
    # -- the topic --------------------------------------------------------------------------
    "DITTO-TOPIC-1": Rule(
        title="a topic has a namespace, an entity name, a group and a criterion, none of them empty",
        source=f"{_TOPIC}, Overview (the topic path structure)",
    ),
    "DITTO-TOPIC-2": Rule(
        title="the group of a topic is things, policies or connections",
        source=f"{_TOPIC}, Group",
    ),
    "DITTO-TOPIC-3": Rule(
        title="a things topic has the channel twin or live; a policies or connections topic has no channel",
        source=f"{_TOPIC}, Channel (Twin, Live, No channel)",
    ),
    "DITTO-TOPIC-4": Rule(
        title="the criterion of a topic is one Ditto defines",
        source=f"{_TOPIC}, Criterion; {_STREAMING}, Signal mapping (the streaming criterion)",
    ),
    "DITTO-TOPIC-5": Rule(
        title="the action of a topic is one its criterion allows (present where the criterion needs one)",
        source=f"{_TOPIC}, Action; {_STREAMING} and {_SEARCH}, Signal mapping",
    ),
    "DITTO-TOPIC-6": Rule(
        title="search topics use the twin channel of the things group",
        source=f"{_TOPIC}, Twin channel and Search criterion; {_SEARCH}, Signal mapping",
    ),
    "DITTO-TOPIC-7": Rule(
        title="streaming topics address a Thing (twin channel) or a Policy",
        source=f"{_STREAMING}, Overview and Signal mapping; {_TOPIC}, Channel",
    ),
    # -- streaming-subscription payloads (one rule per JSON Schema) ---------------------
    "DITTO-STREAM-1": Rule(
        title="the value of subscribeForPersistedEvents conforms to its JSON Schema",
        source=f"{_STREAMING}, Subscribe for persisted events; "
        "protocol-streaming-subscription-subscribe-for-persisted-events-payload.json",
    ),
    "DITTO-STREAM-2": Rule(
        title="the value of a streaming request conforms to its JSON Schema, with an integer demand",
        source=f"{_STREAMING}, Request; protocol-streaming-subscription-request-payload.json "
        "(demand: must be a positive integer)",
    ),
    "DITTO-STREAM-3": Rule(
        title="the value of a streaming cancel, created or complete names the subscription (its JSON Schema)",
        source=f"{_STREAMING}, Cancel, Created, Complete; protocol-streaming-subscriptionid.json",
    ),
    "DITTO-STREAM-4": Rule(
        title="the value of a streaming next carries one item (its JSON Schema)",
        source=f"{_STREAMING}, Next; protocol-streaming-subscription-next-payload.json",
    ),
    "DITTO-STREAM-5": Rule(
        title="the value of a streaming failed carries the error (its JSON Schema)",
        source=f"{_STREAMING}, Failed; protocol-streaming-subscription-failed-payload.json",
    ),
    # -- search payloads ----------------------------------------------------------------------
    "DITTO-SEARCH-1": Rule(
        title="the value of search subscribe conforms to its JSON Schema",
        source=f"{_SEARCH}, Subscribe; protocol-search-subscribe-payload.json",
    ),
    "DITTO-SEARCH-2": Rule(
        title="the value of a search request conforms to its JSON Schema, with an integer demand",
        source=f"{_SEARCH}, Request; protocol-search-request-payload.json (demand: must be a positive integer)",
    ),
    "DITTO-SEARCH-3": Rule(
        title="the value of a search cancel, created or complete names the subscription (its JSON Schema)",
        source=f"{_SEARCH}, Cancel, Created, Complete; protocol-search-subscriptionid.json",
    ),
    "DITTO-SEARCH-4": Rule(
        title="the value of a search next carries a page of items (its JSON Schema)",
        source=f"{_SEARCH}, Next; protocol-search-next-payload.json",
    ),
    "DITTO-SEARCH-5": Rule(
        title="the value of a search failed carries the error (its JSON Schema)",
        source=f"{_SEARCH}, Failed; protocol-search-failed-payload.json",
    ),
    # -- the kit's framings ------------------------------------------------------------------
    "DITTO-LINE-1": Rule(
        title="kit: a message (a TCP line or a WebSocket text message) is no longer than the receiver's maximum",
        source="kit (bindings.md §3: one JSON envelope per line on TCP, one per text message on WebSocket)",
    ),
    "DITTO-LINE-2": Rule(
        title="kit: the TCP stream does not end inside a line",
        source="kit (bindings.md §3: one JSON envelope per line, each ended by a newline)",
    ),
}


def rule_title(rule: str) -> str:
    """``"DITTO-ENV-1: a Ditto Protocol message is ..."`` for messages and reports."""
    return f"{rule}: {RULES[rule].title}"
