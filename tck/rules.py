"""The rule catalogue: every normative rule of SPEC.md, by ID.

This table is the one place rule IDs are defined.  SPEC.md states the same rules
in prose (``tests/test_spec_catalogue.py`` checks that the two agree), and the
semantics tables, the codecs, the monitor, scenarios, faults and report columns
cite rules only by these IDs.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Level(str, Enum):
    MUST = "MUST"
    SHOULD = "SHOULD"


@dataclass(frozen=True, slots=True, kw_only=True)
class Rule:
    id: str
    level: Level
    binds: str  # client, server, both, publisher, subscriber, target; RSocket also requester, responder
    title: str
    source: str  # Reactive Streams rule or draft/rsio-v0 section (RSocket: Protocol.md or seed 001 section)
    # Why no scenario can make a target exercise the rule (SPEC.md says "Untested against a
    # target"); empty for the others.  A passing scenario citing such a rule is no evidence
    # that the target follows it, so the report never counts it as a pass (a failure counts).
    untested_on_target: str = ""

    @property
    def area(self) -> str:
        return self.id.rsplit("-", 1)[0]


AREAS: dict[str, str] = {
    "HS": "Handshake",
    "EXT": "Extensions",
    "STR": "Stream lifecycle",
    "DEM": "Demand",
    "ID": "Id reuse",
    "PACK": "Fixed-size and packed elements",
    "SPLIT": "Split elements",
    "BYE": "Goodbye and closing",
    "ERR": "Malformed input and protocol errors",
    "TCK": "Test-publisher contract",
    # RSocket (binding "rsocket"): Protocol.md (RSocket 1.0) and seed 001 (the ReactiveSocket draft).
    "RS-FRAME": "RSocket framing",
    "RS-IGNORE": "RSocket ignore flag",
    "RS-DRAFT": "ReactiveSocket draft framing",
    "RS-FRAG": "RSocket fragmentation",
    "RS-LIMIT": "RSocket kit limits",
    "RS-SETUP": "RSocket connection establishment",
    "RS-KEEPALIVE": "RSocket keepalive",
    "RS-LEASE": "RSocket lease",
    "RS-STREAMID": "RSocket stream identifiers",
    "RS-FLOW": "RSocket flow control",
    "RS-STREAM": "RSocket stream sequences",
    "RS-RR": "RSocket request-response",
    "RS-FNF": "RSocket fire-and-forget",
    "RS-CHANNEL": "RSocket request-channel",
    "RS-ERROR": "RSocket errors",
    "RS-PUSH": "RSocket metadata push",
    "RS-RESUME": "RSocket resumption",
    "RS-UNEXPECTED": "RSocket handling the unexpected",
    "RS-TCK": "RSocket test publishers",
    # Ditto (binding "ditto"): Eclipse Ditto's protocol pages (../shared/references/ditto/) and bindings.md §3.
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

_RULES: tuple[Rule, ...] = (
    # Handshake
    Rule(id="HS-1", level=M, binds="both", source="rsio-v0 §3; drafts: loose handshake",
         title="A party's first frame is its own hello (or a goodbye refusing the connection)."),
    Rule(id="HS-2", level=M, binds="server", source="rsio-v0 §3",
         title="A server sends nothing but serverHello (or goodbye) until it has read the clientHello."),
    Rule(id="HS-3", level=M, binds="both", source="rsio-v0 §3",
         title="A party sends exactly one hello; a second hello is a protocol error."),
    Rule(id="HS-4", level=M, binds="both", source="rsio-v0 §3",
         title="A client sends only clientHello and a server only serverHello."),
    Rule(id="HS-5", level=M, binds="both", source="drafts: 'If either side receives a hello message with a version it doesn't support, it MUST send a goodbye'",
         title="A party receiving a hello with a version it does not support sends goodbye with a reason and closes."),
    Rule(id="HS-6", level=M, binds="server", source="drafts: 'send a serverHello with a version number matching the client's'",
         title="A server that supports the client's version answers with that version (0 here)."),
    Rule(id="HS-7", level=M, binds="both", source="rsio-v0 §3: loose handshake, optimistic sending",
         title="A party accepts the loose handshake: a serverHello before the clientHello is read, and frames sent right after the clientHello."),
    # Extensions
    Rule(id="EXT-1", level=M, binds="both", source="rsio-v0 §3",
         title="Extension ids a party does not know are ignored; the connection proceeds."),
    Rule(id="EXT-2", level=M, binds="both", source="drafts: extension message types 'MUST NOT be sent before receiving a hello ... confirming'",
         title="A message type of the extension range (0x40..0x7F) is sent only if the peer's hello listed its extension."),
    Rule(id="EXT-3", level=M, binds="both", source="rsio-v0 §3",
         title="An undeclared extension type is a protocol error for its receiver."),
    # Stream lifecycle
    Rule(id="STR-1", level=M, binds="publisher", source="rsio-v0 §4; RS 1.9",
         title="Every subscribe is answered by exactly one onSubscribe for its Id, before any other signal for that subscription."),
    Rule(id="STR-2", level=M, binds="publisher", source="rsio-v0 §4, §8",
         title="A subscribe to a publisher the target does not serve is answered onSubscribe then onError; the connection stays up."),
    Rule(id="STR-3", level=M, binds="publisher", source="RS 1.3, 1.7; rsio-v0 §4",
         title="Per Id, signals follow onSubscribe onNext* (onComplete | onError)?; nothing follows a terminal signal."),
    Rule(id="STR-4", level=M, binds="publisher", source="rsio-v0 §4",
         title="A publisher signals only Ids the subscriber has subscribed."),
    Rule(id="STR-5", level=M, binds="subscriber", source="RS 1.2, 1.4, 1.5, 2.9, 2.10",
         title="A subscriber accepts onComplete and onError without any demand, and before any element."),
    Rule(id="STR-6", level=M, binds="publisher", source="RS 3.12, 3.13; rsio-v0 §4",
         title="After cancel the publisher stops signalling that Id; only frames already in flight may still arrive."),
    Rule(id="STR-7", level=M, binds="publisher", source="RS 3.6, 3.7; rsio-v0 §4",
         title="request or cancel for an unknown, cancelled or terminated Id is ignored: no reply, no error."),
    Rule(id="STR-8", level=M, binds="subscriber", source="RS 3.12; rsio-v0 §8 cancel:N",
         title="A subscriber that has cancelled drops the elements that still arrive for that subscription."),
    Rule(id="STR-9", level=M, binds="publisher", source="rsio-v0 §4 (request/cancel name the sender's subscriptions); drafts: the subscriber Id identifies the recipient",
         title="A request or cancel applies to the subscription its sender opened with that Id, never to one of the receiver's own."),
    # Demand
    Rule(id="DEM-1", level=M, binds="publisher", source="RS 1.1; rsio-v0 §4",
         title="Elements delivered (onNext, each packed element, each split element) never exceed the total demand."),
    Rule(id="DEM-2", level=M, binds="publisher", source="RS 3.17; rsio-v0 §4",
         title="Total demand saturates at 2^63-1 (unbounded); a demand at or above 2^63 counts as 2^63-1; neither is an error."),
    Rule(id="DEM-3", level=M, binds="publisher", source="RS 3.9; rsio-v0 §4",
         title="request with demand <= 0 is answered by onError on that Id whose text names rule 3.9; the connection stays up."),
    Rule(id="DEM-4", level=M, binds="publisher", source="RS 3.9; rsio-v0 §4",
         title="subscribe with a negative initialDemand is answered by onSubscribe then onError naming rule 3.9."),
    Rule(id="DEM-5", level=M, binds="publisher", source="rsio-v0 §2, §4",
         title="initialDemand counts as demand; initialDemand 0 means no element until a request."),
    Rule(id="DEM-6", level=S, binds="subscriber", source="RS 3.9 (the argument is illegal); RS 2.1",
         title="A subscriber requests only positive amounts, and a non-negative initialDemand."),
    Rule(id="DEM-7", level=M, binds="subscriber", source="rsio-v0 §8 request strategies; RS 2.1",
         title="A subscriber signals the demand its strategy promises, and never relies on elements it did not request."),
    # Id reuse
    Rule(id="ID-1", level=M, binds="subscriber", source="rsio-v0 §4; drafts: 'MAY reuse an Id ... after it has sent cancel or received onComplete or onError'",
         title="A subscriber subscribes only with an Id that is not active: not subscribed, or cancelled, or terminated."),
    Rule(id="ID-2", level=M, binds="publisher", source="rsio-v0 §4",
         title="subscribe for an Id that is still active is a protocol error for its receiver (goodbye and close)."),
    Rule(id="ID-3", level=M, binds="publisher", source="rsio-v0 §4",
         title="A subscribe reusing a finished Id starts a new subscription with fresh demand and its own onSubscribe."),
    Rule(id="ID-4", level=M, binds="subscriber", source="rsio-v0 §4; drafts: Id reuse",
         title="A subscriber reusing an Id drops frames for it between its cancel and the new onSubscribe.",
         untested_on_target="a target picks the Ids of its subscribe-back, and the kit cannot make it reuse one"),
    # Fixed-size and packed
    Rule(id="PACK-1", level=M, binds="publisher", source="rsio-v0 §5; drafts: fixed-size mode",
         title="In fixed-size mode every onNext carries exactly elementSize raw bytes."),
    Rule(id="PACK-2", level=M, binds="publisher", source="rsio-v0 §5",
         title="onNextPacked is sent only on a fixed-size stream; on a variable-size stream it is a protocol error."),
    Rule(id="PACK-3", level=M, binds="publisher", source="rsio-v0 §2, §5; RS 1.1",
         title="onNextPacked carries 1 <= count <= outstanding demand elements."),
    Rule(id="PACK-4", level=M, binds="subscriber", source="rsio-v0 §5",
         title="A subscriber accepts onNext and onNextPacked interleaved in one fixed-size stream."),
    Rule(id="PACK-5", level=M, binds="publisher", source="rsio-v0 §5",
         title="Elements of a fixed-size stream are not split."),
    # Split
    Rule(id="SPLIT-1", level=M, binds="subscriber", source="drafts: 'Publishers MAY split elements; subscribers MUST support this'",
         title="A subscriber joins onNextPart* onNextLastPart into one element, in order."),
    Rule(id="SPLIT-2", level=M, binds="publisher", source="rsio-v0 §6",
         title="Once an element's first part is sent, the stream's next signal is a part of that element or onError."),
    Rule(id="SPLIT-3", level=M, binds="publisher", source="rsio-v0 §6; RS 1.1",
         title="A split element uses one unit of demand; its first part is sent only while demand is outstanding."),
    Rule(id="SPLIT-4", level=M, binds="subscriber", source="rsio-v0 §6",
         title="A subscriber accepts element Ids reused once the element is finished, and parts of different streams interleaved."),
    Rule(id="SPLIT-5", level=M, binds="subscriber", source="rsio-v0 §6",
         title="An element over the subscriber's reassembly limit ends that subscription with cancel; the connection stays up."),
    Rule(id="SPLIT-6", level=M, binds="subscriber", source="rsio-v0 §6",
         title="onError may cut a split element short; the partial element is dropped, not delivered."),
    # Goodbye
    Rule(id="BYE-1", level=M, binds="both", source="rsio-v0 §7",
         title="After sending goodbye a party sends nothing more."),
    Rule(id="BYE-2", level=M, binds="both", source="rsio-v0 §7; drafts: 'wait for acknowledgement'",
         title="The receiver of a goodbye answers with its own goodbye (unless it already sent one) and closes."),
    Rule(id="BYE-3", level=M, binds="both", source="rsio-v0 §7",
         title="The initiator of an orderly goodbye waits for the peer's goodbye before it closes.",
         untested_on_target="only a target that starts an orderly goodbye on its own can break it"),
    Rule(id="BYE-4", level=M, binds="both", source="rsio-v0 §7",
         title="Simultaneous goodbyes serve as each other's acknowledgement."),
    Rule(id="BYE-5", level=M, binds="both", source="rsio-v0 §7; drafts: 'implicitly closes all open streams'",
         title="goodbye ends every stream in both directions: no new signal is started for any of them."),
    Rule(id="BYE-6", level=M, binds="both", source="rsio-v0 §7",
         title="Frames that arrive after a goodbye was received are ignored: nothing answers them."),
    # Malformed input and protocol errors
    Rule(id="ERR-1", level=M, binds="both", source="rsio-v0 §7",
         title="On a protocol error the receiver sends goodbye and closes that connection."),
    Rule(id="ERR-2", level=M, binds="both", source="rsio-v0 §3 ('sends goodbye with a reason'), §7",
         title="The goodbye sent for a protocol error or a version refusal carries a non-empty reason."),
    Rule(id="ERR-3", level=M, binds="target", source="rsio-v0 §7",
         title="A protocol error or an abrupt close on one connection leaves the party's other connections unaffected."),
    Rule(id="ERR-4", level=M, binds="both", source="rsio-v0 §1",
         title="Every field has its wire type: MessagePack int/str/bin/array, or varint/length-prefixed in varint."),
    Rule(id="ERR-5", level=M, binds="both", source="rsio-v0 §1",
         title="Strings are valid UTF-8."),
    Rule(id="ERR-6", level=M, binds="both", source="rsio-v0 §1, §7",
         title="A frame is complete: a transport that ends inside a frame is a truncated frame."),
    Rule(id="ERR-7", level=M, binds="both", source="rsio-v0 §2, §3",
         title="Type codes are 0x01..0x0D; reserved (0x0E..0x3F) and invalid codes are a protocol error."),
    Rule(id="ERR-8", level=M, binds="both", source="rsio-v0 §7",
         title="A length over the receiver's limit is a protocol error, detected before anything is allocated."),
    Rule(id="ERR-9", level=M, binds="both", source="rsio-v0 §1",
         title="Ids are integers from 0 to 2^63-1; counts and sizes are non-negative and in range."),
    Rule(id="ERR-10", level=M, binds="both", source="rsio-v0 §1 (varint)",
         title="A varint is at most 10 bytes and below 2^64."),
    Rule(id="ERR-11", level=M, binds="both", source="rsio-v0 §7",
         title="A transport that closes without goodbye ends all its streams; the party does not crash and keeps serving."),
    # Test-publisher contract
    Rule(id="TCK-1", level=M, binds="target", source="rsio-v0 §8",
         title="tck/range?start=S&count=N emits S..S+N-1 then onComplete."),
    Rule(id="TCK-2", level=M, binds="target", source="rsio-v0 §8",
         title="tck/infinite?start=S emits S, S+1, ... while demand lasts, without end."),
    Rule(id="TCK-3", level=M, binds="target", source="rsio-v0 §8",
         title="tck/fixed?size=K&count=N is fixed-size with elementSize K; element i is i as K bytes big-endian."),
    Rule(id="TCK-4", level=M, binds="target", source="rsio-v0 §8",
         title="tck/large?size=B&count=N&part=P emits N elements of B bytes, byte j of element i = (i+j) mod 256, split in parts of at most P bytes."),
    Rule(id="TCK-5", level=M, binds="target", source="rsio-v0 §8",
         title="tck/error?after=N&message=M emits 0..N-1 then onError(M)."),
    Rule(id="TCK-6", level=M, binds="target", source="rsio-v0 §8",
         title="tck/subscribe?to=NAME&request=STRATEGY subscribes back and reports every signal it receives as a map element."),
    Rule(id="TCK-7", level=M, binds="target", source="rsio-v0 §8",
         title="A name the target does not serve, or a malformed parameter, is answered onSubscribe then onError."),
    Rule(id="TCK-8", level=M, binds="target", source="rsio-v0 §8",
         title="Elements of variable-size test publishers are MessagePack-encoded values, whatever the codec."),
    Rule(id="TCK-9", level=S, binds="target", source="rsio-v0 §8; MessagePack specification: serializers SHOULD use the shortest format",
         title="The integer elements of tck/range, tck/infinite and tck/error use the shortest MessagePack encoding."),
)


P = "Protocol.md, "  # RSocket 1.0 (../shared/references/rsocket-Protocol.md); "seed 001" is the ReactiveSocket draft

_RSOCKET_RULES: tuple[Rule, ...] = (
    # Framing (the wire layer; tck/bindings/rsocket/codec.py, v1.py, draft.py)
    Rule(id="RS-FRAME-1", level=M, binds="both", source=P + "Frame Header Format; seed 001, Frame Header Format",
         title="A frame is at least as long as its frame header."),
    Rule(id="RS-FRAME-2", level=M, binds="both", source=P + "Max Frame Size; Framing Format",
         title="A frame is at most 16,777,215 bytes, and no larger than the receiver's configured maximum."),
    Rule(id="RS-FRAME-3", level=M, binds="both", source=P + "Frame Header Format and each frame's layout; seed 001, Frame Header Format",
         title="A reserved bit (the high bit of the stream id, of a 31- or 63-bit field, the draft's R bit) is 0."),
    Rule(id="RS-FRAME-4", level=M, binds="both", source=P + "Handling Ignore Flag; Frame Types",
         title="A frame type the receiver does not understand is sent only with the I flag."),
    Rule(id="RS-FRAME-5", level=M, binds="both", source=P + "Metadata Optional Header; SETUP Frame; RESUME Frame",
         title="A metadata length, and every other length inside a frame, fits in the frame."),
    Rule(id="RS-FRAME-6", level=M, binds="both", source=P + "each frame's Frame Contents",
         title="A frame holds every fixed field of its type."),
    Rule(id="RS-FRAME-7", level=M, binds="both", source=P + "CANCEL, REQUEST_N, RESUME, RESUME_OK, LEASE Frame Contents",
         title="A frame with no data area ends after its last field."),
    Rule(id="RS-FRAME-8", level=M, binds="both", source=P + "Framing Format (a length-prefixed frame is whole)",
         title="The transport does not end inside a frame."),
    Rule(id="RS-FRAME-9", level=M, binds="both", source=P + "METADATA_PUSH Frame",
         title="METADATA_PUSH has the M flag set."),
    Rule(id="RS-FRAME-10", level=M, binds="both", source=P + "EXT (Extension) Frame ('Value MUST be > 0')",
         title="An EXT frame's Extended Type is greater than 0."),
    Rule(id="RS-IGNORE-1", level=M, binds="both", source=P + "Handling Ignore Flag; seed 001, Frame Header Format (I)gnore",
         title="A frame of a type the receiver does not understand, with the I flag set, is ignored."),
    Rule(id="RS-IGNORE-2", level=M, binds="both", source=P + "Metadata Optional Header ('unless the frame's IGNORE flag is set')",
         title="A frame with an invalid metadata length and the I flag set is ignored, not an error."),
    Rule(id="RS-DRAFT-1", level=M, binds="both", source="seed 001, Frame Header Format ('Current version is 0')",
         title="reactivesocket-draft: every frame header carries version 0."),
    Rule(id="RS-DRAFT-2", level=M, binds="both", source="seed 001, Metadata Optional Header ('the entire frame MUST be ignored')",
         title="reactivesocket-draft: a frame whose metadata length exceeds the frame is ignored."),
    Rule(id="RS-FRAG-1", level=M, binds="both", source=P + "Fragmentation And Reassembly (REQUEST Frames, PAYLOAD Frame)",
         title="While a fragmented request or payload is in progress on a stream, its next frame on that stream is a PAYLOAD fragment (or CANCEL/ERROR abandoning it)."),
    Rule(id="RS-FRAG-2", level=M, binds="both", source=P + "Fragmentation And Reassembly ('Metadata MUST be transmitted completely before the Data')",
         title="Across the fragments of one payload, all metadata comes before any data."),
    Rule(id="RS-LIMIT-1", level=M, binds="both", source="kit (Protocol.md, Handling the Unexpected: reassembly must assume an infinite stream)",
         title="kit: a reassembled payload stays within the receiver's configured maximum."),
    # Connection establishment
    Rule(id="RS-SETUP-1", level=M, binds="client", source=P + "Connection Establishment ('the client MUST send either a SETUP or RESUME frame')",
         title="The client's first frame is SETUP or RESUME."),
    Rule(id="RS-SETUP-2", level=M, binds="client", source=P + "Connection Establishment; Handling the Unexpected ('ignore a SETUP frame after it has accepted a previous SETUP')",
         title="The client sends at most one SETUP per connection, and none after RESUME."),
    Rule(id="RS-SETUP-3", level=M, binds="server", source=P + "Frame Types (SETUP: 'Sent by client'); Handling the Unexpected ('A client MUST ignore a SETUP frame')",
         title="A server never sends SETUP."),
    Rule(id="RS-SETUP-4", level=M, binds="client", source=P + "SETUP Frame ('MUST always use Stream ID 0')",
         title="SETUP uses stream id 0."),
    Rule(id="RS-SETUP-5", level=M, binds="client", source=P + "SETUP Frame (Time Between KEEPALIVE Frames, Max Lifetime: 'Value MUST be > 0')",
         title="SETUP's keepalive interval and max lifetime are greater than 0."),
    Rule(id="RS-SETUP-6", level=M, binds="server", source=P + "Versioning Scheme; Negotiation; Connection Establishment",
         title="A server answers a SETUP of a major version above the profile's (which it cannot speak) with ERROR[UNSUPPORTED_SETUP|INVALID_SETUP|REJECTED_SETUP] on stream 0."),
    Rule(id="RS-SETUP-7", level=M, binds="client", source=P + "SETUP Frame (Encoding MIME Type: 'MUST NOT be null terminated')",
         title="SETUP names a metadata and a data MIME type: each non-empty and not null-terminated."),
    Rule(id="RS-SETUP-8", level=S, binds="client", source=P + "SETUP Frame (Encoding MIME Type: 'SHOULD be a US-ASCII string')",
         title="SETUP's MIME types are US-ASCII."),
    Rule(id="RS-SETUP-9", level=M, binds="server", source=P + "Connection Establishment ('MUST cause the server to send an ERROR[INVALID_SETUP] and close')",
         title="A server whose client opened with anything but SETUP or RESUME on stream 0 answers ERROR[INVALID_SETUP] on stream 0 and sends nothing else."),
    Rule(id="RS-SETUP-10", level=M, binds="server", source=P + "Connection Establishment ('Until connection establishment is complete, a Requester MUST NOT send any Request frames')",
         title="A server sends nothing before the client's first frame."),
    # Keepalive
    Rule(id="RS-KEEPALIVE-1", level=M, binds="both", source=P + "KEEPALIVE Frame ('MUST always use Stream ID 0')",
         title="KEEPALIVE uses stream id 0."),
    Rule(id="RS-KEEPALIVE-2", level=M, binds="client", source=P + "KEEPALIVE Frame ('MUST be initiated by the client and sent periodically'); SETUP Frame (Max Lifetime)",
         title="The client sends KEEPALIVE periodically: never more than the SETUP's max lifetime after its SETUP or its previous KEEPALIVE."),
    Rule(id="RS-KEEPALIVE-3", level=M, binds="both", source=P + "KEEPALIVE Frame ('MUST cause a client or server to send back a KEEPALIVE with the (R)espond flag NOT set. The data ... MUST be echoed'); seed 001 ('A server MUST send a KEEPALIVE frame back')",
         title="A KEEPALIVE with R is answered, within the max lifetime, by a KEEPALIVE without R echoing its data (draft: the server answers every client KEEPALIVE)."),
    Rule(id="RS-KEEPALIVE-4", level=M, binds="client", source=P + "KEEPALIVE Frame ('initiated by the client and sent periodically with the (R)espond flag set')",
         title="rsocket-1.0: a KEEPALIVE the client initiates (one that answers nothing) has the R flag set."),
    Rule(id="RS-KEEPALIVE-5", level=S, binds="both", source=P + "KEEPALIVE Frame (Last Received Position); Keepalive Position Field; Implied Position",
         title="With resumption negotiated, a party's KEEPALIVE Last Received Position never decreases."),
    # Lease
    Rule(id="RS-LEASE-1", level=M, binds="both", source=P + "LEASE Frame ('MUST always use Stream ID 0')",
         title="LEASE uses stream id 0."),
    Rule(id="RS-LEASE-2", level=M, binds="both", source=P + "Connection Establishment (the L flag); Lease Semantics",
         title="LEASE is sent only on a connection whose SETUP set the L flag."),
    Rule(id="RS-LEASE-3", level=M, binds="both", source=P + "Connection Establishment ('it MUST send a LEASE frame if the SETUP frame set the L flag'; 'The client-side Responder MUST send a LEASE frame')",
         title="After a SETUP with L, each side of an accepted connection sends a LEASE."),
    Rule(id="RS-LEASE-4", level=M, binds="requester", source=P + "Lease Semantics ('MUST NOT send more than Number of Requests ... within the Time-To-Live'); Connection Establishment ('MUST wait for ... a LEASE')",
         title="With lease, a requester sends a request only within a valid lease from its peer: after a LEASE, within its TTL and its number of requests."),
    Rule(id="RS-LEASE-5", level=M, binds="responder", source=P + "Lease Semantics ('MUST respond with an ERROR[REJECTED]'); seed 001 ('MUST ignore the REQUEST')",
         title="A request sent without a lease left is answered with ERROR[REJECTED] (draft: not answered)."),
    # Stream identifiers
    Rule(id="RS-STREAMID-1", level=M, binds="requester", source=P + "Stream Identifiers, Generation ('a client MUST generate odd Stream IDs, and a server MUST generate even')",
         title="rsocket-1.0: a request's stream id is odd from the client and even from the server, and never 0."),
    Rule(id="RS-STREAMID-2", level=M, binds="requester", source=P + "Stream Identifiers, Generation ('MUST start at 1 [2] and increment by 2 sequentially')",
         title="rsocket-1.0: a requester's stream ids start at 1 (client) or 2 (server) and each new one is the previous plus 2, until the max id has been used."),
    Rule(id="RS-STREAMID-3", level=M, binds="requester", source=P + "Stream Sequences and Lifetimes ('the Stream ID MUST NOT be re-used'); Stream Identifiers, Lifetime",
         title="A requester never reuses a finished stream id (after the max id, it may wrap and reuse ids not in use)."),
    Rule(id="RS-STREAMID-4", level=M, binds="requester", source=P + "Stream Identifiers ('MUST be locally unique'; 'MUST skip IDs still in use'); Handling the Unexpected",
         title="A requester never sends a request on a stream id in use; its receiver ignores such a request."),
    # Flow control
    Rule(id="RS-FLOW-1", level=M, binds="requester", source=P + "REQUEST_STREAM, REQUEST_CHANNEL, REQUEST_N Frame ('Value MUST be > 0')",
         title="Initial Request N and REQUEST_N are greater than 0."),
    Rule(id="RS-FLOW-2", level=M, binds="responder", source=P + "Flow Control, Reactive Streams Semantics ('Credits are cumulative'; 'MUST respect the Reactive Streams semantics'); Fragmentation And Reassembly",
         title="Elements (PAYLOADs with N; a fragmented payload counts once) never exceed the cumulative credits granted; REQUEST_N 2^31-1 is not unbounded."),
    Rule(id="RS-FLOW-3", level=S, binds="responder", source="bindings.md §2; RS 3.9; " + P + "REQUEST_N Frame",
         title="A request N of 0 is answered with ERROR on that stream or ERROR[CONNECTION_ERROR] on stream 0, not ignored."),
    # Stream sequences
    Rule(id="RS-STREAM-1", level=M, binds="both", source=P + "PAYLOAD Frame ('A PAYLOAD MUST NOT have both (C)omplete and (N)ext empty')",
         title="A PAYLOAD (once reassembled) has the N flag, the C flag or both."),
    Rule(id="RS-STREAM-2", level=M, binds="responder", source=P + "Stream Sequences and Lifetimes (RS -> RQ only after RQ -> RS)",
         title="A responder sends PAYLOAD, ERROR or REQUEST_N only on a stream its peer requested."),
    Rule(id="RS-STREAM-3", level=M, binds="both", source=P + "Stream Sequences and Lifetimes ('Upon sending a COMPLETE or ERROR ... the stream is terminated'); Request Channel ('MUST NOT send any additional PAYLOAD frames after sending a frame with the C bit')",
         title="After its PAYLOAD with C or its ERROR on a stream, a party sends no more PAYLOAD or ERROR on it."),
    Rule(id="RS-STREAM-4", level=M, binds="requester", source=P + "Stream Sequences and Lifetimes (only Request Channel has RQ -> RS: PAYLOAD)",
         title="A requester sends PAYLOAD on its own stream only on a request-channel (or as a request's fragment)."),
    # Interaction models
    Rule(id="RS-RR-1", level=M, binds="responder", source=P + "Request Response ('RS -> RQ: PAYLOAD with COMPLETE'; 'Upon sending a response, the stream is terminated')",
         title="A request-response is answered by at most one PAYLOAD or ERROR."),
    Rule(id="RS-RR-2", level=S, binds="responder", source=P + "Request Response; Handling the Unexpected ('If a PAYLOAD for a REQUEST_RESPONSE is received that does not have a COMPLETE flag set, the implementation MUST assume it is set')",
         title="The PAYLOAD answering a request-response has the C flag."),
    Rule(id="RS-FNF-1", level=M, binds="responder", source=P + "Request Fire-n-Forget ('Upon reception, the stream is terminated by the Responder')",
         title="Nothing is sent back on a fire-and-forget stream."),
    Rule(id="RS-CHANNEL-1", level=M, binds="requester", source=P + "REQUEST_CHANNEL Frame ('MUST not send PAYLOAD frames after the REQUEST_CHANNEL frame until the responder sends a REQUEST_N'); Flow Control",
         title="On a channel, the requester's PAYLOADs never exceed the credits the responder granted with REQUEST_N."),
    Rule(id="RS-CHANNEL-2", level=M, binds="requester", source=P + "Request Channel ('A Requester MUST NOT send any additional PAYLOAD frames after sending a frame with the C bit set')",
         title="On a channel, the requester sends no PAYLOAD after its C (on REQUEST_CHANNEL or a PAYLOAD) or its ERROR."),
    Rule(id="RS-CHANNEL-3", level=M, binds="responder", source=P + "Request Channel ('a Responder MUST respond to an initial REQUEST_CHANNEL frame with a REQUEST_N frame')",
         title="A responder grants credits with REQUEST_N on a channel whose requester has not completed, before it ends the channel."),
    # Errors
    Rule(id="RS-ERROR-1", level=M, binds="both", source=P + "Error Codes (INVALID_SETUP ... CONNECTION_CLOSE: 'Stream ID MUST be 0')",
         title="Connection error codes (INVALID_SETUP, UNSUPPORTED_SETUP, REJECTED_SETUP, REJECTED_RESUME, CONNECTION_ERROR, CONNECTION_CLOSE) are sent only on stream 0."),
    Rule(id="RS-ERROR-2", level=M, binds="both", source=P + "Error Codes (APPLICATION_ERROR ... INVALID: 'Stream ID MUST be > 0')",
         title="Stream error codes (APPLICATION_ERROR, REJECTED, CANCELED, INVALID) are sent only on a stream > 0."),
    Rule(id="RS-ERROR-3", level=M, binds="both", source=P + "Error Codes (RESERVED; 'reserved for future protocol use')",
         title="An error code is a defined one or an application code (0x301..0xFFFFFFFE): never 0, a reserved protocol value, or 0xFFFFFFFF."),
    Rule(id="RS-ERROR-4", level=M, binds="server", source=P + "Error Codes; Connection Establishment; Resume Operation",
         title="Setup error codes (INVALID_SETUP, UNSUPPORTED_SETUP, REJECTED_SETUP, REJECTED_RESUME) come only from the server, before it has accepted the connection."),
    Rule(id="RS-ERROR-5", level=M, binds="both", source=P + "Error Codes (CONNECTION_ERROR: 'The connection is being terminated'); Connection Establishment ('send back an ERROR ... and then close')",
         title="After sending an ERROR on stream 0 (other than CONNECTION_CLOSE), a party sends no further frame."),
    Rule(id="RS-ERROR-6", level=S, binds="both", source=P + "ERROR Frame ('Error Data SHOULD be a UTF-8 encoded string')",
         title="rsocket-1.0: ERROR data is UTF-8 text."),
    Rule(id="RS-ERROR-7", level=M, binds="both", source=P + "ERROR Frame ('The string MUST NOT be null terminated')",
         title="rsocket-1.0: ERROR data is not null-terminated."),
    Rule(id="RS-ERROR-8", level=M, binds="both", source=P + "Metadata Optional Header ('the receiver MUST send an ERROR[CONNECTION_ERROR] frame and close')",
         title="A party that receives a frame with an invalid metadata length (no I flag) sends ERROR[CONNECTION_ERROR] on stream 0 before it closes."),
    # Metadata push
    Rule(id="RS-PUSH-1", level=M, binds="both", source=P + "METADATA_PUSH Frame ('MUST always use Stream ID 0')",
         title="METADATA_PUSH uses stream id 0."),
    # Resumption
    Rule(id="RS-RESUME-1", level=M, binds="client", source=P + "Connection Establishment; Resume Operation ('A Server that receives a RESUME frame after a SETUP frame ...')",
         title="Only the client sends RESUME, and only as its first frame."),
    Rule(id="RS-RESUME-2", level=M, binds="client", source=P + "Resume Operation ('The client MUST NOT send any other frame types until resumption succeeds')",
         title="After RESUME, the client sends nothing until the server's RESUME_OK."),
    Rule(id="RS-RESUME-3", level=M, binds="server", source=P + "Resume Operation (RESUME_OK is 'Sent in response to a RESUME')",
         title="Only the server sends RESUME_OK, once, in answer to the client's RESUME."),
    Rule(id="RS-RESUME-4", level=M, binds="server", source=P + "Resume Operation ('All ERROR frames sent MUST be CONNECTION_ERROR or REJECTED_RESUME')",
         title="During resumption (before RESUME_OK), every ERROR the server sends is CONNECTION_ERROR or REJECTED_RESUME."),
    Rule(id="RS-RESUME-5", level=M, binds="both", source=P + "RESUME Frame, RESUME_OK Frame ('MUST always use Stream ID 0')",
         title="RESUME and RESUME_OK use stream id 0."),
    # Handling the unexpected
    Rule(id="RS-UNEXPECTED-1", level=M, binds="both", source=P + "Handling the Unexpected ('Receiving a Request frame on a Stream ID that is already in use MUST be ignored'; CANCEL, ERROR, PAYLOAD on an unknown Stream ID; METADATA_PUSH with a non-0 Stream ID)",
         title="A frame on an unknown stream, a request on a stream in use and a METADATA_PUSH on a non-0 stream are ignored: no ERROR answers them."),
    Rule(id="RS-UNEXPECTED-2", level=M, binds="both", source=P + "Handling the Unexpected ('A server MUST ignore a SETUP frame after it has accepted a previous SETUP'; '... ignore an ERROR[INVALID_SETUP|...]'; 'A client MUST ignore a SETUP frame')",
         title="A second SETUP, a SETUP from the server and a setup error code the receiver must ignore are ignored: no ERROR answers them."),
    # Test publishers (bindings.md §2; names and parameters as rsio-v0 §8)
    Rule(id="RS-TCK-1", level=M, binds="target", source="bindings.md §2; rsio-v0 §8",
         title="request-stream tck/range?start=S&count=N emits S..S+N-1, each as decimal UTF-8 text, then completes."),
    Rule(id="RS-TCK-2", level=M, binds="target", source="bindings.md §2; rsio-v0 §8",
         title="request-stream tck/infinite?start=S emits S, S+1, ... as decimal UTF-8 text while credits last, and never completes."),
    Rule(id="RS-TCK-3", level=M, binds="target", source="bindings.md §2; rsio-v0 §8",
         title="request-stream tck/error?after=N&message=M emits 0..N-1 then ERROR[APPLICATION_ERROR] with data M."),
    Rule(id="RS-TCK-4", level=M, binds="target", source="bindings.md §2; rsio-v0 §8",
         title="request-stream tck/large?size=B&count=N emits N payloads of B bytes, byte j of payload i = (i+j) mod 256 (fragmented when needed), then completes."),
    Rule(id="RS-TCK-5", level=M, binds="target", source="bindings.md §2 ('Unknown name: ERROR APPLICATION_ERROR on that stream')",
         title="A request naming a publisher the target does not serve, or with a malformed parameter, is answered ERROR[APPLICATION_ERROR] on that stream."),
    Rule(id="RS-TCK-6", level=M, binds="target", source="bindings.md §2 (request-response row)",
         title="request-response on a test publisher answers its first element (N|C), an empty completion (C) when it has none, or its ERROR."),
    Rule(id="RS-TCK-7", level=M, binds="target", source="bindings.md §2 (request-channel row)",
         title="request-channel tck/echo sends back every later inbound payload, in order, and completes only once the inbound has completed."),
    Rule(id="RS-TCK-8", level=M, binds="target", source="bindings.md §2 (metadata-push row: 'ignored; the connection stays up'); " + P + "METADATA_PUSH Frame",
         title="A METADATA_PUSH on stream 0 is accepted: no ERROR on stream 0 answers it and the connection stays up."),
)

# -- Ditto (binding "ditto") -------------------------------------------------------------------
# Sources are Ditto's pages in ../shared/references/ditto/ (page, section) and bindings.md §3.
_DP = "protocol-specification.md, "
_DT = "protocol-specification-topic.md, "
_DS = "protocol-specification-streaming-subscription.md, "
_DQ = "protocol-specification-things-search.md, "
_DE = "protocol-specification-errors.md, "
_DW = "httpapi-protocol-bindings-websocket.md, "
_BOTH = "Ditto streaming-subscription and search pages, "

_DITTO_RULES: tuple[Rule, ...] = (
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
         title="A search next holds at least one and at most size(n) items (n of the subscribe's options; 25 without size)."),
    # framings
    Rule(id="DITTO-LINE-1", level=M, binds="both", source="kit; bindings.md §3 (one JSON envelope per line on TCP, per text message on WebSocket)",
         title="A message (a TCP line or a WebSocket text message) is no longer than the receiver's maximum."),
    Rule(id="DITTO-LINE-2", level=M, binds="both", source="kit; bindings.md §3 (one JSON envelope per line, each ended by a newline)",
         title="The TCP stream does not end inside a line."),
    Rule(id="DITTO-WS-1", level=M, binds="both", source=_DW + "WebSocket protocol format (a message is one JSON object); DITTO.md (one envelope per text message)",
         title="Over WebSocket every Ditto Protocol message is one text message; a binary message is a violation."),
    # subscriptions (judged by tck/bindings/ditto/judge.py)
    Rule(id="DITTO-SUB-1", level=M, binds="publisher", source=_DS + "Interaction pattern (1); " + _DQ + "Interaction pattern, Subscribe ('always responds with a created event')",
         title="Every subscribe gets exactly one created, carrying the subscribe's correlation-id."),
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
         title="subscribeForPersistedEvents on tck/range with revisions S..T streams items of revisions S..T in order, then complete."),
    Rule(id="DITTO-TCK-2", level=M, binds="target", source="bindings.md §3 (tck/infinite)",
         title="subscribeForPersistedEvents on tck/infinite from revision S streams S, S+1, ... while demand lasts, and never completes."),
    Rule(id="DITTO-TCK-3", level=M, binds="target", source="bindings.md §3 (tck/error)",
         title="subscribeForPersistedEvents on tck/error with revisions S..T streams S..T, then failed."),
    Rule(id="DITTO-TCK-4", level=M, binds="target", source="bindings.md §3 (search profile)",
         title="search subscribe with filter eq(attributes/tck,N) yields tck:thing-0..tck:thing-(N-1) in order, each once, in pages, then complete."),
    Rule(id="DITTO-TCK-5", level=M, binds="target", source="bindings.md §3; " + _DS + "Interaction pattern",
         title="A subscribe naming no test publisher (or with parameters it cannot serve) is answered created, then failed after the first request."),
)

_RULES = _RULES + _RSOCKET_RULES + _DITTO_RULES

RULES: dict[str, Rule] = {rule.id: rule for rule in _RULES}

# The phrase SPEC.md puts in a rule's Observed bullet when no scenario can make a target
# exercise it (``tests/test_spec_catalogue.py`` checks it against ``untested_on_target``).
UNTESTED_ON_TARGET = "Untested against a target"


def rule(rule_id: str) -> Rule:
    """The rule with this ID; a KeyError names the unknown ID."""
    try:
        return RULES[rule_id]
    except KeyError:
        raise KeyError(f"unknown rule ID {rule_id!r}") from None


# Violations that are protocol errors in rsio-v0 section 7: their receiver must
# answer with goodbye and close (ERR-1).  Other violations are judged, but the
# receiver may carry on.
PROTOCOL_ERRORS: frozenset[str] = frozenset(
    {"HS-1", "HS-2", "HS-3", "HS-4", "EXT-2", "ID-1", "PACK-2"}
    | {f"ERR-{n}" for n in range(4, 11)}
)

# The rule that obliges the receiver of a protocol error to answer with goodbye
# and close, where a more specific rule than ERR-1 says so.
GOODBYE_OBLIGATION: dict[str, str] = {"EXT-2": "EXT-3", "ID-1": "ID-2"}
