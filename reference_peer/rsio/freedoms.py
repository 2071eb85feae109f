"""The freedoms of rsio-v0 the peer exercises, so the kit is not tuned to one habit.

Every choice rsio-v0 leaves to an implementation is drawn from one seeded
``random.Random`` per connection (seed and connection number), so a run is
reproducible with ``--seed``:

- per connection: send serverHello before reading clientHello (loose
  handshake); how it picks its own subscriber Ids (tck/subscribe's inner
  subscriptions), one of ``ID_CHOICES``;
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

The subscriber Ids of tck/subscribe's inner subscriptions are the peer's own
space (rsio-v0 §4), any number from 0 to 2^63-1 that is not active there:

- ``fresh``: counting up from 1, never reused (the fixed habit);
- ``lowest``: the lowest Id free again (never subscribed, cancelled or ended),
  from 0: reuses an Id as soon as it may;
- ``highest``: the highest free Id, from 2^63-1 down;
- ``mirror``: the number the remote uses for its own newest active
  subscription on this connection (the outer ``tck/subscribe`` stream's), if
  free in the peer's space: the same number in both directions at once;
- ``random``: a free Id drawn uniformly from 0 to 2^63-1.

With freedoms on, the old ``reuse-ids`` draw still decides ``lowest``; otherwise a
generator of its own (so the other choices of a seed stay as they were) picks
``fresh``, ``highest`` or ``random``.  ``mirror`` is never drawn: where the number
is the remote's own outer Id, STR-015 cannot subscribe with it and leaves its cancel
check out (SPEC.md Decision x), so a seeded peer with a fault that check catches
(``str-cancel-in-own-space``) would go unnoticed on some connections.  ``ids=NAME``
(``--ids NAME``) forces one choice for every connection, freedoms or not, so a whole
run can be held to each, ``mirror`` included.

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
ID_CHOICES = ("fresh", "lowest", "highest", "mirror", "random")


class Freedoms:
    def __init__(self, enabled: bool, seed: int, connection: int, *, wide_ints: bool = False,
                 ids: str | None = None) -> None:
        if ids is not None and ids not in ID_CHOICES:
            raise ValueError(f"ids {ids!r}: choose one of {', '.join(ID_CHOICES)}")
        self.enabled = enabled
        self.rng = rng = random.Random(f"rsio-peer/{seed}/{connection}")
        self.early_hello = enabled and rng.random() < 0.5
        self.reuse_ids = enabled and rng.random() < 0.5
        self.id_rng = random.Random(f"rsio-peer/{seed}/{connection}/ids")
        drawn = "lowest" if self.reuse_ids else self.id_rng.choice(("fresh", "highest", "random"))
        self.id_choice = ids if ids is not None else drawn if enabled else "fresh"
        self.mixed_packing = enabled and rng.random() < 0.5
        self.chunk_writes = enabled and rng.random() < 0.5
        self.split_rate = 0.05 if enabled and rng.random() < 0.5 else 0.0
        self._element_ids = 0
        self._ints = random.Random(f"rsio-peer/{seed}/{connection}/ints")
        self.int_width = "widest" if wide_ints else "some" if enabled and self._ints.random() < 0.5 else "shortest"

    def describe(self) -> str:
        ids = f", {self.id_choice} ids" if self.id_choice != "fresh" else ""
        if not self.enabled:
            return "freedoms off" + ids + (", every integer element widest" if self.int_width == "widest" else "")
        chosen = [name for name, on in (("early-hello", self.early_hello), ("mixed-packing", self.mixed_packing),
                                         ("chunked-writes", self.chunk_writes),
                                         ("unsolicited-split", self.split_rate > 0),
                                         ("wide-ints", self.int_width == "some")) if on]
        return "freedoms: " + (", ".join(chosen) or "none this connection") + ids + (
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
