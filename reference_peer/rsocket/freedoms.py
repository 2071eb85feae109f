"""The freedoms RSocket leaves to a responder, exercised at random so the kit is not tuned to one habit.

Every choice comes from one seeded ``random.Random`` per connection (seed and
connection number), so a run is reproducible with ``--seed``:

- per connection: whether the last element of a stream and its completion
  travel together as one PAYLOAD with N and C, always, never or sometimes;
  whether writes are cut at arbitrary byte boundaries; whether fragments take
  the largest size the MTU allows or random smaller ones;
- per stream end, per write, per fragment chain: the choice itself.

``enabled=False`` (``--no-freedoms``) is one fixed habit: N|C on the last
element, whole writes, fragments as large as the MTU allows.

Stream ids of this peer's own requests (tck/subscribe's inner stream): rsocket-1.0 fixes
them (2, 4, 6, ...: RS-STREAMID-2), so there the only choice is ``fresh``.  Seed 001,
the draft profile, asks only that an id be locally unique (SPEC.md, decision RS-o), and
the kit reads the ids of one connection as one space (decision RS-t): any id never used
on the connection, odd or even.  There the peer picks one of ``ID_CHOICES`` per
connection, from a generator of its own (so a seed's other choices stay as they were):
``fresh`` (2, 4, 6, ...), ``lowest`` (the lowest id never used, from 1), ``highest``
(the highest never used, from 2^31-3 down: below the max ids, whose use lets a
requester wrap), ``mirror`` (the next id the remote would take as requester: its
highest id plus 2, the same numbers the kit uses) or ``random``.  ``ids=NAME``
(``--ids NAME``) forces one for every connection, freedoms or not.
"""

from __future__ import annotations

import random
from collections.abc import Callable

ID_CHOICES = ("fresh", "lowest", "highest", "mirror", "random")
DRAFT = "reactivesocket-draft"


class Freedoms:
    def __init__(self, enabled: bool, seed: int, connection: int, *, profile: str = "rsocket-1.0",
                 ids: str | None = None) -> None:
        if ids is not None and ids not in ID_CHOICES:
            raise ValueError(f"ids {ids!r}: choose one of {', '.join(ID_CHOICES)}")
        if ids not in (None, "fresh") and profile != DRAFT:
            raise ValueError(f"ids {ids!r}: {profile} fixes a server's stream ids (2, 4, 6, ...: RS-STREAMID-2); "
                             f"only {DRAFT} leaves them free")
        self.enabled = enabled
        self.rng = rng = random.Random(f"rsocket-peer/{seed}/{connection}")
        # Probability that a stream's last element carries C (N|C) rather than a separate PAYLOAD C.
        self.together_rate = 1.0 if not enabled else rng.choice((0.0, 0.5, 1.0))
        self.chunk_writes = enabled and rng.random() < 0.5
        self.random_fragments = enabled and rng.random() < 0.5
        self.id_rng = random.Random(f"rsocket-peer/{seed}/{connection}/ids")
        drawn = self.id_rng.choice(ID_CHOICES) if enabled and profile == DRAFT else "fresh"
        self.id_choice = ids if ids is not None else drawn

    def describe(self) -> str:
        if not self.enabled:
            return "freedoms off" + (f", {self.id_choice} stream ids" if self.id_choice != "fresh" else "")
        chosen = [f"N|C on the last element {self.together_rate:.0%} of the time"]
        if self.chunk_writes:
            chosen.append("chunked writes")
        if self.random_fragments:
            chosen.append("random fragment sizes")
        if self.id_choice != "fresh":
            chosen.append(f"{self.id_choice} stream ids")
        return "freedoms: " + ", ".join(chosen)

    def stream_id(self, used: set[int], fresh: Callable[[], int], remote_highest: int) -> int:
        """The id of this peer's next request: ``fresh`` (the sequential one) or, as ``id_choice`` says,
        another never ``used`` on the connection (the draft only)."""
        choice = self.id_choice
        top = 2**31 - 3  # below the max ids of both sides (their use lets a requester wrap: decision RS-a)
        if choice == "fresh":
            return fresh()
        if choice == "mirror" and remote_highest + 2 <= top and remote_highest + 2 not in used:
            return remote_highest + 2
        if choice == "random":
            while True:
                sid = self.id_rng.randint(1, top)
                if sid not in used:
                    return sid
        sid, step = (top, -1) if choice == "highest" else (1, 1)
        while sid in used:
            sid += step
        return sid

    def complete_together(self) -> bool:
        """Whether this stream's last element carries its completion (PAYLOAD N|C)."""
        return self.together_rate >= 1.0 or (self.together_rate > 0 and self.rng.random() < self.together_rate)

    def fragment_size(self, most: int) -> int:
        """Bytes of metadata + data per fragment: at most ``most``."""
        if not self.random_fragments or most <= 1 or self.rng.random() < 0.5:
            return most
        return self.rng.randint(max(1, most // 4), most)

    def chunks(self, data: bytes) -> list[bytes] | None:
        """Cut ``data`` at random boundaries for separate writes, or None to write it whole."""
        if not self.chunk_writes or len(data) < 2 or self.rng.random() >= 0.25:
            return None
        cuts = sorted(self.rng.sample(range(1, len(data)), min(3, len(data) - 1)))
        bounds = [0, *cuts, len(data)]
        return [data[a:b] for a, b in zip(bounds, bounds[1:])]
