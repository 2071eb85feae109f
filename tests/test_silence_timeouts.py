"""Time-outs measure silence, not total time (issue 25): a target that writes a few bytes at a time is
waited for as long as bytes arrive, within the scenario's budget; the failure text says which ran out.

The fake target here paces its bytes with sleeps (that is what it is testing); the tests themselves
synchronise only on what ``next_event`` returns.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import re
import time

from rsio_tck.bindings.rsio.wire import get_codec
from rsio_tck.bindings.rsio.wire.frames import Goodbye, OnNext
from rsio_tck.scenarios import clock
from rsio_tck.scenarios.clock import Budget, Nothing, Progress, wait_end
from rsio_tck.scenarios.kit_session import KitSession
from rsio_tck.scenarios.liveness import probe
from rsio_tck.scenarios.steps import describe_event
from rsio_tck.transport import open_target

TIMEOUT = 0.2  # the signal timeout of these tests
BUDGET = 1.0  # and the scenario budget
PACE = 0.05  # seconds between the fake target's bytes


class _Writer:
    """The kit's side of the connection: these tests send nothing."""

    def is_closing(self) -> bool:
        return False

    def close(self) -> None:
        pass

    async def wait_closed(self) -> None:
        pass


async def _trickle(reader: asyncio.StreamReader, data: bytes) -> None:
    """The fake target: ``data`` one byte every ``PACE`` seconds (TCP allows it)."""
    for byte in data:
        await asyncio.sleep(PACE)
        reader.feed_data(bytes([byte]))


async def _wait(data: bytes | None) -> tuple[object, Nothing | None, float]:
    """One ``next_event`` for subscriber 1 while the fake target trickles ``data`` (None: it stays silent)."""
    reader = asyncio.StreamReader()
    session = KitSession(reader, _Writer(), budget=Budget.starting(BUDGET, time.monotonic()))
    session.start()
    target = asyncio.ensure_future(_trickle(reader, data)) if data is not None else None
    started = time.monotonic()
    try:
        event = await session.next_event(session.adapter.kit_key(1), TIMEOUT)
        return event, session.nothing, time.monotonic() - started
    finally:
        if target is not None:
            target.cancel()
        await session.shutdown()


def _frame(element: bytes) -> bytes:
    session = KitSession(None, _Writer())  # type: ignore[arg-type]
    return bytes(session.encoder.encode(OnNext(subscriber=1, element=element)))


def test_a_frame_that_trickles_in_for_longer_than_the_timeout_arrives() -> None:
    data = _frame(b"0123456789")
    assert len(data) * PACE > 2 * TIMEOUT  # the whole frame takes longer than the timeout
    event, nothing, took = asyncio.run(_wait(data))
    assert event is not None and event.kind == "onNext" and event.fields["element"] == b"0123456789", nothing
    assert took > TIMEOUT


def test_a_silent_target_fails_for_silence_within_the_timeout() -> None:
    event, nothing, took = asyncio.run(_wait(None))
    assert event is None and nothing is not None and nothing.why == clock.SILENCE
    assert TIMEOUT <= took < BUDGET
    text = describe_event(None, nothing)
    assert text == "nothing within 0.2 s (the target was silent for 0.2 s)"


def test_an_endless_trickle_fails_when_the_budget_runs_out_and_says_bytes_were_arriving() -> None:
    endless = _frame(bytes(10_000))  # never complete at one byte per PACE
    event, nothing, took = asyncio.run(_wait(endless))
    assert event is None and nothing is not None and nothing.why == clock.BUDGET
    assert BUDGET - 0.1 <= took < BUDGET + 5 * TIMEOUT
    assert nothing.recent > 0
    text = describe_event(None, nothing)
    assert text.startswith("nothing complete before the scenario's 1 s budget ran out (bytes were still arriving: ")
    assert "bytes in the last 0.2 s" in text and "silent" not in text


def test_a_target_that_falls_silent_midway_fails_for_silence_not_the_budget() -> None:
    cut = _frame(b"0123456789")[:6]  # a partial frame, then nothing
    event, nothing, took = asyncio.run(_wait(cut))
    assert event is None and nothing is not None and nothing.why == clock.SILENCE
    assert took < BUDGET
    assert "after" in describe_event(None, nothing)  # the wait was stretched before the silence


def test_wait_end_silence_budget_total_and_bound() -> None:
    budget = Budget.starting(10.0, 100.0)  # runs out at 110
    assert wait_end(100.0, 2.0, 0.0, budget) == (102.0, clock.SILENCE)
    assert wait_end(100.0, 2.0, 105.0, budget) == (107.0, clock.SILENCE)  # bytes at 105 moved it
    assert wait_end(100.0, 2.0, 109.5, budget) == (110.0, clock.BUDGET)
    # Past the budget a wait still lasts its timeout: never shorter than a total-time wait.
    assert wait_end(111.0, 2.0, 112.0, budget) == (113.0, clock.BUDGET)
    assert wait_end(100.0, 2.0, 105.0, budget, total=True) == (102.0, clock.WINDOW)
    assert wait_end(100.0, 2.0, 105.0, budget, until=104.0) == (104.0, clock.DEADLINE)


def test_progress_counts_recent_bytes_in_buckets() -> None:
    progress = Progress(last=0.0)
    for i in range(100):  # a byte every 10 ms for a second
        progress.saw(1, 1.0 + i * 0.01)
    assert progress.total == 100 and progress.last == 1.0 + 99 * 0.01
    assert progress.bytes_since(0.0) == 100
    assert 15 <= progress.bytes_since(1.8) <= 30  # to within a bucket
    assert len(progress._buckets) <= 11


