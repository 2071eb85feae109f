"""Runs of plain PAYLOAD frames: what ``FrameDecoder.feed_runs`` returns for the frames that dominate traffic.

Theory of operation: a stream of elements is a stretch of consecutive PAYLOAD
frames on one stream with only the NEXT flag (no metadata, no FOLLOWS, no
COMPLETE, no I).  The decoder may return such a stretch as one ``PayloadRun``
instead of one ``Payload`` per frame; the binding's judge then takes ``count``
units of demand from the stream at once when the stream's state lets every
frame of the run take the plain (ACTIVE, onNext) entry of the contract table,
and otherwise judges ``to_frames()`` one by one, so findings never depend on
the grouping.

Finding a run (``find_run``) costs a few C-level passes over the bytes, not a
Python step per frame.  Every frame of a run has the same header (stream id,
type, flags), so splitting the bytes after the first header on that header
gives, per frame, its data followed by the next frame's length prefix.  The
split is only a guess (the data may contain the header's bytes), so it is then
proved: each piece's length must be what the length prefix before it announced.
By induction from the first frame, whose boundaries are known, every proved
piece starts exactly where a frame's data starts and the header found after it
is the next frame's real header.  The first piece that fails the proof ends the
run before it; the general decoder then decodes, or rejects, those bytes as it
would have without runs.  The last piece of a window is never proved (nothing
follows it), so its frame is left to the general path too.

A run keeps the pieces as split (each still ending with the next frame's length
prefix): the judge taking a run whole never looks at the data, and
``to_frames`` trims it.
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import itemgetter, sub

from .frames import Payload

MIN_FRAMES = 8  # a shorter run counts as a miss for the decoder's backoff
FIRST_FRAMES = 16  # the first window holds about this many frames, so a miss costs little
MAX_WINDOW = 1024 * 1024  # bytes split at once


class PayloadRun:
    """``count`` PAYLOAD frames with only the NEXT flag on ``stream_id``, consecutive on the wire."""

    __slots__ = ("stream_id", "count", "_pieces", "_trim")

    def __init__(self, stream_id: int, count: int, datas: Sequence[bytes], trim: int = 0) -> None:
        self.stream_id = stream_id
        self.count = count  # frames in the run
        # Each frame's data, followed by ``trim`` more bytes (the decoder's pieces end with
        # the next frame's length prefix: trimming waits until someone asks for the data).
        self._pieces = datas
        self._trim = trim

    @classmethod
    def of(cls, stream_id: int, datas: Sequence[bytes]) -> PayloadRun:
        """A run from each frame's data (tests, and runs built by hand)."""
        return cls(stream_id, len(datas), tuple(datas))

    @property
    def datas(self) -> tuple[bytes, ...]:
        """Each frame's data, in order."""
        if not self._trim:
            return tuple(self._pieces)
        return tuple(map(itemgetter(slice(None, -self._trim)), self._pieces))

    def split(self, at: int) -> tuple[PayloadRun, PayloadRun]:
        """The first ``at`` frames and the rest, as two runs (0 < ``at`` < ``count``)."""
        if not 0 < at < self.count:
            raise ValueError(f"cannot split a run of {self.count} frames at {at}")
        pieces = self._pieces
        return (PayloadRun(self.stream_id, at, pieces[:at], self._trim),
                PayloadRun(self.stream_id, self.count - at, pieces[at:], self._trim))

    def to_frames(self) -> list[Payload]:
        sid = self.stream_id
        return [Payload(stream_id=sid, next=True, data=data) for data in self.datas]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PayloadRun):
            return NotImplemented
        return (self.stream_id, self.count, self.datas) == (other.stream_id, other.count, other.datas)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"PayloadRun(stream_id={self.stream_id}, count={self.count})"


def expand(items: list[object]) -> list[object]:
    """``items`` with every run replaced by its frames (what ``feed`` returns)."""
    out: list[object] = []
    for item in items:
        if type(item) is PayloadRun:
            out.extend(item.to_frames())
        else:
            out.append(item)
    return out


_frombytes = int.from_bytes


def find_run(
    buf: bytes, at: int, stop: int, *, prefix: int, header: int, window: int, max_frame: int
) -> tuple[list[bytes], int, bool]:
    """The proved run of plain NEXT frames starting with the frame ``buf[at:stop]``.

    The caller has checked that frame: whole, and a plain NEXT PAYLOAD, so its
    header (``header`` bytes after a ``prefix``-byte length) is the one every
    frame of the run repeats.  Frame sizes a run accepts are held to
    ``max_frame`` and to the header size, as the frame-by-frame path holds
    them.  Looks at no more than ``window`` bytes after that header.

    Returns (pieces, bytes covered, complete): one piece per frame of the run
    (its data, then the next frame's ``prefix`` bytes), the bytes from ``at``
    the run covers, and whether every piece in the window was proved and the
    window ended before ``buf`` did (a larger window may find more).
    """
    body = at + prefix + header
    first_len = _frombytes(buf[at : at + prefix])
    # What a length prefix announces beyond the piece after its header; taken from the
    # first frame, whose extent is known (1.0's length excludes the prefix, the draft's counts it).
    excess = first_len - (stop - body + prefix)
    end = min(len(buf), body + window)
    pieces = buf[body:end].split(buf[at + prefix : body])
    pieces.pop()  # followed by no header inside the window: never proved
    if not pieces:
        return pieces, 0, False
    lens = list(map(len, pieces))
    announced = [first_len, *map(_frombytes, map(itemgetter(slice(-prefix, None)), pieces[:-1]))]
    diffs = list(map(sub, announced, lens))
    proved = len(diffs)
    if diffs.count(excess) != proved:
        proved = next(i for i, diff in enumerate(diffs) if diff != excess)
    # A size the frame-by-frame path would reject (shorter than the header, over the
    # limit) ends the run before that frame.  The first frame was checked by the caller.
    shift = header - prefix  # a frame's size after its prefix = its piece's length + shift
    if proved and (min(lens[:proved]) < prefix or max(lens[:proved]) + shift > max_frame):
        proved = next(i for i, n in enumerate(lens) if n < prefix or n + shift > max_frame)
    complete = proved == len(pieces) and end < len(buf)
    del pieces[proved:]
    covered = sum(lens[:proved]) + proved * header
    return pieces, covered, complete
