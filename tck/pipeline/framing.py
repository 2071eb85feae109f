"""Frames as table rows, and judging a connection from its rows.

Theory of operation: a trace records what crossed a connection as byte chunks
per direction.  ``frame_rows`` decodes each direction with the binding's own
incremental decoder (for the profile: RS-IO's codec) and emits one row per frame: who sent it, its type, its
subscriber Id, how many bytes it took on the wire, how many element bytes and
elements it carried, the time of the chunk that completed it, and the frame's
own bytes.  Frame boundaries inside a chunk come from re-encoding each decoded
frame (canonical encodings re-encode to their exact size); the last frame of a
chunk takes whatever the chunk completed, so the rows of one direction always
concatenate to exactly the bytes that crossed.  From the first bytes that
cannot be decoded on, a direction's chunks become ``undecodable`` rows, each at
the time it arrived (the order of events decides verdicts such as BYE-3); the
end of a direction is an ``eof`` row.

``judge_rows`` is the way back: it replays a connection's rows, in order,
through ``rsio_tck.monitor.Monitor``.  Because the rows concatenate to the original
byte streams, the monitor reaches the same findings it reaches on the trace.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from itertools import compress
from operator import ne, or_
from typing import Any

from ..binding import DEFAULT_BINDING, Binding, get_binding
from ..errors import ProtocolViolation, Side
from ..monitor import Finding, Monitor, TraceRecord
from ..monitor.trace import DIRECTIONS, SENDERS

EOF = "eof"
RESET = "reset"  # an end by a connection reset: the frame it cut is not judged (SPEC.md decision y)
ENDS = frozenset({EOF, RESET})
UNDECODABLE = "undecodable"
# Row types that carry elements, and the parts of a split element: RS-IO's wire names today
# (derive.py's element and reassembly tables read them).
ELEMENT_TYPES = frozenset({"onNext", "onNextPacked", "onNextPart", "onNextLastPart"})
PART_TYPES = frozenset({"onNextPart", "onNextLastPart"})


@dataclass(frozen=True, slots=True)
class FrameRow:
    """One row of the frames table (without the run / scenario / connection keys)."""

    seq: int  # order within the connection, both directions
    direction: str  # c2s (kit -> target) or s2c
    type: str  # wire name, "eof", "reset" or "undecodable"
    id: int | None  # subscriber Id, when the frame has one
    size: int  # bytes on the wire
    payload: int  # element bytes carried
    elements: int  # elements carried (a part carries one only when it is the last)
    t: float
    data: bytes

    def as_dict(self) -> dict[str, Any]:
        return {
            "seq": self.seq, "direction": self.direction, "type": self.type, "id": self.id, "size": self.size,
            "payload": self.payload, "elements": self.elements, "t": self.t, "data": self.data,
        }


def _row_fields(binding: Binding) -> Any:
    """The binding's ``row_fields(frame) -> (type, id, payload bytes, elements)``; ValueError if none."""
    hook = getattr(binding, "row_fields", None)
    if hook is None:
        raise ValueError(f"binding {binding.name!r} cannot lay its frames out as pipeline rows")
    return hook


Piece = tuple[str, int | None, bytes, int, int]  # (type, id, bytes, payload, elements)


class _Direction:
    """Decodes one direction chunk by chunk and cuts the chunks into frame rows."""

    def __init__(self, codec: str, sender: Side, binding: Binding) -> None:
        self.binding, self.profile = binding, codec
        self.row_fields = _row_fields(binding)
        self.decoder = binding.decoder(codec)
        self.encoder = binding.encoder(codec)
        self.direction = DIRECTIONS[sender]
        self.stream = bytearray()  # everything this direction sent
        self.cut = 0  # stream offset where the next row starts
        self.emitted = 0  # frames emitted so far
        self.dead = False

    def feed(self, data: bytes) -> list[Piece]:
        """(type, id, bytes, payload, elements) for each frame the chunk completes."""
        self.stream += data
        if self.dead:  # nothing decodes after a wire error: the bytes stay visible, at their own time
            self.cut = len(self.stream)
            return [(UNDECODABLE, None, data, 0, 0)] if data else []
        try:
            frames = self.decoder.feed(data)
        except ProtocolViolation as violation:
            return self._fail(violation)
        # Where the decoder stands in the stream (its ``offset`` when it keeps one).
        return self._cut(frames, getattr(self.decoder, "offset", len(self.stream)))

    def eof(self) -> list[Piece]:
        rows: list[Piece] = []
        if len(self.stream) > self.cut:  # an unfinished frame, or bytes after a dead point
            rows.append((UNDECODABLE, None, bytes(self.stream[self.cut :]), 0, 0))
            self.cut = len(self.stream)
        return rows

    def _cut(self, frames: list[Any], end: int) -> list[Piece]:
        rows: list[Piece] = []
        last = len(frames) - 1
        for position, frame in enumerate(frames):
            try:
                size = len(self.encoder.encode(frame))  # also keeps the encoder's element sizes in step
            except (ValueError, ProtocolViolation):
                size = end - self.cut
            stop = end if position == last else min(end, self.cut + size)
            kind, sid, payload, elements = self.row_fields(frame)
            rows.append((kind, sid, bytes(self.stream[self.cut : stop]), payload, elements))
            self.cut = stop
        self.emitted += len(frames)
        return rows

    def _fail(self, violation: ProtocolViolation) -> list[Piece]:
        """Recover the frames decoded before the bad bytes, then mark the rest undecodable."""
        self.dead = True
        bad = violation.offset if violation.offset is not None else self.cut
        bad = max(self.cut, min(bad, len(self.stream)))
        again = self.binding.decoder(self.profile)
        try:
            frames = again.feed(bytes(self.stream[:bad]))
        except ProtocolViolation:
            frames = []
        rows = self._cut(frames[self.emitted :], bad)
        if len(self.stream) > bad:
            rows.append((UNDECODABLE, None, bytes(self.stream[bad:]), 0, 0))
        self.cut = len(self.stream)
        return rows


