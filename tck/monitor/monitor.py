"""The conformance monitor.

Theory of operation: the monitor watches one connection from one vantage point.
It is given the bytes each side sent, in the order observed, and decodes each
direction with its own incremental decoder from the binding it is given; every
frame goes to that binding's ``ConnectionJudge`` (one per connection), which maps it
onto the contract and the binding's own rules.  Whatever the model raises becomes a
``Finding`` and judging goes on: the monitor never stops at the first
violation.  A direction whose bytes cannot be decoded is dead from there on
(the monitor never resynchronises: RS-IO frames carry no length, and a
broken length prefix leaves nothing to trust), but the other
direction is still judged, which is how the kit checks that a target answers
malformed input with goodbye.

Bytes given to ``observe`` are decoded with ``feed_runs`` where the binding's
decoder has it: a long stretch of plain element frames comes back as one value
that the binding's judge takes with one demand check per stream when it can,
and otherwise expands, so findings never depend on how the bytes were grouped.

The same code runs online (the scenario runner feeds it as frames cross) and
offline (``check_trace`` over a recorded trace).  It holds no clock: times are
given with the data.

Bounds: a connection's findings are kept up to ``MAX_FINDINGS``, and at most
``MAX_FINDINGS_PER_RULE`` of one rule; past that they are only counted, per
rule, in ``findings_dropped`` (a flood where every frame breaks a rule would
otherwise keep one finding per frame), while
``must_seen`` counts every MUST violation per side, kept or not, so a caller
can tell at once that a verdict is certain.  Kept frames (``keep_frames``, for
tools that show them) stop at ``MAX_KEPT_FRAMES``.  A trace's truncation
marker ends a replay: what follows it was never recorded.  ``held`` reads how
many bytes the decoders and the judge keep toward frames not yet whole (a
partial frame or line, RSocket's reassembly) from their owners, so a caller
that watches many connections (the proxy) can bound their total; a dead
direction lets go of them, and ``release`` lets go of all once the connection
is over (the findings stay).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..binding import DEFAULT_BINDING, Binding, get_binding, profile_of
from ..catalogue import RULES, Level
from ..errors import ProtocolViolation, Side
from .trace import TraceRecord, read_trace

MAX_FINDINGS = 200  # findings kept per connection; the rest are counted per rule
MAX_FINDINGS_PER_RULE = 20  # findings of one rule kept per connection
MAX_KEPT_FRAMES = 100_000  # frames kept with keep_frames=True


@dataclass(frozen=True, slots=True, kw_only=True)
class Finding:
    rule: str
    level: Level
    side: Side | None
    frame_index: int | None  # index among all frames of the connection, both directions
    t: float | None
    message: str
    frame: str | None = None  # the offending frame, described

    @classmethod
    def of(cls, violation: ProtocolViolation, *, index: int | None, t: float | None, frame: str | None) -> Finding:
        return cls(
            rule=violation.rule,
            level=RULES[violation.rule].level,
            side=violation.side,
            frame_index=index if index is not None else violation.frame_index,
            t=t,
            message=str(violation),
            frame=frame,
        )

    def to_json(self) -> dict[str, object]:
        return {
            "rule": self.rule,
            "level": self.level.value,
            "side": str(self.side) if self.side else None,
            "frame_index": self.frame_index,
            "t": self.t,
            "message": self.message,
            "frame": self.frame,
        }


class _LetGo:
    """A dead direction's decoder once let go: it keeps nothing and decodes nothing (never fed: it is dead)."""

    held = 0
    salvaged: list[Any] = []

    def feed(self, data: bytes) -> list[Any]:
        return []

    def eof(self) -> None:
        return None


_LET_GO = _LetGo()


@dataclass(slots=True)
class ObservedFrame:
    index: int
    sender: Side
    t: float
    frame: Any


