"""KitSession's bookkeeping of received frames, apart from any socket."""

from __future__ import annotations

from rsio_tck.bindings.rsio.wire.frames import OnNext
from rsio_tck.scenarios.bounds import MAX_TRANSCRIPT
from rsio_tck.scenarios.kit_session import KitSession


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
    # Compared as rendered: the bulk path freezes (describes) the lines that outlive their read.
    assert [(line.index, line.render().split("ms ", 1)[1]) for line in bulk.transcript] == [
        (line.index, line.render().split("ms ", 1)[1]) for line in single.transcript]
    assert all(isinstance(line.text, str) for line in bulk.transcript[:MAX_TRANSCRIPT // 2])  # the head holds no frame
    assert len(bulk.transcript) == MAX_TRANSCRIPT
    assert bulk.transcript[0].index == 0 and bulk.transcript[-1].index == 6999
    assert bulk.transcript_dropped == single.transcript_dropped == 7000 - MAX_TRANSCRIPT
    assert "onNext(subscriber=1" in bulk.transcript[-1].render()


class _ResetWriter:
    """A writer whose peer resets the connection at the ``fails_at``-th write (asyncio raises at drain)."""

    def __init__(self, fails_at: int) -> None:
        self.fails_at, self.writes = fails_at, 0

    def is_closing(self) -> bool:
        return False  # asyncio's transport may not say so yet: the failed drain is what the kit knows

    def write(self, data: bytes) -> None:
        self.writes += 1

    async def drain(self) -> None:
        if self.writes >= self.fails_at:
            raise ConnectionResetError(104, "Connection reset by peer")


def test_after_a_failed_write_nothing_more_reaches_the_monitor() -> None:
    # Seen against rsocket-js-1 (F4 kills its server mid-SETUP): the next step's REQUEST_STREAM was observed
    # as sent, completing the cut SETUP in the monitor's decoder, which then misjudged the target (K16).
    import asyncio

    from rsio_tck.bindings.rsocket.frames import RequestStream, Setup
    from rsio_tck.errors import Side

    session = KitSession(reader=None, writer=_ResetWriter(fails_at=10), binding="rsocket")  # type: ignore[arg-type]
    setup = Setup(keepalive_interval=30_000, max_lifetime=90_000, metadata_mime=b"application/octet-stream",
                  data_mime=b"text/plain")
    request = RequestStream(stream_id=1, initial_request_n=1, data=b"tck/range?count=1")

    async def steps() -> None:
        await session.send_frames([setup], chunk=1)
        await session.send_frames([request])
        await session.send_bytes(b"\x00\x00\x06")  # a send_hex step's raw bytes, likewise

    asyncio.run(steps())
    sent = b"".join(r.data or b"" for r in session.trace if r.sender is Side.CLIENT)
    assert session.write_failed and sent == session.encoder.encode(setup)[:10]
    named = session._describe(request)
    assert "REQUEST_STREAM" in named  # the reader learns which frame never left, not just how many
    assert [line.text for line in session.transcript[-2:]] == [
        f"(not sent: {named}; the connection is gone)", "(not sent: raw bytes (3); the connection is gone)"]
    assert not [f for f in session.monitor.findings if f.side is Side.SERVER]


def test_a_long_unsent_batch_names_its_first_frames_and_counts_the_rest() -> None:
    import asyncio

    from rsio_tck.bindings.rsocket.frames import Cancel

    session = KitSession(reader=None, writer=_ResetWriter(fails_at=0), binding="rsocket")  # type: ignore[arg-type]
    session.write_failed = True
    cancels = [Cancel(stream_id=2 * n + 1) for n in range(5)]
    asyncio.run(session.send_frames(cancels))
    named = ", ".join(session._describe(frame) for frame in cancels[:3])
    assert session.transcript[-1].text == f"(not sent: {named} and 2 more frame(s); the connection is gone)"
    assert not session.trace


class _YieldingWriter:
    """A writer whose every drain lets other tasks run, as a slow socket does between a chunked send's pieces."""

    def __init__(self) -> None:
        self.wire = bytearray()

    def is_closing(self) -> bool:
        return False

    def write(self, data: bytes) -> None:
        self.wire += data

    async def drain(self) -> None:
        import asyncio

        await asyncio.sleep(0)


def test_a_send_while_a_chunked_send_is_under_way_goes_after_it_whole() -> None:
    # Seen under load on the draft profile: the kit's periodic KEEPALIVE, written while RSUNX-011 sent its
    # REQUEST_Ns a byte a write, landed inside a frame; the target refused the garbled frame (CONNECTION_ERROR).
    import asyncio

    from rsio_tck.bindings.rsocket.frames import Keepalive, RequestN, RequestStream

    writer = _YieldingWriter()
    session = KitSession(reader=None, writer=writer, binding="rsocket")  # type: ignore[arg-type]
    chunked = [RequestStream(stream_id=1, initial_request_n=1, data=b"tck/range?count=3"),
               RequestN(stream_id=1, request_n=1)]
    keepalive = Keepalive(respond=True)

    async def both() -> None:
        await asyncio.gather(session.send_frames(chunked, chunk=1), session.send_frames([keepalive]),
                             session.send_bytes(b""))

    asyncio.run(both())
    expected = b"".join(session.encoder.encode(frame) for frame in [*chunked, keepalive])
    assert bytes(writer.wire) == expected
    sent = [line.text for line in session.transcript if not isinstance(line.text, str)]
    assert sent == [*chunked, keepalive]  # the transcript in wire order


class _StalledWriter(_YieldingWriter):
    """A writer whose drain waits until ``release`` is set: a target that does not read for a while."""

    def __init__(self) -> None:
        import asyncio

        super().__init__()
        self.release = asyncio.Event()

    async def drain(self) -> None:
        await self.release.wait()

    def close(self) -> None:
        pass

    async def wait_closed(self) -> None:
        pass


def test_reading_goes_on_while_a_send_waits_and_the_automatic_answer_follows_it() -> None:
    # The automatic answer to the target's KEEPALIVE with R waits for the send lock; if the read loop waited
    # with it, the kit would stop reading while its own send waits for the target to read.
    import asyncio

    from rsio_tck.bindings.rsocket.frames import Keepalive, Payload, RequestStream

    async def scenario() -> None:
        reader = asyncio.StreamReader()
        writer = _StalledWriter()
        session = KitSession(reader=reader, writer=writer, binding="rsocket")
        session.start()
        request = RequestStream(stream_id=1, initial_request_n=5, data=b"tck/range?count=5")
        sending = asyncio.ensure_future(session.send_frames([request]))
        await asyncio.sleep(0)  # the send is now waiting in drain, holding the send lock
        ping, element = Keepalive(respond=True, data=b"p"), Payload(stream_id=1, next=True, data=b"0")
        reader.feed_data(session.encoder.encode(ping))
        for _ in range(20):  # the read loop takes the KEEPALIVE and queues its answer behind the waiting send
            await asyncio.sleep(0)
        reader.feed_data(session.encoder.encode(element))  # a later read
        event = await session.next_event(session.adapter.kit_key(1), 2.0)
        assert event is not None and event.kind == "onNext"  # read and sorted while the send still waits
        assert not sending.done()
        writer.release.set()
        await asyncio.wait_for(sending, 2.0)
        for _ in range(100):  # the answer's task runs once the lock is free
            if len(writer.wire) > len(session.encoder.encode(request)):
                break
            await asyncio.sleep(0)
        assert bytes(writer.wire) == session.encoder.encode(request) + session.encoder.encode(
            Keepalive(respond=False, data=b"p"))
        await session.shutdown()

    asyncio.run(asyncio.wait_for(scenario(), 10.0))
