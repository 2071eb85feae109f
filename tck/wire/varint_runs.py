"""Bulk decoding of fixed-size element runs in the ``varint`` profile (see ``runs.py``).

Theory of operation: a fixed-size ``onNext`` or ``onNextPacked`` frame is a
header of varints (type code, Id and, packed, the count) and raw element bytes,
so once the first frame's header is parsed every frame of the run has the same
length and the same header bytes; ``runs.strided_run`` finds how far that
holds.  Comparing exact header bytes means a frame whose varints are written
differently (non-minimal varints are legal here) just ends the run, and the
frame-by-frame path takes it.  Variable-size elements have no C parser to lean
on in this profile, so they are not gathered into runs.
"""

from __future__ import annotations

from .frames import ID_MAX
from .runs import StridedRun, strided_run
from .varints import read_uvarint


def fixed_run(buf: bytearray, at: int, sizes: dict[int, int], max_frame: int) -> tuple[StridedRun, int] | None:
    """A run of fixed-size element frames at ``buf[at]``, whose type code is 0x08 or 0x0B."""
    end = len(buf)
    code = buf[at]
    sid, q = read_uvarint(buf, at + 1, end)
    size = sizes.get(sid) if 0 <= sid <= ID_MAX else None
    if not size:
        return None
    per_frame = 1
    if code == 0x0B:
        per_frame, q = read_uvarint(buf, q, end)
        if per_frame < 1 or per_frame * size > max_frame:
            return None
    return strided_run(buf, at, sid=sid, header=q - at, size=size, per_frame=per_frame, packed=code == 0x0B)
