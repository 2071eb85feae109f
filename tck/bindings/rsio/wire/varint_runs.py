"""Bulk decoding of fixed-size element runs in the ``varint`` profile (see ``runs.py``).

Theory of operation: a fixed-size ``onNext`` or ``onNextPacked`` frame is a
header of varints (type code, Id and, packed, the count) and raw element bytes,
so once the first frame's header is parsed every frame of the run has the same
length and the same header bytes; ``runs.strided_run`` finds how far that
holds.  Comparing exact header bytes means a frame whose varints are written
differently (non-minimal varints are legal here) just ends the run, and the
frame-by-frame path takes it.  Variable-size elements have no C parser to lean
on in this profile: the frame-by-frame path decodes them, and ``gather_elements``
then folds each long stretch of the ``onNext`` frames it made into one
``VariableRun``, so the judge and the kit take them in bulk all the same.
"""

from __future__ import annotations

from itertools import groupby
from typing import Any

from . import runs
from .frames import OnNext
from .runs import MIN_FRAMES, StridedRun, VariableRun
from .varints import read_uvarint


def _uvarint(buf: bytes | bytearray, at: int) -> tuple[int, int] | None:
    """A varint as ``runs.fixed_run`` reads integers; None if cut off or not a valid varint."""
    value, after = read_uvarint(buf, at, len(buf))
    return None if value < 0 else (value, after)


def fixed_run(buf: bytearray, at: int, sizes: dict[int, int], max_frame: int) -> tuple[StridedRun, int] | None:
    """A run of fixed-size element frames at ``buf[at]``, whose type code is 0x08 or 0x0B."""
    return runs.fixed_run(buf, at, sizes, max_frame, _uvarint)


def gather_elements(frames: list[Any]) -> list[Any]:
    """``frames`` with every stretch of at least ``MIN_FRAMES`` ``onNext`` frames in a row folded into one
    ``VariableRun`` (whose ``to_frames`` gives them back, in order)."""
    if len(frames) < MIN_FRAMES:
        return frames
    out: list[Any] = []
    for kind, group in groupby(frames, type):
        if kind is not OnNext:
            out.extend(group)
            continue
        stretch = list(group)
        if len(stretch) < MIN_FRAMES:
            out.extend(stretch)
            continue
        ids = [frame.subscriber for frame in stretch]
        first = ids[0]
        out.append(VariableRun(subscriber=first, frames=len(stretch), elements=len(stretch),
                               items=[frame.element for frame in stretch],
                               ids=None if ids.count(first) == len(ids) else ids))
    return out
