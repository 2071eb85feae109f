"""RSocket's ``ConnectionJudge``: one connection's frames, both sides, judged frame by frame.

Theory of operation: each side's frames go, in the order observed, through
``ConnectionModel.before`` (the connection's opening and closing: SETUP first,
nothing after a connection ERROR, owed refusals), then through that side's one
``Reassembler`` (``fragments.py``: a fragmented request or payload becomes one
whole frame, one element and one unit of credit), then to the connection model
(SETUP, KEEPALIVE, LEASE, ERROR, METADATA_PUSH, RESUME, RESUME_OK, EXT) or to
``Interactions`` (the streams, mapped onto the contract's table).  A request's
first frame is judged for stream id order and lease before reassembly (RS-m).
Every broken rule goes to ``found`` with the frame's index; nothing stops the
judging.  Time (``t``, seconds) comes with the data: the judge holds no clock.

Fast paths: a responder's plain PAYLOAD (N only, no F, no C) on a plain stream,
sent by a party with nothing pending (a server: once it has accepted the connection,
which its first such frame decides in ``ConnectionModel.before``), takes one unit of
demand and nothing else, exactly as the table's entry would: the table's own fast path,
``semantics.streams.deliver_fast`` (ACTIVE, or CANCELLED with the PAYLOAD crossing the
requester's CANCEL, where ``Interactions.payload`` of a plain stream takes the same unit);
a ``PayloadRun`` (the decoder's run of such frames on one stream) is taken whole
with one demand take when its stream's demand covers ``count``, and otherwise
judged ``to_frames()`` one by one, so findings never depend on the grouping.  A batch's
stretch of plain PAYLOADs on several streams interleaved (a responder serving them at once)
forms no run; it is taken stream by stream in bulk when every stream of it would take all
its elements on the single frame's path, and otherwise judged frame by frame (``_take_segment``).
``tests/test_rsocket_judge_runs.py`` holds the fast paths to the frame-by-frame path.
With ``contract=True`` the test-publisher contract (``contract.py``) watches the
streams whose request names a test publisher; their plain elements take the same
fast paths only when the contract finds them exactly the publisher's next
elements (``ContractJudge.due``; ``tests/test_rsocket_judge_watched.py``), and
once the watch has ended (the requester's CANCEL) like any other stream's.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence
from typing import Any

from ...binding import Found, Keep
from ...errors import ProtocolViolation, Side
from ...semantics.streams import deliver_fast, takes_elements
from .codec import RSocketLimits
from .contract import ContractJudge
from .fragments import Reassembler
from .frames import (
    CONNECTION_ERROR,
    Cancel,
    Error,
    Ext,
    IgnoredFrame,
    Keepalive,
    Lease,
    MetadataPush,
    Payload,
    RequestN,
    Resume,
    ResumeOk,
    Setup,
    SetupError,
)
from .interactions import REQUEST_TYPES, Interactions
from .model import ConnectionModel
from .runs import PayloadRun

SEGMENT_MIN = 16  # plain PAYLOADs in a row worth grouping by stream (``RSocketJudge._judge_segments``)


class RSocketJudge:
    def __init__(self, profile: str = "rsocket-1.0", limits: RSocketLimits | None = None, *,
                 contract: bool = True, keep: Keep | None = None) -> None:
        self.profile = profile
        self.model = ConnectionModel(profile)
        self.streams = Interactions(self.model)
        self.reassembly = {side: Reassembler(limits if isinstance(limits, RSocketLimits) else None) for side in Side}
        self.keep = keep
        # The test publishers of bindings.md §2, judged where a request names one.
        self.contract = ContractJudge(self.model) if contract else None
        self.streams.contract = self.contract
        self._t = 0.0
        self._plain = {side: False for side in Side}  # the party's frames need no connection-level check
        self._whole: Any = None  # what the last frame became after reassembly (``judge_each``)
        # Per side an adapter follows (``follow_reassembly``): each frame that reassembly did not leave as it
        # was, in order, with what it became (None: a fragment held; the whole frame; a broken chain's violation).
        self.outcomes: dict[Side, deque[tuple[Any, Any]]] = {}

    # -- the loop -------------------------------------------------------------------

    def judge(self, sender: Side, frames: Iterable[Any], t: float, index: int, found: Found) -> int:
        if self.keep is None and type(frames) is list and len(frames) >= SEGMENT_MIN:
            return self._judge_segments(sender, frames, t, index, found)
        return self._judge(sender, frames, t, index, found)

    def _judge_segments(self, sender: Side, frames: list[Any], t: float, index: int, found: Found) -> int:
        """``_judge`` over ``frames``, except that each stretch of at least ``SEGMENT_MIN`` plain PAYLOAD(N)s (a
        responder serving several streams at once interleaves them, so no ``PayloadRun`` forms) is taken stream
        by stream in bulk when every stream of it takes its elements whole (``_take_segment``), else judged as
        the other frames are."""
        self._tick(t, found, index)  # once, as one ``_judge`` call would: the calls below find the time unchanged
        start = position = 0
        end = len(frames)
        while position < end:
            stop = position  # the stretch of plain PAYLOAD(N)s from ``position``, perhaps none
            while stop < end:
                item = frames[stop]
                if type(item) is not Payload or not item.next or item.follows or item.complete:
                    break
                stop += 1
            if stop - position >= SEGMENT_MIN:
                if start < position:
                    index = self._judge(sender, frames[start:position], t, index, found)
                segment = frames[position:stop]
                if not self._plain[sender] and not self.reassembly[sender].held:
                    # The party's first frame (or one after a pending connection-level check) goes the whole way
                    # alone, as a run's does: it may leave the party plain, and the rest of the stretch then whole.
                    index = self._judge(sender, segment[:1], t, index, found)
                    segment = segment[1:]
                if self._take_segment(sender, segment):
                    index += len(segment)
                else:
                    index = self._judge(sender, segment, t, index, found)
                start = stop
            position = stop + 1  # the frame at ``stop`` (if any) is no plain PAYLOAD: no stretch starts there
        if start < end:
            index = self._judge(sender, frames[start:] if start else frames, t, index, found)
        return index

    def _take_segment(self, sender: Side, segment: list[Payload]) -> bool:
        """Plain PAYLOAD(N)s of ``sender`` taken at once, stream by stream: only when each of their streams would
        take every one of its elements on the single frame's fast path (its demand covers them all and, for a
        watched stream, they are its publisher's next elements), so that judging them one by one would find
        nothing and change the same counts.  False changes nothing."""
        if not self._plain[sender] or self.reassembly[sender].held:
            return False
        groups: dict[int, list[bytes]] = {}
        for frame in segment:
            datas = groups.get(frame.stream_id)
            if datas is None:
                groups[frame.stream_id] = [frame.data]
            else:
                datas.append(frame.data)
        streams, contract = self.streams.streams, self.contract
        plan: list[tuple[Any, int, int, bool]] = []  # (stream, its id, elements, watched)
        for sid, datas in groups.items():
            st = streams.get(sid)
            if st is None or st.requester is sender or not takes_elements(st.out) \
                    or not st.out.demand.covers(len(datas)):
                return False
            if st.plain:
                plan.append((st, sid, len(datas), False))
            elif st.watched_plain and contract is not None and contract.due(sid, datas):
                plan.append((st, sid, len(datas), True))
            else:
                return False
        for number, (st, sid, count, watched) in enumerate(plan):
            # ``deliver_fast`` is the gate, as on every fast path: the checks above make it take each stream's
            # elements, and were it to decline, it declines the first (nothing is taken yet) or it is a bug.
            if not deliver_fast(st.out, count):
                if number:
                    raise AssertionError(f"stream {sid}: deliver_fast declined what its checks accepted")
                return False
            if watched:
                contract.took(sid, count)  # type: ignore[union-attr]
        self.model.parties[sender].frames_sent += len(segment)
        return True

    def _tick(self, t: float, found: Found, index: int) -> None:
        if t > self._t:
            self._t = t
            self.model.tick(t)
            self._flush(found, index, None)

    def _judge(self, sender: Side, frames: Iterable[Any], t: float, index: int, found: Found) -> int:
        model = self.model
        self._tick(t, found, index)
        keep = self.keep
        party = model.parties[sender]
        plain = self._plain
        streams = self.streams.streams
        reassembler = self.reassembly[sender]
        for item in frames:
            kind = type(item)
            if kind is PayloadRun:
                run: PayloadRun = item
                if keep is None and not plain[sender] and run.count > 1 and not reassembler.held:
                    # The party's first frame (or one after a pending connection-level check) goes the
                    # whole way alone; it may leave the party plain, and the rest of the run then whole.
                    head, run = run.split(1)
                    index = self._judge(sender, head.to_frames(), t, index, found)
                if keep is None and plain[sender] and not reassembler.held:
                    st = streams.get(run.stream_id)
                    if st is not None and st.requester is not sender and (
                            (st.plain and deliver_fast(st.out, run.count))
                            or (st.watched_plain and self._take_due(st, run.stream_id, run.datas))):
                        party.frames_sent += run.count
                        index += run.count
                        continue
                index = self._judge(sender, run.to_frames(), t, index, found)
                continue
            if keep is not None:
                keep(index, sender, t, item)
            index += 1
            if kind is Payload and plain[sender] and item.next and not item.follows and not item.complete \
                    and not reassembler.held:
                st = streams.get(item.stream_id)
                if st is not None and st.requester is not sender and (
                        (st.plain and deliver_fast(st.out, 1))
                        or (st.watched_plain and self._take_due(st, item.stream_id, (item.data,)))):
                    party.frames_sent += 1
                    continue
            elif kind is Keepalive and plain[sender]:
                # A plain party's KEEPALIVE leaves the opening's checks (``before``) and the party plain, and no
                # reassembly keeps it: a keepalive storm (and its report's re-judgement) is judged at this cost.
                party.frames_sent += 1
                model.keepalive_frame(sender, item, t)
                if model.found:
                    self._flush(found, index - 1, item)
                continue
            self._frame(sender, item, t)
            self._refresh()
            if model.found:
                self._flush(found, index - 1, item)
        return index

    def _take_due(self, st: Any, sid: int, datas: Sequence[bytes]) -> bool:
        """A watched stream's plain elements taken at once: when they are its publisher's next elements
        (``ContractJudge.due``) and its demand covers them, exactly what judging each would do."""
        contract = self.contract
        if contract is not None and contract.due(sid, datas) and deliver_fast(st.out, len(datas)):
            contract.took(sid, len(datas))
            return True
        return False

    def judge_each(self, sender: Side, frames: Iterable[Any], t: float, index: int,
                   found: Found) -> tuple[int, list[Any]]:
        """``judge``, frame by frame (findings never depend on the grouping), and what each frame became
        after ``sender``'s reassembly: the whole frame (a frame that needs none is its own), None for a
        fragment that completes nothing, or the ProtocolViolation of a broken chain (reported as well).

        The RSocket endpoint reads reassembly here: the judge's reassembler is the one per direction."""
        frames = frames if isinstance(frames, (list, tuple)) else list(frames)
        if not self.reassembly[sender].in_progress() and not any(getattr(f, "follows", False) for f in frames):
            # No chain in progress and none begun: every frame is whole as it is, so the batch goes at once.
            return self.judge(sender, frames, t, index, found), list(frames)
        wholes: list[Any] = []
        for frame in frames:
            self._whole = frame  # the fast paths and an IgnoredFrame never reach ``_reassemble``
            index = self.judge(sender, (frame,), t, index, found)
            wholes.append(self._whole)
        return index, wholes

    def _flush(self, found: Found, index: int | None, frame: Any) -> None:
        for violation in self.model.found:
            found(violation, index, frame)
        self.model.found.clear()

    def _refresh(self) -> None:
        parties = self.model.parties
        opened = parties[Side.CLIENT].first_sent
        for side, party in parties.items():
            # A server's frames decide whether it accepted the connection (``ConnectionModel.before``) until one
            # has: a fast path, which skips ``before``, would leave a later setup error unjudged (RS-ERROR-4).
            self._plain[side] = (opened and party.first_sent and party.ended is None and party.owes is None
                                 and not party.awaiting_resume_ok and not party.push_unanswered
                                 and (party.accepted or side is Side.CLIENT))

    # -- one frame -------------------------------------------------------------------

    def _frame(self, sender: Side, frame: Any, t: float) -> None:
        model, streams = self.model, self.streams
        model.before(sender, frame, frame.wire_name, frame.stream_id)
        if type(frame) is IgnoredFrame:
            model.ignorable(sender.peer, frame.stream_id, frame.rule)  # an ERROR answering it breaks that rule
            streams.ignored_request(sender, frame)
            return
        if isinstance(frame, REQUEST_TYPES):
            streams.request_start(sender, frame, t)
        elif type(frame) is RequestN and self.reassembly[sender].held \
                and frame.stream_id in self.reassembly[sender].in_progress():
            model.report("RS-FRAG-1", sender, f"{sender} sent REQUEST_N on stream {frame.stream_id} in the middle "
                         "of its fragmented payload")
        whole = self._reassemble(sender, frame)
        if whole is None:
            return
        kind = type(whole)
        if kind is Payload:
            streams.payload(sender, whole)
        elif kind is RequestN:
            streams.request_n(sender, whole)
        elif kind is Cancel:
            streams.cancel(sender, whole)
        elif kind in REQUEST_TYPES:
            streams.request(sender, whole)
        elif kind is Error:
            model.error_frame(sender, whole)
            if whole.stream_id != 0:
                streams.error(sender, whole)
            elif whole.error_code == CONNECTION_ERROR:
                streams.connection_error(sender)
        elif kind is Keepalive:
            model.keepalive_frame(sender, whole, t)
        elif kind is Setup:
            model.setup_frame(sender, whole, t)
        elif kind is Lease:
            model.lease_frame(sender, whole, t)
            streams.lease_granted(sender)
        elif kind is MetadataPush:
            model.metadata_push_frame(sender, whole)
        elif kind is Resume:
            model.resume_frame(sender, whole)
        elif kind is ResumeOk:
            model.resume_ok_frame(sender, whole)
        elif kind is Ext:
            model.ext_frame(sender, whole)
        elif kind is SetupError:
            model.error_frame(sender, whole)
        else:
            raise TypeError(f"not an RSocket frame: {frame!r}")

    def follow_reassembly(self, sender: Side) -> deque[tuple[Any, Any]]:
        """What ``sender``'s reassembly makes of its frames, for a reader of the judge's output (the scenario
        adapter of the same connection): (frame, outcome) for each frame not left as it was, in order; the
        reader takes them off the left.  A frame with no entry is whole as it is."""
        return self.outcomes.setdefault(sender, deque())

    def _reassemble(self, sender: Side, frame: Any) -> Any:
        """The whole frame once its last fragment is in (None before); a broken chain is reported and dropped."""
        reassembler = self.reassembly[sender]
        try:
            self._whole = whole = reassembler.push(frame)
            if whole is not frame and self.outcomes:
                followed = self.outcomes.get(sender)
                if followed is not None:
                    followed.append((frame, whole))
            return whole
        except ProtocolViolation as violation:
            self._whole = broken = violation.with_side(sender)
            if self.outcomes and sender in self.outcomes:
                self.outcomes[sender].append((frame, broken))
            self.model.report_violation(broken)
            reassembler.push(Cancel(stream_id=frame.stream_id))  # drops the chain (the sender's CANCEL would)
            try:
                return reassembler.push(frame)
            except ProtocolViolation:
                return None

    # -- the rest of the ConnectionJudge interface ------------------------------------------

    @property
    def held(self) -> int:
        """Bytes of fragments kept for reassembly, both sides (``Reassembler.held``, with its cost per chain)."""
        reassembly = self.reassembly
        return reassembly[Side.CLIENT].held + reassembly[Side.SERVER].held

    def let_go(self, side: Side) -> None:
        self.reassembly[side].clear()

    def wire_error(self, sender: Side, violation: ProtocolViolation) -> ProtocolViolation | None:
        self.model.wire_error(sender, violation)
        return violation.with_side(sender)

    def close(self, side: Side) -> list[ProtocolViolation]:
        self.model.close(side)
        self.streams.close(side)
        found = list(self.model.found)
        self.model.found.clear()
        return found

    def sender_state(self, side: Side) -> str:
        """``OPEN`` or ``ENDED`` (after its ERROR on stream 0), for shells that show it."""
        return "OPEN" if self.model.parties[side].ended is None else "ENDED"
