"""The ``drain`` step proves that delivery stopped with the binding's barrier, not with a quiet spell.

RSocket's barrier is a KEEPALIVE with R: a target answers it after what it had written before reading
it, so a round trip that brings no element shows that nothing more is coming.  A quiet spell of the
silence window (50 ms) showed nothing of the kind: a correct server whose frames in flight after a
CANCEL paused for longer (rsocket-java on a loaded CI machine, RSFLOW-011) was failed for elements that
were still in flight.

The targets here are scripted RSocket servers on loopback, written with the kit's own codec: each
answers the kit's SETUP and its REQUEST_STREAM of ``tck/infinite`` with elements, and after the CANCEL
does what the test names.  Each one's loops are bounded (a count of elements), so none runs on.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from rsio_tck.bindings.rsocket import get_profile
from rsio_tck.bindings.rsocket.frames import Cancel, Keepalive, Payload, RequestStream
from rsio_tck.scenarios import RunConfig, Verdict, load_directory, run_suite

PROFILE = "rsocket-1.0"
BEFORE_CANCEL = 12  # elements sent before the kit's CANCEL can arrive (RSFLOW-011 waits for 10)
Behaviour = Callable[["Scripted"], Awaitable[None]]


class Scripted:
    """One connection of a scripted server: its frames in, and a write per frame out."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.decoder = get_profile(PROFILE).decoder()
        self.encoder = get_profile(PROFILE).encoder()
        self.pending: list[object] = []
        self.next_value = 0
        self.stream = 0

    async def frame(self, timeout: float = 10.0) -> object | None:
        while not self.pending:
            data = await asyncio.wait_for(self.reader.read(65536), timeout)
            if not data:
                return None
            self.pending.extend(self.decoder.feed(data))
        return self.pending.pop(0)

    async def until(self, kind: type, timeout: float = 10.0) -> object | None:
        """Frames up to the next of ``kind`` (None at the end of the connection); others are dropped."""
        while True:
            frame = await self.frame(timeout)
            if frame is None or isinstance(frame, kind):
                return frame

    async def element(self) -> None:
        self.writer.write(self.encoder.encode(Payload(stream_id=self.stream, next=True,
                                                      data=str(self.next_value).encode())))
        self.next_value += 1
        await self.writer.drain()

    async def answer(self, keepalive: object) -> None:
        assert isinstance(keepalive, Keepalive)
        self.writer.write(self.encoder.encode(Keepalive(respond=False, data=keepalive.data)))
        await self.writer.drain()


def in_order_in_flight(count: int, pace: float) -> Behaviour:
    """Correct: after the CANCEL, ``count`` elements it had queued leave ``pace`` seconds apart, and the
    KEEPALIVE's answer goes behind them, in order."""

    async def behaviour(s: Scripted) -> None:
        await s.until(Cancel)
        keepalive = await s.until(Keepalive)
        for _ in range(count):
            await asyncio.sleep(pace)  # the server's pace, not the test's synchronisation
            await s.element()
        await s.answer(keepalive)
        await answer_keepalives(s)

    behaviour.__name__ = f"in_order_{count}_in_flight"  # the test's id
    return behaviour


# Five elements 0.3 s apart: six silence windows, three times the old check's 0.1 s.
in_order_slow_in_flight = in_order_in_flight(5, 0.3)
# Forty elements 0.1 s apart: four seconds of delivery that never pauses for a whole signal timeout.
long_in_flight = in_order_in_flight(40, 0.1)


async def answer_overtakes_queue(s: Scripted) -> None:
    """Correct: the KEEPALIVE's answer jumps the queue, and eight queued elements follow it slowly;
    only a later round trip with nothing in it shows that they ended."""
    await s.until(Cancel)
    await s.answer(await s.until(Keepalive))
    for _ in range(8):
        await asyncio.sleep(0.1)
        await s.element()
    await answer_keepalives(s)


