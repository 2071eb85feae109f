"""Connection-level states of one party: hello, goodbye, and what it owes its peer.

Theory of operation: each party has a ``PartyState``; every frame it sends and
every hello or goodbye it receives is a ``Move`` looked up in ``HANDSHAKE``
under (role, state, move), falling back to (None, state, move) for what both roles
share.  As with the stream table, each entry names its rule, and a test walks
every combination.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from ...errors import Side


class PartyState(Enum):
    IDLE = "idle"  # has sent nothing, has not read the peer's hello
    HEARD = "heard"  # has read the peer's hello, not yet sent its own
    SAID = "said"  # has sent its hello, has not read the peer's
    OPEN = "open"  # both hellos exchanged
    CLOSING = "closing"  # has sent goodbye: sends nothing more


class Move(Enum):
    SEND_HELLO = "send hello"
    SEND_WRONG_HELLO = "send the other role's hello"
    SEND_STREAM = "send a stream frame"
    SEND_GOODBYE = "send goodbye"
    RECV_HELLO = "receive the peer's hello"


@dataclass(frozen=True, slots=True)
class Step:
    ok: bool
    rule: str
    next: PartyState | None = None
    why: str = ""


P, M = PartyState, Move
_ANY = None

HANDSHAKE: dict[tuple[Side | None, PartyState, Move], Step] = {
    (_ANY, P.IDLE, M.SEND_HELLO): Step(True, "HS-1", P.SAID),
    (_ANY, P.HEARD, M.SEND_HELLO): Step(True, "HS-1", P.OPEN),
    (_ANY, P.SAID, M.SEND_HELLO): Step(False, "HS-3", why="a second hello"),
    (_ANY, P.OPEN, M.SEND_HELLO): Step(False, "HS-3", why="a second hello"),
    **{(_ANY, s, M.SEND_WRONG_HELLO): Step(False, "HS-4", why="the other role's hello")
       for s in (P.IDLE, P.HEARD, P.SAID, P.OPEN)},
    (_ANY, P.IDLE, M.SEND_STREAM): Step(False, "HS-1", why="a stream frame before its own hello"),
    (_ANY, P.HEARD, M.SEND_STREAM): Step(False, "HS-1", why="a stream frame before its own hello"),
    (Side.CLIENT, P.SAID, M.SEND_STREAM): Step(True, "HS-7", why="optimistic sending"),
    (Side.SERVER, P.SAID, M.SEND_STREAM): Step(False, "HS-2", why="a stream frame before reading the clientHello"),
    (_ANY, P.OPEN, M.SEND_STREAM): Step(True, "HS-1"),
    **{(_ANY, s, M.SEND_GOODBYE): Step(True, "BYE-1", P.CLOSING)
       for s in (P.IDLE, P.HEARD, P.SAID, P.OPEN)},
    **{(_ANY, P.CLOSING, m): Step(False, "BYE-1", why="a frame after its own goodbye")
       for m in (M.SEND_HELLO, M.SEND_WRONG_HELLO, M.SEND_STREAM)},
    (_ANY, P.CLOSING, M.SEND_GOODBYE): Step(False, "BYE-4", why="a second goodbye (goodbyes that cross acknowledge each other)"),
    (_ANY, P.IDLE, M.RECV_HELLO): Step(True, "HS-7", P.HEARD),
    (_ANY, P.SAID, M.RECV_HELLO): Step(True, "HS-1", P.OPEN),
    (_ANY, P.HEARD, M.RECV_HELLO): Step(True, "HS-3"),  # the sender's second hello is its violation
    (_ANY, P.OPEN, M.RECV_HELLO): Step(True, "HS-3"),
    (_ANY, P.CLOSING, M.RECV_HELLO): Step(True, "BYE-6"),
}


def lookup(role: Side, state: PartyState, move: Move) -> Step:
    step = HANDSHAKE.get((role, state, move))
    return step if step is not None else HANDSHAKE[(None, state, move)]
