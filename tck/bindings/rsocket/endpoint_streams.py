"""What the RSocket endpoint knows of its streams: read from its judge, never kept.

Theory of operation (issue 28, one owner for each piece of state): the endpoint's
judge (``RSocketJudge``) sees every frame the endpoint sends and receives, and its
``Interactions`` keep each stream's kind, requester and the contract's state of both
directions.  Which streams are open, who requested them, which side may still send
PAYLOADs on them and the credit left are read there, when asked.  The endpoint keeps
one thing of its own here: the remote's requests it refused (beyond the lease it
granted, on an id the remote may not open).  That is its policy, not protocol state:
the judge counts such a request as opened (with its finding), the endpoint never served
it.  ``EndpointStreams`` is a part of ``Endpoint`` (``endpoint.py``), split out by
concept; the attributes below are the endpoint's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...errors import Side
from ...protocol.events import ConnectionState
from .frames import Payload
from .interactions import Kind, StreamView, live

if TYPE_CHECKING:
    from .judge import RSocketJudge


class EndpointStreams:
    """The streams of ``Endpoint``, as its judge has them."""

    role: Side
    state: ConnectionState
    _judge: RSocketJudge
    _refused: set[int]

    def stream(self, stream_id: int) -> StreamView | None:
        """Stream ``stream_id`` if open (either side may still send PAYLOADs on it), read from the judge;
        None for a stream never opened, ended, or whose request this side refused."""
        return None if stream_id in self._refused else self._judge.streams.view(stream_id, self.role)

    def sending(self, stream_id: int) -> bool:
        """This side may still send PAYLOADs on ``stream_id``."""
        return stream_id not in self._refused and self._judge.streams.sends(stream_id, self.role)

    def receiving(self, stream_id: int) -> bool:
        """The remote may still send PAYLOADs on ``stream_id``."""
        return stream_id not in self._refused and self._judge.streams.receives(stream_id, self.role)

    def open_stream_ids(self) -> list[int]:
        """The open streams, in the order they were opened (CLOSING waits for them to end)."""
        refused = self._refused
        return [sid for sid in self._judge.streams.open_stream_ids() if sid not in refused]

    def credit(self, stream_id: int) -> int:
        """PAYLOADs with N this side may send on ``stream_id`` now: the demand the judge keeps for the
        direction this side sends on (the one count of the remote's cumulative credit)."""
        if stream_id in self._refused:
            return 0
        direction = self._judge.streams.direction(stream_id, self.role)
        return direction.demand.outstanding if direction is not None and live(direction) else 0

    def _closed_if_idle(self, stream_id: int) -> None:
        """CLOSING ends (CLOSED) once a frame on ``stream_id`` leaves it ended and no stream is left open."""
        if self.state is ConnectionState.CLOSING and self.stream(stream_id) is None and not self.open_stream_ids():
            self.state = ConnectionState.CLOSED


def _plain_element(frame: Any, stream_id: int) -> bool:
    """A PAYLOAD with N only (no F, no C) on ``stream_id``: an element that changes no stream's lifecycle."""
    return (type(frame) is Payload and frame.stream_id == stream_id and frame.next and not frame.follows
            and not frame.complete)


def element_run_end(frames: list[Any], start: int, before: StreamView | None) -> int:
    """Where the run of plain elements on one receiving stream that begins at ``start`` ends; ``start + 1``
    when none begins there.  A request-response stream's PAYLOAD completes it, so it is never part of a run;
    an element that overruns the demand is a finding that changes no state."""
    if before is None or not before.receiving or before.kind is Kind.RESPONSE:
        return start + 1
    sid, end = frames[start].stream_id, start
    while end < len(frames) and _plain_element(frames[end], sid):
        end += 1
    return max(end, start + 1)