async def never_stops(s: Scripted) -> None:
    """Faulty: ignores the CANCEL and keeps sending, answering each KEEPALIVE after more elements."""
    await s.until(Cancel)
    for _ in range(2000):  # bounded: the kit's ``within`` (1 s here) ends the scenario long before
        for _ in range(3):
            await s.element()
        with_answer = [f for f in s.pending if isinstance(f, Keepalive)]
        s.pending = [f for f in s.pending if not isinstance(f, Keepalive)]
        for keepalive in with_answer:
            await s.answer(keepalive)
        if not s.pending:
            try:
                s.pending.extend(s.decoder.feed(await asyncio.wait_for(s.reader.read(65536), 0.01)))
            except TimeoutError:
                pass
        await asyncio.sleep(0.005)


async def answer_keepalives(s: Scripted) -> None:
    while (keepalive := await s.until(Keepalive)) is not None:
        await s.answer(keepalive)


@functools.cache
def rsflow_011() -> Any:
    (scenario,) = [s for s in load_directory(binding="rsocket") if s.id == "RSFLOW-011"]
    return scenario


async def run_rsflow_011(behaviour: Behaviour, within: float = 60.0, budget: float = 30.0) -> object:
    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        s = Scripted(reader, writer)
        try:
            request = await s.until(RequestStream)
            assert isinstance(request, RequestStream)
            s.stream = request.stream_id
            for _ in range(BEFORE_CANCEL):
                await s.element()
            await behaviour(s)
        except (ConnectionError, TimeoutError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    scenario = rsflow_011()
    steps = tuple({"drain": {**step["drain"], "within": within}} if "drain" in step else step
                  for step in scenario.steps)
    scenario = dataclasses.replace(scenario, steps=steps)
    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    async with server:
        port = server.sockets[0].getsockname()[1]
        config = RunConfig(target=f"tcp://127.0.0.1:{port}", codec=PROFILE, binding="rsocket",
                           scenario_budget=budget)
        (result,) = await asyncio.wait_for(run_suite([scenario], config, jobs=1), 60)
    return result


@pytest.mark.timeout(60)
@pytest.mark.parametrize("behaviour", [in_order_slow_in_flight, answer_overtakes_queue])
def test_elements_in_flight_after_a_cancel_pass_however_slowly_they_come(behaviour: Behaviour) -> None:
    result = asyncio.run(run_rsflow_011(behaviour))
    assert result.verdict is Verdict.PASS, (result.failures, result.transcript[-15:])  # type: ignore[attr-defined]
    sent = [line for line in result.transcript if ">> KEEPALIVE(respond=True" in line]  # type: ignore[attr-defined]
    assert sent, "the drain sent no barrier"


@pytest.mark.timeout(60)
def test_a_target_that_goes_on_after_the_cancel_fails_the_drain() -> None:
    result = asyncio.run(run_rsflow_011(never_stops, within=1.0))
    assert result.verdict is Verdict.FAIL  # type: ignore[attr-defined]
    assert any("delivery on subscriber 1 to stop" in f.expectation  # type: ignore[attr-defined]
               for f in result.failures), result.failures  # type: ignore[attr-defined]


@pytest.mark.timeout(60)
def test_elements_still_in_flight_when_the_budget_runs_out_are_not_judged_not_failed() -> None:
    # The scenario's budget (the kit's own time, 1 s here) runs out while the elements queued before the
    # cancel still arrive, before the barrier's answer: nothing shows the target broke a rule, so the
    # scenario is not judged (error), where it was failed for RS-FLOW-2 (rsocket-go on a loaded machine).
    result = asyncio.run(run_rsflow_011(long_in_flight, budget=1.0))
    assert result.verdict is Verdict.ERROR, (result.failures, result.transcript[-15:])  # type: ignore[attr-defined]
    assert not result.failures  # type: ignore[attr-defined]
    assert result.reason.startswith("not judged: delivery on subscriber 1 was still draining when the scenario's "
                                    "budget ran out")  # type: ignore[attr-defined]
