"""Outstanding demand of one subscription, saturating at 2^63-1 (RS 3.17)."""

from __future__ import annotations

UNBOUNDED = 2**63 - 1


class Demand:
    """``outstanding`` = demand received minus elements delivered.

    Reaching 2^63-1 makes the demand unbounded for good: RS 3.17 lets a
    publisher treat it as "effectively unbounded", so delivering from it never
    counts down.  That is the reading that fails no correct publisher.
    """

    __slots__ = ("outstanding", "delivered")

    def __init__(self, initial: int = 0) -> None:
        self.outstanding = min(max(initial, 0), UNBOUNDED)
        self.delivered = 0

    @property
    def unbounded(self) -> bool:
        return self.outstanding >= UNBOUNDED

    def add(self, n: int) -> None:
        """Add a positive request; the total saturates (a request >= 2^63 counts as 2^63-1)."""
        if n > 0:
            self.outstanding = min(self.outstanding + n, UNBOUNDED)

    def covers(self, count: int) -> bool:
        """Whether ``count`` more elements fit the demand (``take`` would succeed)."""
        return self.outstanding >= UNBOUNDED or count <= self.outstanding

    def take(self, count: int) -> bool:
        """Deliver ``count`` elements; False (and nothing taken) if that exceeds the demand."""
        if self.outstanding >= UNBOUNDED:
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
