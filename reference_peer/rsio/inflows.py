"""The subscriptions a session made to its remote (the API's, and tck/subscribe's inner ones).

Each is an ``Inflow``: the object told about its onSubscribe, elements (split
parts arrive joined, packed frames unpacked) and end.  Ids are this peer's own
space: fresh ones counting up, or -- a freedom (``freedoms.ID_CHOICES``) -- the
lowest or highest Id that is free (never subscribed, cancelled, or terminated),
the remote's own number for its newest subscription, or a random free Id; these
exercise the remote's handling of Id reuse and of one number in both directions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from rsio_tck.bindings.rsio.wire.frames import (
    Cancel,
    OnComplete,
    OnError,
    OnNext,
    OnNextPacked,
    OnSubscribe,
    Request,
    Subscribe,
)
from rsio_tck.protocol import ReassemblyLimit
from rsio_tck.semantics import StreamState

from .freedoms import ID_SPACE

if TYPE_CHECKING:
    from .connection import RsioConnection

_FREE_STATES = (StreamState.IDLE, StreamState.DONE, StreamState.CANCELLED)


class Inflow(Protocol):
    def on_subscribe(self, element_size: int) -> None: ...

    def on_elements(self, elements: list[bytes], packed: bool) -> None: ...

    def on_end(self, error: str | None) -> None:
        """onComplete (None), onError (its text), or why the subscription ended locally."""


class Subscriptions:
    def __init__(self, session: RsioConnection) -> None:
        self.session = session
        self.by_sid: dict[int, Inflow] = {}
        self._next_sid = 1

    # -- the application's side -----------------------------------------------------------

    def subscribe(self, name: str, inflow: Inflow, initial_demand: int) -> int:
        """Send ``subscribe`` with an Id of this peer's choosing; returns the Id."""
        s = self.session
        if not s.open:
            raise ConnectionError(f"connection is closing: {s.end_reason or 'goodbye'}")
        sid = self.allocate()
        self.by_sid[sid] = inflow
        s.send(Subscribe(publisher=name, subscriber=sid, initial_demand=initial_demand))
        s.flush()
        return sid

    def free(self, sid: int) -> bool:
        """Whether ``sid`` may open a subscription in this peer's space now (no subscription active on it)."""
        return sid not in self.by_sid and self.session.conn.subscription_state(sid, mine=True) in _FREE_STATES

    def allocate(self) -> int:
        freedoms = self.session.freedoms
        choice = freedoms.id_choice
        if choice == "mirror":
            # The remote's newest active subscription: tck/subscribe's outer stream when this is its inner one.
            theirs = next((sid for sid in reversed(self.session.outflows) if self.free(sid)), None)
            if theirs is not None:
                return theirs
            choice = "lowest"
        if choice == "random":
            while True:
                sid = freedoms.id_rng.randrange(ID_SPACE)
                if self.free(sid):
                    return sid
        if choice in ("lowest", "highest"):
            sid, step = (0, 1) if choice == "lowest" else (ID_SPACE - 1, -1)
            while not self.free(sid):
                sid += step
            return sid
        sid, self._next_sid = self._next_sid, self._next_sid + 1
        return sid

    def request(self, sid: int, n: int) -> None:
        s = self.session
        if s.open and sid in self.by_sid:
            s.send(Request(subscriber=sid, demand=n))
            s.flush()

    def cancel(self, sid: int) -> None:
        s = self.session
        if self.by_sid.pop(sid, None) is not None and s.open:
            s.send(Cancel(subscriber=sid))
            s.flush()

    def end_all(self, reason: str) -> None:
        inflows, self.by_sid = self.by_sid, {}
        for inflow in inflows.values():
            inflow.on_end(f"connection ended: {reason}")

    # -- signals from the remote publisher ---------------------------------------------------

    def on_next(self, frame: OnNext) -> None:
        inflow = self.by_sid.get(frame.subscriber)
        if inflow is not None:
            inflow.on_elements([frame.element], False)

    def on_packed(self, frame: OnNextPacked) -> None:
        inflow = self.by_sid.get(frame.subscriber)
        if inflow is not None:
            inflow.on_elements(list(frame.elements()), True)

    def on_subscribe(self, frame: OnSubscribe) -> None:
        inflow = self.by_sid.get(frame.subscriber)
        if inflow is not None:
            inflow.on_subscribe(frame.element_size)

    def on_terminal(self, frame: OnComplete | OnError) -> None:
        inflow = self.by_sid.pop(frame.subscriber, None)
        if inflow is not None:
            inflow.on_end(frame.error if isinstance(frame, OnError) else None)

    def on_reassembly_limit(self, event: ReassemblyLimit) -> None:
        inflow = self.by_sid.pop(event.subscriber, None)  # the connection sent cancel
        if inflow is not None:
            inflow.on_end(f"split element of {event.size} bytes exceeds the reassembly limit {event.limit}")
