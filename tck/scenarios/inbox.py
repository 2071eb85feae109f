"""The inboxes of one scenario connection: received events by key, waiting for a step to take them.

Theory of operation: ``KitSession``'s read loop puts each event the binding's adapter made into the
queue of its key (``events``), and steps take them in order.  Reading follows consumption: past
``INBOX_MAX_EVENTS`` events or ``INBOX_MAX_BYTES`` of element bytes held, ``room`` is cleared and the
read loop waits on it; it is set again once steps have taken the inbox below half both caps.  The
read loop inlines ``push`` for whole elements (a flood's hot path) and keeps these same counts.
An ``ElementBatch`` (many elements of one frame in one entry) counts as the elements it holds: ``pop``
hands them out one at a time and ``take_elements`` in bulk, so the caps and every step see elements.
"""

from __future__ import annotations

import asyncio
import sys
from collections import deque

from .bounds import INBOX_MAX_BYTES, INBOX_MAX_EVENTS
from .events import ElementBatch, Event, Key


class Inbox:
    """One queue of events per key, counted in events (``size``) and element bytes (``held_bytes``)."""

    def __init__(self) -> None:
        self.queues: dict[Key, deque[Event]] = {}
        self.size = 0
        self.held_bytes = 0
        self.room = asyncio.Event()  # set while the inbox is under its caps
        self.room.set()
        self.pauses = 0  # times the read loop waited for room

    def push(self, key: Key, event: Event) -> None:
        self.queues.setdefault(key, deque()).append(event)
        self.size += event.left
        self.held_bytes += event.size
        if self.size > INBOX_MAX_EVENTS or self.held_bytes > INBOX_MAX_BYTES:
            self.room.clear()

    def put_back(self, key: Key, event: Event) -> None:
        """Return an event a step took but leaves for the next step."""
        self.queues.setdefault(key, deque()).appendleft(event)
        self.size += event.left
        self.held_bytes += event.size

    def pop(self, key: Key) -> Event | None:
        """The oldest event of ``key``, taken; None if there is none."""
        queue = self.queues.get(key)
        if not queue:
            return None
        head = queue[0]
        if type(head) is ElementBatch:
            event = head.element_event()
            if not head.left:
                queue.popleft()
        else:
            event = queue.popleft()
        self._taken(1, event.size)
        return event

    def peek(self, key: Key) -> Event | None:
        queue = self.queues.get(key)
        return queue[0] if queue else None

    def take_elements(self, key: Key, limit: int | None = None) -> int:
        """Take the elements at the head of ``key``'s inbox at once, at most ``limit`` (None: every one,
        a drain); returns how many."""
        queue = self.queues.get(key)
        wanted = sys.maxsize if limit is None else limit
        taken = taken_bytes = 0
        while queue and taken < wanted and queue[0].kind == "onNext":
            head = queue[0]
            if type(head) is ElementBatch:
                count, size = head.take(wanted - taken)
                if not head.left:
                    queue.popleft()
            else:
                queue.popleft()
                count, size = 1, head.size
            taken += count
            taken_bytes += size
        if taken:
            self._taken(taken, taken_bytes)
        return taken

    def _taken(self, count: int, size: int) -> None:
        """``count`` events of ``size`` element bytes left the inbox: account for them, and let reading
        resume once under half the caps."""
        self.size -= count
        self.held_bytes -= size
        if (not self.room.is_set() and self.size <= INBOX_MAX_EVENTS // 2
                and self.held_bytes <= INBOX_MAX_BYTES // 2):
            self.room.set()