def frame_rows(records: Iterable[TraceRecord], codec: str | None = None,
               binding: Binding | str = DEFAULT_BINDING) -> Iterator[FrameRow]:
    """The frames of one recorded connection, in the order they were completed (``codec``: the
    binding's wire profile, its default when None)."""
    chosen = get_binding(binding) if isinstance(binding, str) else binding
    profile = codec or chosen.profiles[0]
    sides = {side: _Direction(profile, side, chosen) for side in Side}
    seq = 0
    last_t = 0.0
    for record in records:
        last_t = record.t
        side = sides[record.sender]
        if record.data is None:
            pieces = side.eof()
        else:
            pieces = side.feed(record.data)
        for kind, sid, data, payload, elements in pieces:
            yield FrameRow(seq, side.direction, kind, sid, len(data), payload, elements, record.t, data)
            seq += 1
        if record.data is None:
            yield FrameRow(seq, side.direction, RESET if record.reset else EOF, None, 0, 0, 0, record.t, b"")
            seq += 1
    for side in sides.values():  # a trace cut short: keep the unjudged tail visible
        for kind, sid, data, payload, elements in side.eof():
            yield FrameRow(seq, side.direction, kind, sid, len(data), payload, elements, last_t, data)
            seq += 1


def judge_rows(
    directions: Sequence[str], data: Sequence[bytes | None], times: Sequence[float], kinds: Sequence[str],
    codec: str | None = None, binding: Binding | str = DEFAULT_BINDING,
) -> list[Finding]:
    """Replay one connection's rows (already in ``seq`` order) through the monitor.

    Consecutive rows of one direction are fed as one chunk (the decoder's fast
    path); a finding's time is then taken back from the row of its frame.
    """
    def chunks() -> Iterator[Chunk]:
        for start, stop in zip(*_groups(directions, kinds)):
            if kinds[start] in ENDS:
                yield directions[start], kinds[start], times[start], b""
                continue
            rows = [i for i in range(start, stop) if data[i]]
            if rows:
                yield directions[start], kinds[start], times[rows[0]], b"".join([data[i] or b"" for i in rows])

    return judge_chunks(chunks(), lambda: frame_times(times, data, kinds), codec, binding)


# (direction, kind of its first row, time, bytes): what the monitor is fed at once.  A chunk of an eof or a reset
# row is that row alone, its bytes empty.
Chunk = tuple[str, str, float, bytes]


def judge_chunks(chunks: Iterable[Chunk], times_of_frames: Callable[[], list[float]], codec: str | None = None,
                 binding: Binding | str = DEFAULT_BINDING) -> list[Finding]:
    """The monitor's findings on one connection fed ``chunks`` in order; a finding's time is its frame row's, from
    ``times_of_frames()`` (every frame row's time, in order: ``frame_times``), asked only when there is a finding."""
    monitor = Monitor(codec, binding=binding)
    observe, close = monitor.observe, monitor.close
    for direction, kind, t, chunk in chunks:
        if kind in ENDS:
            close(SENDERS[direction], t, reset=kind == RESET)
        elif chunk:
            observe(SENDERS[direction], chunk, t)
    if not monitor.findings:
        return []
    found_at = times_of_frames()
    return [_timed(finding, found_at) for finding in monitor.findings]


def frame_times(times: Iterable[float], data: Iterable[bytes | int | None], kinds: Iterable[str]) -> list[float]:
    """The time of each frame row (``data``: its bytes, or their length): what a finding's frame index counts."""
    return [t for t, chunk, kind in zip(times, data, kinds) if chunk and kind not in ENDS and kind != UNDECODABLE]


def _groups(directions: Sequence[str], kinds: Sequence[str]) -> tuple[list[int], list[int]]:
    """(starts, stops) of the chunks ``judge_rows`` feeds: a row begins one when it is an eof, when its direction
    differs from the row before's, or when the row before is an eof.  Computed with ``map`` and ``compress``
    (loops in C), not a Python step per row: this runs over every row of the frames table."""
    count = len(kinds)
    if not count:
        return [], []
    eof = list(map(ENDS.__contains__, kinds))
    turns = map(or_, map(ne, directions[1:], directions[:-1]), map(or_, eof[1:], eof[:-1]))
    starts = [0, *compress(range(1, count), turns)]
    return starts, [*starts[1:], count]


def _timed(finding: Finding, frame_times: list[float]) -> Finding:
    index = finding.frame_index
    if index is not None and 0 <= index < len(frame_times) and finding.t != frame_times[index]:
        return replace(finding, t=frame_times[index])
    return finding
