"""The contract judge: does a target serve the test publishers of rsio-v0 section 8?

Theory of operation: when a party subscribes to a ``tck/`` name (or to an
``unserved/`` name, which no target serves), the judge knows from the name
alone what the publisher must send: which elementSize, which element bytes in
which order, which terminal signal.  It compares every element as it arrives,
part by part for split elements (so it holds no reassembly buffer for them),
and reports the first divergence per subscription; a run of elements that are all
due and right is taken at once (``contract_runs``, and a packed tck/fixed frame here).

For ``tck/subscribe`` the roles turn: the target subscribes back to the kit's
publisher and must report each signal it receives as an element of the outer
stream.  The judge queues the signals the kit sends on the inner subscription
and matches the reports against that queue, and it checks the target's
requests against the promised strategy.  Both checks are sound in the kit's
observation order: a report or a request is recorded after the signals that
could have caused it.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

import msgpack

from ...errors import ProtocolViolation, Side
from ...semantics.demand import UNBOUNDED, saturating_add
from ...testpubs import (
    UNSERVED_PREFIX,
    Error,
    Fixed,
    Infinite,
    Large,
    Malformed,
    Range,
    SubscribeBack,
    TestPublisher,
    count_of,
    element,
    fixed_elements_due,
    large_bytes,
    parse,
)
from .wire.frames import (
    Cancel,
    Frame,
    OnComplete,
    OnError,
    OnNext,
    OnNextLastPart,
    OnNextPacked,
    OnNextPart,
    OnSubscribe,
    Request,
    Subscribe,
)
from .wire.msgpack_ints import MAX_INT_BYTES, read_int

MAX_REPORT = 64 << 20  # reports are joined within the default reassembly limit

_RULE = {Range: "TCK-1", Infinite: "TCK-2", Fixed: "TCK-3", Large: "TCK-4", Error: "TCK-5", SubscribeBack: "TCK-6"}


@dataclass(slots=True)
class Expected:
    """One signal the inner subscriber received and must report."""

    signal: str
    data: bytes | None = None
    error: str | None = None
    rule: str = "TCK-6"  # what a wrong or missing report of it breaks

    def as_report(self) -> dict[str, Any]:
        out: dict[str, Any] = {"signal": self.signal}
        if self.data is not None:
            out["element"] = self.data
        if self.error is not None:
            out["error"] = self.error
        return out


@dataclass(slots=True)
class Contract:
    """What one subscription to a test publisher must see."""

    name: str
    spec: TestPublisher | Malformed | None  # None: an unserved/ name
    publisher: Side
    index: int = 0  # elements received so far
    offset: int = 0  # bytes of the split element in progress matched so far
    on_subscribed: bool = False
    finished: bool = False  # a divergence was reported, or the stream ended
    widened: bool = False  # a non-shortest integer element was reported (TCK-9, once per stream)
    bad_request: bool = False  # the subscriber asked for demand <= 0: onError is due
    # tck/subscribe: a report split into parts; tck/range, tck/infinite, tck/error: a split integer
    joined: bytearray = field(default_factory=bytearray)
    # tck/subscribe only
    reports: deque[Expected] = field(default_factory=deque)
    inner_ended: bool = False
    # The target cancelled its inner subscription on its own (its reassembly limit, say):
    # rsio-v0 section 8 does not fix what it then reports, so the rest goes unjudged.
    inner_given_up: bool = False


@dataclass(slots=True)
class Inner:
    """The target's subscription back to the kit, for a tck/subscribe stream."""

    outer: Contract
    strategy_kind: str
    strategy_n: int
    total: int = 0  # demand the target gave
    elements: int = 0  # elements the kit sent
    reported_elements: int = 0  # of those, how many the target must report
    joined: bytearray = field(default_factory=bytearray)  # parts of a split element the kit sends
    oversize: bool = False  # that element outgrew MAX_REPORT: its parts are no longer held
    cancelled: bool = False


