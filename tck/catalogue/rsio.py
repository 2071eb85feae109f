"""The RS-IO binding's rules of the catalogue (``rsio_tck.catalogue`` assembles and checks it): SPEC.md's areas HS to TCK.

It also holds what the RS-IO judge needs to know about those rules beyond their text: which
violations are protocol errors (rsio-v0 section 7) and which rule obliges the goodbye after one.
"""

from __future__ import annotations

from .model import Level, Rule

__all__ = ["GOODBYE_OBLIGATION", "PROTOCOL_ERRORS", "RSIO_AREAS", "RSIO_RULES"]


RSIO_AREAS: dict[str, str] = {
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
}

M, S = Level.MUST, Level.SHOULD

RSIO_RULES: tuple[Rule, ...] = (
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
