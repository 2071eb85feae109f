"""The conformance monitor.

Theory of operation: the monitor watches one connection from one vantage point.
It is given the bytes each side sent, in the order observed, and decodes each
direction with its own incremental decoder; every frame is applied to one
``SessionModel`` under the RS-IO binding.  Whatever the model raises becomes a
``Finding`` and judging goes on: the monitor never stops at the first
violation.  A direction whose bytes cannot be decoded is dead from there on
(RS-IO frames carry no length, so there is no resynchronising), but the other
direction is still judged, which is how the kit checks that a target answers
malformed input with goodbye.

Bytes given to ``observe`` are decoded with ``feed_runs``: a long stretch of
plain element frames comes back as one ``ElementRun`` and is judged with one
demand check per Id when every frame of it would take the stream table's
plain (ACTIVE, onNext) entry; otherwise it is expanded and judged frame by
frame, so findings never depend on how the bytes were grouped.

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
marker ends a replay: what follows it was never recorded.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ..bindings.rsio.contract import ContractJudge
from ..bindings.rsio.handshake import PartyState
from ..bindings.rsio.mapping import apply_frame
from ..bindings.rsio.session import SessionModel
from ..bindings.rsio.wire import Frame, Limits, describe, get_codec
from ..bindings.rsio.wire.frames import OnNext, OnNextPacked, Subscribe
from ..bindings.rsio.wire.runs import ElementRun, StridedRun, VariableRun
from ..errors import ProtocolViolation, Side
from ..rules import RULES, Level
from ..semantics.streams import StreamRecord, StreamState
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
    def of(cls, violation: ProtocolViolation, *, index: int | None, t: float | None, frame: Frame | None) -> Finding:
        return cls(
            rule=violation.rule,
            level=RULES[violation.rule].level,
            side=violation.side,
            frame_index=index if index is not None else violation.frame_index,
            t=t,
            message=str(violation),
            frame=describe(frame) if frame is not None else None,
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


@dataclass(slots=True)
class ObservedFrame:
    index: int
    sender: Side
    t: float
    frame: Frame


class Monitor:
    """Judges one connection.  ``observe`` bytes as they cross; ``close`` when a side ends."""

    def __init__(
        self, codec: str = "msgpack", limits: Limits | None = None, *, keep_frames: bool = False, contract: bool = True
    ) -> None:
        chosen = get_codec(codec)
        self.model = SessionModel()
        self._decoders = {side: chosen.decoder(limits) for side in Side}
        self._dead: dict[Side, bool] = {side: False for side in Side}
        self.findings: list[Finding] = []
        self.findings_dropped: Counter[str] = Counter()  # per rule, past MAX_FINDINGS(_PER_RULE)
        self._kept_per_rule: Counter[str] = Counter()
        self.must_seen: dict[Side, int] = {side: 0 for side in Side}  # MUST violations, kept or dropped
        self.frame_count = 0
        self.bytes_ignored = {side: 0 for side in Side}
        # Extension-range codes the monitor could not judge (Decision f), by sender.
        self.undeclared_unknown: dict[Side, str] = {}
        self.keep_frames = keep_frames
        self.frames: list[ObservedFrame] = []
        # Judges the test-publisher contract (rsio-v0 section 8) where names say what to expect.
        self.contract = ContractJudge() if contract else None

    # -- feeding ----------------------------------------------------------------------

    def observe(self, sender: Side, data: bytes, t: float = 0.0) -> list[Finding]:
        """Bytes ``sender`` sent; returns the findings they caused."""
        before = len(self.findings)
        if self._dead[sender]:
            self.bytes_ignored[sender] += len(data)
            return []
        decoder = self._decoders[sender]
        try:
            frames = decoder.feed_runs(data)
        except ProtocolViolation as violation:
            # The frames before the bad bytes are judged first: they were sent, and
            # they come before the wire error in the sender's order.
            self.judge(sender, decoder.salvaged, t)
            self._dead[sender] = True
            if self._maybe_declared(sender, violation):
                return self.findings[before:]
            self._found(self.model.wire_error(sender, violation), self.frame_count, t, None, keep=True)
            return self.findings[before:]
        self.judge(sender, frames, t)
        return self.findings[before:]

    def _maybe_declared(self, sender: Side, violation: ProtocolViolation) -> bool:
        """An extension-range code from ``sender`` after its peer's hello listed extension ids:
        version 0 maps no id to a code, so it may be declared (Decision f).  The monitor cannot
        parse it either way; it stops reading that direction and reports nothing."""
        if violation.rule != "EXT-2" or not self.model.parties[sender.peer].extensions:
            return False
        self.undeclared_unknown[sender] = str(violation)
        return True

    def observe_error(self, sender: Side, violation: ProtocolViolation, t: float = 0.0) -> Finding | None:
        """``sender``'s bytes failed to decode in a decoder the caller owns (None: no finding,
        the code may belong to an extension the peer's hello declared)."""
        self._dead[sender] = True
        if self._maybe_declared(sender, violation):
            return None
        finding = self._found(self.model.wire_error(sender, violation), self.frame_count, t, None, keep=True)
        assert finding is not None
        return finding

    def _found(self, violation: ProtocolViolation, index: int | None, t: float, frame: Frame | None,
               *, keep: bool = False) -> Finding | None:
        """Record a finding; past ``MAX_FINDINGS`` (unless ``keep``) only count it."""
        if violation.side is not None and RULES[violation.rule].level is Level.MUST:
            self.must_seen[violation.side] += 1
        rule = violation.rule
        if not keep and (len(self.findings) >= MAX_FINDINGS or self._kept_per_rule[rule] >= MAX_FINDINGS_PER_RULE):
            self.findings_dropped[rule] += 1
            return None
        self._kept_per_rule[rule] += 1
        finding = Finding.of(violation, index=index, t=t, frame=frame)
        self.findings.append(finding)
        return finding

    def judge(self, sender: Side, frames: Iterable[Frame | ElementRun], t: float = 0.0) -> None:
        """Judge frames already decoded (by a connection that decoded them itself).

        An ``ElementRun`` is judged as a whole when the frames it stands for
        would all take the inlined path below and its elements fit the demand;
        otherwise it is expanded and its frames judged one by one, so the
        findings (and their frame indices) are those of the frames.
        """
        model = self.model
        found = self._found
        index = self.frame_count
        keep = self.keep_frames
        contract = self.contract
        # The (ACTIVE, ON_NEXT) entry of the stream table, inlined for the frames
        # that dominate traffic; anything else takes the general path.
        party = model.parties[sender]
        space = model.spaces[sender.peer]
        active, cancelled, open_ = StreamState.ACTIVE, StreamState.CANCELLED, PartyState.OPEN
        for item in frames:
            kind = type(item)
            if kind is VariableRun or kind is StridedRun:
                run: ElementRun = item  # type: ignore[assignment]
                if (
                    not keep
                    and (contract is None or not contract.active)
                    and party.state is open_
                    and _take_run(space, run)
                ):
                    party.frames_sent += run.frames
                    index += run.frames
                    continue
                self.frame_count = index
                self.judge(sender, run.to_frames(), t)
                index = self.frame_count
                continue
            frame: Frame = item  # type: ignore[assignment]
            if keep and len(self.frames) < MAX_KEPT_FRAMES:
                self.frames.append(ObservedFrame(index, sender, t, frame))
            index += 1
            if contract is not None and (contract.active or kind is Subscribe):
                for violation in contract.observe(sender, frame):
                    found(violation, index - 1, t, frame)
            if kind is OnNext or kind is OnNextPacked:
                rec = space.get(frame.subscriber)  # type: ignore[union-attr]
                # ACTIVE, or CANCELLED with elements still in flight (within demand):
                # the (state, ON_NEXT) entries of the table that only take demand.
                if (
                    rec is not None
                    and (rec.state is active or (rec.state is cancelled and not rec.owed_on_subscribes))
                    and party.state is open_
                    and rec.demand.take(1 if kind is OnNext else frame.count)  # type: ignore[union-attr]
                ):
                    party.frames_sent += 1
                    continue
            try:
                apply_frame(model, sender, frame)
            except ProtocolViolation as violation:
                found(violation, index - 1, t, frame)
            if model.warnings:
                for warning in model.warnings:
                    found(warning, index - 1, t, frame)
                model.warnings.clear()
        self.frame_count = index

    def close(self, sender: Side, t: float = 0.0) -> list[Finding]:
        """``sender``'s direction ended (the observer read end-of-file from it)."""
        found: list[Finding | None] = []
        if not self._dead[sender]:
            try:
                self._decoders[sender].eof()
            except ProtocolViolation as violation:
                self._dead[sender] = True
                found.append(self._found(self.model.wire_error(sender, violation), self.frame_count, t, None))
        for broken in self.model.close(sender):
            found.append(self._found(broken, self.frame_count, t, None))
        return [f for f in found if f is not None]

    def replay(self, records: Iterable[TraceRecord]) -> list[Finding]:
        for record in records:
            if record.truncated:
                break  # the rest of the connection was not recorded
            if record.data is None:
                self.close(record.sender, record.t)
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


