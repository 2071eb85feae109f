"""What time drives in the RSocket endpoint: KEEPALIVE, the max lifetime, and LEASE.

Theory of operation: the endpoint holds no clock.  The shell tells it the time
(``tick(now)``, ``receive_data(..., now=)``) and asks ``next_deadline()`` when it
next needs telling.  A client sends its KEEPALIVE every interval of its SETUP and
every side answers a KEEPALIVE with R; with ``enforce_lifetime`` a connection
silent past the SETUP's max lifetime is closed; a responder that honours leases
grants one (``grant_lease``) and renews it half-way, and a requester's
``may_request`` reads the last LEASE it received.  What was granted, what is left and
when it expires are the judge's (``ConnectionModel``); the endpoint keeps its policy
only (what it grants, when it renews).  ``EndpointTimers`` is a part of
``Endpoint`` (``endpoint.py``), split out by concept; it keeps no state of its own:
the attributes below are the endpoint's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...errors import Side
from ...protocol.events import ConnectionClosed, ConnectionState, Event
from .frames import CONNECTION_ERROR, Error, Keepalive, Lease, Setup

if TYPE_CHECKING:
    from .judge import RSocketJudge


class EndpointTimers:
    """KEEPALIVE, max lifetime and LEASE: the part of ``Endpoint`` that time drives."""

    role: Side
    draft: bool
    now: float
    state: ConnectionState
    setup: Setup | None
    enforce_lifetime: bool
    lease_grant: tuple[int, int]
    enforces_lease: bool
    _judge: RSocketJudge
    _last_received: float
    _next_keepalive: float | None
    _renew_at: float
    _grants: bool

    if TYPE_CHECKING:
        def send(self, frame: Any, *, check: bool = True, fragment_size: int | None = None) -> None: ...

        def _ignore(self, frame: Any, why: str, events: list[Event], rule: str = ...) -> None: ...

    @property
    def lease_required(self) -> bool:
        """Our requests wait for a LEASE: the connection's SETUP set L (the judge's ``ConnectionModel.lease``)."""
        return self._judge.model.lease

    def may_request(self) -> bool:
        """Whether the lease (if this side must honour one) allows one more request now.

        What the remote granted and what is left of it are the judge's (this side's party as requester);
        the endpoint's clock is real even at 0, so the lease expires its TTL after it was received."""
        if not self.lease_required:
            return True
        party = self._judge.model.parties[self.role]
        left = party.lease_left
        return left is not None and left > 0 and self.now < party.lease_until(clocked=True)

    def _beyond_lease(self, stream_id: int) -> bool:
        """The remote's request on ``stream_id`` (already judged) goes beyond the lease this side granted:
        the judge found it with no request left (the stream owes ERROR[REJECTED]), or the lease expired."""
        if not self.enforces_lease:
            return False
        judge = self._judge
        st = judge.streams.streams.get(stream_id)
        remote = judge.model.parties[self.role.peer]
        return (st is not None and st.lease_reject) or self.now >= remote.lease_until(clocked=True)

    def _keepalive_seconds(self, setup: Setup) -> float:
        return setup.keepalive_interval / (1e9 if self.draft else 1e3)

    def _lifetime_seconds(self, setup: Setup) -> float:
        return setup.max_lifetime / (1e9 if self.draft else 1e3)

    def next_deadline(self) -> float | None:
        """When ``tick`` next has something to do (None: nothing planned)."""
        times = []
        if self.role is Side.CLIENT and self._next_keepalive is not None:
            times.append(self._next_keepalive)
        if self._grants:
            times.append(self._renew_at)
        if self.enforce_lifetime and self.setup is not None:
            times.append(self._last_received + self._lifetime_seconds(self.setup))
        return min(times) if times else None

    def tick(self, now: float) -> list[Event]:
        """Time passed: send what is due (KEEPALIVE, a renewed LEASE); close a connection past its lifetime."""
        self.now = now
        events: list[Event] = []
        if self.state is ConnectionState.CLOSED or self.setup is None:
            return events
        if self.role is Side.CLIENT and self._next_keepalive is not None and now >= self._next_keepalive:
            self._next_keepalive = now + self._keepalive_seconds(self.setup)
            self.send(Keepalive(respond=not self.draft))
        if self._grants and now >= self._renew_at:
            self.grant_lease()
        if self.enforce_lifetime and now - self._last_received > self._lifetime_seconds(self.setup):
            reason = f"nothing received for {now - self._last_received:.1f} s, over the max lifetime"
            self.send(Error(stream_id=0, error_code=CONNECTION_ERROR, data=reason.encode()))
            events.append(ConnectionClosed(orderly=False, reason=reason))
        return events

    def grant_lease(self, ttl_ms: int | None = None, requests: int | None = None) -> None:
        """Send a LEASE (the last one overrides every earlier one)."""
        ttl, count = ttl_ms or self.lease_grant[0], requests if requests is not None else self.lease_grant[1]
        self._grants = True
        self._renew_at = self.now + ttl / 2000  # renewed half-way, so a busy requester never waits
        self.send(Lease(ttl=ttl * 10**6 if self.draft else ttl, number_of_requests=count))  # the draft counts ns

    def _receive_keepalive(self, frame: Keepalive, events: list[Event]) -> None:
        if frame.stream_id != 0:
            self._ignore(frame, f"KEEPALIVE on stream {frame.stream_id}", events)
            return
        if (frame.respond or (self.draft and self.role is Side.SERVER)) and self.setup is not None:
            self.send(Keepalive(respond=False, data=frame.data))
        events.append(frame)

    def _receive_lease(self, frame: Lease, events: list[Event]) -> None:
        if frame.stream_id != 0:
            self._ignore(frame, f"LEASE on stream {frame.stream_id}", events)
            return
        events.append(frame)  # what it grants the judge has taken (``ConnectionModel.lease_frame``)
