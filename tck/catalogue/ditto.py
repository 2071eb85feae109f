"""The Ditto binding's rules of the catalogue (``rsio_tck.catalogue`` assembles and checks it): SPEC.md's DITTO- areas."""

from __future__ import annotations

from .model import Level, Rule

# Ditto (binding "ditto"): Eclipse Ditto's protocol pages (../shared/references/ditto/) and bindings.md §3.
DITTO_AREAS: dict[str, str] = {
    "DITTO-ENV": "Ditto envelope",
    "DITTO-HDR": "Ditto headers",
    "DITTO-TOPIC": "Ditto topic",
    "DITTO-STREAM": "Ditto streaming-subscription payloads",
    "DITTO-SEARCH": "Ditto search payloads and pages",
    "DITTO-LINE": "Ditto TCP line framing",
    "DITTO-WS": "Ditto WebSocket framing",
    "DITTO-SUB": "Ditto subscriptions",
    "DITTO-DEM": "Ditto demand",
    "DITTO-CAN": "Ditto cancel",
    "DITTO-ERR": "Ditto errors",
    "DITTO-TCK": "Ditto test publishers",
}

M, S = Level.MUST, Level.SHOULD

# Sources are Ditto's pages in ../shared/references/ditto/ (page, section) and bindings.md §3.
_DP = "protocol-specification.md, "
_DT = "protocol-specification-topic.md, "
_DS = "protocol-specification-streaming-subscription.md, "
_DQ = "protocol-specification-things-search.md, "
_DE = "protocol-specification-errors.md, "
_DW = "httpapi-protocol-bindings-websocket.md, "
_BOTH = "Ditto streaming-subscription and search pages, "

