"""Publishing one subscription: demand, progress, and how elements become frames.

Theory of operation: an ``Outflow`` is one subscription the remote holds on
this peer.  The session calls ``step`` for each flow that may have work; a
step sends one bounded batch (at most ``VARIABLE_BATCH`` elements, one frame
budget of packed data, or a few parts of a split element) and says whether the
flow may have more.  Which elements go out is the source's business; how many
may go out (``sendable``), and how they are framed (``emit_variable``,
``emit_fixed``) and ended (``finish``) are hooks of the session's policy, so a
fault can change exactly one of them.  The framing helpers below are what the
policy does by default.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rsio_tck.bindings.rsio.wire.frames import OnNext, OnNextLastPart, OnNextPacked, OnNextPart
from rsio_tck.semantics.demand import saturating_add

from ..sources import LargeSource, Source
from .config import UNBOUNDED

if TYPE_CHECKING:
    from .connection import RsioConnection

VARIABLE_BATCH = 2048  # elements of a variable-size stream per step
PARTS_PER_STEP = 4  # parts of a large split element per step


@dataclass(slots=True)
class SplitProgress:
    """A split element in progress: nothing else of its stream may be sent until it ends."""

    element: int  # the element Id chosen for it
    length: int
    read: Callable[[int, int], bytes]  # (offset, length) -> bytes of the element
    max_part: int
    offset: int = 0


class Outflow:
    __slots__ = ("sid", "name", "source", "element_size", "demand", "requested", "done", "split", "pending",
                 "on_demand", "sent", "marks")

    def __init__(self, sid: int, name: str, source: Source) -> None:
        self.sid = sid
        self.name = name
        self.source = source
        self.element_size = source.element_size
        self.demand = 0  # this peer's view: 2^63-1 is unbounded and never counts down
        self.requested = False  # a request arrived (demand is not initialDemand alone)
        self.done = False
        self.split: SplitProgress | None = None
        self.pending: list[bytes] = []  # taken elements waiting behind a split element
        self.on_demand: Callable[[], None] | None = None  # tells an application feeder
        self.sent = 0  # elements sent
        self.marks: set[str] = set()  # what a fault already did to this flow

    def take_demand(self, n: int) -> None:
        self.sent += n
        if self.demand < UNBOUNDED:
            self.demand -= n

    def add_demand(self, n: int) -> None:
        self.demand = saturating_add(self.demand, n)

    def __repr__(self) -> str:
        return f"Outflow({self.sid}, {self.name!r}, demand={self.demand}, done={self.done})"


def step(s: RsioConnection, flow: Outflow) -> bool:
    """Send one bounded batch of ``flow``; False when it has nothing to do until something changes."""
    if flow.done:
        return False
    if flow.split is not None:
        send_parts(s, flow)
        return True
    if flow.pending:
        pending, flow.pending = flow.pending, []
        s.policy.emit_variable(s, flow, pending)
        return True
    source = flow.source
    available = source.available()
    if available == 0:
        end = source.end()
        if end is not None:
            s.policy.finish(s, flow, end)
        return False
    n = min(s.policy.sendable(s, flow), available)
    if n <= 0:
        return False
    if flow.element_size:
        n = min(n, max(1, s.config.frame_bytes() // flow.element_size))
        data = source.take_packed(n)
        flow.take_demand(n)
        s.policy.emit_fixed(s, flow, data)
    elif isinstance(source, LargeSource):
        begin_large(s, flow, source)
    else:
        elements = source.take(min(n, VARIABLE_BATCH))
        flow.take_demand(len(elements))
        s.policy.emit_variable(s, flow, elements)
    return True


# -- the default framing -------------------------------------------------------------


def emit_variable(s: RsioConnection, flow: Outflow, elements: list[bytes]) -> None:
    """Whole elements as onNext (the hot path), some split unsolicited; long ones split in parts."""
    threshold = s.config.split_threshold
    if elements and max(map(len, elements)) > threshold:
        for index, element in enumerate(elements):
            if len(element) > threshold:
                emit_small(s, flow, elements[:index])
                begin_split(s, flow, len(element), _reader(element), threshold)
                flow.pending = elements[index + 1 :]
                return
    emit_small(s, flow, elements)


def _reader(element: bytes) -> Callable[[int, int], bytes]:
    return lambda offset, length: element[offset : offset + length]


def emit_small(s: RsioConnection, flow: Outflow, elements: list[bytes]) -> None:
    if not elements:
        return
    index = s.freedoms.split_index(elements)
    if index is None:
        s.emit_elements(flow.sid, elements)
        return
    if index:
        s.emit_elements(flow.sid, elements[:index])
    element = elements[index]
    element_id = s.freedoms.element_id()
    lengths = s.freedoms.small_part_lengths(len(element))
    offset = 0
    for number, length in enumerate(lengths):
        data = element[offset : offset + length]
        offset += length
        last = number == len(lengths) - 1
        s.send(OnNextLastPart(subscriber=flow.sid, element=element_id, data=data) if last
               else OnNextPart(subscriber=flow.sid, element=element_id, data=data))
    if index + 1 < len(elements):
        s.emit_elements(flow.sid, elements[index + 1 :])


def emit_fixed(s: RsioConnection, flow: Outflow, data: bytes) -> None:
    """Fixed-size elements: packed maximally, or onNext and onNextPacked mixed (a freedom)."""
    size = flow.element_size
    count = len(data) // size
    plan = s.freedoms.pack_plan(count)
    if len(plan) == 1 and plan[0][1]:
        s.send(OnNextPacked(subscriber=flow.sid, count=count, data=data))
        return
    offset = 0
    for n, packed in plan:
        chunk = data[offset : offset + n * size]
        offset += n * size
        s.send(OnNextPacked(subscriber=flow.sid, count=n, data=chunk) if packed
               else OnNext(subscriber=flow.sid, element=chunk))


def begin_large(s: RsioConnection, flow: Outflow, source: LargeSource) -> None:
    """The next tck/large element: split when part= asks (every element, even a short one,
    which goes as one onNextLastPart: rsio-v0 §8, Decision m) or when it is long, else whole."""
    index = source.begin()
    flow.take_demand(1)
    size = source.size
    limit = source.part if source.part is not None else s.config.split_threshold
    if size <= limit and source.part is None:
        emit_small(s, flow, [source.read(index, 0, size)])
        return
    begin_split(s, flow, size, lambda off, n: source.read(index, off, n), limit)


def begin_split(s: RsioConnection, flow: Outflow, length: int, read: Callable[[int, int], bytes], limit: int) -> None:
    """Start sending one element (its unit of demand already taken) as parts of at most ``limit``."""
    max_part = max(1, min(limit, s.config.frame_bytes()))
    flow.split = SplitProgress(element=s.freedoms.element_id(), length=length, read=read, max_part=max_part)
    send_parts(s, flow)


def send_parts(s: RsioConnection, flow: Outflow) -> None:
    progress = flow.split
    assert progress is not None
    for _ in range(PARTS_PER_STEP):
        length = s.freedoms.part_length(progress.length - progress.offset, progress.max_part)
        data = progress.read(progress.offset, length)
        progress.offset += length
        if progress.offset >= progress.length:
            s.send(OnNextLastPart(subscriber=flow.sid, element=progress.element, data=data))
            flow.split = None
            return
        s.send(OnNextPart(subscriber=flow.sid, element=progress.element, data=data))
