"""Faults of goodbye (BYE) and of protocol errors and malformed output (ERR)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgpack

from rsio_tck.bindings.rsio.wire.frames import (
    Cancel,
    Goodbye,
    OnSubscribe,
)
from rsio_tck.protocol import ConnectionState

from ...sources import End
from ..policy import Policy
from ..publishers import Rejected
from .declare import Base, _text, _uint, fault

if TYPE_CHECKING:
    from ..connection import RsioConnection
    from ..flows import Outflow



# -- goodbye (BYE) ------------------------------------------------------------------------------

after_goodbye = fault("bye-frame-after-goodbye", "BYE-1", "sends a frame after its goodbye acknowledgement")


@after_goodbye.on("on_goodbye")
def _after_goodbye(p: Policy, base: Base, s: RsioConnection, reason: str) -> None:
    s.send_unchecked(Cancel(subscriber=0))
    base(s, reason)


no_ack = fault("bye-no-ack", "BYE-2", "closes without acknowledging the peer's goodbye")


@no_ack.on("on_goodbye")
def _no_ack(p: Policy, base: Base, s: RsioConnection, reason: str) -> None:
    if s.initiated_goodbye:
        return base(s, reason)
    s.abort("fault bye-no-ack: closed without acknowledging goodbye")


no_wait = fault("bye-close-before-ack", "BYE-3", "on shutdown, closes right after its goodbye without waiting for the acknowledgement")


@no_wait.on("shutdown")
def _no_wait(p: Policy, base: Base, s: RsioConnection, reason: str) -> None:
    base(s, reason)
    s.close_transport("fault bye-close-before-ack: closed without waiting")


second_goodbye = fault("bye-second-goodbye", "BYE-4", "answers a goodbye with two goodbyes")


@second_goodbye.on("on_goodbye")
def _second_goodbye(p: Policy, base: Base, s: RsioConnection, reason: str) -> None:
    if not s.initiated_goodbye:
        s.send_unchecked(Goodbye(reason="goodbye, again"))
    base(s, reason)


outlive = fault("bye-streams-outlive-goodbye", "BYE-5",
                "on the peer's goodbye, keeps publishing and acknowledges only once its streams have ended")


@outlive.on("on_goodbye")
def _outlive(p: Policy, base: Base, s: RsioConnection, reason: str) -> None:
    if s.initiated_goodbye or not s.outflows:
        return base(s, reason)
    # Hold back the acknowledgement the connection queued and carry on as if the goodbye
    # had ended nothing: the streams keep their demand and go on being served.
    p.state["held_ack"] = (s.conn.data_to_send(), reason, base)
    s.conn.state = ConnectionState.OPEN
    for flow in list(s.outflows.values()):
        s.wake(flow)


@outlive.on("finish")
def _outlive_finish(p: Policy, base: Base, s: RsioConnection, flow: Outflow, end: End) -> None:
    base(s, flow, end)
    held = p.state.get("held_ack")
    if held is not None and not s.outflows:
        del p.state["held_ack"]
        ack, reason, on_goodbye = held
        s.send_raw(ack)
        s.conn.state = ConnectionState.CLOSED
        on_goodbye(s, reason)


# -- protocol errors and malformed output (ERR) --------------------------------------------

close_silently = fault("err-close-without-goodbye", "ERR-1", "on a protocol error, closes without goodbye")


@close_silently.on("on_protocol_error")
def _close_silently(p: Policy, base: Base, s: RsioConnection, violation: Any) -> None:
    s.abort(f"fault err-close-without-goodbye after: {violation}")


empty_reason = fault("err-empty-reason", "ERR-2", "answers a protocol error with a goodbye whose reason is empty")


@empty_reason.on("on_protocol_error")
def _empty_reason(p: Policy, base: Base, s: RsioConnection, violation: Any) -> None:
    s.discard_output()
    s.send_unchecked(Goodbye(reason=""))
    base(s, violation)


closes_all = fault("err-malformed-closes-all", "ERR-3", "a protocol error on one connection closes every connection")


@closes_all.on("on_protocol_error")
def _closes_all(p: Policy, base: Base, s: RsioConnection, violation: Any) -> None:
    base(s, violation)
    s.context.abort_all(f"fault err-malformed-closes-all after: {violation}")


field_type = fault("err-wrong-field-type", "ERR-4", "sends onSubscribe with elementSize as a string (msgpack; varint: an 11-byte varint)")


@field_type.on("send_on_subscribe")
def _field_type(p: Policy, base: Base, s: RsioConnection, flow: Outflow) -> None:
    size = b"\x80" * 10 + b"\x00" if s.config.codec == "varint" else _text(s, b"0")
    s.send_raw(b"\x07" + _uint(s, flow.sid) + size)


bad_utf8 = fault("err-invalid-utf8", "ERR-5", "rejects a subscribe with an onError text that is not UTF-8")


@bad_utf8.on("reject")
def _bad_utf8(p: Policy, base: Base, s: RsioConnection, sid: int, rejected: Rejected) -> None:
    s.send(OnSubscribe(subscriber=sid, element_size=rejected.element_size))
    s.send_raw(b"\x0a" + _uint(s, sid) + _text(s, b"\xff\xfe"))


truncated = fault("err-truncated-frame", "ERR-6", "ends a stream with half an onComplete frame and closes")


@truncated.on("finish")
def _truncated(p: Policy, base: Base, s: RsioConnection, flow: Outflow, end: End) -> None:
    s.send_raw(b"\x09")
    s.close_transport("fault err-truncated-frame")


garbage = fault("err-garbage", "ERR-7", "sends a reserved type code (0x3f) after the handshake")


@garbage.on("after_handshake")
def _garbage(p: Policy, base: Base, s: RsioConnection) -> None:
    s.send_raw(b"\x3f")


oversize = fault("err-oversize-length", "ERR-8", "sends an onNext announcing a 1 GiB element")


@oversize.on("emit_variable")
def _oversize(p: Policy, base: Base, s: RsioConnection, flow: Outflow, elements: list[bytes]) -> None:
    length = b"\xc6\x40\x00\x00\x00" if s.config.codec == "msgpack" else _uint(s, 1 << 30)
    s.send_raw(b"\x08" + _uint(s, flow.sid) + length + b"\x00" * 16)
    s.stop_flow(flow)


bad_id = fault("err-id-out-of-range", "ERR-9", "sends onSubscribe for Id -1 (msgpack) or 2^63 (varint)")


@bad_id.on("send_on_subscribe")
def _bad_id(p: Policy, base: Base, s: RsioConnection, flow: Outflow) -> None:
    sid = msgpack.packb(-1) if s.config.codec == "msgpack" else _uint(s, 2**63)
    s.send_raw(b"\x07" + sid + _uint(s, flow.element_size))


downs_peer = fault("err-lost-connection-downs-peer", "ERR-11",
                   "a connection closed without goodbye (end of stream or reset) takes the whole peer down: "
                   "it stops listening and drops every connection")


@downs_peer.on("on_transport_lost")
def _downs_peer(p: Policy, base: Base, s: RsioConnection, reason: str) -> None:
    s.context.stop_serving(f"fault err-lost-connection-downs-peer after: {reason}")
