"""tck/subscribe: the peer subscribes back to the kit and reports what it receives.

Theory of operation: the outer subscription (the kit's, to
``tck/subscribe?to=NAME&request=STRATEGY``) is an ordinary flow whose source
is a queue of reports.  Once its onSubscribe is out, the peer subscribes to
NAME on the same connection with an Id of its own and requests per strategy;
every signal the inner subscriber receives becomes one report (a MessagePack
map) in the queue, and the outer stream completes once the inner subscription
has ended and every report is delivered.

Bounded: for ``one`` and ``batch:N`` the next request is held back while more
than ``LOW_WATER`` reports wait for outer demand, so a kit that does not read
the reports stops getting asked for elements.  ``all`` and ``cancel:N`` promise
unbounded demand; if their reports pile up beyond ``max_pending_reports`` the
peer cancels the inner subscription and fails the outer one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rsio_tck.testpubs import SubscribeBack as Spec
from rsio_tck.testpubs import report

from ..sources import COMPLETE, End, QueueSource

if TYPE_CHECKING:
    from .connection import RsioConnection
    from .flows import Outflow
    from .policy import Policy

LOW_WATER = 64


class SubscribeBack:
    def __init__(self, spec: Spec) -> None:
        self.spec = spec
        self.queue = QueueSource()
        self.session: RsioConnection | None = None
        self.outer: Outflow | None = None
        self.inner: int | None = None  # this peer's subscriber Id for the inner subscription
        self.received = 0  # inner elements received
        self.unrequested = 0  # of those, not yet answered by a request (one, batch)
        self.held = 0  # requests held back while reports pile up
        self.cancelled = False  # the cancel:N cancel was sent
        self.ended = False  # the inner subscription is over

    # -- the outer stream ---------------------------------------------------------------

    def start(self, s: RsioConnection, outer: Outflow) -> None:
        self.session, self.outer = s, outer
        self.queue.on_taken = self._reports_taken
        self.queue.on_stop = self._outer_stopped
        s.policy.inner_subscribe(s, self)

    def report(self, signal: str, *, element: bytes | None = None, error: str | None = None) -> None:
        s, outer = self.session, self.outer
        assert s is not None and outer is not None
        if outer.done:
            return
        self.queue.push(report(signal, element=element, error=error))
        if len(self.queue.items) > s.config.max_pending_reports:
            self._cancel_inner()
            s.end_flow(outer, End(error=f"more than {s.config.max_pending_reports} reports waiting for demand"))
            return
        s.wake(outer)

    def _reports_taken(self) -> None:
        if self.held and len(self.queue.items) <= LOW_WATER:
            held, self.held = self.held, 0
            self._send_request(held)

    def _outer_stopped(self) -> None:
        # The kit cancelled the outer stream (or the connection is going): end the inner one too.
        self._cancel_inner()

    # -- the inner subscription (Inflow) ----------------------------------------------------

    def on_subscribe(self, element_size: int) -> None:
        pass

    def on_elements(self, elements: list[bytes], packed: bool) -> None:
        s = self.session
        if s is not None and not self.ended:
            s.policy.on_inner_elements(s, self, elements, packed)

    def on_end(self, error: str | None) -> None:
        s = self.session
        if s is None or self.ended or not s.open:
            self.ended = True
            return
        s.policy.on_inner_end(s, self, error)

    # -- helpers for the policy ---------------------------------------------------------------

    def count_element(self, policy: Policy) -> None:
        """One inner element was reported: cancel or request as the strategy says."""
        s = self.session
        assert s is not None
        self.received += 1
        kind, n = self.spec.request.kind, self.spec.request.n
        if kind == "cancel" and self.received >= n:
            self._cancel_inner()
            self.inner_ended()
        elif kind in ("one", "batch"):
            window = 1 if kind == "one" else n
            self.unrequested += 1
            if self.unrequested >= window:
                self.unrequested -= window
                policy.inner_request(s, self, window)

    def request(self, n: int) -> None:
        """Request ``n`` on the inner subscription, or hold it while reports pile up."""
        if len(self.queue.items) > LOW_WATER:
            self.held += n
        else:
            self._send_request(n)

    def _send_request(self, n: int) -> None:
        s = self.session
        if s is not None and self.inner is not None and not self.ended:
            s.subscriptions.request(self.inner, n)

    def _cancel_inner(self) -> None:
        s = self.session
        if s is not None and self.inner is not None and not self.ended and not self.cancelled:
            self.cancelled = True
            s.subscriptions.cancel(self.inner)

    def inner_ended(self) -> None:
        """The inner subscription is over: the outer completes once its reports are out."""
        self.ended = True
        self.queue.finish(COMPLETE)
        if self.session is not None and self.outer is not None:
            self.session.wake(self.outer)
