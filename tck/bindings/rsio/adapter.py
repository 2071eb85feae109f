"""RS-IO's scenario adapter: how the step language speaks rsio-v0 (see ``rsio_tck.binding.ScenarioAdapter``).

Theory of operation.  RS-IO's frames are the contract's signals by name, so a
``send:`` entry names a frame class (``subscribe``, ``request``, ``onNext``,
``clientHello``...) and a received frame becomes one inbox event of the same
name, keyed by the subscriber Id it names: the kit's own subscriptions
(``("kit", Id)``: onSubscribe, elements, terminal signals), the target's
(``("target", Id)``: request, cancel), the target's subscribes, and the
connection (hellos, goodbye).  Elements are joined here, once: packed frames
are unpacked into one event per element and split elements (``onNextPart`` ...
``onNextLastPart``) are joined within the kit's reassembly limits, so a step
sees one ``onNext`` per element whatever way it travelled (``via`` says how).
A whole ``onNext`` on an Id with no split element in progress is the flood
case: ``fast_element`` hands the engine its key and bytes without building a
field map.
"""

from __future__ import annotations

from typing import Any

import msgpack

from ...errors import Side
from ...scenarios.bounds import REASSEMBLY_MAX_BYTES
from ...scenarios.events import CONN, SUBSCRIBES, ElementBatch, Event
from .handshake import PartyState
from .split import ReassemblyLimitExceeded, SplitAssembler
from .wire import FRAME_BY_NAME, Limits
from .wire.frames import (
    Cancel,
    ClientHello,
    Goodbye,
    OnComplete,
    OnError,
    OnNext,
    OnNextLastPart,
    OnNextPacked,
    OnNextPart,
    OnSubscribe,
    Request,
    ServerHello,
    Subscribe,
)
from .wire.limits import DEFAULT_LIMITS
from .wire.runs import StridedRun, VariableRun

Key = tuple[str, int | None]
KIT, TARGET = Side.CLIENT, Side.SERVER
SNAKE = {"initialDemand": "initial_demand", "elementSize": "element_size"}
FIELD_NAMES = {"initial_demand": "initialDemand", "element_size": "elementSize"}
CONNECTION_NAMES = frozenset({"clientHello", "serverHello", "goodbye"})
# What the contract scenarios may need that RS-IO has (scenarios/README.md, "Contract scenarios").
FEATURES = frozenset({
    "initial-demand-zero",  # subscribe with initialDemand 0 (RSocket's request N is >= 1)
    "unbounded-demand",  # a single request of 2^63-1 (RSocket's REQUEST_N stops at 2^31-1)
    "negative-demand",  # a negative request or initialDemand on the wire
    "onsubscribe-frame",  # the publisher's onSubscribe is a frame of its own
    "id-reuse",  # the subscriber reuses its Id once the subscription ended
    "duplicate-subscribe-error",  # a subscribe on an active Id is a protocol error (not ignored)
    "large-ids",  # subscriber Ids up to 2^63-1
    "error-text-rule",  # onError names the rule (3.9) in its text
    "msgpack-elements",  # elements are MessagePack values
    "subscribe-reports",  # tck/subscribe reports each signal as a MessagePack map
})


def frame_fields(frame: Any) -> dict[str, Any]:
    return {FIELD_NAMES.get(name, name): getattr(frame, name) for name in frame.__dataclass_fields__
            if name not in ("code", "wire_name")}


