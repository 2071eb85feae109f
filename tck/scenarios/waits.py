"""How a step waits on a scenario connection's inboxes: until an event comes, or the target has been silent too long.

Theory of operation: a wait ends on what it waits for, or when ``clock.wait_end`` says the target has
been silent for the step's timeout, counted from its last bytes (arriving bytes stretch a wait, within
the scenario's budget), or at once at the end of the stream; after the target's goodbye a wait on a
stream lasts only ``GOODBYE_GRACE``.  A wait that comes back empty leaves why in ``nothing``.  The
read loop sets ``_arrival`` after each read it has sorted, which is what a waiter sleeps on.
``InboxWaits`` is the waiting half of ``KitSession``: it declares the connection state it reads.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from . import clock
from .clock import Budget, Nothing, Progress
from .events import Event, Key
from .inbox import Inbox

GOODBYE_GRACE = 0.05  # seconds a wait on a stream lasts once the target said goodbye: what was in flight


class VerdictCertain(Exception):
    """Raised to a step waiting on the session once the target has broken a MUST rule.

    The runner also cancels the steps; this covers a cancellation that asyncio's
    ``wait_for`` swallows when the awaited event fires at the same moment (Python 3.11).
    """


class InboxWaits:
    """``next_event`` and ``arrival``, over the state ``KitSession`` keeps."""

    inbox: Inbox
    writer: Any
    progress: Progress
    budget: Budget | None
    nothing: Nothing | None
    eof: bool
    goodbye: Event | None
    end_when_certain: bool
    verdict_certain: asyncio.Event
    _arrival: asyncio.Event

    def _last_bytes(self) -> float:
        """When bytes last came from the target (``clock``): the read loop's ``progress``, or later bytes the
        transport holds back as part of a message not yet whole (WebSocket: the shell hands the stream on
        message by message, and notes its partial reads as ``partial_at``)."""
        return max(self.progress.last, getattr(self.writer, "partial_at", 0.0))

    def _nothing(self, why: str, start: float, timeout: float, now: float) -> None:
        assert self.budget is not None
        self.nothing = clock.nothing(why, start, timeout, now, self.progress, self.budget, not self.inbox.room.is_set(),
                                     last=self._last_bytes())

    async def next_event(self, key: Key, timeout: float, *, total: bool = False, since: float | None = None,
                         until: float | None = None) -> Event | None:
        """The next event for ``key``, else None once the target was silent for ``timeout`` seconds.

        Arriving bytes restart the clock, within the scenario's budget (``clock``); why a None came
        is in ``self.nothing``.  ``total``: ``timeout`` bounds the whole wait (a silence window).
        ``since``: the monotonic time the silence is counted from, if before now (a step that waits
        again after a quiet event).  ``until``: a monotonic bound on the wait, whatever arrives.
        """
        start = time.monotonic() if since is None else since
        budget = self.budget
        assert budget is not None
        self.nothing = None
        while True:
            if self.end_when_certain and self.verdict_certain.is_set():
                raise VerdictCertain
            event = self.inbox.pop(key)
            if event is not None:
                return event
            now = time.monotonic()
            end, why = clock.wait_end(start, timeout, self._last_bytes(), budget, total=total, until=until)
            if self.eof:
                why = clock.EOF
            elif self.goodbye is not None and key[0] != "conn" and now + GOODBYE_GRACE < end:
                # After the target's goodbye nothing new will come for this key: a short wait for what is in flight.
                end, why = now + GOODBYE_GRACE, clock.GOODBYE
            if self.eof or now >= end:
                self._nothing(why, start, timeout, now)
                return None
            self._arrival.clear()
            try:
                await asyncio.wait_for(self._arrival.wait(), end - now)
            except TimeoutError:
                if why == clock.GOODBYE and not self.inbox.queues.get(key):
                    self._nothing(why, start, timeout, time.monotonic())
                    return None
            # Otherwise ask again: bytes may have arrived that complete nothing yet, which moves the end.

    async def arrival(self, timeout: float, *, since: float | None = None, until: float | None = None) -> bool:
        """Wait until the next read from the target is sorted (or the connection ends); False when none
        came before the wait's end, which is ``next_event``'s: the target silent for ``timeout`` seconds
        counted from ``since`` (default: now) or from its last bytes, within the scenario's budget and
        ``until`` (``self.nothing`` says which ended it).  The caller looks at the inboxes first: nothing
        can arrive between its look and this wait, since both run without yielding in between."""
        start = time.monotonic() if since is None else since
        budget = self.budget
        assert budget is not None
        self.nothing = None
        while True:
            now = time.monotonic()
            end, why = clock.wait_end(start, timeout, self._last_bytes(), budget, until=until)
            if self.eof or now >= end:
                self._nothing(clock.EOF if self.eof else why, start, timeout, now)
                return False
            self._arrival.clear()
            try:
                await asyncio.wait_for(self._arrival.wait(), end - now)
            except TimeoutError:
                continue  # bytes the transport holds back (a partial WebSocket message) may have moved the end
            return True
