"""RS-IO's ``ConnectionJudge``: one connection's frames, both sides, judged against the model.

Theory of operation: every frame goes through ``mapping.apply_frame`` onto the
``ConnectionModel`` (hello, goodbye, and the contract's stream table), and through the
contract judge of rsio-v0 section 8 when a test publisher is involved.  The entries
of the stream table that only take demand are taken by the table's own fast path
(``semantics.streams.deliver_fast``) for the frames that dominate traffic, and an ``ElementRun`` (a long stretch of plain element frames the decoder
returned as one value) is judged with one demand check per Id when every frame of it
would take that entry, and, on a test publisher's stream, one comparison with the elements its
contract expects next (``contract_runs.run_fits``); otherwise it is expanded and judged frame by
frame, so findings never depend on how the bytes were grouped.  ``tests/test_semantics.py`` holds both
fast paths to the table.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from ...binding import Found, Keep
from ...errors import ProtocolViolation, Side
from ...semantics.streams import StreamRecord, deliver_fast, takes_elements
from .contract import Contract, ContractJudge
from .contract_runs import run_fits
from .handshake import PartyState
from .mapping import apply_frame
from .model import ConnectionModel
from .wire.frames import Frame, OnNext, OnNextPacked, Subscribe
from .wire.runs import ElementRun, StridedRun, VariableRun


class RsioJudge:
    def __init__(self, *, contract: bool = True, keep: Keep | None = None) -> None:
        self.model = ConnectionModel()
        # Judges the test-publisher contract (rsio-v0 section 8) where names say what to expect.
        self.contract = ContractJudge() if contract else None
        self.keep = keep
        # Extension-range codes the judge could not judge (Decision f), by sender.
        self.undeclared_unknown: dict[Side, str] = {}

    def judge(self, sender: Side, frames: Iterable[Frame | ElementRun], t: float, index: int, found: Found) -> int:
        model = self.model
        keep = self.keep
        contract = self.contract
        party = model.parties[sender]
        space = model.spaces[sender.peer]
        open_ = PartyState.OPEN
        for item in frames:
            kind = type(item)
            if kind is VariableRun or kind is StridedRun:
                run: ElementRun = item  # type: ignore[assignment]
                fits = None if contract is None or not contract.active else _contract_fits(contract, sender, run)
                if keep is None and fits is not False and party.state is open_ and _take_run(space, run):
                    if isinstance(fits, Contract):
                        fits.index += run.elements  # every element was the one its contract expected next
                    party.frames_sent += run.frames
                    index += run.frames
                    continue
                index = self.judge(sender, run.to_frames(), t, index, found)
                continue
            frame: Frame = item  # type: ignore[assignment]
            if keep is not None:
                keep(index, sender, t, frame)
            index += 1
            if contract is not None and (contract.active or kind is Subscribe):
                for violation in contract.observe(sender, frame):
                    found(violation, index - 1, frame)
            if (
                (kind is OnNext or kind is OnNextPacked)
                and party.state is open_
                and deliver_fast(space.get(frame.subscriber), 1 if kind is OnNext else frame.count)  # type: ignore[union-attr]
            ):
                party.frames_sent += 1
                continue
            try:
                apply_frame(model, sender, frame)
            except ProtocolViolation as violation:
                found(violation, index - 1, frame)
            if model.warnings:
                for warning in model.warnings:
                    found(warning, index - 1, frame)
                model.warnings.clear()
        return index

    # A split element is judged part by part, not joined; the contract judge joins a split report (at most
    # ``contract.MAX_REPORT``) and a split integer, which are not counted here (the decoders' are).
    held = 0

    def let_go(self, side: Side) -> None:
        """Nothing counted in ``held``: nothing to drop."""

    def wire_error(self, sender: Side, violation: ProtocolViolation) -> ProtocolViolation | None:
        """The sender's bytes failed to decode.  None for an extension-range code sent after the
        peer's hello listed extension ids: version 0 maps no id to a code, so it may be declared
        (Decision f); the monitor cannot parse it either way and reports nothing."""
        if violation.rule == "EXT-2" and self.model.parties[sender.peer].extensions:
            self.undeclared_unknown[sender] = str(violation)
            return None
        return self.model.wire_error(sender, violation)

    def close(self, side: Side) -> list[ProtocolViolation]:
        return self.model.close(side)

    def sender_state(self, side: Side) -> str:
        """The handshake state of ``side`` (``OPEN``, ``CLOSING``...), for shells that show it."""
        return self.model.parties[side].state.name


def _contract_fits(contract: ContractJudge, sender: Side, run: ElementRun) -> Contract | None | bool:
    """``contract_runs.run_fits`` for a run of one subscriber's elements; False (judge it frame by frame)
    for subscriptions interleaved in one run."""
    if isinstance(run, VariableRun):
        if run.ids is not None:
            return False
        return run_fits(contract, sender, run.subscriber, run.items, None, run.elements)
    assert isinstance(run, StridedRun)
    return run_fits(contract, sender, run.subscriber, None, b"".join(run.payloads()), run.elements)


def _take_run(space: dict[int, StreamRecord], run: ElementRun) -> bool:
    """Take a run's elements from its streams' demand, all or none; False if any frame of it
    would not take the inlined path (the run is then judged frame by frame)."""
    ids = run.ids if isinstance(run, VariableRun) else None
    if ids is None:
        return deliver_fast(space.get(run.subscriber), run.elements)
    wanted = []
    for sid, count in Counter(ids).items():
        rec = space.get(sid)
        if not takes_elements(rec) or not rec.demand.covers(count):  # type: ignore[union-attr]
            return False
        wanted.append((rec, count))
    for rec, count in wanted:
        rec.demand.take(count)  # type: ignore[union-attr]
    return True
