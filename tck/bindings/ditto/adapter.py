"""Ditto's scenario adapter: how the step language speaks Ditto (``rsio_tck.binding.ScenarioAdapter``).

Theory of operation.  The kit is the client (the subscriber); it opens with
nothing and waits for nothing.  Each subscribe of a logical subscriber k gets a
fresh *handle* (the inbox key, so a late event of an ended subscription never
lands in the inbox of the one that replaced it) and a fresh ``correlation-id``
(``k<k>-<handle>``).  Until the target's ``created`` arrives the subscription is
known by that correlation-id only; ``created`` binds the ``subscriptionId`` the
target chose, and from then on ``request``/``cancel`` name it and ``next``/
``complete``/``failed`` are sorted by it (SPEC.md, decision DITTO-a).

Sending.  Contract scenarios' ``subscribe`` becomes ``subscribeForPersistedEvents``
(streaming: ``tck/range?start=S&count=N`` is revisions S..S+N-1 of ``tck/range``,
``tck/infinite?start=S`` from S, ``tck/error?after=N`` revisions 0..N-1, any other
``ns/name`` that entity) or ``search/subscribe`` (search: ``tck/range?count=N`` is
the filter ``eq(attributes/tck,N)`` with ``size(1)``, one thing per page).  Ditto
has no initial demand: ``initialDemand`` n > 0 is sent as ``request`` n as soon as
``created`` arrives (``replies``); so are a ``request`` or ``cancel`` the scenario sends before
``created`` (the client has no subscriptionId to name yet).  Contract ``request``/``cancel`` for a
subscription that ended or was cancelled skip the scenario (decision DITTO-e:
Ditto's subscriber must not send them).  Ditto-specific scenarios also send
``subscribeForPersistedEvents`` (``thing``, ``from``, ``to``), ``searchSubscribe``
(``filter``, ``options``, ``namespaces``, ``fields``), ``request``/``cancel`` with an
explicit ``subscriptionId`` or with ``unknownSubscriptionId`` (an id no ``created`` on this
connection announced: the given text, made unique against the target's ids at the time it is
sent, since the target chooses its ids freely and could have chosen that very text), and ``json``
(one raw line, ``text``).

Receiving.  ``created`` is onSubscribe, ``next`` onNext (the element is the item's
JSON, or the page's), ``complete`` onComplete, ``failed`` onError; each event also
carries ``subscriptionId``, ``correlation_id``, ``item``/``items``/``count``,
``status``/``code``.  Events for ids the kit does not know (a ``failed`` answering
a request on an unknown id) go to an inbox of their own, kind ``stray``; error
responses (topic ``.../errors``) are connection events ``errorResponse``.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any
from urllib.parse import parse_qs, urlsplit

from ...scenarios.bounds import MESSAGE_MAX_BYTES
from ...scenarios.events import CONN, SUBSCRIBES, Event
from ...scenarios.steps import StepSkipped
from ...semantics.demand import saturating_add
from ...semantics.signals import CONTRACT_WORDS
from .codec import DittoLimits
from .contract import item_value, thing_index, thing_rank
from .framing import ControlMessage
from .judge import COMPLETES, CREATED, FAILEDS, NEXTS
from .messages import (
    Envelope,
    SearchCancel,
    SearchNext,
    SearchRequest,
    SearchSubscribe,
    StreamingCancel,
    StreamingNext,
    StreamingRequest,
    SubscribeForPersistedEvents,
    Target,
)

Key = tuple[str, int | None]
STRAY: Key = ("stray", None)
FEATURES = frozenset({
    "unbounded-demand",  # a request of 2^63-1 (DITTO-DEM-4)
    "onsubscribe-frame",  # created is a message of its own
    "id-reuse",  # a logical subscriber subscribes again once its subscription ended (a fresh subscribe)
    "large-ids",  # logical subscriber numbers are free: each subscribe gets a fresh correlation-id
})
SKIP_ENDED = ("Ditto's subscriber must not name a subscription after its cancel or end, nor one never announced "
              "(DITTO-SUB-7, DITTO-SUB-8; SPEC.md decision DITTO-e)")


class RawLine:
    """One line the kit sends as it is (``json:`` steps): judged as its receiver would read it."""

    __slots__ = ("raw_text",)

    def __init__(self, text: str) -> None:
        self.raw_text = text

    def __repr__(self) -> str:
        return f"RawLine({self.raw_text!r})"


# A contract scenario's integer i is revision i + 1 on Ditto (SPEC.md decision DITTO-k): every revision the kit
# sends is then absolute in the schema's terms (fromHistoricalRevision >= 0, toHistoricalRevision >= 1), and an
# empty range is sent without toHistoricalRevision (the parameter default, count 0), never as -1 or 0.
REVISION_OFFSET = 1


def publisher_target(name: str) -> tuple[Target, int | None, int | None]:
    """(target, from revision, to revision or None) of a contract scenario's publisher name (decision DITTO-k):
    ``tck/range?start=S&count=N`` is revisions S+1 .. S+N (no ``to`` when N is 0), ``tck/error?after=N``
    revisions 1 .. N, ``tck/infinite?start=S`` from S+1; the search profile reads ``count`` back as N."""
    parts = urlsplit(name)
    path = parts.path.strip("/").split("/")
    if len(path) != 2 or not all(path):
        raise ValueError(f"publisher {name!r} is not namespace/name")
    query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
    target = Target(namespace=path[0], entity_name=path[1])
    first = int(query.get("start", 0)) + REVISION_OFFSET
    if path == ["tck", "range"]:
        count = int(query.get("count", 0))
        return target, first, first + count - 1 if count > 0 else None
    if path == ["tck", "error"]:
        after = int(query.get("after", 0))
        return target, REVISION_OFFSET, REVISION_OFFSET + after - 1 if after > 0 else None
    if path == ["tck", "infinite"]:
        return target, first, None
    return target, None, None


class DittoScenarioAdapter:
    opens_with_reply = False
    goodbye_kinds: frozenset[str] = frozenset()  # Ditto has no goodbye: the kit closes the transport
    quiet_kinds = frozenset({"control"})
    reply_awaited = False
    fast_type: type | None = None
    takes_runs = False
    keepalive_every = 0.0
    features = FEATURES
    frame_words = CONTRACT_WORDS + ("subscribeForPersistedEvents", "searchSubscribe", "json", "created", "next",
                                    "complete", "failed", "errorResponse", "stray")

    def __init__(self, binding: Any, profile: str, limits: Any = None) -> None:
        self.binding = binding
        self.profile = profile
        self.limits = limits
        # The kit's configured maximum line in a scenario connection (DITTO-LINE-1: "the receiver's maximum"):
        # eight connections each buffering 16 MiB of a line that never ends, with their copies, were 880 MB.
        base = limits if isinstance(limits, DittoLimits) else DittoLimits()
        self.session_limits = replace(base, max_message=min(base.max_message, MESSAGE_MAX_BYTES))
        self.error: str | None = None
        self.truncated: dict[str, str] = {}
        self._handles = 0
        self._handle_of: dict[Any, int] = {}  # logical subscriber -> its current handle
        self._logical: dict[int, Any] = {}
        self._by_cid: dict[str, int] = {}
        self._by_sid: dict[str, int] = {}
        self._sid: dict[int, str] = {}
        self._announced: set[str] = set()  # every subscriptionId a created named on this connection
        self._target: dict[int, Target | None] = {}  # None: a search subscription
        self._initial: dict[int, int] = {}  # demand to request as soon as created arrives
        self._deferred_cancel: set[int] = set()  # cancel to send as soon as created arrives
        self._ended: set[int] = set()  # cancelled by the kit, or complete/failed received
        self._replies: list[Any] = []
        self._unnamed: list[int] = []  # subscribes sent without a correlation-id, oldest first, no created yet
        self._contract: dict[int, int] = {}  # contract subscriptions: search collection size (0: streaming)
        self._cancelled: set[int] = set()  # cancelled by the kit: what still arrives was in flight (DITTO-g)

    # -- opening and closing -----------------------------------------------------------------

    def opening(self) -> list[Any]:
        return []

    def check_opening(self, event: Any) -> tuple[str, str] | None:
        return None

    def goodbye(self, reason: str) -> list[Any]:
        return []

    def keepalive(self) -> list[Any]:
        return []

    def barrier(self, token: bytes) -> list[Any]:
        return []  # no frame whose answer orders what came before it (subscriptions answer apart: SPEC.md DITTO-o)

    def barrier_answered(self, token: bytes) -> bool:
        return False

    def kit_closing(self, model: Any) -> bool:
        return False

    def kit_owes_goodbye(self, model: Any) -> bool:
        return False

    def target_extensions(self, model: Any) -> list[Any]:
        return []

    def replies(self) -> list[Any]:
        out, self._replies = self._replies, []
        return out

    def element(self, value: int) -> bytes:
        return json.dumps({"revision": value}).encode()

    def element_value(self, data: bytes) -> int | None:
        """A streaming item's revision, or the index of a search page's one thing (a contract subscription's
        element is already the contract's integer: ``received``)."""
        try:
            value = json.loads(data)
        except ValueError:
            return None
        if isinstance(value, list):
            return thing_index(value[0]) if len(value) == 1 else None
        return item_value(value)

    def in_flight(self, key: Key, event: Event) -> bool:
        """Whether ``event`` may still arrive after the kit's cancel however late it comes: Ditto's pages let
        events already in flight arrive after a cancel, and the judge counts each against the demand granted
        before it (DITTO-CAN-1), so no step judges them by the time they took (SPEC.md decision DITTO-g)."""
        return key[0] == "kit" and key[1] in self._cancelled and event.kind in ("onNext", "onComplete", "onError")

    # -- keys --------------------------------------------------------------------------------

    def kit_key(self, subscriber: Any) -> Key:
        handle = self._handle_of.get(subscriber)
        return ("kit", handle) if handle is not None else ("kit-unopened", hash(subscriber))

    def target_key(self, subscriber: Any) -> Key:
        return ("target", None)  # the kit publishes nothing on Ditto

    def key(self, name: str, fields: dict[str, Any]) -> Key:
        if name in ("errorResponse", "control"):
            return CONN
        if name == "stray":
            return STRAY
        if name in ("subscribe", "subscribeForPersistedEvents", "searchSubscribe"):
            return SUBSCRIBES
        if "subscriber" in fields:
            return self.kit_key(fields["subscriber"])
        sid = fields.get("subscriptionId")
        if sid is not None and sid in self._by_sid:
            return ("kit", self._by_sid[sid])
        if sid is not None:
            return STRAY
        raise ValueError(f"{name} names neither a subscriber nor a subscriptionId")

    # -- sending -----------------------------------------------------------------------------

    def _open(self, subscriber: Any, target: Target | None, cid: str | None = None,
              unnamed: bool = False) -> tuple[int, dict[str, Any]]:
        """A fresh handle for ``subscriber``, and the headers of its subscribe: a correlation-id (the given
        one, or ``k<subscriber>-<handle>``), none when ``unnamed``."""
        self._handles += 1
        handle = self._handles
        self._handle_of[subscriber] = handle
        self._logical[handle] = subscriber
        self._target[handle] = target
        if unnamed:
            self._unnamed.append(handle)
            return handle, {}
        cid = cid or f"k{subscriber}-{handle}"
        self._by_cid[cid] = handle
        return handle, {"correlation-id": cid}

    def frames(self, name: str, fields: dict[str, Any]) -> list[Any]:
        values = dict(fields)
        subscriber = values.get("subscriber")
        if name == "subscribe":
            return [self._contract_subscribe(subscriber, str(values.get("publisher", "")),
                                             int(values.get("initialDemand", 0)))]
        if name == "subscribeForPersistedEvents":
            thing = str(values.get("thing", "tck/range"))
            namespace, _, entity = thing.partition("/")
            target = Target(namespace=namespace, entity_name=entity, group=values.get("group", "things"),
                            channel=values.get("channel", "twin"))
            _, headers = self._open(subscriber, target, values.get("correlation_id"),
                                    bool(values.get("no_correlation_id")))
            return [SubscribeForPersistedEvents(target=target, headers=headers,
                                                from_revision=values.get("from"), to_revision=values.get("to"),
                                                filter=values.get("filter"))]
        if name == "searchSubscribe":
            _, headers = self._open(subscriber, None, values.get("correlation_id"), bool(values.get("no_correlation_id")))
            namespaces = values.get("namespaces")
            return [SearchSubscribe(headers=headers, filter=values.get("filter"),
                                    options=values.get("options"), fields=values.get("fields"),
                                    namespaces=tuple(namespaces) if namespaces is not None else None)]
        if name in ("request", "cancel"):
            command = self._command(name, values)
            return [] if command is None else [command]
        if name == "json":
            return [RawLine(str(values["text"]))]
        raise ValueError(f"Ditto has no message or signal {name!r}")

    def _contract_subscribe(self, subscriber: Any, publisher: str, initial: int) -> Any:
        target, first, last = publisher_target(publisher)
        if "message=" in publisher and target.entity_name == "error":
            raise StepSkipped("Ditto's tck/error takes no message: its failed carries the target's own error "
                              "(bindings.md §3, SPEC.md decision DITTO-i)")
        if self.profile == "search":
            if target.namespace != "tck" or target.entity_name != "range" or first != REVISION_OFFSET:
                raise StepSkipped(f"the search profile's test collection serves only tck/range from 0, not "
                                  f"{publisher!r} (bindings.md §3)")
            total = 0 if last is None else last - first + 1
            handle, headers = self._open(subscriber, None)
            self._initial[handle] = initial
            self._contract[handle] = total
            return SearchSubscribe(headers=headers, filter=f"eq(attributes/tck,{total})", options="size(1)")
        if first is not None and first < 0:
            raise StepSkipped(f"{publisher!r}: Ditto reads a negative fromHistoricalRevision as relative to the latest "
                              "revision (its schema), so a range below 0 has no Ditto form (SPEC.md decision DITTO-k)")
        handle, headers = self._open(subscriber, target)
        self._initial[handle] = initial
        self._contract[handle] = 0
        return SubscribeForPersistedEvents(target=target, headers=headers, from_revision=first, to_revision=last)

    def _command(self, name: str, values: dict[str, Any]) -> Any | None:
        demand = values.get("demand", 0)
        if name == "request" and (not isinstance(demand, int) or isinstance(demand, bool)):
            raise ValueError(f"demand {demand!r} is not an integer")
        sid = values.get("subscriptionId")
        if sid is None and "unknownSubscriptionId" in values:
            sid = self.unknown_id(str(values["unknownSubscriptionId"]))
        target: Target | None = None
        if sid is None:
            handle = self._handle_of.get(values.get("subscriber"))
            if name == "cancel" and handle in self._ended:
                return None  # cancel of an ended subscription: a no-op in the client, nothing on the wire
            if values.get("if_live") and handle in self._ended:
                # "More pages, unless it is over": a search of short pages may or may not have completed yet.
                return None
            if handle is not None and handle not in self._ended and handle not in self._sid:
                # Before created the client has no subscriptionId to name: it waits for created (decision DITTO-a).
                if name == "cancel":
                    self._deferred_cancel.add(handle)
                    self._ended.add(handle)
                    self._cancelled.add(handle)
                elif demand > 0:
                    self._initial[handle] = saturating_add(self._initial.get(handle, 0), demand)
                else:
                    raise StepSkipped("a request with demand <= 0 before created: Ditto's subscriber has no "
                                      "subscriptionId to send it with yet")
                return None
            if handle is None or handle in self._ended or handle not in self._sid:
                raise StepSkipped(SKIP_ENDED)
            sid, target = self._sid[handle], self._target[handle]
            if name == "cancel":
                self._ended.add(handle)
                self._cancelled.add(handle)
        else:
            handle = self._by_sid.get(sid)
            target = self._target.get(handle) if handle is not None else (
                Target(namespace="tck", entity_name="range") if self.profile == "streaming" else None)
        return self._message(name, sid, target, demand)

    def unknown_id(self, text: str) -> str:
        """``text``, or ``text-1``, ``text-2``, ...: the first that no created on this connection announced.

        The kit picks it only once it knows the target's ids: a target may legally have named a live
        subscription ``text`` itself, and the kit would then name that one (SPEC.md decision DITTO-n)."""
        sid, n = text, 0
        while sid in self._announced:
            n += 1
            sid = f"{text}-{n}"
        return sid

    @staticmethod
    def _message(name: str, sid: str, target: Target | None, demand: int) -> Any:
        """``request``/``cancel`` for ``sid`` (``target`` None: a search subscription)."""
        if target is None:
            return SearchRequest(subscription_id=sid, demand=demand) if name == "request" else \
                SearchCancel(subscription_id=sid)
        if name == "request":
            return StreamingRequest(target=target, subscription_id=sid, demand=demand)
        return StreamingCancel(target=target, subscription_id=sid)

    def sent(self, frames: list[Any], index: int) -> list[tuple[Key, Event]]:
        return []  # created, not the subscribe, is onSubscribe

    # -- receiving ---------------------------------------------------------------------------

    def _contract_element(self, handle: int, payload: Any) -> Any:
        """What a step sees of a ``next``: the payload, or for a contract subscription the contract's integer
        (decision DITTO-k: revision - 1 on streaming; on search the page's one thing's position in the
        collection's default order, ``sort(+thingId)``), so ``int`` matchers read the scenario's elements."""
        if handle not in self._contract:
            return payload
        total = self._contract[handle]
        if isinstance(payload, tuple | list):
            index = thing_index(payload[0]) if len(payload) == 1 else None
            return thing_rank(index, total) if index is not None and 0 <= index < total else list(payload)
        revision = item_value(payload)
        return revision - REVISION_OFFSET if revision is not None else payload

    def fast_element(self, frame: Any, index: int) -> tuple[Key, Event] | None:
        return None

    def received(self, frame: Any, index: int) -> list[tuple[Key, Event]]:
        if isinstance(frame, ControlMessage):
            return [(CONN, Event("control", {"name": frame.name}, index))]
        if isinstance(frame, Envelope):
            value = frame.value if isinstance(frame.value, dict) else {}
            info = {"topic": str(frame.topic), "status": frame.status, "code": value.get("error"),
                    "correlation_id": frame.correlation_id}
            kind = "errorResponse" if frame.topic.criterion == "errors" else "envelope"
            return [(CONN, Event(kind, info, index))]
        sid: str = getattr(frame, "subscription_id", "")
        fields: dict[str, Any] = {"subscriptionId": sid, "correlation_id": frame.correlation_id}
        if isinstance(frame, CREATED):
            self._announced.add(sid)
            handle = self._by_cid.get(frame.correlation_id) if isinstance(frame.correlation_id, str) else None
            if handle is None and self._unnamed:
                # The oldest subscribe sent without a correlation-id: its created carries none, or one the target
                # made up (SPEC.md decision DITTO-m).
                handle = self._unnamed.pop(0)
            if handle is None or handle in self._sid:
                return [(STRAY, Event("stray", fields, index, frame="created"))]
            self._sid[handle] = sid
            self._by_sid[sid] = handle
            initial = self._initial.pop(handle, 0)
            if handle in self._deferred_cancel:
                self._deferred_cancel.discard(handle)
                self._replies.append(self._message("cancel", sid, self._target[handle], 0))
            elif initial > 0:
                self._replies.append(self._message("request", sid, self._target[handle], initial))
            fields.update(subscriber=self._logical[handle], elementSize=0)  # Ditto items are never fixed-size
            return [(("kit", handle), Event("onSubscribe", fields, index, frame="created"))]
        handle = self._by_sid.get(sid)
        if handle is None:
            return [(STRAY, Event("stray", fields, index, frame=frame.action))]
        fields["subscriber"] = self._logical[handle]
        key: Key = ("kit", handle)
        if isinstance(frame, NEXTS):
            items = frame.items if isinstance(frame, SearchNext) else None  # search: a page; streaming: one item
            payload = frame.item if isinstance(frame, StreamingNext) else items
            element = self._contract_element(handle, payload)
            # A contract integer's JSON is its decimal text (written at once: one per element of a flood).
            data = (str(element) if type(element) is int else json.dumps(element)).encode()
            fields.update(element=data, count=1 if items is None else len(items))
            fields["item" if items is None else "items"] = payload
            return [(key, Event("onNext", fields, index, "onNext", len(data), "next"))]
        if isinstance(frame, COMPLETES):
            self._ended.add(handle)
            return [(key, Event("onComplete", fields, index, frame="complete"))]
        if isinstance(frame, FAILEDS):
            self._ended.add(handle)
            error = frame.error
            fields.update(error=error.message or error.error or "", status=error.status, code=error.error)
            return [(key, Event("onError", fields, index, frame="failed"))]
        return [(key, Event(frame.action, fields, index))]
