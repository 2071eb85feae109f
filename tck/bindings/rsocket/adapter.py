"""RSocket's scenario adapter: how the step language speaks RSocket (``rsio_tck.binding.ScenarioAdapter``).

Theory of operation.  The kit is the client (the requester of the streams it
opens, odd stream ids).  It opens with SETUP (bindings.md section 2: version
1.0, keepalive 30 s, lifetime 90 s, octet-stream metadata, text/plain data, no
resume, no lease) and waits for nothing: RSocket has no answer to SETUP.

Sending.  Contract scenarios name signals: ``subscribe`` becomes REQUEST_STREAM
(initial N = initialDemand, data = the publisher name), ``request`` REQUEST_N,
``cancel`` CANCEL; where the kit publishes (the target subscribed to it with a
REQUEST_STREAM on an even id), ``onNext`` is PAYLOAD(N), ``onComplete``
PAYLOAD(C), ``onError`` ERROR[APPLICATION_ERROR], and ``onSubscribe`` sends
nothing.  A logical subscriber k of a contract scenario gets the next unused odd
stream id when it subscribes (so 1, 2, 3 subscribed in order are streams 1, 3,
5: the ``2k-1`` of bindings.md), and a fresh one when it subscribes again after
its stream ended: RSocket ids are never reused, so a contract scenario's Id reuse
is a new stream for the same logical subscriber.  "Unused" counts the target's
requests too: the draft lets the target pick odd ids, and the kit picks after it
(SPEC.md decision RS-t).  Wire scenarios name frames
(``REQUEST_STREAM``, ``REQUEST_N``, ``KEEPALIVE``, ``SETUP``...) with their
dataclass fields; ``stream_id`` may be replaced by ``subscriber`` (the logical
id), text is accepted where bytes belong, ``error_code`` may be a name
(``CONNECTION_CLOSE``), and ``fragment: N`` sends the frame as fragments of at
most N bytes (``fragments.fragment``).

Receiving.  Fragments are joined by the connection's judge (the monitor's, handed over
with ``attach``: its reassembler for the target's direction, the one of that direction,
has judged each frame before the engine hands it here); each whole
frame becomes contract events that also carry the frame's fields, so either
name matches (``expect: {onNext: ...}`` or ``expect: {PAYLOAD: {stream_id: 1}}``):
PAYLOAD N|C is onNext then onComplete, ERROR on a stream is onError, the
target's REQUEST_N/CANCEL are request/cancel, its REQUEST_* are subscribe.
Frames on stream 0 are connection events (ERROR there is the target's
"goodbye"); KEEPALIVE has an inbox of its own and is answered with R clear
when it asks (``replies``).  Inboxes are keyed by stream id, so a late frame of
an ended stream never lands in the inbox of the stream that replaced it.
"""

from __future__ import annotations

from collections import deque
from dataclasses import fields as dataclass_fields
from dataclasses import replace
from typing import Any

from ...errors import ProtocolViolation, Side
from ...scenarios.bounds import MESSAGE_MAX_BYTES, REASSEMBLY_MAX_BYTES
from ...scenarios.events import CONN, SUBSCRIBES, Event
from ...semantics.signals import CONTRACT_WORDS
from .codec import RSocketLimits
from .fragments import fragment
from .frames import (
    APPLICATION_ERROR,
    DRAFT_ONLY_TYPES,
    ERROR_CODE_NAMES,
    FRAME_TYPES,
    Cancel,
    Error,
    IgnoredFrame,
    Keepalive,
    Payload,
    RequestChannel,
    RequestFnf,
    RequestN,
    RequestResponse,
    RequestStream,
    Setup,
)
from .judge import RSocketJudge
from .model import ConnectionModel