DITTO_RULES: tuple[Rule, ...] = (
    # the envelope (judged by the codec, tck/bindings/ditto/codec.py)
    Rule(id="DITTO-ENV-1", level=M, binds="both", source=_DP + "Ditto Protocol envelope; " + _DW + "WebSocket protocol format",
         title="A Ditto Protocol message is one JSON text in UTF-8."),
    Rule(id="DITTO-ENV-2", level=M, binds="both", source=_DP + "Ditto Protocol envelope; " + _DW + "WebSocket protocol format",
         title="A Ditto Protocol message is a JSON object."),
    Rule(id="DITTO-ENV-3", level=M, binds="both", source=_DP + "Topic; " + _DT + "Overview",
         title="The envelope has a topic, a string."),
    Rule(id="DITTO-ENV-4", level=M, binds="both", source=_DP + "Headers",
         title="headers, when present, is a JSON object."),
    Rule(id="DITTO-ENV-5", level=M, binds="both", source=_DP + "Path",
         title="path, when present, is a string holding a JSON Pointer."),
    Rule(id="DITTO-ENV-6", level=M, binds="both", source=_DP + "Status; " + _DE + "Error response format",
         title="status, when present, is an integer HTTP status code (100 to 599)."),
    Rule(id="DITTO-ENV-7", level=M, binds="both", source=_BOTH + "the field table of each command and event (value)",
         title="A streaming-subscription or search message has a value."),
    Rule(id="DITTO-ENV-8", level=M, binds="both", source=_BOTH + "the field table of each command and event (path)",
         title="A streaming-subscription or search message has the path /."),
    Rule(id="DITTO-ENV-9", level=M, binds="both", source=_DQ + "Subscribe (fields)",
         title="fields, when present, is a string (a comma-separated list of Thing fields)."),
    # headers
    Rule(id="DITTO-HDR-1", level=M, binds="both", source=_DP + "Headers (names are case-insensitive)",
         title="No two header names differ only in capitalisation."),
    Rule(id="DITTO-HDR-2", level=M, binds="both", source=_DP + "Headers, Pre-defined headers (correlation-id: String)",
         title="The correlation-id header, when present, is a string."),
    # the topic
    Rule(id="DITTO-TOPIC-1", level=M, binds="both", source=_DT + "Overview (the topic path structure)",
         title="A topic has a namespace, an entity name, a group and a criterion, none of them empty."),
    Rule(id="DITTO-TOPIC-2", level=M, binds="both", source=_DT + "Group",
         title="The group of a topic is things, policies or connections."),
    Rule(id="DITTO-TOPIC-3", level=M, binds="both", source=_DT + "Channel (Twin, Live, No channel)",
         title="A things topic has the channel twin or live; a policies or connections topic has no channel."),
    Rule(id="DITTO-TOPIC-4", level=M, binds="both", source=_DT + "Criterion; " + _DS + "Signal mapping",
         title="The criterion of a topic is one Ditto defines."),
    Rule(id="DITTO-TOPIC-5", level=M, binds="both", source=_DT + "Action; " + _BOTH + "Signal mapping",
         title="The action of a topic is one its criterion allows (present where the criterion needs one)."),
    Rule(id="DITTO-TOPIC-6", level=M, binds="both", source=_DT + "Twin channel, Search criterion; " + _DQ + "Signal mapping",
         title="Search topics use the twin channel of the things group."),
    Rule(id="DITTO-TOPIC-7", level=M, binds="both", source=_DS + "Overview, Signal mapping; " + _DT + "Channel",
         title="Streaming topics address a Thing (twin channel) or a Policy."),
    # streaming payloads (one per JSON Schema)
    Rule(id="DITTO-STREAM-1", level=M, binds="both", source=_DS + "Subscribe for persisted events (its JSON Schema)",
         title="The value of subscribeForPersistedEvents conforms to its JSON Schema."),
    Rule(id="DITTO-STREAM-2", level=M, binds="both", source=_DS + "Request (its JSON Schema: demand is a positive integer)",
         title="The value of a streaming request conforms to its JSON Schema, with an integer demand."),
    Rule(id="DITTO-STREAM-3", level=M, binds="both", source=_DS + "Cancel, Created, Complete (protocol-streaming-subscriptionid.json)",
         title="The value of a streaming cancel, created or complete names the subscription (its JSON Schema)."),
    Rule(id="DITTO-STREAM-4", level=M, binds="both", source=_DS + "Next (its JSON Schema)",
         title="The value of a streaming next carries one item (its JSON Schema)."),
    Rule(id="DITTO-STREAM-5", level=M, binds="both", source=_DS + "Failed (its JSON Schema)",
         title="The value of a streaming failed carries the error (its JSON Schema)."),
    # search payloads and pages
    Rule(id="DITTO-SEARCH-1", level=M, binds="both", source=_DQ + "Subscribe (its JSON Schema)",
         title="The value of search subscribe conforms to its JSON Schema."),
    Rule(id="DITTO-SEARCH-2", level=M, binds="both", source=_DQ + "Request (its JSON Schema: demand is a positive integer)",
         title="The value of a search request conforms to its JSON Schema, with an integer demand."),
    Rule(id="DITTO-SEARCH-3", level=M, binds="both", source=_DQ + "Cancel, Created, Complete (protocol-search-subscriptionid.json)",
         title="The value of a search cancel, created or complete names the subscription (its JSON Schema)."),
    Rule(id="DITTO-SEARCH-4", level=M, binds="both", source=_DQ + "Next (its JSON Schema)",
         title="The value of a search next carries a page of items (its JSON Schema)."),
    Rule(id="DITTO-SEARCH-5", level=M, binds="both", source=_DQ + "Failed (its JSON Schema)",
         title="The value of a search failed carries the error (its JSON Schema)."),
    Rule(id="DITTO-SEARCH-6", level=M, binds="publisher", source=_DQ + "Subscribe (size: results per next, default 25, max 200), Next",
         title="A search next holds at least one and at most size(n) items (n of the subscribe's options; 25 without size); fewer than n is legal."),
    Rule(id="DITTO-SEARCH-7", level=M, binds="publisher", source=_DQ + "Subscribe (filter and options: 'the same semantics and defaults as other search APIs'; 'always responds with a created event'); " + _DE + "Overview (client mistakes), Error response format (HTTP-semantics status); bindings.md §3 (a valid filter that matches nothing)",
         title="A search whose filter is valid RQL but matches no thing completes after the first request, without a page; one whose filter is not RQL fails after the first request with a 4xx status, without a page."),
    # framings
    Rule(id="DITTO-LINE-1", level=M, binds="both", source="kit; bindings.md §3 (one JSON envelope per line on TCP, per text message on WebSocket)",
         title="A message (a TCP line or a WebSocket text message) is no longer than the receiver's maximum."),
    Rule(id="DITTO-LINE-2", level=M, binds="both", source="kit; bindings.md §3 (one JSON envelope per line, each ended by a newline)",
         title="The TCP stream does not end inside a line."),
    Rule(id="DITTO-WS-1", level=M, binds="both", source=_DW + "WebSocket protocol format (a message is one JSON object); DITTO.md (one envelope per text message)",
         title="Over WebSocket every Ditto Protocol message is one text message; a binary message is a violation."),
    # subscriptions (judged by tck/bindings/ditto/judge.py)
    Rule(id="DITTO-SUB-1", level=M, binds="publisher", source=_DS + "Interaction pattern (1); " + _DQ + "Interaction pattern, Subscribe ('always responds with a created event')",
         title="Every subscribe gets exactly one created, carrying the subscribe's correlation-id when it had one (decision DITTO-m)."),
    Rule(id="DITTO-SUB-2", level=M, binds="publisher", source=_DS + "Signal mapping ('a subscription ID links all messages of one streaming request'); " + _DQ + "Created",
         title="The subscriptionId of a created is not that of a subscription still live on the connection."),
    Rule(id="DITTO-SUB-3", level=M, binds="publisher", source=_DS + "Interaction pattern (created next* (complete | failed)?); " + _DQ + "Interaction pattern",
         title="No next, complete or failed names a subscriptionId before its created."),
    Rule(id="DITTO-SUB-4", level=M, binds="publisher", source=_DS + "Interaction pattern ('no complete or failed event arrives before your first request'); " + _DQ + "Interaction pattern",
         title="No complete or failed for a subscription before the subscriber's first request."),
    Rule(id="DITTO-SUB-5", level=M, binds="publisher", source=_DS + "Interaction pattern (created next* (complete | failed)?); RS 1.7",
         title="Nothing names a subscriptionId after its complete or failed."),
    Rule(id="DITTO-SUB-6", level=M, binds="publisher", source=_DS + "Signal mapping (the events' topics); " + _DQ + "Signal mapping",
         title="An event's topic addresses the subscription's entity (namespace, name, group, channel) and its profile (streaming or search)."),
    Rule(id="DITTO-SUB-7", level=M, binds="subscriber", source=_DS + "Interaction pattern (subscribe request* cancel?); bindings.md §3",
         title="request and cancel name only a subscriptionId announced by created."),
    Rule(id="DITTO-SUB-8", level=M, binds="subscriber", source=_DS + "Interaction pattern (subscribe request* cancel?); RS 3.5",
         title="Nothing names a subscriptionId after the subscriber's own cancel (after complete or failed, a request or cancel is tolerated: decision DITTO-j)."),
    Rule(id="DITTO-SUB-9", level=M, binds="publisher", source="RS 3.6, 3.7; " + _DS + "Request, Cancel; SPEC.md Ditto decision DITTO-e",
         title="A request or cancel for a subscriptionId not live on the connection gets no event, or one failed naming it; the connection and other subscriptions carry on."),
    # demand
    Rule(id="DITTO-DEM-1", level=M, binds="publisher", source=_DS + "Request; " + _DQ + "Request (demand counts pages); RS 1.1",
         title="next events never exceed the cumulative demand of the subscription (search: pages, not items)."),
    Rule(id="DITTO-DEM-2", level=M, binds="publisher", source="RS 3.9; bindings.md §3; SPEC.md Ditto decision DITTO-c",
         title="A request with demand <= 0 is answered by failed with the subscription protocol error (status 400)."),
    Rule(id="DITTO-DEM-3", level=M, binds="subscriber", source=_DS + "Request (protocol-streaming-subscription-request-payload.json: 'a positive integer'); " + _DQ + "Request",
         title="The demand of a request is greater than 0."),
    Rule(id="DITTO-DEM-4", level=M, binds="publisher", source="RS 3.17; " + _DS + "Request",
         title="Demand is cumulative; a total beyond 2^63-1 counts as unbounded and is not an error."),
    # cancel
    Rule(id="DITTO-CAN-1", level=M, binds="publisher", source=_DS + "Interaction pattern ('after sending cancel, you may still receive buffered next, complete, or failed events'); RS 3.12",
         title="After cancel, events still arriving stay within the demand granted before the cancel, and the publisher stops."),
    # errors
    Rule(id="DITTO-ERR-1", level=M, binds="publisher", source=_DE + "Error response format; " + _DS + "Failed",
         title="A failed carries an error with an integer status that is an HTTP error status (400 to 599) and a string error code."),
    # test publishers (bindings.md §3)
    Rule(id="DITTO-TCK-1", level=M, binds="target", source="bindings.md §3 (tck/range)",
         title="subscribeForPersistedEvents on tck/range with revisions S..T streams items of revisions S..T in order, then complete (without T: no item, complete after the first request)."),
    Rule(id="DITTO-TCK-2", level=M, binds="target", source="bindings.md §3 (tck/infinite)",
         title="subscribeForPersistedEvents on tck/infinite from revision S streams S, S+1, ... while demand lasts, and never completes."),
    Rule(id="DITTO-TCK-3", level=M, binds="target", source="bindings.md §3 (tck/error)",
         title="subscribeForPersistedEvents on tck/error with revisions S..T streams S..T, then failed."),
    Rule(id="DITTO-TCK-4", level=M, binds="target", source="bindings.md §3 (search profile)",
         title="search subscribe with filter eq(attributes/tck,N) yields tck:thing-0..tck:thing-(N-1), each once, in pages, in the order of its sort option (none: Ditto's default sort(+thingId), string order), then complete."),
    Rule(id="DITTO-TCK-5", level=M, binds="target", source="bindings.md §3; " + _DS + "Interaction pattern",
         title="A subscribe naming no test publisher (or with parameters it cannot serve) is answered created, then failed after the first request."),
)
