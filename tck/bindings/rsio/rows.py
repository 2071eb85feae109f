"""RS-IO frames as the pipeline's frame-table rows (``RsioBinding.row_fields``)."""

from __future__ import annotations

from typing import Any

from .wire.frames import OnNext, OnNextLastPart, OnNextPacked, OnNextPart


def element_load(frame: Any) -> tuple[int, int]:
    """(element bytes, elements) a frame carries (a part carries one only when it is the last)."""
    if isinstance(frame, OnNext):
        return len(frame.element), 1
    if isinstance(frame, OnNextPacked):
        return len(frame.data), frame.count
    if isinstance(frame, OnNextLastPart):
        return len(frame.data), 1
    if isinstance(frame, OnNextPart):
        return len(frame.data), 0
    return 0, 0


def row_fields(frame: Any) -> tuple[str, int | None, int, int]:
    """(type, subscriber Id or None, element bytes, elements) of one frame."""
    payload, elements = element_load(frame)
    return frame.wire_name, getattr(frame, "subscriber", None), payload, elements