# Bytes of fragments a scenario connection joins at once (its judge too): the suite's largest fragmented payload
# is 3,000 bytes; every MiB more a target may send before the verdict is another MiB of trace that the report
# re-judges (8 MiB per scenario made the report of a run against endless fragments take 30 s).
KIT_REASSEMBLY_MAX = min(1024 * 1024, REASSEMBLY_MAX_BYTES)
Key = tuple[str, int | None]
KEEPALIVES: Key = ("keepalive", None)
FRAME_BY_NAME: dict[str, type] = {cls.wire_name: cls for cls in FRAME_TYPES + DRAFT_ONLY_TYPES}
CODE_BY_NAME = {name: code for code, name in ERROR_CODE_NAMES.items()}
REQUESTS = (RequestStream, RequestChannel, RequestResponse, RequestFnf)
REQUEST_NAMES = frozenset(cls.wire_name for cls in REQUESTS)
CONNECTION_NAMES = frozenset({"SETUP", "LEASE", "METADATA_PUSH", "RESUME", "RESUME_OK", "SETUP_ERROR"})
BYTES_FIELDS = frozenset({"data", "metadata", "metadata_mime", "data_mime", "resume_token", "body"})
# What contract scenarios may need that RSocket has (see the RS-IO adapter for the full list).
FEATURES = frozenset({
    "id-reuse",  # a logical subscriber subscribes again once its stream ended (on a fresh stream id)
    "large-ids",  # logical subscriber numbers are free: each maps to the next unused odd stream id
})
# bindings.md section 2: what the kit's SETUP says unless a scenario sends its own.
KEEPALIVE_MS = 30_000
LIFETIME_MS = 90_000
# The draft counts both in nanoseconds, in 32 bits (at most 4.29 s): the kit keeps alive every second.
DRAFT_KEEPALIVE_NS = 1_000_000_000
DRAFT_LIFETIME_NS = 4_000_000_000
METADATA_MIME = b"application/octet-stream"
DATA_MIME = b"text/plain"


def frame_fields(frame: Any) -> dict[str, Any]:
    return {spec.name: getattr(frame, spec.name) for spec in dataclass_fields(frame)}


