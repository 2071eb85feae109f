"""Whether the target still answers at all: the liveness probe after a time-out, and a run's one verdict on it.

Theory of operation.  A scenario that ends on a time-out ("got nothing within 2 s") says the
target missed a signal; it does not say whether the target is still there.  A target whose
event loop blocked for good (rsocket-js 0.0.27 emitting synchronously inside ``request(n)``
with unbounded demand) would otherwise fail every later scenario on its time-out, each citing
its own rule.  So after a time-out the run's ``TargetWatch`` opens a fresh connection and tries
the binding's liveness probe (``Binding.liveness_probe``: the cheapest exchange the target must
answer): connecting takes at most ``timeout`` seconds, and the answer is awaited until the target
was silent for ``timeout`` seconds (its bytes restart that, within the scenario budget: ``clock``):

- answered: the target is alive, the time-out was a real miss, and the verdict stands;
- not answered (no answer in time, closed without one, or no connection): the target stopped
  answering during that scenario.  The watch records it once (``TargetStop``); that scenario keeps
  its verdict (its time-out was real) and says so; every scenario that ends on a time-out after it
  (one in flight, ``--jobs N``) is ``error``, its failures and the target's findings not charged; and
  every scenario not yet started is not run, ``error`` (the runner asks ``stop`` first).

A scenario that ran out of its budget while the target's bytes kept coming (a target trickling
a byte at a time, a slowloris) is not judged, and one with a frame that took longer than the
signal timeout to trickle in (``ScenarioResult.stretched``) was judged on a signal that came
slowly.  After either the watch probes the target's *pace* with the binding's pace probe
(``Binding.pace_probe``: an exchange no answer to the connection's opening satisfies; RS-IO's asks
for one element of ``tck/range``, since its serverHello may come before the server read anything):
the answer must come whole within ``PACE_FACTOR`` times ``timeout`` seconds of total time, a bound a
live target meets in a round trip or two even on a loaded machine (busy on another connection, or
writing a few bytes at a time, as TCP allows).  A target that misses it answers too slowly for the
kit to judge it (``TargetStop.slow``), and the run ends as above: said once, the rest not run, exit 3.
(The liveness probe stays the cheapest exchange: a time-out is often a target missing a signal, the
fault the scenarios judge, and a probe that asked for a signal would take it for a stopped target
and leave the rest of the suite not run.  Slowness is another matter: a pace probe follows only
bytes that trickled.)  Without
this a target trickling forever costs every scenario its budget or its slow frame, 15 rounds of
eight for a suite, where a run against a hostile target is bounded by a minute.  No verdict
changes: the scenarios that ran keep theirs, and only those the run then leaves are not run.

One probe at a time: time-outs that come while a probe is out await its answer rather than
start another, so with ``--jobs N`` the run decides once, names the first scenario whose time-out
found the target stopped, and lists the others in flight (``TargetStop.running``).  A live target
costs a probe one round trip; a probe never touches a scenario's connection, so it cannot change
what a scenario saw.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

from ..binding import Binding, get_binding
from ..errors import ProtocolViolation
from ..transport import TargetError, open_target
from . import clock
from .clock import DEFAULT_BUDGET, Budget, Progress
from .result import ScenarioResult, TargetStop, Verdict

PROBE_READ = 64 * 1024  # bytes per read while waiting for the answer
PROBE_TIMEOUT_MIN = 5.0  # seconds: a loaded machine must not make a live target look stopped
PACE_FACTOR = 2.0  # a pace probe's bound on its total time, in probe timeouts (10 s by default)


def probe_timeout(signal_timeout: float) -> float:
    """The bound of one probe for a run whose signals may take ``signal_timeout`` seconds."""
    return max(PROBE_TIMEOUT_MIN, 2 * signal_timeout)


async def probe(target: str, binding: Binding | str, profile: str, timeout: float,
                budget: float = DEFAULT_BUDGET, *, pace: bool = False) -> str | None:
    """None if the target answers the binding's liveness probe on a fresh connection; else why not, as one
    line.  Connecting and writing the probe take at most ``timeout`` seconds; the wait for the answer
    measures silence as a scenario's waits do (``clock``): it fails when nothing came for ``timeout``
    seconds, bytes that keep coming (a target writing in tiny pieces) restart it, and the probe's own
    ``budget`` (the scenario budget: the probe is a scenario of one exchange) bounds the restarts.
    ``pace``: the binding's pace probe instead, whose whole answer must come within ``timeout`` seconds of
    starting, bytes or not."""
    chosen = get_binding(binding) if isinstance(binding, str) else binding
    liveness = chosen.pace_probe(profile) if pace else chosen.liveness_probe(profile)
    started = time.monotonic()
    deadline = started + timeout
    try:
        reader, writer = await open_target(target, timeout, binding=chosen, profile=profile)
    except TargetError as exc:
        return f"a fresh connection could not be opened ({exc})"
    no_answer = f"a fresh connection got no answer to {liveness.asks} within {timeout:g} s"
    progress = Progress(last=started)  # this probe's only reader is the loop below
    bound = Budget.starting(budget, started)
    why = clock.SILENCE
    try:
        encoder, decoder = chosen.encoder(profile), chosen.decoder(profile)
        writer.write(b"".join(encoder.encode(frame) for frame in liveness.opening()))
        await asyncio.wait_for(writer.drain(), max(deadline - time.monotonic(), 0.001))
        while True:
            end, why = clock.wait_end(started, timeout, progress.last, bound, until=deadline if pace else None)
            if time.monotonic() >= end:
                # Checked here, not left to the read's time-out: against a target that never stops sending,
                # a read always has bytes at once, and the probe would read (and decode) for ever.
                raise TimeoutError
            data = await asyncio.wait_for(reader.read(PROBE_READ), end - time.monotonic())
            if not data:
                return f"a fresh connection was closed with no answer to {liveness.asks}"
            try:
                frames = decoder.feed(data)
            except (ProtocolViolation, ValueError):
                return None  # it answered, if badly: judging that is the scenarios' business
            if any(liveness.answered(frame) for frame in frames):
                return None
            if not frames:
                # Bytes of a frame still coming (the answer, maybe) restart the silence; whole frames that do
                # not answer do not: a target storming frames of its own (KEEPALIVE with R) while it never
                # reads is not answering.
                progress.saw(len(data), time.monotonic())
    except TimeoutError:
        if why == clock.DEADLINE:
            return (f"a fresh connection's answer to {liveness.asks} did not come whole within {timeout:g} s "
                    f"({progress.total} bytes arrived)")
        if why == clock.BUDGET:
            return (f"a fresh connection got no answer to {liveness.asks} within the probe's {budget:g} s budget "
                    f"({progress.total} bytes arrived, the last {time.monotonic() - progress.last:.1f} s ago)")
        return no_answer
    except (OSError, RuntimeError) as exc:
        return f"a fresh connection failed before an answer to {liveness.asks} ({type(exc).__name__}: {exc})"
    finally:
        with contextlib.suppress(OSError, RuntimeError, TimeoutError):
            writer.close()
            await asyncio.wait_for(writer.wait_closed(), 1.0)


class TargetWatch:
    """One run's watch on the target (see the module's docstring): probes after time-outs, one at a time,
    and decides once whether, and during which scenario, the target stopped answering."""

    def __init__(self, target: str, binding: str, profile: str, timeout: float,
                 budget: float = DEFAULT_BUDGET) -> None:
        self.target, self.binding, self.profile, self.timeout = target, binding, profile, timeout
        self.budget = budget  # each probe's bound on how long arriving bytes may stretch its wait
        self.stop: TargetStop | None = None
        self.probes = 0  # probes made, whatever their answer
        self.running: set[str] = set()  # scenarios started and not yet settled
        self._probe: asyncio.Future[None] | None = None

    def not_run(self, result: ScenarioResult) -> None:
        """``result`` (of a scenario not started) as not run: the target had stopped."""
        assert self.stop is not None
        result.verdict = Verdict.ERROR
        result.reason = f"not run: the target {self.stop.went} during {self.stop.during}"
        result.stopped = self.stop

    async def settle(self, result: ScenarioResult) -> None:
        """After ``result``'s scenario ended: probe if it ended on a time-out, then label it if the target stopped."""
        if self.stop is None and result.timed_out:
            await self._check(result.id, "")
        elif self.stop is None and result.out_of_budget:
            await self._check(result.id, "after its budget ran out")
        elif self.stop is None and result.stretched:
            await self._check(result.id, f"after a frame that took {result.stretched:.1f} s to arrive")
        stop = self.stop
        if stop is None:
            return
        if stop.during == result.id:
            result.stopped = stop
            note = f"the target {stop.went} here: {stop.why}"
            result.reason = f"{note}; {result.reason}" if result.reason else note
        elif result.timed_out or result.out_of_budget:
            self._not_judged(result, stop)

    def _not_judged(self, result: ScenarioResult, stop: TargetStop) -> None:
        """A scenario that ended on a time-out once the target had stopped: error; nothing is charged to a rule."""
        waited = "; ".join(failure.render() for failure in result.failures) or result.reason
        def targets(finding: Any) -> bool:
            return finding.side is not None and str(finding.side) == result.target_side

        charged = sum(1 for finding in result.findings if targets(finding))
        dropped = f", nor the target's {charged} monitor finding(s)" if charged else ""
        result.verdict = Verdict.ERROR
        result.reason = (f"not judged: the target {stop.went} during {stop.during} while this scenario ran; "
                         f"its own wait is not charged ({waited}){dropped}")
        result.failures = []
        result.findings = [finding for finding in result.findings if not targets(finding)]
        result.stopped = stop

    async def _check(self, scenario_id: str, pace: str) -> None:
        """Probe (one probe at a time); ``pace``: what calls for a probe of the target's pace ("": a time-out,
        a probe of its life)."""
        if self._probe is None:
            self._probe = asyncio.ensure_future(self._run(scenario_id, pace))
        probing = self._probe
        try:
            await asyncio.shield(probing)  # a waiter cancelled (the self-check stopping a run) leaves it to the others
        finally:
            if probing.done() and self._probe is probing:
                self._probe = None

    async def _run(self, scenario_id: str, pace: str) -> None:
        self.probes += 1
        timeout = self.timeout * PACE_FACTOR if pace else self.timeout
        why = await probe(self.target, self.binding, self.profile, timeout, self.budget, pace=bool(pace))
        if why is not None and self.stop is None:
            running = tuple(sorted(self.running - {scenario_id}))
            self.stop = (TargetStop(scenario_id, why, running, slow=True, after=pace) if pace
                         else TargetStop(scenario_id, why, running))


def watch_of(config: Any) -> TargetWatch | None:
    """The watch of a run configured with a ``probe_timeout`` (``RunConfig``); None: no probing."""
    timeout = getattr(config, "probe_timeout", None)
    if timeout is None:
        return None
    return TargetWatch(config.target, config.binding, config.profile, timeout,
                       getattr(config, "scenario_budget", DEFAULT_BUDGET))
