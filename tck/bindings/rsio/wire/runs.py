"""Element runs: consecutive element frames, decoded in bulk.

Theory of operation: traffic is dominated by long runs of ``onNext`` (or
``onNextPacked``) frames, for one subscriber or a few interleaved.  A decoder's ``feed_runs`` may hand
such a run back as one ``ElementRun`` instead of one frame object per element,
having checked the whole run at once with C-level operations (bytes slicing
and stripping, list slicing, ``map``).  A run stands for exactly the frames
that ``feed`` would have returned for the same bytes, in the same order:
``to_frames`` rebuilds them, and the differential tests hold the two paths to
that.  A decoder only forms a run from bytes it has proved to be plain,
well-formed element frames; anything unusual goes through its frame-by-frame
path, which raises the precise violation.

Runs are a decoding artefact, not a message: nothing encodes them, and only a
consumer that asks for them (``Monitor.observe``) ever sees one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .frames import Frame, OnNext, OnNextPacked


@dataclass(frozen=True, slots=True, kw_only=True)
class ElementRun:
    """``frames`` element frames for ``subscriber``, carrying ``elements`` elements in all."""

    subscriber: int
    frames: int
    elements: int

    def to_frames(self) -> list[Frame]:
        return self.frames_slice(0, self.frames)

    def frames_slice(self, start: int, stop: int) -> list[Frame]:
        """Frames ``start .. stop`` of the run (a transcript shows the first and last few of a long one)."""
        raise NotImplementedError


@dataclass(frozen=True, slots=True, kw_only=True)
class VariableRun(ElementRun):
    """Variable-size ``onNext`` frames: one element each, the elements in order.

    ``ids`` is None when every frame is for ``subscriber``; otherwise it holds
    each frame's Id (subscriptions interleaved), and ``subscriber`` is the first.
    """

    items: list[bytes]
    ids: list[int] | None = None

    def frames_slice(self, start: int, stop: int) -> list[Frame]:
        if self.ids is not None:
            return [OnNext(subscriber=sid, element=item) for sid, item in zip(self.ids[start:stop], self.items[start:stop])]
        sid = self.subscriber
        return [OnNext(subscriber=sid, element=item) for item in self.items[start:stop]]


@dataclass(frozen=True, slots=True, kw_only=True)
class StridedRun(ElementRun):
    """Fixed-size frames of one length (``stride``) laid end to end in ``buffer``.

    Each frame is ``header`` bytes (type code, Id and, for ``onNextPacked``, the
    count) followed by ``per_frame * size`` raw element bytes.  ``packed`` says
    whether the frames are ``onNextPacked`` or fixed-size ``onNext``.
    """

    buffer: bytes
    start: int
    header: int
    stride: int
    size: int
    per_frame: int
    packed: bool

    def payloads(self, start: int = 0, stop: int | None = None) -> list[bytes]:
        """The raw element bytes of each frame (of frames ``start .. stop``), in order."""
        buf, stride, header = self.buffer, self.stride, self.header
        stop = self.frames if stop is None else min(stop, self.frames)
        first = self.start + header
        return [buf[at : at + stride - header] for at in range(first + start * stride, first + stop * stride, stride)]

    def frames_slice(self, start: int, stop: int) -> list[Frame]:
        sid = self.subscriber
        if self.packed:
            count = self.per_frame
            return [OnNextPacked(subscriber=sid, count=count, data=data) for data in self.payloads(start, stop)]
        return [OnNext(subscriber=sid, element=data) for data in self.payloads(start, stop)]


MIN_FRAMES = 8  # a run shorter than this is left to the frame-by-frame path


def strided_run(
    buf: bytes | bytearray, at: int, *, sid: int, header: int, size: int, per_frame: int, packed: bool
) -> tuple[StridedRun, int] | None:
    """The run of frames at ``buf[at]`` whose header repeats the first frame's ``header`` bytes.

    The caller has parsed the first frame's header (``header`` bytes: type code,
    Id and, for ``onNextPacked``, the count) and knows the element size, so
    every frame of the run is ``header + per_frame * size`` bytes long.  The run
    lasts as long as each header byte repeats at that stride: one
    ``bytes.lstrip`` per header byte over a strided slice finds where it stops.
    Returns the run and the bytes it covers, or None if it is shorter than
    ``MIN_FRAMES``.  A ``bytearray`` is copied out, since its owner will reuse it.
    """
    stride = header + per_frame * size
    frames = (len(buf) - at) // stride
    if frames < MIN_FRAMES:
        return None
    # The first MIN_FRAMES frames first, so that a miss costs the same however
    # much follows; then the whole feed.
    for limit in (MIN_FRAMES, frames):
        end = at + limit * stride
        for j in range(header):
            column = buf[at + j : end : stride]
            # Frames stay aligned only while every header byte repeats: the first
            # difference in any column ends the run there.
            limit = min(limit, len(column) - len(column.lstrip(buf[at + j : at + j + 1])))
            if limit < MIN_FRAMES:
                return None
    frames = limit
    covered = frames * stride
    if isinstance(buf, bytearray):
        buf, at = bytes(buf[at : at + covered]), 0
    run = StridedRun(
        subscriber=sid,
        frames=frames,
        elements=frames * per_frame,
        buffer=buf,
        start=at,
        header=header,
        stride=stride,
        size=size,
        per_frame=per_frame,
        packed=packed,
    )
    return run, covered


# Reads an unsigned integer at ``buf[at]``: (value, position after it), or None where the
# profile would not take it on the fast path (cut off, too long, not minimally encoded).
ReadUint = Callable[[bytes | bytearray, int], "tuple[int, int] | None"]


def fixed_run(
    buf: bytes | bytearray, at: int, sizes: dict[int, int], max_frame: int, read_uint: ReadUint
) -> tuple[StridedRun, int] | None:
    """A run of fixed-size ``onNext`` (type code 0x08) or ``onNextPacked`` (0x0B) frames at ``buf[at]``.

    Both profiles write the header as the type code byte, the Id and, packed, the
    count; ``read_uint`` reads those integers the way the profile writes them.
    """
    code = buf[at]
    sid_field = read_uint(buf, at + 1)
    if sid_field is None:
        return None
    sid, q = sid_field
    size = sizes.get(sid)
    if not size:
        return None
    per_frame = 1
    if code == 0x0B:
        count_field = read_uint(buf, q)
        if count_field is None:
            return None
        per_frame, q = count_field
        if per_frame < 1 or per_frame * size > max_frame:
            return None
    return strided_run(buf, at, sid=sid, header=q - at, size=size, per_frame=per_frame, packed=code == 0x0B)


def expand(items: list[Frame | ElementRun]) -> list[Frame]:
    """``items`` with every run replaced by its frames (what ``feed`` returns)."""
    out: list[Frame] = []
    for item in items:
        if isinstance(item, ElementRun):
            out.extend(item.to_frames())
        else:
            out.append(item)
    return out
