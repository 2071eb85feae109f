"""The one error type the sans-IO core raises.

Every check in the core (codecs, semantics, the RS-IO binding) reports a broken
rule by raising ``ProtocolViolation``.  The receive boundary decides what it
means: the reference peer turns it into a ``goodbye``; the monitor turns it into
a verdict and carries on.  The message always names who broke which rule.
"""

from __future__ import annotations

from enum import Enum


class Side(str, Enum):
    """A party of a connection. The client is the side that opened it."""

    CLIENT = "client"
    SERVER = "server"

    @property
    def peer(self) -> Side:
        return Side.SERVER if self is Side.CLIENT else Side.CLIENT

    def __str__(self) -> str:
        return self.value


class ProtocolViolation(Exception):
    """``side`` broke ``rule`` (an ID of the catalogue in :mod:`rsio_tck.catalogue`).

    ``offset`` is the byte offset in the sender's stream for wire errors;
    ``frame_index`` is the index of the offending frame in its direction when
    known.  ``message`` is one line, naming role, state, frame and rule.
    """

    def __init__(
        self,
        *,
        rule: str,
        side: Side | None,
        message: str,
        offset: int | None = None,
        frame_index: int | None = None,
    ) -> None:
        self.rule = rule
        self.side = side
        self.message = message
        self.offset = offset
        self.frame_index = frame_index
        super().__init__(str(self))

    def __str__(self) -> str:
        where = f" (byte {self.offset})" if self.offset is not None else ""
        return f"[{self.rule}] {self.message}{where}"

    def again(self) -> ProtocolViolation:
        """The same violation as a fresh exception, never raised.  What keeps a violation for later (a dead
        decoder raising it on every feed, a read loop judging it after the read) keeps this copy: the raised
        one's traceback holds the frames it passed, so keeping it would make a cycle through the keeper
        (a decoder and its buffered partial frame, a whole session) that only a full collection frees."""
        return ProtocolViolation(rule=self.rule, side=self.side, message=self.message, offset=self.offset,
                                 frame_index=self.frame_index)

    def with_side(self, side: Side) -> ProtocolViolation:
        """The same violation, attributed to ``side`` (codecs do not know who sent)."""
        return ProtocolViolation(
            rule=self.rule,
            side=side,
            message=self.message,
            offset=self.offset,
            frame_index=self.frame_index,
        )
