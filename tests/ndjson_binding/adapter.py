"""ndjson's scenario adapter: how the step language speaks ndjson (``rsio_tck.binding.ScenarioAdapter``).

The kit is the subscriber.  It opens with nothing and closes with nothing (no hello, no goodbye).
A scenario's subscriber number is the line's ``id``.  ``subscribe`` opens the subscription, so
sending it is its onSubscribe (``sent``); ``next``, ``complete`` and ``error`` are onNext,
onComplete and onError.  An element is the JSON text of the ``next``'s value, so ``{int: N}``
matches the test publishers' integer N.
"""

from __future__ import annotations

import json
from typing import Any

from rsio_tck.scenarios.events import CONN, SUBSCRIBES, Event
from rsio_tck.semantics.signals import CONTRACT_WORDS

from .wire import Message

Key = tuple[str, int | None]
FEATURES = frozenset({
    "initial-demand-zero",  # a subscribe's n may be 0: no element until a request
    "unbounded-demand",  # n of 2^63-1 is unbounded
    "id-reuse",  # an id may be subscribed again once its subscription ended
})
SIGNALS = {"next": "onNext", "complete": "onComplete", "error": "onError"}


class NdjsonScenarioAdapter:
    opens_with_reply = False
    goodbye_kinds: frozenset[str] = frozenset()
    quiet_kinds: frozenset[str] = frozenset()
    reply_awaited = False
    fast_type: type | None = None
    takes_runs = False
    keepalive_every = 0.0
    features = FEATURES
    frame_words = CONTRACT_WORDS

    def __init__(self, binding: Any, profile: str) -> None:
        self.binding = binding
        self.profile = profile
        self.error: str | None = None
        self.truncated: dict[str, str] = {}

    # -- opening and closing: ndjson has neither -----------------------------------------------

    def opening(self) -> list[Any]:
        return []

    def check_opening(self, event: Any) -> tuple[str, str] | None:
        return None

    def goodbye(self, reason: str) -> list[Any]:
        return []

    def kit_closing(self, model: Any) -> bool:
        return False

    def kit_owes_goodbye(self, model: Any) -> bool:
        return False

    def target_extensions(self, model: Any) -> list[Any]:
        return []

    def replies(self) -> list[Any]:
        return []

    def keepalive(self) -> list[Any]:
        return []

    def barrier(self, token: bytes) -> list[Any]:
        return []

    def barrier_answered(self, token: bytes) -> bool:
        return False

    # -- elements and keys ---------------------------------------------------------------------

    def element(self, value: int) -> bytes:
        return json.dumps(value).encode()

    def element_value(self, data: bytes) -> int | None:
        try:
            value = json.loads(data)
        except ValueError:
            return None
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    def kit_key(self, subscriber: Any) -> Key:
        return ("kit", int(subscriber))

    def target_key(self, subscriber: Any) -> Key:
        return ("target", int(subscriber))  # the kit publishes nothing on ndjson

    def key(self, name: str, fields: dict[str, Any]) -> Key:
        if name == "subscribe":
            return SUBSCRIBES
        if "subscriber" in fields:
            return self.kit_key(fields["subscriber"])
        return CONN

    # -- sending -----------------------------------------------------------------------------

    def frames(self, name: str, fields: dict[str, Any]) -> list[Any]:
        subscriber = fields.get("subscriber")
        if not isinstance(subscriber, int):
            raise ValueError(f"{name} needs an integer subscriber")
        if name == "subscribe":
            return [Message("subscribe", subscriber, publisher=str(fields.get("publisher", "")),
                            n=int(fields.get("initialDemand", 0)))]
        if name == "request":
            demand = fields.get("demand", 0)
            if not isinstance(demand, int) or isinstance(demand, bool):
                raise ValueError(f"demand {demand!r} is not an integer")
            return [Message("request", subscriber, n=demand)]
        if name == "cancel":
            return [Message("cancel", subscriber)]
        raise ValueError(f"ndjson has no signal {name!r} (subscribe, request, cancel)")

    def sent(self, frames: list[Any], index: int) -> list[tuple[Key, Event]]:
        return [(self.kit_key(frame.id), Event("onSubscribe", {"subscriber": frame.id, "elementSize": 0},
                                               index + offset, frame="subscribe"))
                for offset, frame in enumerate(frames) if frame.op == "subscribe"]

    # -- receiving ---------------------------------------------------------------------------

    def fast_element(self, frame: Any, index: int) -> tuple[Key, Event] | None:
        return None

    def received(self, frame: Any, index: int) -> list[tuple[Key, Event]]:
        kind = SIGNALS.get(frame.op)
        fields: dict[str, Any] = {"subscriber": frame.id}
        if kind is None:
            return [(CONN, Event(frame.op, fields, index))]
        if kind == "onNext":
            data = json.dumps(frame.value).encode()
            fields["element"] = data
            return [(self.kit_key(frame.id), Event(kind, fields, index, "onNext", len(data), frame.op))]
        if kind == "onError":
            fields["error"] = frame.message or ""
        return [(self.kit_key(frame.id), Event(kind, fields, index, frame=frame.op))]
