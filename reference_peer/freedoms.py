"""The freedoms of rsio-v0 the peer exercises, so the kit is not tuned to one habit.

Every choice rsio-v0 leaves to an implementation is drawn from one seeded
``random.Random`` per connection (seed and connection number), so a run is
reproducible with ``--seed``:

- per connection: send serverHello before reading clientHello (loose
  handshake); reuse its own subscriber Ids as soon as they are free (tck/subscribe);
  mix onNext and onNextPacked of random counts instead of packing maximally;
  chunk writes at arbitrary byte boundaries; split small variable-size elements
  nobody asked to be split;
- per batch or part: which element is split and where, part lengths, element Ids.

Streams complete without waiting for demand (the last element and onComplete
leave together).  ``enabled=False`` (``--no-freedoms``) gives one fixed habit:
hello after clientHello, fresh Ids, maximal packing, whole writes, no
unsolicited split.
"""

from __future__ import annotations

import random

ID_SPACE = 2**63


class Freedoms:
    def __init__(self, enabled: bool, seed: int, connection: int) -> None:
        self.enabled = enabled
        self.rng = rng = random.Random(f"rsio-peer/{seed}/{connection}")
        self.early_hello = enabled and rng.random() < 0.5
        self.reuse_ids = enabled and rng.random() < 0.5
        self.mixed_packing = enabled and rng.random() < 0.5
        self.chunk_writes = enabled and rng.random() < 0.5
        self.split_rate = 0.05 if enabled and rng.random() < 0.5 else 0.0
        self._element_ids = 0

    def describe(self) -> str:
        if not self.enabled:
            return "freedoms off"
        chosen = [name for name, on in (("early-hello", self.early_hello), ("reuse-ids", self.reuse_ids),
                                         ("mixed-packing", self.mixed_packing), ("chunked-writes", self.chunk_writes),
                                         ("unsolicited-split", self.split_rate > 0)) if on]
        return "freedoms: " + (", ".join(chosen) or "none this connection")

    def chunks(self, data: bytes) -> list[bytes] | None:
        """Cut ``data`` at random boundaries for separate writes, or None to write it whole."""
        if not self.chunk_writes or len(data) < 2 or self.rng.random() >= 0.25:
            return None
        cuts = sorted(self.rng.sample(range(1, len(data)), min(3, len(data) - 1)))
        bounds = [0, *cuts, len(data)]
        return [data[a:b] for a, b in zip(bounds, bounds[1:])]

    def split_index(self, elements: list[bytes]) -> int | None:
        """Which element of a batch to split unsolicited, if any."""
        if not self.split_rate or self.rng.random() >= self.split_rate:
            return None
        index = self.rng.randrange(len(elements))
        return index if len(elements[index]) >= 2 else None

    def part_length(self, remaining: int, max_part: int) -> int:
        """Length of the next part: at most ``max_part``, at least 1 while bytes remain."""
        most = min(remaining, max_part)
        if not self.enabled or most <= 1 or self.rng.random() < 0.7:
            return most
        return self.rng.randint(1, most)

    def small_part_lengths(self, length: int) -> list[int]:
        """Part lengths for an element split unsolicited (at least two parts)."""
        cuts = sorted(self.rng.sample(range(1, length), min(self.rng.randint(1, 3), length - 1)))
        bounds = [0, *cuts, length]
        return [b - a for a, b in zip(bounds, bounds[1:])]

    def element_id(self) -> int:
        """An element Id for a split element (unique among elements in progress: one per stream)."""
        self._element_ids += 1
        if not self.enabled:
            return self._element_ids
        choice = self.rng.random()
        if choice < 0.4:
            return 0
        if choice < 0.7:
            return self._element_ids
        return self.rng.randrange(ID_SPACE)

    def pack_plan(self, count: int) -> list[tuple[int, bool]]:
        """How to frame ``count`` fixed-size elements: (count, packed) per frame."""
        if not self.mixed_packing:
            return [(count, True)]
        plan: list[tuple[int, bool]] = []
        rng = self.rng
        while count > 0:
            if rng.random() < 0.15:
                plan.append((1, False))
                count -= 1
                continue
            take = count if rng.random() < 0.5 else rng.randint(1, count)
            plan.append((take, True))
            count -= take
        return plan

    def unsolicited_whole(self) -> bool:
        """For an element no larger than part=P: send it as onNext rather than as one last part."""
        return self.enabled and self.rng.random() < 0.5