def _takes_elements(rec: StreamRecord | None) -> bool:
    """The (state, ON_NEXT) entries of the stream table that only take demand: ACTIVE, or
    CANCELLED with elements still in flight."""
    return rec is not None and (
        rec.state is StreamState.ACTIVE or (rec.state is StreamState.CANCELLED and not rec.owed_on_subscribes)
    )


def _take_run(space: dict[int, StreamRecord], run: ElementRun) -> bool:
    """Take a run's elements from its streams' demand, all or none; False if any frame of it
    would not take the inlined path (the run is then judged frame by frame)."""
    ids = run.ids if isinstance(run, VariableRun) else None
    if ids is None:
        rec = space.get(run.subscriber)
        return _takes_elements(rec) and rec.demand.take(run.elements)  # type: ignore[union-attr]
    wanted = []
    for sid, count in Counter(ids).items():
        rec = space.get(sid)
        if not _takes_elements(rec) or not rec.demand.covers(count):  # type: ignore[union-attr]
            return False
        wanted.append((rec, count))
    for rec, count in wanted:
        rec.demand.take(count)  # type: ignore[union-attr]
    return True


def check_trace(path: Path, codec: str = "msgpack", limits: Limits | None = None) -> Monitor:
    """Judge a recorded trace offline."""
    monitor = Monitor(codec, limits)
    monitor.replay(read_trace(path))
    return monitor