class ContractJudge:
    def __init__(self) -> None:
        self.contracts: dict[tuple[Side, int], Contract] = {}
        self._awaiting_inner: dict[tuple[Side, str], deque[Contract]] = {}
        self.inners: dict[tuple[Side, int], Inner] = {}
        # A subscribe that reuses an Id whose old subscription may still have frames in flight
        # (after a cancel): its contract waits here until the new onSubscribe, so the frames
        # before it are judged against the old contract (ID-3, ID-4).  None: no contract.
        self._queued: dict[tuple[Side, int], deque[Contract | None]] = {}

    @property
    def active(self) -> bool:
        return bool(self.contracts or self.inners)

    def queued_for(self, key: tuple[Side, int]) -> bool:  # a reused Id's contract waits for its onSubscribe
        return key in self._queued

    def observe(self, sender: Side, frame: Frame) -> list[ProtocolViolation]:
        found: list[ProtocolViolation] = []
        kind = type(frame)
        if kind is OnNext and not self.inners:
            # The elements of tck/range and tck/infinite dominate floods: the expected
            # element, inlined.  Anything else (or a mismatch) takes the general path.
            contract = self.contracts.get((sender.peer, frame.subscriber))  # type: ignore[union-attr]
            if contract is not None and not contract.finished:
                spec = contract.spec
                kind_of_spec = type(spec)
                if (
                    (kind_of_spec is Infinite or (kind_of_spec is Range and contract.index < spec.count))  # type: ignore[union-attr]
                    and frame.element == msgpack.packb(spec.start + contract.index)  # type: ignore[union-attr]
                ):
                    contract.index += 1
                    return found
        if kind is Subscribe:
            self._subscribe(sender, frame, found)  # type: ignore[arg-type]
            return found
        if kind is Request or kind is Cancel:
            self._subscriber_signal(sender, frame, found)
            return found
        subscriber = getattr(frame, "subscriber", None)
        if subscriber is None:  # hellos, goodbye, extension frames: not part of any contract
            return found
        key = (sender.peer, subscriber)
        contract = self.contracts.get(key)
        if kind is OnSubscribe and key in self._queued and (contract is None or contract.on_subscribed):
            contract = self._switch(key)
        if contract is not None and not contract.finished:
            self._publisher_signal(contract, frame, found)
        inner = self.inners.get(key)
        if inner is not None:
            self._inner_signal(inner, frame)
        return found

    # -- subscriptions -----------------------------------------------------------------

    def _switch(self, key: tuple[Side, int]) -> Contract | None:
        """The onSubscribe of a reused Id's new subscription: its contract takes over."""
        queued = self._queued[key]
        contract = queued.popleft()
        if not queued:
            del self._queued[key]
        if contract is None:
            self.contracts.pop(key, None)
        else:
            self.contracts[key] = contract
        return contract

    def _install(self, key: tuple[Side, int], contract: Contract | None) -> None:
        if key in self.contracts or key in self._queued:
            self._queued.setdefault(key, deque()).append(contract)
        elif contract is not None:
            self.contracts[key] = contract

    def _subscribe(self, sender: Side, frame: Subscribe, found: list[ProtocolViolation]) -> None:
        key = (sender, frame.subscriber)
        self.inners.pop(key, None)
        waiting = self._awaiting_inner.get((sender, frame.publisher))
        if waiting:
            self.contracts.pop(key, None)
            self._queued.pop(key, None)
            outer = waiting.popleft()
            spec = outer.spec
            assert isinstance(spec, SubscribeBack)
            self.inners[key] = Inner(outer=outer, strategy_kind=spec.request.kind, strategy_n=spec.request.n,
                                     total=max(frame.initial_demand, 0))
            self._check_strategy(self.inners[key], sender, frame.subscriber, initial=frame.initial_demand, found=found)
            return
        spec = parse(frame.publisher)
        if (spec is None and not frame.publisher.startswith(UNSERVED_PREFIX)) or \
                (isinstance(spec, Malformed) and not spec.certain):
            self._install(key, None)
            return
        contract = Contract(name=frame.publisher, spec=spec, publisher=sender.peer)
        contract.bad_request = frame.initial_demand < 0
        self._install(key, contract)
        if isinstance(spec, SubscribeBack):
            self._awaiting_inner.setdefault((sender.peer, spec.to), deque()).append(contract)

    def _subscriber_signal(self, sender: Side, frame: Frame, found: list[ProtocolViolation]) -> None:
        key = (sender, frame.subscriber)  # type: ignore[union-attr]
        contract = self.contracts.get(key)
        if contract is not None and isinstance(frame, Request) and frame.demand <= 0:
            contract.bad_request = True
        inner = self.inners.get(key)
        if inner is None:
            return
        if isinstance(frame, Cancel):
            inner.cancelled = True
            if inner.strategy_kind != "cancel":
                inner.outer.inner_given_up = True
            elif inner.elements < inner.strategy_n:
                found.append(self._fail("DEM-7", sender, f"target cancelled its subscription {frame.subscriber} after "
                                        f"{inner.elements} elements; strategy cancel:{inner.strategy_n}"))
            return
        assert isinstance(frame, Request)
        if frame.demand > 0:
            inner.total = saturating_add(inner.total, frame.demand)
        self._check_strategy(inner, sender, frame.subscriber, request=frame.demand, found=found)

    def _check_strategy(self, inner: Inner, target: Side, sid: int, *, initial: int | None = None,
                        request: int | None = None, found: list[ProtocolViolation] | None = None) -> None:
        out = found if found is not None else []
        kind, n = inner.strategy_kind, inner.strategy_n
        if initial is not None:
            want = {"all": UNBOUNDED, "cancel": UNBOUNDED, "one": 1, "batch": n}[kind]
            if min(initial, UNBOUNDED) != want:
                out.append(self._fail("DEM-7", target, f"target subscribed back with initialDemand {initial}; "
                                      f"strategy {kind} promises {want}"))
            return
        if kind in ("one", "batch"):
            window = 1 if kind == "one" else n
            allowed = (inner.elements // window + 1) * window
            if request is not None and (request != window or inner.total > allowed):
                out.append(self._fail("DEM-7", target, f"target requested {request} (total {inner.total}) after "
                                      f"{inner.elements} elements; strategy {kind} allows request({window}) "
                                      f"up to a total of {allowed}"))

    # -- the kit publishing to the target (tck/subscribe) -----------------------------

    def _inner_signal(self, inner: Inner, frame: Frame) -> None:
        outer = inner.outer
        if outer.inner_given_up:
            return  # nothing more is expected of its reports
        kind = type(frame)
        if kind is OnNextPart:
            if len(inner.joined) + len(frame.data) > MAX_REPORT:  # type: ignore[union-attr]
                inner.oversize = True  # its report could not be a report: not held, not expected
            else:
                inner.joined += frame.data  # type: ignore[union-attr]
            return
        if isinstance(frame, OnNext):
            batch, rule = [frame.element], "TCK-6"
        elif kind is OnNextPacked:
            batch, rule = list(frame.elements()), "PACK-4"  # type: ignore[union-attr]
        elif kind is OnNextLastPart:
            batch, rule = [bytes(inner.joined + frame.data)], "SPLIT-1"  # type: ignore[union-attr]
            if inner.oversize:
                batch, inner.oversize = [], False
            inner.joined.clear()
        else:
            batch, rule = [], "TCK-6"
        limit = inner.strategy_n if inner.strategy_kind == "cancel" else None
        for data in batch:
            inner.elements += 1
            if limit is not None and inner.reported_elements >= limit:
                continue  # arrives after the target's cancel:N cancel: not reported (STR-8)
            inner.reported_elements += 1
            outer.reports.append(Expected("onNext", data=data, rule=rule))
        if kind is OnComplete or kind is OnError:
            outer.inner_ended = True
            inner.joined.clear()
            if limit is not None and inner.reported_elements >= limit:
                return
            # A terminal signal sent with no outstanding demand must be accepted (STR-5).
            why = "STR-5" if inner.total < UNBOUNDED and inner.total <= inner.elements else "TCK-6"
            if kind is OnComplete:
                outer.reports.append(Expected("onComplete", rule=why))
            else:
                outer.reports.append(Expected("onError", error=frame.error, rule=why))  # type: ignore[union-attr]

    # -- a target publishing a test publisher ---------------------------------------------

    def _fail(self, rule: str, side: Side, message: str) -> ProtocolViolation:
        return ProtocolViolation(rule=rule, side=side, message=message)

    def _diverged(self, contract: Contract, rule: str, message: str, found: list[ProtocolViolation]) -> None:
        contract.finished = True
        found.append(self._fail(rule, contract.publisher, f"{contract.name}: {message}"))

    def _publisher_signal(self, c: Contract, frame: Frame, found: list[ProtocolViolation]) -> None:
        spec = c.spec
        kind = type(frame)
        if kind is OnSubscribe:
            c.on_subscribed = True
            want = spec.size if isinstance(spec, Fixed) else 0
            if frame.element_size != want and isinstance(spec, (Range, Infinite, Fixed, Large, Error, SubscribeBack)):  # type: ignore[union-attr]
                rule = "TCK-3" if isinstance(spec, Fixed) else "TCK-8"
                self._diverged(c, rule, f"onSubscribe elementSize {frame.element_size}, expected {want}", found)  # type: ignore[union-attr]
            return
        if spec is None or isinstance(spec, Malformed):
            rule = "STR-2" if spec is None else "TCK-7"
            if kind is OnError:
                c.finished = True
            else:
                self._diverged(c, rule, f"{frame.wire_name} where onSubscribe then onError was due", found)
            return
        rule = _RULE[type(spec)]
        if kind is OnError:
            c.finished = True
            if c.bad_request:
                return  # the model judges the 3.9 error (DEM-3, DEM-4)
            if isinstance(spec, Error) and c.index == spec.after and frame.error == spec.message:  # type: ignore[union-attr]
                return
            due = f"onError({spec.message!r}) after {spec.after} elements" if isinstance(spec, Error) else "no onError"
            self._diverged(c, rule, f"onError({frame.error!r}) after {c.index} elements; expected {due}", found)  # type: ignore[union-attr]
            return
        if kind is OnComplete:
            c.finished = True
            if isinstance(spec, SubscribeBack):
                self._complete_reports(c, found)
                return
            count = count_of(spec)
            if isinstance(spec, Error) or count is None or c.index != count:
                self._diverged(c, rule, f"onComplete after {c.index} elements; expected "
                               f"{'none' if count is None or isinstance(spec, Error) else count}", found)
            return
        if isinstance(spec, SubscribeBack):
            self._report(c, frame, found)
            return
        if kind is OnNextPacked:
            if isinstance(spec, Fixed) and fixed_elements_due(spec, c.index, frame.count, frame.data):  # type: ignore[union-attr]
                c.index += frame.count  # type: ignore[union-attr]
                return  # all due and all right, at once; else element by element, for the precise finding
            for data in frame.elements():  # type: ignore[union-attr]
                if not self._element(c, spec, rule, data, found):
                    return
            return
        if isinstance(frame, OnNext):
            if isinstance(spec, Large) and spec.part is not None:
                # rsio-v0 §8: with part=P the target splits each element; one of at most P bytes
                # is a single onNextLastPart (Decision m).
                self._diverged(c, "TCK-4", f"element of {len(frame.element)} bytes sent whole; part={spec.part} "
                               "asks for every element as parts", found)
                return
            self._element(c, spec, rule, frame.element, found)
            return
        if kind is OnNextPart or kind is OnNextLastPart:
            self._part(c, spec, rule, frame.data, kind is OnNextLastPart, found)  # type: ignore[union-attr]

    def _expected_count(self, c: Contract, spec: TestPublisher, rule: str, found: list[ProtocolViolation]) -> bool | None:
        """True while element ``c.index`` is one the publisher must still send; None (reported) past that."""
        count = count_of(spec)
        if isinstance(spec, Error):
            count = spec.after
        if count is not None and c.index >= count:
            self._diverged(c, rule, f"element {c.index} beyond the {count} it must send", found)
            return None
        return True

    def _expected(self, c: Contract, spec: TestPublisher, rule: str, found: list[ProtocolViolation]) -> bytes | None:
        if self._expected_count(c, spec, rule, found) is None:
            return None
        return element(spec, c.index)

    def _element(self, c: Contract, spec: TestPublisher, rule: str, data: bytes, found: list[ProtocolViolation]) -> bool:
        want = self._expected(c, spec, rule, found)
        if want is None:
            return False
        if data != want:
            # Integer elements are MessagePack values (rsio-v0 section 8): any legal width of the
            # right integer is the right element, and only a SHOULD asks for the shortest (TCK-9).
            value = read_int(data) if isinstance(spec, (Range, Infinite, Error)) else None
            if value is None or value != read_int(want):
                if isinstance(spec, (Range, Infinite, Error)) and not _is_msgpack(data):
                    rule = "TCK-8"
                self._diverged(c, rule, f"element {c.index} is {data[:16].hex()} ({len(data)} bytes), expected "
                               f"{_describe(spec, want)}", found)
                return False
            if not c.widened:
                c.widened = True
                found.append(self._fail("TCK-9", c.publisher, f"{c.name}: element {c.index} is the integer {value} "
                                        f"written as {data.hex()} ({len(data)} bytes), not in its shortest "
                                        f"encoding {want.hex()} (reported once per stream)"))
        c.index += 1
        return True

    def _part(self, c: Contract, spec: TestPublisher, rule: str, data: bytes, last: bool,
              found: list[ProtocolViolation]) -> None:
        if isinstance(spec, Large) and spec.part is not None and len(data) > spec.part:
            self._diverged(c, "TCK-4", f"part of {len(data)} bytes, over part={spec.part}", found)
            return
        if isinstance(spec, (Range, Infinite, Error)):
            # A split integer is judged as a value once whole; it is at most 9 bytes.
            c.joined += data
            if len(c.joined) > MAX_INT_BYTES:
                self._diverged(c, rule, f"split element {c.index} is over {MAX_INT_BYTES} bytes, longer than "
                               "any MessagePack integer", found)
            elif last:
                joined = bytes(c.joined)
                c.joined.clear()
                self._element(c, spec, rule, joined, found)
            return
        end = c.offset + len(data)
        if isinstance(spec, Large):
            # Only the bytes this part covers: building the whole element for each part of a
            # multi-megabyte element would make judging it quadratic.
            if self._expected_count(c, spec, rule, found) is None:
                return
            size = spec.size
            piece = large_bytes(c.index, c.offset, max(0, min(end, size) - c.offset))
        else:
            want = self._expected(c, spec, rule, found)
            if want is None:
                return
            size, piece = len(want), want[c.offset:end]
        if piece != data or (last and end != size):
            self._diverged(c, rule, f"split element {c.index} differs at bytes {c.offset}..{end} "
                           f"(element is {size} bytes)", found)
            return
        c.offset = 0 if last else end
        if last:
            c.index += 1

    # -- reports of a tck/subscribe stream ---------------------------------------------

    def _report(self, c: Contract, frame: Frame, found: list[ProtocolViolation]) -> None:
        if isinstance(frame, OnNextPart):
            c.joined += frame.data
            if len(c.joined) > MAX_REPORT:
                self._diverged(c, "TCK-6", "a report larger than any report can be", found)
            return
        if isinstance(frame, OnNextLastPart):
            data = bytes(c.joined + frame.data)
            c.joined.clear()
        elif isinstance(frame, OnNext):
            data = frame.element
        else:
            self._diverged(c, "TCK-8", f"{frame.wire_name} on a tck/subscribe stream", found)
            return
        try:
            got = msgpack.unpackb(data, raw=False)
        except (ValueError, msgpack.ExtraData, msgpack.FormatError, msgpack.StackError) as exc:
            self._diverged(c, "TCK-8", f"report {data[:16].hex()} is not MessagePack ({exc})", found)
            return
        if c.inner_given_up:
            return  # well-formed MessagePack; what it says is the target's own business
        if not c.reports:
            spec = c.spec
            assert isinstance(spec, SubscribeBack)
            rule = "STR-8" if spec.request.kind == "cancel" else "TCK-6"
            self._diverged(c, rule, f"report {got!r:.80} of a signal the target should not report", found)
            return
        want = c.reports.popleft()
        if got != want.as_report():
            self._diverged(c, want.rule, f"report {got!r:.80}, expected {want.as_report()!r:.80}", found)

    def _complete_reports(self, c: Contract, found: list[ProtocolViolation]) -> None:
        if c.inner_given_up:
            return
        if c.reports:
            want = c.reports[0]
            self._diverged(c, want.rule, f"onComplete with {len(c.reports)} signal(s) unreported, the first "
                           f"{want.as_report()!r:.80}", found)
        elif not c.inner_ended and not any(i.outer is c and i.cancelled for i in self.inners.values()):
            self._diverged(c, "TCK-6", "onComplete before its inner subscription ended", found)


def _describe(spec: TestPublisher, want: bytes) -> str:
    if isinstance(spec, (Range, Infinite, Error)):
        return f"the integer {read_int(want)} (shortest encoding {want.hex()}, any width accepted)"
    return f"{want[:16].hex()} ({len(want)} bytes)"


def _is_msgpack(data: bytes) -> bool:
    try:
        msgpack.unpackb(data)
    except (ValueError, msgpack.ExtraData, msgpack.FormatError, msgpack.StackError):
        return False
    return True
