"""The freedoms Ditto's protocol leaves a publisher, exercised at random so the kit is not tuned to one habit.

Every choice comes from one seeded ``random.Random`` per connection (seed and
connection number), so a run is reproducible with ``--seed``:

- the ``subscriptionId`` style: UUIDs, Ditto-like prefixed counters with a random
  start, or short random tokens (every id unique on the connection);
- whether ``complete`` goes out in the same write as the last item or in a later one;
- how many events one subscription sends before the next one's turn (several
  subscriptions interleave on the connection);
- whether a few events within the demand still go out after a ``cancel`` (the
  pages allow events in flight: DITTO-CAN-1);
- which correlation-id an event carries: the request's that caused it (as Ditto
  does) or the subscribe's;
- whether writes are cut at arbitrary byte boundaries, across lines.

Which ids are given is a choice of its own (``ID_CHOICES``; ``ids=NAME``, ``--ids NAME``,
forces one for every connection, freedoms or not): ``fresh`` (the default: the style
above, never an id announced before on the connection), ``lowest`` (the decimal
counter from 0, reusing an id as soon as its subscription is no longer live: the
pages forbid only a live one, DITTO-SUB-2), ``mirror`` (the subscribe's own
``correlation-id``: the kit's strings, when not live), and ``random`` (12 random
characters, repeats allowed once not live).

``enabled=False`` (``--no-freedoms``) is one fixed habit: counters from 0,
``complete`` with the last item, whole batches, nothing after ``cancel``, the
request's correlation-id, whole writes.
"""

from __future__ import annotations

import random
import uuid

ID_CHOICES = ("fresh", "lowest", "mirror", "random")


class Freedoms:
    def __init__(self, enabled: bool, seed: int, connection: int, *, ids: str | None = None) -> None:
        if ids is not None and ids not in ID_CHOICES:
            raise ValueError(f"ids {ids!r}: choose one of {', '.join(ID_CHOICES)}")
        self.id_choice = ids or "fresh"
        self.enabled = enabled
        self.rng = rng = random.Random(f"ditto-peer/{seed}/{connection}")
        self.id_style = "counter" if not enabled else rng.choice(("uuid", "prefixed", "token"))
        self._counter = rng.randrange(1000) if enabled else 0
        self.together_rate = 1.0 if not enabled else rng.choice((0.0, 0.5, 1.0))
        self.after_cancel = enabled and rng.random() < 0.5
        self.subscribe_cid = enabled and rng.random() < 0.3
        self.chunk_writes = enabled and rng.random() < 0.5
        self.interleave = enabled and rng.random() < 0.5

    def describe(self) -> str:
        if not self.enabled:
            return "freedoms off" + (f", {self.id_choice} subscription ids" if self.id_choice != "fresh" else "")
        style = self.id_style if self.id_choice == "fresh" else self.id_choice
        chosen = [f"{style} subscription ids", f"complete with the last item {self.together_rate:.0%}"]
        chosen += [text for on, text in ((self.after_cancel, "events after cancel"),
                                         (self.subscribe_cid, "the subscribe's correlation-id on events"),
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
        """Events still sent after a cancel: within the demand left, at most 2."""
        if not self.after_cancel or demand <= 0:
            return 0
        return self.rng.randint(0, min(demand, 2))

    def chunks(self, data: bytes) -> list[bytes] | None:
        """Cut ``data`` at random boundaries for separate writes, or None to write it whole."""
        if not self.chunk_writes or len(data) < 2 or self.rng.random() >= 0.3:
            return None
        cuts = sorted(self.rng.sample(range(1, len(data)), min(3, len(data) - 1)))
        bounds = [0, *cuts, len(data)]
        return [data[a:b] for a, b in zip(bounds, bounds[1:])]
