"""A scenario connection's transcript: the lines a reader sees of what went each way (``KitSession.transcript``).

Theory of operation: a ``TranscriptLine`` holds a frame, not its text, and is described only when
read (``render``) or when it must let go of the frame (``freeze``).  ``Transcript`` keeps the first
and the last ``MAX_TRANSCRIPT // 2`` lines of a connection and counts the ones in the middle it drops;
a flood's lines that could not stay are never made at all (``Transcript.received``).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any

from .bounds import MAX_TRANSCRIPT

Frame = Any  # a frame of the session's binding
SHOWN_BYTES = 25  # bytes of a frame a line shows in hex


@dataclass(slots=True)
class TranscriptLine:
    """One line of the transcript, rendered only when someone reads it.

    Floods of elements make hundreds of thousands of lines; describing and
    hex-encoding each as it arrives would cost more than judging it.  A line
    that outlives the read that made it is frozen (``freeze``), so the
    transcript never holds more frames than one read completed.
    """

    t: float
    direction: str  # "kit->target", "target->kit"
    text: str | Frame  # a frame is described at render time
    data: bytes | None  # bytes as written; None: re-encode ``text`` to show its hex
    index: int | None = None
    encoder: Any = None

    describe: Any = None  # the binding's describe(frame)

    def freeze(self) -> None:
        """Describe the frame now and keep only that and the bytes shown, not the frame: a line that stays in
        the transcript must not hold a frame's payload (an RSocket frame the kit ignores keeps its raw bytes,
        up to 16 MiB; 200 such lines held 3 GB against a target that sent random bytes)."""
        if isinstance(self.text, str):
            return
        data = self.data
        if data is None and self.encoder is not None:
            data = self.encoder.encode(self.text)
        self.text = self.describe(self.text)
        self.data = (data or b"")[:SHOWN_BYTES]

    def render(self) -> str:
        arrow = ">>" if self.direction == "kit->target" else "<<"
        text = self.text if isinstance(self.text, str) else self.describe(self.text)
        data = self.data
        if data is None and not isinstance(self.text, str) and self.encoder is not None:
            data = self.encoder.encode(self.text)  # the target's frame, in canonical encoding
        hexed = (data or b"")[:SHOWN_BYTES].hex()
        shown = hexed if len(hexed) <= 48 else hexed[:48] + "..."
        number = f"#{self.index:<4}" if self.index is not None else "     "
        return f"{self.t * 1000:8.1f}ms {number} {arrow} {text}  [{shown}]"


def frame_count(item: Any) -> int:
    """The frames one decoded item stands for: a run (what a decoder's ``feed_runs`` may return: it has
    ``frames`` and ``frames_slice``) many, a frame one."""
    return item.frames if hasattr(item, "frames_slice") else 1


def expand_runs(items: list[Any]) -> list[Any]:
    """Frames of a decoder's list (its ``salvaged`` frames), with any run expanded into its frames."""
    return [f for item in items for f in (item.to_frames() if hasattr(item, "to_frames") else (item,))]


def holds_runs(items: list[Any]) -> bool:
    """Whether ``items`` holds any run (``frame_count``), asked once per kind of item, not once per item."""
    return any(hasattr(kind, "frames_slice") for kind in set(map(type, items)))


def frames_between(items: list[Any], start: int, stop: int) -> list[Any]:
    """Frames ``start .. stop`` of ``items`` counted frame by frame, runs expanded only where they overlap."""
    out: list[Any] = []
    position = 0
    for item in items:
        count = frame_count(item)
        if position + count > start and position < stop:
            if hasattr(item, "frames_slice"):
                out.extend(item.frames_slice(max(start - position, 0), min(stop - position, count)))
            else:
                out.append(item)
        position += count
        if position >= stop:
            break
    return out


class Transcript:
    """The first and the last ``MAX_TRANSCRIPT // 2`` lines of one connection; ``dropped`` counts the middle."""

    __slots__ = ("encoder", "describe", "head", "tail", "dropped")

    def __init__(self, encoder: Any, describe: Any) -> None:
        self.encoder, self.describe = encoder, describe
        self.head: list[TranscriptLine] = []
        self.tail: deque[TranscriptLine] = deque(maxlen=MAX_TRANSCRIPT // 2)
        self.dropped = 0

    def add(self, t: float, direction: str, text: str | Frame, data: bytes | None, index: int | None) -> None:
        line = TranscriptLine(t, direction, text, data, index, self.encoder, self.describe)
        if len(self.head) < MAX_TRANSCRIPT // 2:
            self.head.append(line)
            return
        if len(self.tail) == self.tail.maxlen:
            self.dropped += 1
        self.tail.append(line)

    def received(self, items: list[Any], index: int, t: float) -> None:
        """Lines for one read's frames, in bulk: of a flood only the lines that will
        stay (the head, the last of the tail) are made at all; the rest are counted.
        ``items`` may hold runs (``frame_count``), expanded only where a line is made."""
        head, tail, encoder, describe = self.head, self.tail, self.encoder, self.describe
        room = max(0, MAX_TRANSCRIPT // 2 - len(head))
        total = sum(map(frame_count, items)) if holds_runs(items) else len(items)
        frames = items if total == len(items) else None
        for offset, frame in enumerate(frames[:room] if frames is not None else frames_between(items, 0, room)):
            line = TranscriptLine(t, "target->kit", frame, None, index + offset, encoder, describe)
            line.freeze()  # the head stays for good: at most MAX_TRANSCRIPT // 2 descriptions a connection
            head.append(line)
        rest = total - room
        if rest <= 0:
            return
        keep = tail.maxlen or 0
        self.dropped += max(0, len(tail) + rest - keep)
        start = room + max(0, rest - keep)
        last = frames[start:] if frames is not None else frames_between(items, start, total)
        for offset, frame in enumerate(last, start):
            tail.append(TranscriptLine(t, "target->kit", frame, None, index + offset, encoder, describe))
        # Lines of earlier reads that are still in the tail are frozen: only this read's frames stay held (a
        # flood of small frames replaces the whole tail each read, so it describes nothing here).
        for earlier in range(len(tail) - (total - start)):
            tail[earlier].freeze()

    @property
    def lines(self) -> list[TranscriptLine]:
        return self.head + list(self.tail)
