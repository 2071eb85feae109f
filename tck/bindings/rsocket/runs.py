"""Runs of plain PAYLOAD frames: what ``FrameDecoder.feed_runs`` returns for the frames that dominate traffic.

Theory of operation: a stream of elements is a stretch of consecutive PAYLOAD
frames on one stream with only the NEXT flag (no metadata, no FOLLOWS, no
COMPLETE).  The decoder may return such a stretch as one ``PayloadRun`` instead
of one ``Payload`` per frame; the binding's judge then takes ``count`` units of
demand from the stream at once when the stream's state lets every frame of the
run take the plain (ACTIVE, onNext) entry of the contract table, and otherwise
judges ``to_frames()`` one by one, so findings never depend on the grouping.
"""

from __future__ import annotations

from dataclasses import dataclass

from .frames import Payload


@dataclass(frozen=True, slots=True)
class PayloadRun:
    stream_id: int
    count: int  # frames in the run, each PAYLOAD with only the NEXT flag, all on stream_id
    datas: tuple[bytes, ...]  # each frame's data, in order

    def to_frames(self) -> list[Payload]:
        sid = self.stream_id
        return [Payload(stream_id=sid, next=True, data=data) for data in self.datas]