class Monitor:
    """Judges one connection.  ``observe`` bytes as they cross; ``close`` when a side ends."""

    def __init__(
        self, profile: str | None = None, limits: Any = None, *, binding: Binding | str | None = None,
        keep_frames: bool = False, contract: bool = True, count_liveness: bool = False,
    ) -> None:
        self.binding: Binding = (binding if binding is not None and not isinstance(binding, str)
                                 else get_binding(binding or DEFAULT_BINDING))
        self.profile = profile_of(self.binding, profile)
        self._decoders = {side: self.binding.decoder(self.profile, limits) for side in Side}
        self._feed = {side: getattr(d, "feed_runs", d.feed) for side, d in self._decoders.items()}
        self.frames: list[ObservedFrame] = []
        self.session = self.binding.judge(self.profile, limits, contract=contract,
                                          keep=self._keep if keep_frames else None)
        self._keep_frames = keep_frames
        self._dead: dict[Side, bool] = {side: False for side in Side}
        self.findings: list[Finding] = []
        self.findings_dropped: Counter[str] = Counter()  # per rule, past MAX_FINDINGS(_PER_RULE)
        self._kept_per_rule: Counter[str] = Counter()
        self.must_seen: dict[Side, int] = {side: 0 for side in Side}  # MUST violations, kept or dropped
        self.frame_count = 0
        # Of those, the binding's liveness frames (``Binding.liveness_frames``: keepalives), counted only when
        # asked (``count_liveness``): a relay bounding a peer by silence does not take them for progress.
        self.liveness_count = 0
        self._liveness = self.binding.liveness_frames() if count_liveness else ()
        self.bytes_ignored = {side: 0 for side in Side}

    @property
    def keep_frames(self) -> bool:
        return self._keep_frames

    @keep_frames.setter
    def keep_frames(self, value: bool) -> None:
        # Callers switch keeping on after construction (tests' probes): the judge takes the change.
        self._keep_frames = value
        self.session.keep = self._keep if value else None

    @property
    def model(self) -> Any:
        """The binding's model of the connection (RS-IO: ``ConnectionModel``), for binding-aware callers."""
        return self.session.model

    @property
    def undeclared_unknown(self) -> dict[Side, str]:
        return getattr(self.session, "undeclared_unknown", {})

    @property
    def held(self) -> int:
        """Bytes kept toward frames not yet whole, both directions: each decoder's partial frame or line and what
        the judge joins (RSocket's reassembly), as their owners count them."""
        decoders = self._decoders
        return decoders[Side.CLIENT].held + decoders[Side.SERVER].held + self.session.held

    def release(self) -> None:
        """The connection is over: let go of every byte kept toward frames not yet whole (``held`` is 0 after).
        Nothing more is decoded; the findings, the counts and the judge's model stay."""
        for side in Side:
            self._dead[side] = True
            self._let_go(side)

    def _let_go(self, side: Side) -> None:
        """``side``'s direction is dead: its decoder (a partial frame or line) and what the judge joins for it are
        dropped, since nothing of it will be decoded again."""
        self._decoders[side] = _LET_GO
        self._feed[side] = _LET_GO.feed
        self.session.let_go(side)

    def _keep(self, index: int, sender: Side, t: float, frame: Any) -> None:
        if len(self.frames) < MAX_KEPT_FRAMES:
            self.frames.append(ObservedFrame(index, sender, t, frame))

    # -- feeding ----------------------------------------------------------------------

    def observe(self, sender: Side, data: bytes, t: float = 0.0) -> list[Finding]:
        """Bytes ``sender`` sent; returns the findings they caused."""
        before = len(self.findings)
        if self._dead[sender]:
            self.bytes_ignored[sender] += len(data)
            return []
        try:
            frames = self._feed[sender](data)
        except ProtocolViolation as violation:
            # The frames before the bad bytes are judged first: they were sent, and
            # they come before the wire error in the sender's order.
            self.judge(sender, self._decoders[sender].salvaged, t)
            self.observe_error(sender, violation, t)
            return self.findings[before:]
        self.judge(sender, frames, t)
        return self.findings[before:]

    def observe_error(self, sender: Side, violation: ProtocolViolation, t: float = 0.0) -> Finding | None:
        """``sender``'s bytes failed to decode (in the monitor's decoder or one the caller owns);
        that direction is dead from here.  None: the binding judged it no finding (RS-IO: the
        code may belong to an extension the peer's hello declared, Decision f)."""
        self._dead[sender] = True
        self._let_go(sender)
        attributed = self.session.wire_error(sender, violation)
        if attributed is None:
            return None
        return self._found(attributed, self.frame_count, t, None, keep=True)

    def _found(self, violation: ProtocolViolation, index: int | None, t: float, frame: Any,
               *, keep: bool = False) -> Finding | None:
        """Record a finding; past ``MAX_FINDINGS`` (unless ``keep``) only count it."""
        if violation.side is not None and RULES[violation.rule].level is Level.MUST:
            self.must_seen[violation.side] += 1
        rule = violation.rule
        if not keep and (len(self.findings) >= MAX_FINDINGS or self._kept_per_rule[rule] >= MAX_FINDINGS_PER_RULE):
            self.findings_dropped[rule] += 1
            return None
        self._kept_per_rule[rule] += 1
        shown = self.binding.describe(frame) if frame is not None else None
        finding = Finding.of(violation, index=index, t=t, frame=shown)
        self.findings.append(finding)
        return finding

    def judge(self, sender: Side, frames: Iterable[Any], t: float = 0.0) -> None:
        """Judge frames already decoded (by a connection that decoded them itself)."""
        found = self._found

        def report(violation: ProtocolViolation, index: int | None, frame: Any) -> None:
            found(violation, index, t, frame)

        liveness = self._liveness
        if liveness:
            frames = list(frames)
            self.liveness_count += sum(1 for frame in frames if isinstance(frame, liveness))
        self.frame_count = self.session.judge(sender, frames, t, self.frame_count, report)

    def close(self, sender: Side, t: float = 0.0, *, reset: bool = False) -> list[Finding]:
        """``sender``'s direction ended (the observer read end-of-file from it).  ``reset``: it ended by a
        connection reset, which discards what was still in flight (SPEC.md, decision y): a frame or line it
        cut is not judged as one its sender left unfinished; what a close settles (a goodbye owed) still is."""
        found: list[Finding | None] = []
        if reset and not self._dead[sender]:
            self._dead[sender] = True
            self._let_go(sender)
        if not self._dead[sender]:
            try:
                self._decoders[sender].eof()
            except ProtocolViolation as violation:
                self._dead[sender] = True
                self._let_go(sender)
                attributed = self.session.wire_error(sender, violation)
                if attributed is not None:
                    found.append(self._found(attributed, self.frame_count, t, None))
        for broken in self.session.close(sender):
            found.append(self._found(broken, self.frame_count, t, None))
        return [f for f in found if f is not None]

    def replay(self, records: Iterable[TraceRecord]) -> list[Finding]:
        for record in records:
            if record.truncated:
                break  # the rest of the connection was not recorded
            if record.data is None:
                self.close(record.sender, record.t, reset=record.reset)
            else:
                self.observe(record.sender, record.data, record.t)
        return self.findings

    # -- verdicts ---------------------------------------------------------------------

    def violations(self, side: Side | None = None) -> list[Finding]:
        return [f for f in self.findings if f.level is Level.MUST and (side is None or f.side is side)]

    def warnings(self, side: Side | None = None) -> list[Finding]:
        return [f for f in self.findings if f.level is Level.SHOULD and (side is None or f.side is side)]

    def failed(self, side: Side | None = None, *, strict: bool = False) -> bool:
        """A MUST violation fails; a SHOULD deviation fails only in strict mode."""
        return bool(self.violations(side)) or (strict and bool(self.warnings(side)))

    def direction_dead(self, sender: Side) -> bool:
        return self._dead[sender]


def check_trace(path: Path, profile: str | None = None, limits: Any = None, *,
                binding: Binding | str | None = None) -> Monitor:
    """Judge a recorded trace offline; ``TraceCut`` (once its whole records are judged) if the file ends inside a
    record: a caller that can use a judgement up to the cut reads through ``trace.read_whole`` and replays."""
    monitor = Monitor(profile, limits, binding=binding)
    monitor.replay(read_trace(path))
    return monitor