class RsioScenarioAdapter:
    opens_with_reply = True
    goodbye_kinds = frozenset({"goodbye"})
    quiet_kinds = frozenset({"serverHello", "clientHello"})
    reply_awaited = True
    fast_type: type | None = OnNext
    takes_runs = True
    features = FEATURES
    frame_words = tuple(FRAME_BY_NAME)  # every RS-IO frame, the contract's signals among them
    keepalive_every = 0.0  # RS-IO has no keepalive

    def __init__(self, binding: Any, profile: str, limits: Limits | None = None) -> None:
        self.binding = binding
        self.profile = profile
        self.limits = limits
        self.error: str | None = None
        self.truncated: dict[str, str] = {}
        # The kit joins a target's split elements within the binding's limit, capped at the kit's configured
        # maximum, for one element and for all in progress together.
        limit = min((limits or DEFAULT_LIMITS).max_reassembly, REASSEMBLY_MAX_BYTES)
        self._parts = SplitAssembler(limit, total_limit=limit)

    # -- sending ------------------------------------------------------------------------

    def opening(self) -> list[Any]:
        return [ClientHello(version=0, extensions=())]

    def check_opening(self, event: Any) -> tuple[str, str] | None:
        if event is None or event.kind != "serverHello":
            return "HS-1", "serverHello"
        if event.fields.get("version") != 0:
            return "HS-6", "serverHello(version=0)"
        return None

    def frames(self, name: str, fields: dict[str, Any]) -> list[Any]:
        cls = FRAME_BY_NAME.get(name)
        if cls is None:
            raise ValueError(f"RS-IO has no frame {name!r}")
        values = {SNAKE.get(k, k): v for k, v in fields.items()}
        if "extensions" in values:
            values["extensions"] = tuple(values["extensions"])
        try:
            return [cls(**values)]
        except TypeError as exc:
            raise ValueError(str(exc)) from None

    def sent(self, frames: list[Any], index: int) -> list[tuple[Key, Event]]:
        return []  # every RS-IO signal is a frame of its own: the target sends its onSubscribe

    def replies(self) -> list[Any]:
        return []

    def keepalive(self) -> list[Any]:
        return []

    def barrier(self, token: bytes) -> list[Any]:
        return []  # no frame whose answer orders what came before it (Ids are independent streams)

    def barrier_answered(self, token: bytes) -> bool:
        return False

    def goodbye(self, reason: str) -> list[Any]:
        return [Goodbye(reason=reason)]

    def kit_closing(self, model: Any) -> bool:
        return bool(model.parties[KIT].state is PartyState.CLOSING)

    def kit_owes_goodbye(self, model: Any) -> bool:
        kit = model.parties[KIT]
        return kit.owes_goodbye is not None and kit.state is not PartyState.CLOSING

    def target_extensions(self, model: Any) -> list[Any]:
        return list(model.parties[TARGET].extensions)

    def element(self, value: int) -> bytes:
        return msgpack.packb(value)  # type: ignore[no-any-return]

    def element_value(self, data: bytes) -> int | None:
        """The integer an element holds, in any MessagePack width (rsio-v0 lets a publisher choose)."""
        try:
            value = msgpack.unpackb(data, raw=False)
        except (ValueError, msgpack.ExtraData, msgpack.FormatError, msgpack.StackError):
            return None
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    # -- keys ---------------------------------------------------------------------------

    def kit_key(self, subscriber: Any) -> Key:
        return ("kit", subscriber)

    def target_key(self, subscriber: Any) -> Key:
        return ("target", subscriber)

    def key(self, name: str, fields: dict[str, Any]) -> Key:
        if name in CONNECTION_NAMES:
            return CONN
        if name == "subscribe":
            return SUBSCRIBES
        sid = fields.get("subscriber")
        if not isinstance(sid, int):
            raise ValueError(f"{name} with a known subscriber, not {sid!r}")
        return ("target", sid) if name in ("request", "cancel") else ("kit", sid)

    # -- receiving ----------------------------------------------------------------------

    def fast_element(self, frame: Any, index: int) -> tuple[Key, Event] | None:
        sid = frame.subscriber
        if self._parts.holds(sid):
            return None
        element = frame.element
        return ("kit", sid), Event("onNext", {"subscriber": sid, "element": element}, index, "onNext", len(element))

    def received(self, frame: Any, index: int) -> list[tuple[Key, Event]]:
        kind = type(frame)
        if kind is VariableRun or kind is StridedRun:
            return _run_events(frame, index)
        if kind in (ServerHello, ClientHello, Goodbye):
            return [(CONN, Event(frame.wire_name, frame_fields(frame), index))]
        if kind is Subscribe:
            return [(SUBSCRIBES, Event("subscribe", frame_fields(frame), index))]
        if kind in (Request, Cancel):
            return [(("target", frame.subscriber), Event(frame.wire_name, frame_fields(frame), index))]
        if kind is OnNext:
            return [self._element(frame.subscriber, frame.element, index, "onNext")]
        if kind is OnNextPacked:
            # Thousands of elements in one frame: one inbox entry that hands them out one by one.
            items = list(frame.elements())
            return [(("kit", frame.subscriber), ElementBatch.of(frame.subscriber, items, index, "onNextPacked"))] if items else []
        if kind in (OnNextPart, OnNextLastPart):
            return self._part(frame, index)
        if kind in (OnSubscribe, OnComplete, OnError):
            # A terminal signal ends the element in progress; so does the onSubscribe of a reused
            # Id: parts joined before it belong to the cancelled subscription (ID-4).
            self._parts.drop(frame.subscriber)
            return [(("kit", frame.subscriber), Event(frame.wire_name, frame_fields(frame), index))]
        return []

    def _part(self, frame: Any, index: int) -> list[tuple[Key, Event]]:
        sid = frame.subscriber
        try:
            whole = self._parts.add(sid, frame.data, type(frame) is OnNextLastPart)
        except ReassemblyLimitExceeded as exceeded:
            whose = "the split elements in progress together" if exceeded.together else "one split element"
            self.error = f"target sent {whose} over the kit's reassembly limit ({exceeded.limit} bytes)"
            self.truncated.setdefault("reassembly", f"subscriber {sid}: {self.error}; the element was dropped")
            return []
        return [] if whole is None else [self._element(sid, whole, index, "split")]

    @staticmethod
    def _element(subscriber: int, element: bytes, index: int, via: str) -> tuple[Key, Event]:
        return ("kit", subscriber), Event("onNext", {"subscriber": subscriber, "element": element}, index, via,
                                          len(element))


def _run_events(run: VariableRun | StridedRun, index: int) -> list[tuple[Key, Event]]:
    """The inbox entries of a run of element frames: what its frames would make one by one, in batches
    (an ``ElementBatch`` hands its elements out one at a time, each under its own frame's index)."""
    out: list[tuple[Key, Event]] = []
    if isinstance(run, StridedRun):
        sid = run.subscriber
        if not run.packed:
            return [(("kit", sid), ElementBatch.of(sid, run.payloads(), index, "onNext", step=1))]
        size = run.size
        for offset, data in enumerate(run.payloads()):
            items = [data[at : at + size] for at in range(0, len(data), size)]
            if items:
                out.append((("kit", sid), ElementBatch.of(sid, items, index + offset, "onNextPacked")))
        return out
    if run.ids is None:
        return [(("kit", run.subscriber), ElementBatch.of(run.subscriber, run.items, index, "onNext", step=1))]
    # Subscriptions interleaved: one batch per stretch of one Id.
    ids, items = run.ids, run.items
    begin = 0
    for at in range(1, len(ids) + 1):
        if at == len(ids) or ids[at] != ids[begin]:
            sid = ids[begin]
            out.append((("kit", sid), ElementBatch.of(sid, items[begin:at], index + begin, "onNext", step=1)))
            begin = at
    return out
