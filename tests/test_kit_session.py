"""KitSession's bookkeeping of received frames, apart from any socket."""

from __future__ import annotations

from rsio_tck.bindings.rsio.wire.frames import OnNext
from rsio_tck.scenarios.session import MAX_TRANSCRIPT, KitSession


class _Writer:
    def is_closing(self) -> bool:
        return False


def test_bulk_transcript_of_a_flood_keeps_the_same_head_and_tail_as_line_by_line() -> None:
    bulk = KitSession(reader=None, writer=_Writer())  # type: ignore[arg-type]
    single = KitSession(reader=None, writer=_Writer())  # type: ignore[arg-type]
    frames = [OnNext(subscriber=1, element=bytes([i % 256])) for i in range(7000)]
    index = 0
    for chunk in (frames[:1500], frames[1500:1600], frames[1600:6000], frames[6000:]):
        bulk._received_lines(chunk, index, 0.0)
        for offset, frame in enumerate(chunk):
            single._line("target->kit", frame, None, index + offset)
        index += len(chunk)
    assert [(line.index, line.text) for line in bulk.transcript] == [
        (line.index, line.text) for line in single.transcript]
    assert len(bulk.transcript) == MAX_TRANSCRIPT
    assert bulk.transcript[0].index == 0 and bulk.transcript[-1].index == 6999
    assert bulk.transcript_dropped == single.transcript_dropped == 7000 - MAX_TRANSCRIPT
    assert "onNext(subscriber=1" in bulk.transcript[-1].render()
