"""How long the kit waits for the target: a signal timeout measures silence, not total time.

A correct target may write its output in pieces as small as TCP allows (a few bytes a write), so a
large element can take longer than the signal timeout to arrive while bytes come the whole time.  A
wait therefore ends with "nothing within T" only when nothing arrived from the target for T: every
read that brings bytes restarts the clock, a partial frame included.  Reads that complete only the
binding's quiet frames (``quiet_kinds``: hellos, keepalives) do not: they show the target is alive,
not that anything is coming, and a keepalive every second would otherwise hold every wait open.

So that a target trickling bytes forever cannot hold a scenario forever, the restarts are bounded by
the scenario's ``Budget`` (``RunConfig.scenario_budget``, ``DEFAULT_BUDGET`` s): a wait that has
lasted its timeout and outlives the budget ends, reported as the budget running out, not as silence.
A wait never ends sooner than it did when timeouts were total times, budget or not.

A window that must stay quiet (``expect_silence``) and a bound on total delivery (``drain``'s
``within``) are not silences: they stay total times (``total=True``, ``until``).

Sans-IO: times are ``time.monotonic()`` values passed in.  The session owns one ``Progress`` (its
read loop is the only writer); a scenario's side connections share its ``Budget``.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

DEFAULT_BUDGET = 30.0  # seconds: how long waits may be stretched by bytes that keep arriving, per scenario
BUCKET = 0.1  # seconds of arrivals counted together (``Progress.bytes_since`` is this exact)
KEPT = 120.0  # seconds of arrivals kept for ``bytes_since``: longer than any timeout a scenario uses

# Why a wait ended with nothing (``Nothing.why``).
SILENCE = "silence"  # nothing arrived for the timeout
BUDGET = "budget"  # bytes kept arriving, but the scenario's budget ran out
WINDOW = "window"  # a total wait (a silence window) ran its length
DEADLINE = "deadline"  # the step's own bound on total time (``until``) came first
EOF = "eof"  # the connection ended
# How a wait that ran out of the scenario's budget begins its text (``Nothing.describe``): such a step
# proves nothing against the target (``steps.StepFailed.out_of_budget``).
BUDGET_RAN_OUT = "nothing complete before the scenario's"
GOODBYE = "goodbye"  # the target said goodbye: nothing new comes for a stream


@dataclass(slots=True)
class Progress:
    """When bytes last arrived from the target, and how many arrived lately."""

    last: float  # monotonic time of the last read that counted as progress
    total: int = 0
    # [start, bytes] per BUCKET seconds of arrivals, over the last KEPT seconds: a trickle of
    # one-byte reads costs one entry per BUCKET, not one per read.
    _buckets: deque[list[float]] = field(default_factory=deque)

    def saw(self, size: int, now: float) -> None:
        self.last = now
        self.total += size
        buckets = self._buckets
        if buckets and now - buckets[-1][0] < BUCKET:
            buckets[-1][1] += size
        else:
            buckets.append([now, float(size)])
        while buckets and now - buckets[0][0] > KEPT:
            buckets.popleft()

    def bytes_since(self, start: float) -> int:
        """Bytes that arrived at or after ``start`` (to within ``BUCKET``)."""
        return int(sum(size for t, size in self._buckets if t + BUCKET > start))


@dataclass(frozen=True, slots=True)
class Budget:
    """A scenario's bound on how long arriving bytes may stretch its waits."""

    seconds: float
    deadline: float  # monotonic

    @classmethod
    def starting(cls, seconds: float, now: float) -> Budget:
        return cls(seconds, now + seconds)


@dataclass(frozen=True, slots=True)
class Nothing:
    """Why a wait ended with nothing, for the failure text."""

    why: str
    timeout: float
    waited: float = 0.0
    silent_for: float = 0.0
    budget: float = 0.0
    recent: int = 0  # bytes that arrived in the last ``timeout`` seconds
    paused: bool = False  # the kit had stopped reading (its inbox full): the silence may be its own

    def describe(self) -> str:
        t = f"{self.timeout:g} s"
        if self.why == SILENCE and self.paused:
            return (f"nothing within {t} (no bytes read for {t}, but the kit had paused reading: its inbox was "
                    "full of signals no step took, so the target may have been sending)")
        if self.why == SILENCE:
            if self.waited - self.timeout < BUCKET:
                return f"nothing within {t} (the target was silent for {t})"
            return (f"nothing within {t} (the target was silent for {t}, after {self.waited:.1f} s of waiting "
                    "in which bytes that completed nothing awaited kept arriving)")
        if self.why == BUDGET:
            return (f"{BUDGET_RAN_OUT} {self.budget:g} s budget ran out (bytes were still "
                    f"arriving: {self.recent} bytes in the last {t}; this wait lasted {self.waited:.1f} s)")
        if self.why == DEADLINE:
            return (f"nothing before the step's bound on its total time ({self.waited:.1f} s; "
                    f"{self.recent} bytes arrived in the last {t})")
        if self.why == EOF:
            return "nothing (the connection ended)"
        if self.why == GOODBYE:
            return "nothing (the target has said goodbye)"
        return f"nothing within {t}"


def wait_end(start: float, timeout: float, last: float, budget: Budget, *, total: bool = False,
             until: float | None = None) -> tuple[float, str]:
    """When a wait that began at ``start`` ends if nothing comes, and why, as things stand.

    ``last`` is when bytes last arrived; a later arrival moves the end, so a waiter re-asks
    after each wake-up.  ``total``: the timeout bounds the whole wait.  ``until``: a bound on
    total time of the step's own, which comes first whatever arrives.
    """
    if total:
        end, why = start + timeout, WINDOW
    else:
        silence_end = max(start, last) + timeout
        budget_end = max(start + timeout, budget.deadline)
        end, why = (silence_end, SILENCE) if silence_end <= budget_end else (budget_end, BUDGET)
    if until is not None and until < end:
        end, why = until, DEADLINE
    return end, why


def nothing(why: str, start: float, timeout: float, now: float, progress: Progress, budget: Budget,
            paused: bool = False, last: float | None = None) -> Nothing:
    """The ``Nothing`` of a wait that ended at ``now`` for ``why`` (``paused``: the kit was not reading;
    ``last``: when bytes last came, if later than ``progress`` knows: bytes the transport still holds)."""
    last = progress.last if last is None else max(last, progress.last)
    return Nothing(why, timeout, waited=now - start, silent_for=now - max(start, last),
                   budget=budget.seconds, recent=progress.bytes_since(now - timeout), paused=paused)
