"""Outstanding demand of one subscription, saturating at a ceiling: 2^63-1 (RS 3.17) unless a binding says otherwise."""

from __future__ import annotations

UNBOUNDED = 2**63 - 1  # RS 3.17's Long.MAX_VALUE: demand this large is unbounded; the one copy of the number


def saturating_add(total: int, n: int, ceiling: int = UNBOUNDED) -> int:
    """``total + n``, saturating at ``ceiling``; ``n <= 0`` adds nothing (demand comes in positive requests).

    The one saturating sum of the kit: ``Demand.add`` uses it, and so does every
    place that keeps a demand as a plain count (fuzz strategies, scenario
    adapters, the reference peers).
    """
    return min(total + n, ceiling) if n > 0 else total


class Demand:
    """``outstanding`` = demand received minus elements delivered.

    Reaching the ceiling (2^63-1 by default) makes the demand unbounded for
    good: RS 3.17 lets a publisher treat it as "effectively unbounded", so
    delivering from it never counts down.  That is the reading that fails no
    correct publisher.  The ceiling is the binding's (``StreamOptions.demand_ceiling``
    in ``streams.py``): both RS-IO and RSocket use 2^63-1, RSocket's 2^31-1 being
    an ordinary count there (SPEC.md, RSocket decision RS-e).
    """

    __slots__ = ("outstanding", "delivered", "ceiling")

    def __init__(self, initial: int = 0, ceiling: int = UNBOUNDED) -> None:
        self.ceiling = ceiling
        self.outstanding = min(max(initial, 0), ceiling)
        self.delivered = 0

    @property
    def unbounded(self) -> bool:
        return self.outstanding >= self.ceiling

    def add(self, n: int) -> None:
        """Add a positive request; the total saturates (a request at or over the ceiling counts as the ceiling)."""
        self.outstanding = saturating_add(self.outstanding, n, self.ceiling)

    def covers(self, count: int) -> bool:
        """Whether ``count`` more elements fit the demand (``take`` would succeed)."""
        return self.outstanding >= self.ceiling or count <= self.outstanding

    def take(self, count: int) -> bool:
        """Deliver ``count`` elements; False (and nothing taken) if that exceeds the demand."""
        if self.outstanding >= self.ceiling:
            self.delivered += count
            return True
        if count > self.outstanding:
            return False
        self.outstanding -= count
        self.delivered += count
        return True

    def __repr__(self) -> str:
        shown = "unbounded" if self.unbounded else str(self.outstanding)
        return f"Demand(outstanding={shown}, delivered={self.delivered})"
