"""Without a barrier (RS-IO, Ditto), ``drain`` ends at a quiet spell: silence of the target's BYTES, not of
whole elements (issue 25, part 1).

A correct target that writes a few bytes at a time (``--tiny-writes``) delivers an element still in flight
after a cancel more slowly than the silence window, while bytes arrive the whole time.  A quiet spell
counted in whole elements ended the drain early, and the next ``expect_silence`` then failed the target for
an element it had sent before it read the cancel.  Every read restarts the quiet spell, so the drain takes
that element; what must still fail does: delivery that never stops (``within``), and a reference peer that
ignores the cancel, tiny writes or not.

The scripted target is an RS-IO server on loopback written with the kit's own codec: it answers the hello
and a subscribe of ``tck/infinite``, sends 12 elements, and after the cancel trickles elements in flight one
byte per ``PACE`` seconds, well inside the silence window (``WINDOW``), each element taking longer than it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from rsio_tck.bindings.rsio.wire import get_codec
from rsio_tck.bindings.rsio.wire.frames import Cancel, ClientHello, Goodbye, OnNext, OnSubscribe, ServerHello, Subscribe
from rsio_tck.scenarios import RunConfig, ScenarioResult, Verdict, load_directory, load_file, run_suite
from rsio_tck.selfcheck import WINDOW_TRIES, freedom_only, run_against_peer

WINDOW = 0.4  # the run's silence window: a quiet spell ends the drain
PACE = 0.12  # seconds between the bytes of a trickled element (5 bytes: 0.6 s, longer than the window)
IN_FLIGHT = 4  # elements trickled after the cancel: 2.4 s in all, six windows
BEFORE_CANCEL = 12

SCENARIO = """
- id: STR-950
  title: elements in flight after a cancel trickle in, each slower than the silence window
  rules: [STR-6]
  level: MUST
  binding: contract
  requires: [tck/infinite]
  steps:
    - send: {subscribe: {publisher: tck/infinite, subscriber: 1, initialDemand: 100}}
    - expect: {onSubscribe: {subscriber: 1}}
    - expect_elements: {subscriber: 1, count: 12}
    - send: {cancel: {subscriber: 1}}
    - drain: {subscriber: 1, within: WITHIN}
    - expect_silence: {subscriber: 1, window: 2}
"""


class Target:
    """One connection of the scripted RS-IO server."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        codec = get_codec("msgpack")
        self.reader, self.writer = reader, writer
        self.encoder, self.decoder = codec.encoder(None), codec.decoder(None)
        self.pending: list[object] = []
        self.next_value = 0

    async def until(self, kind: type) -> object | None:
        """Frames up to the next of ``kind`` (None at the end of the connection); others are dropped."""
        while True:
            while not self.pending:
                data = await asyncio.wait_for(self.reader.read(65536), 30.0)
                if not data:
                    return None
                self.pending.extend(self.decoder.feed(data))
            frame = self.pending.pop(0)
            if isinstance(frame, kind):
                return frame

    def element(self) -> bytes:
        frame = self.encoder.encode(OnNext(subscriber=1, element=bytes([self.next_value])))  # tck/infinite's n
        self.next_value += 1
        return frame

    async def trickle(self, data: bytes) -> None:
        for byte in data:
            self.writer.write(bytes([byte]))
            await self.writer.drain()
            await asyncio.sleep(PACE)  # the target's pace, not the test's synchronisation


async def in_flight_then_stops(t: Target) -> None:
    """Correct: the elements it had queued before reading the cancel leave byte by byte, then nothing."""
    await t.until(Cancel)
    for _ in range(IN_FLIGHT):
        await t.trickle(t.element())


async def never_stops(t: Target) -> None:
    """Faulty: ignores the cancel and goes on trickling elements (bounded: ``within`` ends it first)."""
    await t.until(Cancel)
    for _ in range(100):
        await t.trickle(t.element())


async def run(behaviour: Callable[[Target], Awaitable[None]], tmp_path: Path, within: float) -> ScenarioResult:
    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        t = Target(reader, writer)
        try:
            await t.until(ClientHello)
            writer.write(t.encoder.encode(ServerHello(version=0)))
            subscribe = await t.until(Subscribe)
            assert isinstance(subscribe, Subscribe) and subscribe.subscriber == 1
            writer.write(t.encoder.encode(OnSubscribe(subscriber=1)))
            writer.write(b"".join(t.element() for _ in range(BEFORE_CANCEL)))
            await behaviour(t)
            if await t.until(Goodbye) is not None:
                writer.write(t.encoder.encode(Goodbye(reason="goodbye acknowledged")))
                await writer.drain()
        except (ConnectionError, TimeoutError):
            pass
        finally:
            writer.close()

    path = tmp_path / "trickle.yaml"
    path.write_text(SCENARIO.replace("WITHIN", str(within)))
    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    async with server:
        port = server.sockets[0].getsockname()[1]
        config = RunConfig(target=f"tcp://127.0.0.1:{port}", silence_window=WINDOW)
        (result,) = await asyncio.wait_for(run_suite(load_file(path), config, jobs=1), 60)
    return result


