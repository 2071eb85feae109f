"""The freedoms Ditto's protocol leaves a publisher, exercised at random so the kit is not tuned to one habit.

Every choice comes from one seeded ``random.Random`` per connection (seed and
connection number), so a run is reproducible with ``--seed``:

- the ``subscriptionId`` style: UUIDs, Ditto-like prefixed counters with a random
  start, or short random tokens (every id unique on the connection);
- whether ``complete`` goes out in the same write as the last item or in a later one;
- how many events one subscription sends before the next one's turn (several
  subscriptions interleave on the connection);
- whether a few events within the demand still go out after a ``cancel`` (the
  pages allow events in flight: DITTO-CAN-1), and whether they go out late, a
  moment after the cancel was read (a busy Ditto's buffered events: decision DITTO-g);
  a late connection also holds back, now and then, the event that uses up a demand,
  so that a cancel finds it still on its way;
- which correlation-id an event carries: the request's that caused it (as Ditto
  does) or the subscribe's;
- what ``created`` carries for a subscribe that named no correlation-id: none, or
  one the peer makes up, as Ditto's gateway does (decision DITTO-m);
- search pages shorter than ``size(n)`` (size is a limit: decision DITTO-d);
- whether the ``complete`` of a search or range with no result at all goes out with
  the answer to the first request or in a later write (empty searches: DITTO-SEARCH-7);
- whether writes are cut at arbitrary byte boundaries, across lines.

Ditto's default order of search results, ``sort(+thingId)`` (string order), is not
a freedom: the peer always applies it (``publishers.py``).

Which ids are given is a choice of its own (``ID_CHOICES``; ``ids=NAME``, ``--ids NAME``,
forces one for every connection, freedoms or not): ``fresh`` (the default: the style
above, never an id announced before on the connection), ``lowest`` (the decimal
counter from 0, reusing an id as soon as its subscription is no longer live: the
pages forbid only a live one, DITTO-SUB-2), ``mirror`` (the subscribe's own
``correlation-id``: the kit's strings, when not live), and ``random`` (12 random
characters, repeats allowed once not live).

``enabled=False`` (``--no-freedoms``) is one fixed habit: counters from 0,
``complete`` with the last item, whole batches, nothing after ``cancel``, the
request's correlation-id, no correlation-id on such a ``created``, full pages,
whole writes.  ``forced`` (``--freedom NAME``, names in ``FORCEABLE``) switches
those freedoms on for every connection, whatever the seed draws, so a test can
show the kit passes a peer that uses each one.
"""

from __future__ import annotations

import random
import uuid

# Freedoms a test may force on (``--freedom NAME``): each is a habit a correct Ditto may have.
FORCEABLE = ("after-cancel", "late-after-cancel", "made-up-correlation-id", "short-pages", "empty-later",
             "chunked-writes", "interleave")
LATE_SECONDS = (0.06, 0.11)  # how long an event is held back: a little longer than the kit's silence window (50 ms)
HOLD_LAST_RATE = 0.5  # share of demands whose last event a late connection holds back
ID_CHOICES = ("fresh", "lowest", "mirror", "random")


