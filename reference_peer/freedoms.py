"""The freedoms of rsio-v0 the peer exercises, so the kit is not tuned to one habit.

Every choice rsio-v0 leaves to an implementation is drawn from one seeded
``random.Random`` per connection (seed and connection number), so a run is
reproducible with ``--seed``:

- per connection: send serverHello before reading clientHello (loose
  handshake); reuse its own subscriber Ids as soon as they are free (tck/subscribe);
  mix onNext and onNextPacked of random counts instead of packing maximally;
  chunk writes at arbitrary byte boundaries; split small variable-size elements
  nobody asked to be split;
- per batch or part: which element is split and where, part lengths, element Ids;
  which integer element of tck/range, tck/infinite or tck/error is written in a
  wider legal MessagePack format than its shortest (a freedom the MessagePack
  specification grants; the kit warns under TCK-9 and must not fail it).

The integer-width choices come from a second generator of their own, so adding
them left every other choice of a seed as it was.  ``wide_ints=True``
(``--wide-ints``) writes every integer element in its widest form, freedoms or
not: the habit of encoders that always write fixed-width integers.

Streams complete without waiting for demand (the last element and onComplete
leave together).  ``enabled=False`` (``--no-freedoms``) gives one fixed habit:
hello after clientHello, fresh Ids, maximal packing, whole writes, no
unsolicited split.
"""

from __future__ import annotations

import random

from rsio_tck.bindings.rsio.wire.msgpack_ints import forms

ID_SPACE = 2**63
# SHOULD rules the peer departs from on purpose, as a freedom: the kit warns, and the
# self-check accepts exactly these warnings from the correct peer.
DELIBERATE_WARNINGS = frozenset({"TCK-9"})
WIDEN_RATE = 0.25  # share of batches of a widening connection with one element widened


class Freedoms:
    def __init__(self, enabled: bool, seed: int, connection: int, *, wide_ints: bool = False) -> None:
        self.enabled = enabled
        self.rng = rng = random.Random(f"rsio-peer/{seed}/{connection}")
        self.early_hello = enabled and rng.random() < 0.5
        self.reuse_ids = enabled and rng.random() < 0.5
        self.mixed_packing = enabled and rng.random() < 0.5
        self.chunk_writes = enabled and rng.random() < 0.5
        self.split_rate = 0.05 if enabled and rng.random() < 0.5 else 0.0
        self._element_ids = 0
        self._ints = random.Random(f"rsio-peer/{seed}/{connection}/ints")
        self.int_width = "widest" if wide_ints else "some" if enabled and self._ints.random() < 0.5 else "shortest"

    def describe(self) -> str:
        if not self.enabled:
            return "freedoms off" + (", every integer element widest" if self.int_width == "widest" else "")
        chosen = [name for name, on in (("early-hello", self.early_hello), ("reuse-ids", self.reuse_ids),
                                         ("mixed-packing", self.mixed_packing), ("chunked-writes", self.chunk_writes),
                                         ("unsolicited-split", self.split_rate > 0),
                                         ("wide-ints", self.int_width == "some")) if on]
        return "freedoms: " + (", ".join(chosen) or "none this connection") + (
            ", every integer element widest" if self.int_width == "widest" else "")

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

    def widen_ints(self, first: int, elements: list[bytes]) -> list[bytes]:
        """Integer elements ``first, first+1, ...`` (shortest-encoded) in the widths this connection writes."""
        if self.int_width == "widest":
            return [forms(first + i)[-1] for i in range(len(elements))]
        if self.int_width == "shortest" or not elements or self._ints.random() >= WIDEN_RATE:
            return elements
        index = self._ints.randrange(len(elements))
        out = list(elements)
        choices = forms(first + index)
        out[index] = choices[self._ints.randrange(1, len(choices))] if len(choices) > 1 else choices[0]
        return out
