"""Faults of the subscriber side (reached through tck/subscribe) and of the test publishers (TCK)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rsio_tck.bindings.rsio.split import ReassemblyLimitExceeded, SplitAssembler
from rsio_tck.bindings.rsio.wire.frames import (
    Request,
    Subscribe,
)

from ...sources import End, FixedSource, LargeSource, RangeSource
from ..policy import Policy
from ..publishers import Opened, Rejected
from .declare import Base, fault

if TYPE_CHECKING:
    from rsio_tck.protocol import ReassemblyLimit

    from ..connection import RsioConnection
    from ..subscribe_back import SubscribeBack

from collections.abc import Callable

# -- the subscriber side, through tck/subscribe --------------------------------------------

reuse_active = fault("sub-reuse-active-id", "ID-1", "subscribes back twice with the same, still active, Id")


@reuse_active.on("inner_subscribe")
def _reuse_active(p: Policy, base: Base, s: RsioConnection, back: SubscribeBack) -> None:
    base(s, back)
    if back.inner is not None:
        s.send_unchecked(Subscribe(publisher=back.spec.to, subscriber=back.inner, initial_demand=1))


request_zero = fault("sub-request-zero", "DEM-6", "subscribing back, requests 0")


@request_zero.on("inner_subscribe")
def _request_zero(p: Policy, base: Base, s: RsioConnection, back: SubscribeBack) -> None:
    base(s, back)
    if back.inner is not None:
        s.send_unchecked(Request(subscriber=back.inner, demand=0))


wrong_strategy = fault("sub-wrong-strategy", "DEM-7", "subscribing back, asks one more than the strategy (one: 2, batch:N: N+1)")


@wrong_strategy.on("inner_initial_demand")
def _wrong_strategy(p: Policy, base: Base, s: RsioConnection, strategy: Any) -> int:
    demand: int = base(s, strategy)
    return demand + 1 if strategy.kind in ("one", "batch") else demand


after_cancel = fault("sub-report-after-cancel", "STR-8", "request=cancel:N never cancels and reports every element")


@after_cancel.on("on_inner_elements")
def _after_cancel(p: Policy, base: Base, s: RsioConnection, back: SubscribeBack, elements: list[bytes],
                  packed: bool) -> None:
    if back.spec.request.kind != "cancel":
        return base(s, back, elements, packed)
    for element in elements:
        back.report("onNext", element=element)


no_join = fault("sub-no-join", "SPLIT-1", "reports each element it receives as two pieces, as if it did not join parts")


@no_join.on("on_inner_elements")
def _no_join(p: Policy, base: Base, s: RsioConnection, back: SubscribeBack, elements: list[bytes], packed: bool) -> None:
    pieces = [piece for e in elements for piece in ((e[: len(e) // 2], e[len(e) // 2 :]) if len(e) >= 2 else (e,))]
    base(s, back, pieces, packed)


packed_as_one = fault("sub-packed-as-one", "PACK-4", "reports an onNextPacked frame as one element")


@packed_as_one.on("on_inner_elements")
def _packed_as_one(p: Policy, base: Base, s: RsioConnection, back: SubscribeBack, elements: list[bytes],
                   packed: bool) -> None:
    base(s, back, [b"".join(elements)] if packed else elements, packed)


skip_complete = fault("sub-skip-complete-report", "TCK-6", "does not report the inner onComplete")


@skip_complete.on("on_inner_end")
def _skip_complete(p: Policy, base: Base, s: RsioConnection, back: SubscribeBack, error: str | None) -> None:
    if error is not None:
        return base(s, back, error)
    back.inner_ended()


class _Wrapped(SplitAssembler):
    """A faulty reassembly around the connection's own (``inner``), which does the joining."""

    def __init__(self, inner: SplitAssembler) -> None:
        super().__init__(inner.limit)
        self.inner = inner

    def add(self, subscriber: int, data: bytes, last: bool) -> bytes | None:
        return self.inner.add(subscriber, data, last)

    def drop(self, subscriber: int) -> None:
        self.inner.drop(subscriber)

    def in_progress(self, subscriber: int) -> int:
        return self.inner.in_progress(subscriber)


class _OneBuffer(_Wrapped):
    """Joins the parts of every subscription in one buffer, as if no two streams could interleave."""

    def add(self, subscriber: int, data: bytes, last: bool) -> bytes | None:
        try:
            return self.inner.add(0, data, last)
        except ReassemblyLimitExceeded as exceeded:
            raise ReassemblyLimitExceeded(subscriber, exceeded.size, exceeded.limit) from None

    def drop(self, subscriber: int) -> None:
        self.inner.drop(0)

    def in_progress(self, subscriber: int) -> int:
        return self.inner.in_progress(0)


class _KeepsCutElements(_Wrapped):
    """Remembers the parts of an element that an onError cut short, instead of forgetting them."""

    def __init__(self, inner: SplitAssembler) -> None:
        super().__init__(inner)
        self.parts: dict[int, list[bytes]] = {}
        self.cut: dict[int, bytes] = {}

    def add(self, subscriber: int, data: bytes, last: bool) -> bytes | None:
        whole = self.inner.add(subscriber, data, last)
        if last:
            self.parts.pop(subscriber, None)
        else:
            self.parts.setdefault(subscriber, []).append(data)
        return whole

    def drop(self, subscriber: int) -> None:
        parts = self.parts.pop(subscriber, None)
        if parts:
            self.cut[subscriber] = b"".join(parts)
        self.inner.drop(subscriber)


one_buffer = fault("sub-join-per-connection", "SPLIT-4",
                   "joins the parts of all its subscriptions in one buffer: interleaved parts of two streams get mixed")