def test_each_way_of_getting_nothing_reads_differently() -> None:
    texts = {why: Nothing(why, 2.0, waited=31.0, silent_for=2.0, budget=30.0, recent=17).describe()
             for why in (clock.SILENCE, clock.BUDGET, clock.WINDOW, clock.DEADLINE, clock.EOF, clock.GOODBYE)}
    assert len(set(texts.values())) == len(texts)
    assert "budget ran out" in texts[clock.BUDGET] and "17 bytes in the last 2 s" in texts[clock.BUDGET]
    assert "silent for 2 s" in texts[clock.SILENCE]
    paused = Nothing(clock.SILENCE, 2.0, waited=2.0, paused=True).describe()
    assert "kit had paused reading" in paused and "silent" not in paused


async def _websocket_wait(message: bytes, cut: int | None = None) -> tuple[object, Nothing | None, float]:
    """One ``next_event`` for subscriber 1 over ws:// while a fake server trickles one binary WebSocket message
    carrying ``message`` (RS-IO's byte stream), a byte every ``PACE`` seconds; ``cut``: only that many bytes of
    the WebSocket frame, then silence."""
    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        request = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
        found = re.search(rb"(?i)sec-websocket-key: *(\S+)", request)
        assert found is not None
        accept = base64.b64encode(hashlib.sha1(found.group(1) + b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11").digest())
        writer.write(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                     b"Sec-WebSocket-Accept: " + accept + b"\r\n\r\n")
        assert len(message) < 126
        frame = bytes([0x82, len(message)]) + message  # FIN, binary, unmasked (server to client)
        for byte in frame[:cut]:
            await asyncio.sleep(PACE)  # the target's pace
            writer.write(bytes([byte]))
        with contextlib.suppress(TimeoutError):  # then holds the connection open, silent, until the kit is done
            await asyncio.wait_for(done.wait(), 10 * BUDGET)
        writer.close()

    done = asyncio.Event()
    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    async with server:
        port = server.sockets[0].getsockname()[1]
        reader, writer = await open_target(f"ws://127.0.0.1:{port}/tck", 5.0)
        session = KitSession(reader, writer, budget=Budget.starting(BUDGET, time.monotonic()))
        session.start()
        started = time.monotonic()
        try:
            event = await session.next_event(session.adapter.kit_key(1), TIMEOUT)
            return event, session.nothing, time.monotonic() - started
        finally:
            done.set()
            await session.shutdown()


def test_over_websocket_a_message_that_trickles_in_for_longer_than_the_timeout_arrives() -> None:
    # The shell hands the stream on a whole message at a time; the bytes of one still arriving count as progress.
    data = _frame(b"0123")
    assert (len(data) + 2) * PACE > 2 * TIMEOUT
    event, nothing, took = asyncio.run(_websocket_wait(data))
    assert event is not None and event.kind == "onNext" and event.fields["element"] == b"0123", nothing
    assert took > TIMEOUT


def test_over_websocket_a_message_cut_midway_fails_for_silence() -> None:
    event, nothing, took = asyncio.run(_websocket_wait(_frame(b"0123456789"), cut=6))
    assert event is None and nothing is not None and nothing.why == clock.SILENCE, nothing
    assert took < BUDGET
    assert "after" in describe_event(None, nothing)  # stretched by the partial message, then silence


PROBE_TIMEOUT = 0.3  # the liveness probe's timeout in these tests (its budget is BUDGET)
PROBE_PACE = 0.1  # seconds between the bytes of its answer


async def _probe_trickling(answer: bytes) -> tuple[str | None, float]:
    """The liveness probe (RS-IO: a clientHello; any first frame answers it) against a target that trickles
    ``answer`` a byte every ``PROBE_PACE`` seconds, then stays silent."""
    done = asyncio.Event()

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await asyncio.wait_for(reader.read(64), 10)  # the probe's clientHello
        for byte in answer:
            if done.is_set():
                break
            await asyncio.sleep(PROBE_PACE)  # the target's pace
            writer.write(bytes([byte]))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(done.wait(), 10 * BUDGET)
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    async with server:
        url = f"tcp://127.0.0.1:{server.sockets[0].getsockname()[1]}"
        started = time.monotonic()
        try:
            return await probe(url, "rsio", "msgpack", PROBE_TIMEOUT, BUDGET), time.monotonic() - started
        finally:
            done.set()


def test_the_liveness_probe_waits_for_an_answer_as_long_as_its_bytes_come() -> None:
    answer = get_codec("msgpack").encoder(None).encode(Goodbye(reason="busy"))
    assert len(answer) * PROBE_PACE > 2 * PROBE_TIMEOUT  # the whole answer takes longer than the timeout
    why, took = asyncio.run(_probe_trickling(answer))
    assert why is None and took > PROBE_TIMEOUT


def test_the_liveness_probe_bounds_an_endless_trickle_by_the_budget_and_says_so() -> None:
    endless = get_codec("msgpack").encoder(None).encode(Goodbye(reason="x" * 1000))
    why, took = asyncio.run(_probe_trickling(endless))
    assert why is not None and why.startswith("a fresh connection got no answer to clientHello within the probe's "
                                              "1 s budget ("), why
    assert BUDGET - 0.1 <= took < BUDGET + 3 * PROBE_TIMEOUT