def _text(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


class RSocketScenarioAdapter:
    opens_with_reply = False
    goodbye_kinds = frozenset({"ERROR", "SETUP_ERROR"})  # on stream 0: the connection ends
    quiet_kinds = frozenset({"KEEPALIVE"})
    reply_awaited = False
    fast_type: type | None = Payload
    takes_runs = False
    features = FEATURES
    frame_words = CONTRACT_WORDS + tuple(FRAME_BY_NAME)  # the contract's signals and every frame ``frames`` builds

    def __init__(self, binding: Any, profile: str, limits: RSocketLimits | None = None,
                 setup: dict[str, Any] | None = None) -> None:
        self.binding = binding
        self.profile = profile
        self.limits = limits
        self.setup = setup or {}
        self.draft = profile == "reactivesocket-draft"
        self._setup_sent: Setup | None = None  # the SETUP a scenario sent itself (its keepalive interval)
        self.error: str | None = None
        self.truncated: dict[str, str] = {}
        # A kit connection holds at most KIT_REASSEMBLY_MAX of fragments (in the monitor's judge, whose
        # reassembly the adapter reads: ``attach``) and MESSAGE_MAX_BYTES of one frame: the binding's defaults, 64 MiB
        # and 16 MiB, let a target that sends fragments forever or random bytes hold 1 GB across eight
        # connections.  These are the kit's configured maxima (RS-LIMIT-1, RS-FRAME-2).
        base = limits if isinstance(limits, RSocketLimits) else RSocketLimits()
        self.session_limits = replace(base, max_reassembly=min(base.max_reassembly, KIT_REASSEMBLY_MAX),
                                      max_frame=min(base.max_frame, MESSAGE_MAX_BYTES))
        # What the judge's reassembler made of the target's frames (``attach``): the one reassembler per direction.
        self._outcomes: deque[tuple[Any, Any]] | None = None
        self._stream_of: dict[int, int] = {}  # logical subscriber -> its current stream id
        self._logical: dict[int, int] = {}  # stream id -> logical subscriber
        self._ended: set[int] = set()  # the kit's stream ids that ended (terminal received, cancel sent)
        self._next_id = 1
        self._target_ids: set[int] = set()  # stream ids the target's requests named (the draft lets it pick odd ones)
        self._contract_opens: set[int] = set()  # streams opened by a contract ``subscribe``: onSubscribe implied
        self._replies: list[Any] = []
        self._closing = False
        self._barriers: dict[bytes, bool] = {}  # the kit's barrier tokens -> answered yet
        # The connection's model, read by ``barrier`` (``attach``): the judge owns it.
        self._model: ConnectionModel | None = None
        self._kit_side, self._target_side = Side.CLIENT, Side.SERVER

    # -- opening and closing -----------------------------------------------------------------

    def opening(self) -> list[Any]:
        values: dict[str, Any] = {"keepalive_interval": KEEPALIVE_MS, "max_lifetime": LIFETIME_MS,
                                  "metadata_mime": METADATA_MIME, "data_mime": DATA_MIME}
        if self.draft:
            values.update(major_version=0, keepalive_interval=DRAFT_KEEPALIVE_NS, max_lifetime=DRAFT_LIFETIME_NS)
        values.update(self.setup)
        return [Setup(**values)]

    @property
    def keepalive_every(self) -> float:
        """Seconds between the kit's own KEEPALIVEs (the client MUST keep the connection alive)."""
        setup = self._setup_sent or self.opening()[0]
        return max(float(setup.keepalive_interval) / (1e9 if self.draft else 1e3), 0.05)

    def keepalive(self) -> list[Any]:
        """The kit's periodic KEEPALIVE: R set in 1.0 (the draft has no R; its server answers every one)."""
        return [] if self._closing else [Keepalive(respond=not self.draft)]

    def barrier(self, token: bytes) -> list[Any]:
        """KEEPALIVE with R (draft: every client KEEPALIVE is answered, RS-o), its data the token.  Its
        answer echoes the data (RS-KEEPALIVE-3); a target that writes its frames in the order it reads
        and produces them sends what it had before the answer.  None ([]) unless the connection is in good
        standing, where one more KEEPALIVE changes nothing a scenario tests: the kit has opened it with
        SETUP (not RESUME), neither side has ended it or owes an ERROR for it, and the kit has broken no
        rule on it (a scenario that breaks one on purpose watches what the target does next)."""
        model = self._model
        if self._closing or model is None:
            return []
        kit, target = model.parties[self._kit_side], model.parties[self._target_side]
        if (not kit.setups or kit.resumed or kit.awaiting_resume_ok or kit.must_broken or kit.closed
                or kit.ended is not None or kit.owes is not None or target.ended is not None
                or target.owes is not None or target.closed):
            return []
        self._barriers[token] = False
        return [Keepalive(respond=not self.draft, data=token)]

    def barrier_answered(self, token: bytes) -> bool:
        if not self._barriers.get(token, False):
            return False
        del self._barriers[token]  # answered once: the kit's tokens never repeat
        return True

    def check_opening(self, event: Any) -> tuple[str, str] | None:
        return None  # RSocket answers SETUP with nothing (an ERROR[*_SETUP] refuses it)

    def goodbye(self, reason: str) -> list[Any]:
        return []  # RSocket has no goodbye: the kit closes the transport

    def kit_closing(self, model: Any) -> bool:
        return self._closing

    def kit_owes_goodbye(self, model: Any) -> bool:
        return False

    def target_extensions(self, model: Any) -> list[Any]:
        return []

    def element(self, value: int) -> bytes:
        return str(value).encode("ascii")

    def element_value(self, data: bytes) -> int | None:
        """The integer of an element: its decimal text (bindings.md section 2), or None."""
        text = data.decode("ascii", errors="replace")
        return int(text) if text.lstrip("-").isdigit() and text[:1] != "+" else None

    def replies(self) -> list[Any]:
        out, self._replies = self._replies, []
        return out

    # -- stream ids ---------------------------------------------------------------------------

    def _open(self, subscriber: int) -> int:
        """The stream id for a new request of logical ``subscriber``: its own while in use, else a fresh one."""
        sid = self._stream_of.get(subscriber)
        if sid is not None and sid not in self._ended:
            return sid  # a request on an in-use id: the scenario means it (the target must ignore it)
        sid = self._next_id
        while sid in self._target_ids:  # the kit picks after the target: never an id the target used (RS-t)
            sid += 2
        self._next_id = sid + 2
        self._stream_of[subscriber] = sid
        self._logical[sid] = subscriber
        return sid

    def _stream(self, subscriber: Any) -> int:
        if not isinstance(subscriber, int) or isinstance(subscriber, bool):
            raise ValueError(f"subscriber {subscriber!r} is not an integer")
        return self._stream_of.get(subscriber, 2 * subscriber - 1)

    def kit_key(self, subscriber: Any) -> Key:
        return ("kit", self._stream(subscriber))

    def target_key(self, subscriber: Any) -> Key:
        return ("target", subscriber)  # the target's subscriptions are named by their stream id

    def key(self, name: str, fields: dict[str, Any]) -> Key:
        if name == "KEEPALIVE":
            return KEEPALIVES
        if name in CONNECTION_NAMES or name == "goodbye":
            return CONN
        if name == "subscribe" or name in REQUEST_NAMES:
            return SUBSCRIBES
        if "stream_id" in fields:
            sid = fields["stream_id"]
            if sid == 0:
                return CONN
            if name in ("request", "cancel", "REQUEST_N", "CANCEL"):
                return ("target", sid)
            return ("kit", sid)
        if "subscriber" not in fields:
            raise ValueError(f"{name} names neither a stream_id nor a subscriber")
        if name in ("request", "cancel", "REQUEST_N", "CANCEL"):
            return self.target_key(fields["subscriber"])
        return self.kit_key(fields["subscriber"])

    # -- sending ------------------------------------------------------------------------------

    def frames(self, name: str, fields: dict[str, Any]) -> list[Any]:
        values = dict(fields)
        if name == "subscribe":
            sid = self._open(self._int(values, "subscriber"))
            self._contract_opens.add(sid)
            return [RequestStream(stream_id=sid, initial_request_n=self._int(values, "initialDemand"),
                                  data=self._bytes(values.get("publisher", "")),
                                  metadata=self._bytes(values["metadata"]) if "metadata" in values else None)]
        if name == "request":
            return [RequestN(stream_id=self._stream(values.get("subscriber")), request_n=self._int(values, "demand"))]
        if name == "cancel":
            sid = self._stream(values.get("subscriber"))
            self._ended.add(sid)
            return [Cancel(stream_id=sid)]
        if name == "onSubscribe":
            return []  # RSocket's stream is open once requested: the publisher sends no frame
        if name == "onNext":
            return [Payload(stream_id=self._int(values, "subscriber"), next=True,
                            data=self._bytes(values.get("element", b"")))]
        if name == "onComplete":
            return [Payload(stream_id=self._int(values, "subscriber"), complete=True)]
        if name == "onError":
            return [Error(stream_id=self._int(values, "subscriber"), error_code=APPLICATION_ERROR,
                          data=self._bytes(values.get("error", "")))]
        cls = FRAME_BY_NAME.get(name)
        if cls is None:
            raise ValueError(f"RSocket has no frame or signal {name!r}")
        return self._wire_frames(cls, values)

    def _wire_frames(self, cls: type, values: dict[str, Any]) -> list[Any]:
        pieces = values.pop("fragment", None)
        if "subscriber" in values:
            logical = self._int(values, "subscriber")
            del values["subscriber"]
            values["stream_id"] = self._open(logical) if cls in REQUESTS else self._stream(logical)
        for field_name in BYTES_FIELDS & values.keys():
            if values[field_name] is not None:
                values[field_name] = self._bytes(values[field_name])
        if cls is Setup:
            values = {**frame_fields(self.opening()[0]), **values}  # what the scenario leaves out: bindings.md
        if isinstance(values.get("error_code"), str):
            code = CODE_BY_NAME.get(values["error_code"])
            if code is None:
                raise ValueError(f"unknown error code {values['error_code']!r}")
            values["error_code"] = code
        frame = cls(**values)
        if cls is Setup and self._setup_sent is None:
            self._setup_sent = frame
        if cls in REQUESTS and frame.stream_id & 1 and frame.stream_id not in self._logical:
            # A request on a stream id the scenario chose: logical subscriber (id+1)/2, as bindings.md
            # numbers them, and a later ``subscribe`` takes the next id after it.
            self._logical[frame.stream_id] = (frame.stream_id + 1) // 2
            self._stream_of.setdefault((frame.stream_id + 1) // 2, frame.stream_id)
            self._next_id = max(self._next_id, frame.stream_id + 2)
        if cls is Cancel:
            self._ended.add(frame.stream_id)
        if cls is Error and frame.stream_id == 0:
            self._closing = True  # the kit ends the connection (CONNECTION_CLOSE or an error)
        if pieces is not None:
            return fragment(frame, int(pieces))  # type: ignore[arg-type]
        return [frame]

    @staticmethod
    def _int(values: dict[str, Any], name: str) -> int:
        value = values.get(name)
        if not isinstance(value, int) or isinstance(value, bool):
            raise ValueError(f"{name} {value!r} is not an integer")
        return value

    @staticmethod
    def _bytes(value: Any) -> bytes:
        if isinstance(value, str):
            return value.encode("utf-8")
        if isinstance(value, (bytes, bytearray)):
            return bytes(value)
        raise ValueError(f"{value!r} is neither bytes nor text")

    def sent(self, frames: list[Any], index: int) -> list[tuple[Key, Event]]:
        out = []
        for offset, frame in enumerate(frames):
            sid = getattr(frame, "stream_id", 0)
            if isinstance(frame, RequestStream) and sid in self._contract_opens:
                self._contract_opens.discard(sid)
                fields = {"subscriber": self._logical.get(sid, sid), "stream_id": sid}
                out.append((("kit", sid), Event("onSubscribe", fields, index + offset, frame="REQUEST_STREAM")))
        return out

    # -- receiving ----------------------------------------------------------------------------

    def attach(self, judge: RSocketJudge, kit: Side, target: Side) -> None:
        """The connection's judge (the monitor's), which has judged each frame of the target before the engine
        hands it to ``received``: its reassembler for the target's direction joins the fragments."""
        self._outcomes = judge.follow_reassembly(target)
        self._model, self._kit_side, self._target_side = judge.model, kit, target

    def _outcome(self, frame: Any) -> Any:
        """What the judge's reassembly made of ``frame``: itself, None (a fragment held), the whole frame it
        completed, or the ProtocolViolation of a broken chain."""
        outcomes = self._outcomes
        if outcomes is None:
            raise RuntimeError("the RSocket scenario adapter reads the connection's judge: attach() it first")
        for position, (seen, outcome) in enumerate(outcomes):
            if seen is frame:
                for _ in range(position + 1):
                    outcomes.popleft()  # (and any left by a read the engine stopped sorting)
                return outcome
        return frame

    def fast_element(self, frame: Any, index: int) -> tuple[Key, Event] | None:
        sid = frame.stream_id
        outcomes = self._outcomes
        if (not frame.next or frame.complete or frame.follows or frame.metadata is not None
                or sid & 1 == 0 or (outcomes and any(seen is frame for seen, _ in outcomes))):
            return None
        data = frame.data
        fields = {"subscriber": self._logical.get(sid, sid), "element": data, "stream_id": sid, "data": data,
                  "next": True}
        return ("kit", sid), Event("onNext", fields, index, "onNext", len(data), "PAYLOAD")

    def received(self, frame: Any, index: int) -> list[tuple[Key, Event]]:
        if isinstance(frame, IgnoredFrame):
            return []  # a frame the spec says to ignore; the monitor records it
        whole = self._outcome(frame)
        if isinstance(whole, ProtocolViolation):
            if whole.rule == "RS-LIMIT-1":
                self.error = f"target sent a fragmented payload over the kit's reassembly limit: {whole}"
                self.truncated.setdefault("reassembly", f"stream {frame.stream_id}: {self.error}")
            return []  # the monitor judges the broken chain
        if whole is None:
            return []  # a fragment: the whole payload comes with the last one
        via = "fragments" if whole is not frame else "onNext"
        return self._events(whole, index, via)

    def _events(self, frame: Any, index: int, via: str) -> list[tuple[Key, Event]]:
        fields = frame_fields(frame)
        name = frame.wire_name
        sid = frame.stream_id
        if isinstance(frame, Keepalive):
            if frame.respond and not self._closing:
                self._replies.append(Keepalive(respond=False, data=frame.data))
            elif not frame.respond and self._barriers.get(frame.data) is False:
                self._barriers[frame.data] = True
                return []  # the answer to the kit's barrier: no step expects it (the monitor has judged it)
            return [(KEEPALIVES, Event(name, fields, index))]
        if sid == 0:
            if isinstance(frame, Error):
                fields.update(code=ERROR_CODE_NAMES.get(frame.error_code, hex(frame.error_code)),
                              reason=_text(frame.data))
            return [(CONN, Event(name, fields, index))]
        subscriber = self._logical.get(sid, sid)
        fields["subscriber"] = subscriber
        if isinstance(frame, REQUESTS):
            self._target_ids.add(sid)
            demand = {RequestResponse: 1, RequestFnf: 0}.get(type(frame), getattr(frame, "initial_request_n", 0))
            fields.update(publisher=_text(frame.data), initialDemand=demand)
            return [(SUBSCRIBES, Event("subscribe", fields, index, frame=name))]
        if isinstance(frame, RequestN):
            fields["demand"] = frame.request_n
            return [(("target", sid), Event("request", fields, index, frame=name))]
        if isinstance(frame, Cancel):
            return [(("target", sid), Event("cancel", fields, index, frame=name))]
        key: Key = ("kit", sid)
        if isinstance(frame, Error):
            self._ended.add(sid)
            fields.update(error=_text(frame.data), code=ERROR_CODE_NAMES.get(frame.error_code, hex(frame.error_code)))
            return [(key, Event("onError", fields, index, frame=name))]
        if isinstance(frame, Payload):
            out = []
            if frame.next:
                element = dict(fields, element=frame.data)
                out.append((key, Event("onNext", element, index, via, len(frame.data), name)))
            if frame.complete:
                self._ended.add(sid)
                out.append((key, Event("onComplete", fields, index, frame=name)))
            if not out:
                out.append((key, Event(name, fields, index)))  # neither N nor C: the frame as it is
            return out
        return [(key, Event(name, fields, index))]
