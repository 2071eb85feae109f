"""Eclipse Ditto (sans-IO): the wire layer, the judge, the endpoint, the scenario adapter, and ``BINDING``.

Seed 003 and bindings.md §3: Reactive Streams signals carried as Ditto Protocol
JSON messages.  Two profiles: ``streaming`` (``subscribeForPersistedEvents``
and its events, one item per ``next``) and ``search`` (``search/subscribe``,
one page of ``items`` per ``next``).

Theory of operation, from the wire up.  ``decode_message`` reads one JSON text
into a message of ``messages`` (or the generic ``Envelope`` for other topics),
checking the topic (``topic``) and the value against Ditto's own JSON Schemas
(``schemas``); ``encode_message`` writes one back.  ``framing`` gives the two
framings: one message per line on TCP (``LineDecoder``, ``encode_line``) and
one per WebSocket text message (``decode_websocket_text``).  ``signals`` maps a
message onto the contract's signals; ``judge`` holds one connection's
subscriptions in the contract's stream table (``rsio_tck.semantics``) and judges
both sides; ``endpoint`` speaks one role, every message judged by its own
judge (it keeps no subscription state); ``adapter`` turns scenario steps into messages.  Violations name the
rule IDs of ``rules`` (the Ditto part of ``rsio_tck.catalogue``); DECISIONS.md
records what the kit decided where Ditto's pages are silent."""

from __future__ import annotations

from .binding import BINDING
from .codec import DEFAULT_LIMITS, DittoLimits, decode_envelope, decode_message, encode_message, to_json_object
from .framing import ControlMessage, LineDecoder, decode_websocket_text, encode_line, encode_websocket_text
from .messages import (
    MESSAGE_CLASSES,
    MISSING,
    SEARCH_TARGET,
    Decoded,
    Envelope,
    ErrorInfo,
    Message,
    SearchCancel,
    SearchComplete,
    SearchCreated,
    SearchFailed,
    SearchMessage,
    SearchNext,
    SearchRequest,
    SearchSubscribe,
    StreamingCancel,
    StreamingComplete,
    StreamingCreated,
    StreamingFailed,
    StreamingMessage,
    StreamingNext,
    StreamingRequest,
    SubscribeForPersistedEvents,
    Target,
    header,
)
from .topic import SEARCH_ACTIONS, STREAMING_ACTIONS, Topic, parse_topic

PROFILE_NAMES = ("streaming", "search")

# Error codes the kit sends and expects in ``failed`` (as Ditto 3.8.0 writes them; see DECISIONS.md).
STREAMING_PROTOCOL_ERROR = "streaming.subscription.protocol.error"
SEARCH_PROTOCOL_ERROR = "thing-search:subscription.protocol.error"

__all__ = [
    "BINDING",
    "DEFAULT_LIMITS",
    "MESSAGE_CLASSES",
    "MISSING",
    "PROFILE_NAMES",
    "SEARCH_ACTIONS",
    "SEARCH_PROTOCOL_ERROR",
    "SEARCH_TARGET",
    "STREAMING_ACTIONS",
    "STREAMING_PROTOCOL_ERROR",
    "ControlMessage",
    "Decoded",
    "DittoLimits",
    "Envelope",
    "ErrorInfo",
    "LineDecoder",
    "Message",
    "SearchCancel",
    "SearchComplete",
    "SearchCreated",
    "SearchFailed",
    "SearchMessage",
    "SearchNext",
    "SearchRequest",
    "SearchSubscribe",
    "StreamingCancel",
    "StreamingComplete",
    "StreamingCreated",
    "StreamingFailed",
    "StreamingMessage",
    "StreamingNext",
    "StreamingRequest",
    "SubscribeForPersistedEvents",
    "Target",
    "Topic",
    "decode_envelope",
    "decode_message",
    "decode_websocket_text",
    "encode_line",
    "encode_message",
    "encode_websocket_text",
    "header",
    "parse_topic",
    "to_json_object",
]