@one_buffer.on("on_connection_made")
def _one_buffer(p: Policy, base: Base, s: RsioConnection) -> None:
    s.conn.assembler = _OneBuffer(s.conn.assembler)
    base(s)


oversize_goodbye = fault("sub-oversize-ends-connection", "SPLIT-5",
                         "a split element over its reassembly limit ends the whole connection with goodbye, "
                         "not only that subscription")


@oversize_goodbye.on("on_reassembly_limit")
def _oversize_goodbye(p: Policy, base: Base, s: RsioConnection, event: ReassemblyLimit) -> None:
    base(s, event)
    s.goodbye(f"split element of {event.size} bytes is over the reassembly limit {event.limit}")


deliver_cut = fault("sub-deliver-cut-element", "SPLIT-6",
                    "delivers the partial element when an onError cuts a split element short")


@deliver_cut.on("on_connection_made")
def _keep_cut(p: Policy, base: Base, s: RsioConnection) -> None:
    p.state["cut"] = s.conn.assembler = _KeepsCutElements(s.conn.assembler)
    base(s)


@deliver_cut.on("on_inner_end")
def _deliver_cut(p: Policy, base: Base, s: RsioConnection, back: SubscribeBack, error: str | None) -> None:
    assembler = p.state.get("cut")
    if error is not None and back.inner is not None and isinstance(assembler, _KeepsCutElements):
        partial = assembler.cut.pop(back.inner, None)
        if partial is not None:
            back.report("onNext", element=partial)
    base(s, back, error)


# -- the test publishers (TCK) ------------------------------------------------------------------


def _replace_source(prefix: str, make: Callable[[Any], Any]) -> Callable[..., Any]:
    """A ``resolve`` hook that swaps the source of the test publisher ``prefix`` for a wrong one."""

    def hook(p: Policy, base: Base, s: RsioConnection, name: str) -> Opened | Rejected:
        opened = base(s, name)
        if isinstance(opened, Opened) and name.partition("?")[0] == prefix:
            return Opened(make(opened.source), opened.start)
        return opened

    return hook


class _LittleEndianFixed(FixedSource):
    def take_packed(self, n: int) -> bytes:
        data, k = super().take_packed(n), self.element_size
        return b"".join(data[i : i + k][::-1] for i in range(0, len(data), k))


class _RawIntegers(RangeSource):
    def take(self, n: int) -> list[bytes]:
        first = self.next
        super().take(n)
        return [(i % 2**64).to_bytes(8, "big") for i in range(first, first + n)]


def _changed_message(source: RangeSource) -> RangeSource:
    return RangeSource(source.next, source.left, End(error=f"{source.final.error} (changed)"))


fault("tck-range-off-by-one", "TCK-1", "tck/range starts at start+1").hooks["resolve"] = _replace_source(
    "tck/range", lambda source: RangeSource(source.next + 1, source.left))
fault("tck-infinite-ignores-start", "TCK-2", "tck/infinite ignores start= and counts from 0").hooks["resolve"] = \
    _replace_source("tck/infinite", lambda source: RangeSource(0, None))
fault("tck-fixed-little-endian", "TCK-3", "tck/fixed elements are little-endian").hooks["resolve"] = _replace_source(
    "tck/fixed", lambda source: _LittleEndianFixed(source.element_size, source.left))
fault("tck-large-oversize-parts", "TCK-4", "tck/large with part=P sends parts of P+1 bytes").hooks["resolve"] = \
    _replace_source("tck/large", lambda source: LargeSource(source.size, source.left,
                                                           None if source.part is None else source.part + 1))
fault("tck-error-wrong-message", "TCK-5", "tck/error fails with a message other than message=").hooks["resolve"] = \
    _replace_source("tck/error", _changed_message)
fault("tck-raw-integers", "TCK-8", "tck/range elements are 8-byte integers, not MessagePack").hooks["resolve"] = \
    _replace_source("tck/range", lambda source: _RawIntegers(source.next, source.left))
unknown_completes = fault("tck-unknown-completes", "TCK-7", "a tck/ name it does not serve completes empty instead of onError")


@unknown_completes.on("resolve")
def _unknown_completes(p: Policy, base: Base, s: RsioConnection, name: str) -> Opened | Rejected:
    opened = base(s, name)
    if isinstance(opened, Rejected) and name.startswith("tck/"):
        return Opened(RangeSource(0, 0))
    return opened


class _Unbounded(_Wrapped):
    """Takes a split element of any size without a cancel: past the limit it silently
    discards the element, so the peer's memory stays bounded while the wire shows no limit."""

    def __init__(self, inner: SplitAssembler) -> None:
        super().__init__(inner)
        self.discarding: set[int] = set()

    def add(self, subscriber: int, data: bytes, last: bool) -> bytes | None:
        if subscriber in self.discarding:
            if last:
                self.discarding.discard(subscriber)
            return None
        try:
            return self.inner.add(subscriber, data, last)
        except ReassemblyLimitExceeded:
            self.inner.drop(subscriber)
            if not last:
                self.discarding.add(subscriber)
            return None

    def drop(self, subscriber: int) -> None:
        self.discarding.discard(subscriber)
        self.inner.drop(subscriber)


no_limit = fault("sub-no-reassembly-limit", "SPLIT-5",
                 "never cancels a split element over its reassembly limit (it takes any size, silently)")


@no_limit.on("on_connection_made")
def _no_limit(p: Policy, base: Base, s: RsioConnection) -> None:
    s.conn.assembler = _Unbounded(s.conn.assembler)
    base(s)