class Freedoms:
    def __init__(self, enabled: bool, seed: int, connection: int, forced: tuple[str, ...] = (), *,
                 ids: str | None = None) -> None:
        if ids is not None and ids not in ID_CHOICES:
            raise ValueError(f"ids {ids!r}: choose one of {', '.join(ID_CHOICES)}")
        self.id_choice = ids or "fresh"
        self.enabled = enabled
        self.rng = rng = random.Random(f"ditto-peer/{seed}/{connection}")
        self.id_style = "counter" if not enabled else rng.choice(("uuid", "prefixed", "token"))
        self._counter = rng.randrange(1000) if enabled else 0
        self.together_rate = 1.0 if not enabled else rng.choice((0.0, 0.5, 1.0))
        self.after_cancel = enabled and rng.random() < 0.5 or "after-cancel" in forced
        self.subscribe_cid = enabled and rng.random() < 0.3
        self.chunk_writes = enabled and rng.random() < 0.5 or "chunked-writes" in forced
        self.interleave = enabled and rng.random() < 0.5 or "interleave" in forced
        # The freedoms of issue 25 draw from a generator of their own, so every earlier choice of a seed stays.
        self._more = more = random.Random(f"ditto-peer/{seed}/{connection}/more")
        self.late_after_cancel = enabled and more.random() < 0.5 or "late-after-cancel" in forced
        if self.late_after_cancel:
            self.after_cancel = True  # late in-flight events are in-flight events
        self.made_up_cid = enabled and more.random() < 0.5 or "made-up-correlation-id" in forced
        self.short_pages = enabled and more.random() < 0.5 or "short-pages" in forced
        self.empty_later = enabled and more.random() < 0.5 or "empty-later" in forced
        self.forced = forced

    def describe(self) -> str:
        if not self.enabled:
            return "freedoms off" + (f", {self.id_choice} subscription ids" if self.id_choice != "fresh" else "")
        style = self.id_style if self.id_choice == "fresh" else self.id_choice
        chosen = [f"{style} subscription ids", f"complete with the last item {self.together_rate:.0%}"]
        chosen += [text for on, text in ((self.after_cancel, "events after cancel"),
                                         (self.late_after_cancel, "late events after cancel"),
                                         (self.subscribe_cid, "the subscribe's correlation-id on events"),
                                         (self.made_up_cid, "a made-up correlation-id on created"),
                                         (self.short_pages, "short search pages"),
                                         (self.empty_later, "an empty result's complete in a later write"),
                                         (self.chunk_writes, "chunked writes"),
                                         (self.interleave, "fine interleaving")) if on]
        return "freedoms: " + ", ".join(chosen)

    def subscription_id(self) -> str:
        """A fresh id; the session checks it against the live ones (DITTO-SUB-2) and asks again if taken."""
        self._counter += 1
        if self.id_style == "uuid":
            return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))
        if self.id_style == "prefixed":
            return f"tck-sub-{self._counter}-{self.rng.getrandbits(32):08x}"
        if self.id_style == "token":
            return "".join(self.rng.choice("abcdefghijklmnopqrstuvwxyz0123456789_-") for _ in range(12))
        return str(self._counter - 1)

    def complete_together(self) -> bool:
        """Whether ``complete`` goes out in the same round (write) as the subscription's last item."""
        return self.together_rate >= 1.0 or (self.together_rate > 0 and self.rng.random() < self.together_rate)

    def batch(self, most: int) -> int:
        """Events of one subscription before the next one's turn."""
        if not self.interleave or most <= 1:
            return most
        return self.rng.randint(1, min(most, 4))

    def in_flight_after_cancel(self, demand: int) -> int:
        """Events still sent after a cancel: within the demand left, at most 2 (late ones: at least 1)."""
        if not self.after_cancel or demand <= 0:
            return 0
        return self.rng.randint(1 if self.late_after_cancel else 0, min(demand, 2))

    def late_delay(self, cancelled: bool, last: bool) -> float | None:
        """Seconds to hold an event back before it goes out, or None: at once.  A connection with late events
        holds back every event in flight after a cancel, and now and then the event that uses up a demand
        (a busy publisher's queue), so that a cancel can find it still on its way."""
        if not self.late_after_cancel or not (cancelled or last and self._more.random() < HOLD_LAST_RATE):
            return None
        return self._more.uniform(*LATE_SECONDS)

    def created_correlation_id(self) -> str | None:
        """The correlation-id of a ``created`` answering a subscribe that named none: None, or a made-up one."""
        if not self.made_up_cid:
            return None
        return f"peer-{uuid.UUID(int=self._more.getrandbits(128), version=4)}"

    def page_size(self, size: int) -> int:
        """Things in the next search page: ``size``, or fewer (at least 1) on a connection with short pages."""
        if not self.short_pages or size <= 1 or self._more.random() < 0.3:
            return size
        return self._more.randint(1, size - 1)

    def chunks(self, data: bytes) -> list[bytes] | None:
        """Cut ``data`` at random boundaries for separate writes, or None to write it whole."""
        if not self.chunk_writes or len(data) < 2 or self.rng.random() >= 0.3:
            return None
        cuts = sorted(self.rng.sample(range(1, len(data)), min(3, len(data) - 1)))
        bounds = [0, *cuts, len(data)]
        return [data[a:b] for a, b in zip(bounds, bounds[1:])]
