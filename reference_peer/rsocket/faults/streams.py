"""RSocket faults of streams: stream ids (as requester), flow control, stream sequences, request-response,
fire-and-forget, request-channel."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rsio_tck.bindings.rsocket.endpoint import Endpoint
from rsio_tck.bindings.rsocket.frames import (
    Payload,
    RequestFnf,
    RequestStream,
)

from ...sources import End
from ..policy import Policy
from .declare import Base, endpoint_override, fault

if TYPE_CHECKING:
    from ..connection import RSocketConnection
    from ..flows import Echo, Flow, SubscribeBack


# -- stream ids (RS-STREAMID), as requester through tck/subscribe ---------------------------------------


def _open_inner_on(sid_of: Callable[[Policy, RSocketConnection, SubscribeBack], int], twice: bool = False) -> Callable[..., None]:
    def open_inner(p: Policy, base: Base, s: RSocketConnection, back: SubscribeBack) -> None:
        sid = sid_of(p, s, back)
        back.inner = sid
        s.inbound[sid] = back
        frame = RequestStream(stream_id=sid, initial_request_n=back.initial_n(), data=back.spec.to.encode())
        s.send_unchecked(frame)
        if twice:
            s.send_unchecked(frame)
    return open_inner


odd_id = fault("streamid-odd", "RS-STREAMID-1", "tck/subscribe: opens its request on an odd stream id")
odd_id.on("open_inner")(_open_inner_on(lambda p, s, back: s.endpoint.new_stream_id() + 1))
skip_id = fault("streamid-skip", "RS-STREAMID-2", "tck/subscribe: its first request skips stream id 2")
skip_id.on("open_inner")(_open_inner_on(lambda p, s, back: s.endpoint.new_stream_id() + 2))
in_use = fault("streamid-in-use", "RS-STREAMID-4", "tck/subscribe: sends its REQUEST_STREAM twice on one stream id")
in_use.on("open_inner")(_open_inner_on(lambda p, s, back: s.endpoint.new_stream_id(), twice=True))
reuse = fault("streamid-reuse", "RS-STREAMID-3", "tck/subscribe: every inner request reuses stream id 2")
reuse.on("open_inner")(_open_inner_on(lambda p, s, back: 2))

# -- flow control (RS-FLOW) -------------------------------------------------------------------------------

zero_n = fault("flow-request-zero", "RS-FLOW-1", "tck/subscribe: opens its request with initial request N 0")


@zero_n.on("open_inner")
def _zero_n(p: Policy, base: Base, s: RSocketConnection, back: SubscribeBack) -> None:
    sid = back.inner = s.endpoint.new_stream_id()
    s.inbound[sid] = back
    s.send_unchecked(RequestStream(stream_id=sid, initial_request_n=0, data=back.spec.to.encode()))


beyond = fault("flow-beyond-demand", "RS-FLOW-2", "sends one element more than the demand on each stream")


@beyond.on("sendable")
def _beyond(p: Policy, base: Base, s: RSocketConnection, flow: Flow) -> int:
    credit: int = base(s, flow)
    if credit == 0 and flow.kind == "stream" and flow.sent and "beyond" not in flow.marks:
        return 1
    return credit


@beyond.on("emit")
def _beyond_emit(p: Policy, base: Base, s: RSocketConnection, flow: Flow, data: bytes, complete: bool) -> None:
    if s.endpoint.credit(flow.sid) == 0:
        flow.marks.add("beyond")  # this is the element beyond the demand
    base(s, flow, data, complete)


def _remember_credit(parent: Callable[..., None]) -> Callable[..., None]:
    def receive_cancel(self: Endpoint, frame: Any, events: list[Any]) -> None:
        # The judge has taken the CANCEL: it ends the direction (``credit`` is 0 now), not its demand, which is
        # the credit that was left.
        direction = self._judge.streams.direction(frame.stream_id, self.role)
        left = 0 if direction is None else direction.demand.outstanding
        self.__dict__.setdefault("credit_at_cancel", {})[frame.stream_id] = left
        parent(self, frame, events)
    return receive_cancel


ignore_cancel = endpoint_override("flow-ignore-cancel", "RS-FLOW-2",
                                   "ignores CANCEL: sends what credit was left (at most 16) and one element more",
                                   "_receive_cancel", _remember_credit)


@ignore_cancel.on("on_cancel")
def _ignore_cancel(p: Policy, base: Base, s: RSocketConnection, flow: Flow) -> None:
    left = s.endpoint.__dict__.get("credit_at_cancel", {}).get(flow.sid, 0)
    count = min(min(left, 16) + 1, flow.source.available())
    for data in flow.source.take(count):
        s.send_unchecked(Payload(stream_id=flow.sid, next=True, data=data))
    base(s, flow)


# -- stream sequences (RS-STREAM, RS-RR, RS-FNF, RS-CHANNEL) -------------------------------------------------

no_flags = fault("stream-payload-no-flags", "RS-STREAM-1", "ends a stream with a PAYLOAD that has neither N nor C")


@no_flags.on("finish")
def _no_flags(p: Policy, base: Base, s: RSocketConnection, flow: Flow, end: End) -> None:
    if end.error is None:
        s.send_unchecked(Payload(stream_id=flow.sid))
    base(s, flow, end)


unrequested = fault("stream-unrequested", "RS-STREAM-2", "after completing a stream, sends a PAYLOAD on a stream never requested")


@unrequested.on("finish")
def _unrequested(p: Policy, base: Base, s: RSocketConnection, flow: Flow, end: End) -> None:
    base(s, flow, end)
    s.send_unchecked(Payload(stream_id=flow.sid + 2000, next=True, complete=True, data=b"0"))


after_complete = fault("stream-next-after-complete", "RS-STREAM-3", "sends one more element after completing a stream")


@after_complete.on("finish")
def _after_complete(p: Policy, base: Base, s: RSocketConnection, flow: Flow, end: End) -> None:
    base(s, flow, end)
    s.send_unchecked(Payload(stream_id=flow.sid, next=True, data=b"0"))


@after_complete.on("emit")
def _after_complete_nc(p: Policy, base: Base, s: RSocketConnection, flow: Flow, data: bytes, complete: bool) -> None:
    base(s, flow, data, complete)
    if complete and flow.kind == "stream":
        s.send_unchecked(Payload(stream_id=flow.sid, next=True, data=b"0"))


two_responses = fault("rr-two-responses", "RS-RR-1", "answers a request-response twice")


@two_responses.on("emit")
def _two_responses(p: Policy, base: Base, s: RSocketConnection, flow: Flow, data: bytes, complete: bool) -> None:
    base(s, flow, data, complete)
    if flow.kind == "response":
        s.send_unchecked(Payload(stream_id=flow.sid, next=True, complete=True, data=data))


fnf_answered = fault("fnf-answered", "RS-FNF-1", "answers a fire-and-forget with a PAYLOAD")


@fnf_answered.on("on_fnf")
def _fnf_answered(p: Policy, base: Base, s: RSocketConnection, frame: RequestFnf) -> None:
    base(s, frame)
    s.send_unchecked(Payload(stream_id=frame.stream_id, next=True, complete=True, data=b"ok"))


no_grant = fault("channel-no-request-n", "RS-CHANNEL-3", "completes a tck/echo channel at once, never sending REQUEST_N")


@no_grant.on("open_channel")
def _no_grant(p: Policy, base: Base, s: RSocketConnection, echo: Echo) -> None:
    s.inbound.pop(echo.flow.sid, None)
    s.end_flow(echo.flow, End())




# -- the test-publisher contract (RS-TCK, bindings.md §2) ---------------------------------------------------------


def _publisher_emit(name: str, rule: str, description: str, path: str,
                    change: Callable[[RSocketConnection, Flow, bytes, bool], tuple[bytes, bool] | None]) -> None:
    """A fault that changes the streamed elements of one test publisher (request-response is left alone):
    ``change`` gives (data, complete), or None to drop the element."""
    declared = fault(name, rule, description)

    @declared.on("emit")
    def _emit(p: Policy, base: Base, s: RSocketConnection, flow: Flow, data: bytes, complete: bool) -> None:
        if flow.name.partition("?")[0] != path or flow.kind == "response":
            base(s, flow, data, complete)
            return
        changed = change(s, flow, data, complete)
        if changed is None:
            flow.sent += 1  # dropped: as if sent
            return
        base(s, flow, *changed)


_publisher_emit("tck-range-wrong-element", "RS-TCK-1", "tck/range: its first element is one too high", "tck/range",
                lambda s, flow, data, complete: (str(int(data) + 1).encode() if flow.sent == 0 else data, complete))


def _infinite_ends(s: RSocketConnection, flow: Flow, data: bytes, complete: bool) -> tuple[bytes, bool]:
    return data, complete or flow.sent == 1  # the second element completes the stream


_publisher_emit("tck-infinite-completes", "RS-TCK-2", "tck/infinite: completes with its second element",
                "tck/infinite", _infinite_ends)
_publisher_emit("tck-large-wrong-byte", "RS-TCK-4", "tck/large: the last byte of its first element is wrong",
                "tck/large", lambda s, flow, data, complete: (
                    data[:-1] + bytes([(data[-1] + 1) % 256]) if flow.sent == 0 and data else data, complete))
_publisher_emit("tck-echo-drops-first", "RS-TCK-7", "tck/echo: drops the first payload it should echo", "tck/echo",
                lambda s, flow, data, complete: None if flow.sent == 0 else (data, complete))

wrong_message = fault("tck-error-wrong-message", "RS-TCK-3", "tck/error: its ERROR carries another message")


@wrong_message.on("finish")
def _wrong_message(p: Policy, base: Base, s: RSocketConnection, flow: Flow, end: End) -> None:
    base(s, flow, End(error="not the message asked for") if end.error is not None else end)


unknown_completes = fault("tck-unknown-completes", "RS-TCK-5", "answers an unknown name with an empty completion")


@unknown_completes.on("reject")
def _unknown_completes(p: Policy, base: Base, s: RSocketConnection, sid: int, reason: str) -> None:
    s.send_unchecked(Payload(stream_id=sid, complete=True))


second_element = fault("tck-response-second-element", "RS-TCK-6",
                       "request-response: answers with the publisher's second element")


@second_element.on("emit")
def _second_element(p: Policy, base: Base, s: RSocketConnection, flow: Flow, data: bytes, complete: bool) -> None:
    if flow.kind == "response" and flow.source.available():
        data = flow.source.take(1)[0]
    base(s, flow, data, complete)


@no_flags.on("complete_together")
def _no_flags_separately(p: Policy, base: Base, s: RSocketConnection, flow: Flow) -> bool:
    return False  # the stream ends with a PAYLOAD C of its own, where this fault acts


@unrequested.on("complete_together")
def _unrequested_separately(p: Policy, base: Base, s: RSocketConnection, flow: Flow) -> bool:
    return False  # the stream ends with a PAYLOAD C of its own, where this fault acts