@pytest.mark.timeout(60)
def test_elements_trickling_in_after_a_cancel_are_drained_not_taken_for_silence(tmp_path: Path) -> None:
    result = asyncio.run(run(in_flight_then_stops, tmp_path, within=30))
    # A quiet spell of whole elements would have ended the drain before the second trickled element, which
    # expect_silence would then have seen.
    assert result.verdict is Verdict.PASS, (result.failures, result.transcript[-12:])
    trickled = [line for line in result.transcript if "<< onNext(subscriber=1" in line]
    assert len(trickled) == BEFORE_CANCEL + IN_FLIGHT


@pytest.mark.timeout(60)
def test_a_target_that_trickles_on_after_the_cancel_still_fails_the_drain(tmp_path: Path) -> None:
    result = asyncio.run(run(never_stops, tmp_path, within=1.5))
    assert result.verdict is Verdict.FAIL
    (failure,) = result.failures
    assert failure.rule == "STR-6" and "delivery on subscriber 1 to stop" in failure.expectation, failure
    assert failure.got.endswith("elements and still sending"), failure


def _drains(steps: tuple[dict[str, object], ...]) -> bool:
    return any("drain" in step for step in steps)


TINY = "3"  # bytes a write at most: the seeded peer draws 1..3 per connection


# Traced, as the floods below: untraced, in a loaded run, the kit saw a quiet spell in a trickling flood (the
# test below), and one inside a correct peer's trickle would fail this test.
@pytest.mark.timeout(600)
@pytest.mark.parametrize(("binding", "profile"), [("rsio", "msgpack"), ("ditto", "streaming"), ("ditto", "search")])
def test_the_draining_scenarios_pass_a_peer_writing_a_few_bytes_at_a_time(binding: str, profile: str) -> None:
    scenarios = [s for s in load_directory(binding=binding) if _drains(s.steps)]
    assert len(scenarios) >= 8
    results = run_against_peer(scenarios, profile, jobs=4, binding=binding, extra=("--tiny-writes", TINY))
    judged = [r for r in results if r.verdict is not Verdict.SKIP]
    assert len(judged) >= 6, [r.id for r in judged]  # the profile's own draining scenarios ran
    bad = [r.explain() for r in judged if r.verdict is not Verdict.PASS and not freedom_only(r, binding)]
    assert not bad, "\n\n".join(bad)


# Not in the slow tier, whose tests run untraced: untraced, in a loaded run, the kit saw a quiet spell in the
# RS-IO flood and missed the fault in all four tries.  A miss, not a wrong verdict, but this test asserts the
# catch; traced, in `make test`, it has passed every run.
@pytest.mark.timeout(300)
@pytest.mark.parametrize(("binding", "fault", "caught"),
                         [("rsio", "str-ignore-cancel", "STR-006"), ("ditto", "cancel-ignored", "DITTO-030")])
def test_a_peer_that_ignores_the_cancel_still_fails_under_tiny_writes(binding: str, fault: str, caught: str) -> None:
    (scenario,) = [s for s in load_directory(binding=binding) if s.id == caught]
    # Without a barrier (RS-IO), a cancel ignored under unbounded demand shows only as bytes that go on
    # past the drain's quiet spell; a trickling peer starved on a loaded machine can pause longer than that
    # spell and longer than the silence window after it (seen once in a loaded make test: STR-006 passed
    # it).  That is a miss, never a wrong verdict, so the fault gets the self-check's tries for a time-window
    # fault (selfcheck.WINDOW_TRIES) and must be caught in one of them.
    results = []
    for _ in range(1 + WINDOW_TRIES):
        (result,) = run_against_peer([scenario], binding=binding, faults=(fault,), extra=("--tiny-writes", TINY))
        results.append(result)
        if result.verdict is Verdict.FAIL:
            break
    assert results[-1].verdict is Verdict.FAIL, "\n\n".join(r.explain() for r in results)
