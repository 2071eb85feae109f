"""Running client test cases: the client under test, the kit's relay, the binding's serving peer.

Theory of operation: for each case the kit starts its conforming server for the
binding (the embedded reference peer, with the case's options), listens at the
listen URL with the proxy relay in front of it, and starts the client command with
``RSIO_URL`` and ``RSIO_TESTCASE``.  The relay judges every frame of both
directions with the binding's monitor; the verdict is the client's:

- exit 127: skip (the client does not support the case);
- a MUST rule broken by the client: fail (SHOULD: warn);
- the client exited non-zero (it saw something other than the case expects), or
  did not exit within the timeout: fail;
- a rule broken by the kit's own server: error (a kit bug, never blamed on the client);
- otherwise pass.

Bounds: one connection per case is judged (a client may open more: each is relayed and
judged, up to ``MAX_CONNECTIONS``), the client's output is kept to its last
``MAX_OUTPUT`` bytes, and every case ends within ``timeout`` seconds.  Once the client
broke a MUST rule its verdict is certain: the relay passes a little more (a goodbye, a
close) and closes the connection (``run_proxy(certain=Side.CLIENT)``), as the kit's own
scenarios stop reading a target then, so a client that floods or writes garbage costs
the kit neither its time nor a long trace to re-judge in the report; the client then gets
``VERDICT_GRACE`` seconds to exit before it is ended.

Silence, not total time (``CaseWatch``): the case also ends once a connection of the client's
has stood open for ``silence`` seconds (``--client-silence``) with no progress (the relay's
``Activity``: no whole frame either way but keepalives, no connection opened or ended).  The kit's
serving peer answers at once, so such a case is the client's: with no byte at all, or only
keepalives, it went silent (fail, the case's rule, like a signal that did not come: a keepalive
shows a peer alive, as the kit's own waits take it, not getting on with its case); with bytes
that complete no frame it is too slow to judge (error, not judged, like a scenario whose budget
ran out while bytes came).

Said once (``run_client_tests``): a client that stalls (went silent, too slow, or did not finish
within ``timeout``) in one case is tried on the next; if it stalls there too, it has stopped, as
a target whose liveness probe goes unanswered: the first case keeps its verdict, the second is
not judged, the rest are not run (error), and the run says it in one line and exits 3.  So a
hostile client costs a run at most two cases' bounds, plus the start of each case before.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import time
from collections.abc import Callable
from typing import Any

from ..binding import Binding
from ..catalogue import Level
from ..child_process import run_to_end
from ..errors import Side
from ..monitor import Finding
from ..proxy.relay import Activity, run_proxy
from ..scenarios.liveness import PACE_FACTOR, PROBE_TIMEOUT_MIN
from ..scenarios.result import Failure, ScenarioResult, TargetStop, Verdict
from .cases import ClientTest, result_id

MAX_CONNECTIONS = 4  # connections one case may open
MAX_OUTPUT = 8 * 1024  # bytes of the client's output kept for the transcript
UNSUPPORTED = 127
# Seconds a client's open connection may go without progress (--client-silence): the pace probe's bound on a
# whole answer, so a client is held to what a target is.
CLIENT_SILENCE = PACE_FACTOR * PROBE_TIMEOUT_MIN
VERDICT_GRACE = 2.0  # seconds a client gets to exit once the kit closed its connection at a certain verdict

# How a case's client stopped getting anywhere (``CaseWatch.stall``).
SILENT = "silent"  # nothing came either way with a connection open
SLOW = "slow"  # bytes came, but no whole frame
CLOSED = "closed"  # the kit closed its connection at a certain verdict, and the client did not exit
TIMED_OUT = "timed out"  # the case's time-out came first
STALL_WORDS = {SILENT: "held its connection open and silent", SLOW: "trickled bytes that made no whole frame",
               CLOSED: "did not exit once its verdict was certain", TIMED_OUT: "did not finish within its time-out"}
BACKSTOP = 1.0  # seconds past the time-out at which the child is ended even if the watch did not come round


class CaseWatch:
    """Ends a case's client once it stopped getting anywhere, or at its time-out (see the module's theory of
    operation): reads the relay's ``Activity``, closes the relay's connections (the kit's doing: nothing after
    is judged, so the end of a client cut short is not charged to it), then sets ``stop`` (``run_to_end``
    ends the client)."""

    def __init__(self, activity: Activity, silence: float, timeout: float) -> None:
        self.activity = activity
        self.silence = silence
        self.deadline = time.monotonic() + timeout
        self.stop = asyncio.Event()
        self.stall: str | None = None
        self.trickled = 0  # bytes that came in the silence of a too-slow client
        self.keepalives = 0  # keepalives that came, either way, in the silence of a stopped client

    def _due(self) -> tuple[str | None, float]:
        """What stalled, or how long until it is worth looking again (or progress comes first)."""
        activity = self.activity
        now = time.monotonic()
        quiet = now - activity.last_progress
        if now >= self.deadline:
            return TIMED_OUT, 0.0
        left = self.deadline - now
        if activity.open:
            if quiet >= self.silence:
                return (SLOW if activity.bytes_since_progress else SILENT), 0.0
            return None, min(left, self.silence - quiet)
        if activity.closed_at_verdict:
            return (CLOSED, 0.0) if quiet >= VERDICT_GRACE else (None, min(left, VERDICT_GRACE - quiet))
        return None, left  # not connected yet, or all ended by the client: it has until its time-out

    async def run(self) -> None:
        while True:
            self.activity.changed.clear()
            stall, wait = self._due()
            if stall is not None:
                self.stall, self.trickled = stall, self.activity.bytes_since_progress
                self.keepalives = self.activity.liveness_since_progress
                self.activity.close_all(f"the kit ended the case: the client {STALL_WORDS[stall]}")
                self.stop.set()
                return
            try:
                await asyncio.wait_for(self.activity.changed.wait(), wait)
            except TimeoutError:
                pass  # look again: a silence or the time-out may have run its length


async def _run_client(command: str, env: dict[str, str], timeout: float,
                      stop: asyncio.Event) -> tuple[int | None, str]:
    """Run the client; (exit code or None on timeout or ``stop``, the tail of its output).  Its output is read
    to the end and every wait is bounded (``child_process``), whatever the client or its children do."""
    finished = await run_to_end(shlex.split(command), env, timeout, MAX_OUTPUT, stop)
    tail = finished.output.decode(errors="replace")
    if finished.output_left_open:
        tail += "\n(the kit gave up on the client's output: it stayed open after the client ended)"
    return finished.code, tail


def _verdict(case: ClientTest, code: int | None, output: str, connected: bool, findings: list[Finding],
             timeout: float, watch: CaseWatch) -> tuple[Verdict, list[Failure], str, bool]:
    """The case's verdict, failures and reason, and whether it stalled: the client was ended, with no verdict
    certain, at its time-out or its silence (``run_client_tests`` then tries the next case before it says
    the client stopped)."""
    # The serving peer's SHOULD deviations are its seeded legal freedoms (e.g. TCK-9's wide
    # integers), which clients must accept; only a MUST it broke is the kit's bug.
    mine = [f for f in findings if f.side is Side.SERVER and f.level is Level.MUST]
    theirs = [f for f in findings if f.side is Side.CLIENT]
    if code == UNSUPPORTED:
        return Verdict.SKIP, [], "the client does not support this test case (exit 127)", False
    if mine:
        return Verdict.ERROR, [], f"the kit's own server broke {mine[0].rule} (a kit bug): {mine[0].message}", False
    failures: list[Failure] = []  # the client's own rule breaks are findings, reported as such
    # A client that broke a MUST on the wire and then failed its case failed because of it (the kit refuses
    # an undecodable frame): the exit is charged to that rule, not to the case's first rule, which the client
    # may not have broken (FINDINGS.md F26: a METADATA_PUSH on stream 0 without M is no RS-PUSH-1).
    primary = next((f.rule for f in theirs if f.level is Level.MUST), case.rules[0])
    certain = any(f.level is Level.MUST for f in theirs)  # then ending the client was the kit's, not a miss
    stalled = code is None and not certain
    if stalled:
        if watch.stall == SLOW:
            return Verdict.ERROR, [], (f"not judged: no whole frame came for {watch.silence:g} s while the "
                                       f"client's bytes trickled in ({watch.trickled} B): too slow to judge"), True
        if watch.stall == SILENT:
            failures.append(Failure(rule=primary, expectation=f"the client to go on with its case (a frame, or "
                                    f"the end of its connection) within {watch.silence:g} s",
                                    got=(f"only keepalives came ({watch.keepalives}, either way)" if watch.keepalives
                                         else "nothing came either way") + f" for {watch.silence:g} s with its "
                                        "connection open; the kit ended the case"))
        else:
            failures.append(Failure(rule=primary, expectation=f"the client to finish within {timeout:g} s",
                                    got="it did not; the kit killed it"))
    elif code != 0:
        last = output.strip().splitlines()[-3:]
        failures.append(Failure(rule=primary, expectation="the client to exit 0 (the test case went as expected)",
                                got=f"exit {code}; its last output: {' | '.join(last) or '(none)'}"))
    if not connected and code == 0:
        failures.append(Failure(rule=primary, expectation="a connection to the kit", got="none came"))
    if failures or certain:
        return Verdict.FAIL, failures, "", stalled
    if any(f.level is Level.SHOULD for f in theirs):
        return Verdict.WARN, [], "", False
    return Verdict.PASS, [], "", False


async def run_client_case(case: ClientTest, command: str, listen: str, serving: str, binding: Binding,
                          profile: str, *, timeout: float = 30.0, silence: float = CLIENT_SILENCE) -> ScenarioResult:
    """One client test case against the kit listening at ``listen``, served by the peer at ``serving``."""
    return (await _run_case(case, command, listen, serving, binding, profile, timeout, silence))[0]


async def _run_case(case: ClientTest, command: str, listen: str, serving: str, binding: Binding, profile: str,
                    timeout: float, silence: float) -> tuple[ScenarioResult, str | None]:
    """One client test case: its result, and how its client stalled, if it did (a key of ``STALL_WORDS``)."""
    started = time.monotonic()
    activity = Activity()
    loop = asyncio.get_running_loop()
    ready: asyncio.Future[str] = loop.create_future()
    stop = asyncio.Event()
    # The kit is the client's receiver here: the client is judged against the kit's configured maxima (a kit
    # connection's, ``session_limits``: RSocket's 1 MiB of reassembly), not the binding's largest (64 MiB of
    # fragments that never end were held, 165 MB for a hostile client's two cases).
    limits = getattr(binding.scenario_adapter(profile, {}), "session_limits", None)
    relay = asyncio.ensure_future(run_proxy(listen, serving, binding, profile, max_connections=MAX_CONNECTIONS,
                                            duration=timeout + 5.0, on_ready=ready.set_result, stop=stop,
                                            certain=Side.CLIENT, limits=limits, activity=activity))
    try:
        url = await asyncio.wait_for(asyncio.shield(ready), 10.0)
    except TimeoutError:
        relay.cancel()
        raise
    env = {**os.environ, "RSIO_URL": url, "RSIO_TESTCASE": case.name}
    watch = CaseWatch(activity, silence, timeout)
    watching = asyncio.ensure_future(watch.run())
    try:
        code, output = await _run_client(command, env, timeout + BACKSTOP, watch.stop)
    finally:
        watching.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watching
    stop.set()
    result = await relay
    findings = [f for c in result.connections for f in c.monitor.findings]
    verdict, failures, reason, stalled = _verdict(case, code, output, bool(result.connections), findings, timeout,
                                                  watch)
    transcript = [f"$ RSIO_URL={url} RSIO_TESTCASE={case.name} {command}  -> exit {code}"]
    transcript += [c.line() for c in result.connections]
    transcript += [f"client: {line}" for line in output.splitlines()[-40:]]
    for conn in result.connections:
        for finding in conn.monitor.findings:
            transcript.append(f"connection {conn.index}: {finding.side} {finding.rule}: {finding.message}")
    trace = result.connections[0].trace if result.connections else []
    wire = result.connections[0].wire_trace if result.connections else []
    return ScenarioResult(
        id=result_id(binding.name, case.name), title=case.description, rules=case.rules, level="MUST",
        verdict=verdict, duration=time.monotonic() - started, failures=failures, findings=findings,
        reason=reason, transcript=transcript, target=command, codec=profile, trace=trace, wire_trace=wire,
        target_side="client", timed_out=stalled and verdict is Verdict.FAIL,
        out_of_budget=stalled and verdict is Verdict.ERROR), (watch.stall if stalled else None)


def _stall_words(stall: str | None) -> str:
    """How a stalled case's client stalled, in the words of the run's one line."""
    return f"it {STALL_WORDS[stall or TIMED_OUT]}"  # None: the backstop ended it


def _stopped(first: tuple[ScenarioResult, str | None], second: tuple[ScenarioResult, str | None]) -> TargetStop:
    """The client stopped: it stalled in ``first`` and again in ``second``, the next case."""
    return TargetStop(first[0].id, f"and again in the next case, {second[0].id} ({_stall_words(second[1])})",
                      slow=first[1] == SLOW and second[1] == SLOW, after=_stall_words(first[1]))


def _not_judged(result: ScenarioResult, stop: TargetStop) -> None:
    """The case that found the client stopped: error, nothing charged to a rule (as a scenario whose time-out
    came once the target had stopped)."""
    result.verdict, result.failures = Verdict.ERROR, []
    result.reason = f"not judged: the client under test stalled in {stop.during} ({stop.after}) and again here"
    result.stopped = stop


def _not_run(case: ClientTest, binding: Binding, stop: TargetStop) -> ScenarioResult:
    return ScenarioResult(id=result_id(binding.name, case.name), title=case.description, rules=case.rules,
                          level="MUST", verdict=Verdict.ERROR, target_side="client", stopped=stop,
                          reason=f"not run: the client under test stalled in {stop.during} and in the case after it")


async def run_client_tests(cases: list[ClientTest], command: str, listen: str, binding: Binding, profile: str,
                           serving_peer: Callable[[ClientTest], Any], *, timeout: float = 30.0,
                           silence: float = CLIENT_SILENCE,
                           on_result: Callable[[ScenarioResult], None] | None = None) -> list[ScenarioResult]:
    """Every case in turn, until the client stalls in two cases in a row (then the rest are not run, said once);
    ``serving_peer(case)`` is a context manager giving the serving peer's URL."""
    results: list[ScenarioResult] = []

    def done(result: ScenarioResult) -> None:
        results.append(result)
        if on_result is not None:
            on_result(result)

    held: tuple[ScenarioResult, str | None] | None = None  # a stalled case, until the next says if the client stopped
    try:
        for index, case in enumerate(cases):
            with serving_peer(case) as serving:
                ran = await _run_case(case, command, listen, serving, binding, profile, timeout, silence)
            result = ran[0]
            stalled = result.timed_out or result.out_of_budget
            if held is not None and stalled:
                stop = _stopped(held, ran)
                held[0].stopped = stop
                done(held[0])
                held = None
                _not_judged(result, stop)
                done(result)
                for rest in cases[index + 1:]:
                    done(_not_run(rest, binding, stop))
                break
            if held is not None:
                done(held[0])
                held = None
            if stalled:
                held = ran
            else:
                done(result)
    finally:
        if held is not None:  # the last case, or a signal came: its verdict stands
            done(held[0])
    return results
