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
"""

from __future__ import annotations

import random


class Freedoms:
    def __init__(self, enabled: bool, seed: int, connection: int) -> None:
        self.enabled = enabled
        self.rng = rng = random.Random(f"rsocket-peer/{seed}/{connection}")
        # Probability that a stream's last element carries C (N|C) rather than a separate PAYLOAD C.
        self.together_rate = 1.0 if not enabled else rng.choice((0.0, 0.5, 1.0))
        self.chunk_writes = enabled and rng.random() < 0.5
        self.random_fragments = enabled and rng.random() < 0.5

    def describe(self) -> str:
        if not self.enabled:
            return "freedoms off"
        chosen = [f"N|C on the last element {self.together_rate:.0%} of the time"]
        if self.chunk_writes:
            chosen.append("chunked writes")
        if self.random_fragments:
            chosen.append("random fragment sizes")
        return "freedoms: " + ", ".join(chosen)

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
