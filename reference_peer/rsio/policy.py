"""The behaviour hooks of a session, each doing what rsio-v0 requires.

Theory of operation: the session (``connection.py``) is mechanism: bytes, events,
production, closing.  Every decision that a deliberate fault may want to get
wrong is a method here, named for what it decides.  The ``faults`` package replaces
methods on one ``Policy`` instance (one per connection); a replacement gets the
method it replaces as ``base`` and usually calls it, so faults combine.
Nothing else in the peer branches on faults.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rsio_tck.bindings.rsio.wire.frames import (
    Cancel,
    ClientHello,
    OnError,
    OnSubscribe,
    Request,
    ServerHello,
    Subscribe,
)
from rsio_tck.errors import ProtocolViolation, Side
from rsio_tck.protocol import ReassemblyLimit
from rsio_tck.testpubs import Strategy

from ..sources import End
from . import flows
from .config import UNBOUNDED
from .publishers import Opened, Rejected

if TYPE_CHECKING:
    from .connection import RsioConnection
    from .flows import Outflow
    from .subscribe_back import SubscribeBack

VERSION = 0
RULE_3_9 = "Reactive Streams rule 3.9"


class Policy:
    def __init__(self) -> None:
        self.state: dict[str, Any] = {}  # per-connection scratch for faults
        self.tolerate: frozenset[str] = frozenset()  # peer violations the connection lets through
        self.faults: tuple[str, ...] = ()

    # -- handshake ------------------------------------------------------------------------

    def on_connection_made(self, s: RsioConnection) -> None:
        if s.role is Side.CLIENT:
            s.send(ClientHello(version=VERSION))
        elif s.freedoms.early_hello:
            self.send_server_hello(s, None)

    def send_server_hello(self, s: RsioConnection, client_version: int | None) -> None:
        s.send(ServerHello(version=VERSION))

    def on_client_hello(self, s: RsioConnection, hello: ClientHello) -> None:
        # Extension ids this peer does not know (all of them, in version 0) are ignored.
        if not s.hello_sent:
            self.send_server_hello(s, hello.version)

    def on_unsupported_version(self, s: RsioConnection) -> None:
        s.finish("hello of an unsupported version; goodbye sent")

    def after_handshake(self, s: RsioConnection) -> None:
        pass

    def events_of_read(self, s: RsioConnection, events: list[object]) -> list[object]:
        # Everything one read produced is acted on, frames sent optimistically right
        # after the clientHello included (HS-7).
        return events

    # -- publishing -----------------------------------------------------------------------

    def resolve(self, s: RsioConnection, name: str) -> Opened | Rejected:
        return s.context.publishers.resolve(name)

    def reject(self, s: RsioConnection, sid: int, rejected: Rejected) -> None:
        s.send(OnSubscribe(subscriber=sid, element_size=rejected.element_size))
        s.send(OnError(subscriber=sid, error=rejected.reason))

    def send_on_subscribe(self, s: RsioConnection, flow: Outflow) -> None:
        s.send(OnSubscribe(subscriber=flow.sid, element_size=flow.element_size))

    def initial_demand(self, s: RsioConnection, flow: Outflow, initial: int) -> int:
        return initial

    def on_negative_initial_demand(self, s: RsioConnection, flow: Outflow, initial: int) -> None:
        s.end_flow(flow, End(error=f"subscribe with initialDemand {initial} < 0 violates {RULE_3_9}"))

    def add_demand(self, s: RsioConnection, flow: Outflow, n: int) -> None:
        flow.add_demand(n)  # saturates at 2^63-1; a demand >= 2^63 counts as 2^63-1

    def on_bad_request(self, s: RsioConnection, flow: Outflow, n: int) -> None:
        s.end_flow(flow, End(error=f"request({n}) with n <= 0 violates {RULE_3_9}"))

    def sendable(self, s: RsioConnection, flow: Outflow) -> int:
        return flow.demand

    def emit_variable(self, s: RsioConnection, flow: Outflow, elements: list[bytes]) -> None:
        flows.emit_variable(s, flow, elements)

    def emit_fixed(self, s: RsioConnection, flow: Outflow, data: bytes) -> None:
        flows.emit_fixed(s, flow, data)

    def finish(self, s: RsioConnection, flow: Outflow, end: End) -> None:
        s.end_flow(flow, end)

    def on_cancel(self, s: RsioConnection, flow: Outflow) -> None:
        s.stop_flow(flow)

    def on_stale_signal(self, s: RsioConnection, frame: Request | Cancel) -> None:
        pass  # request or cancel for an Id unknown, cancelled or terminated: ignored (STR-7)

    def on_duplicate_subscribe(self, s: RsioConnection, frame: Subscribe) -> None:
        # Unreachable while the connection treats it as the protocol error it is (ID-2).
        s.abort(f"subscribe for active Id {frame.subscriber} was let through")

    # -- closing --------------------------------------------------------------------------

    def on_goodbye(self, s: RsioConnection, reason: str) -> None:
        s.finish(f"goodbye from the peer: {reason}" if not s.initiated_goodbye
                 else f"our goodbye ({s.initiated_goodbye}) acknowledged")

    def on_protocol_error(self, s: RsioConnection, violation: ProtocolViolation) -> None:
        s.finish(f"protocol error by the peer, goodbye sent: {violation}")

    def shutdown(self, s: RsioConnection, reason: str) -> None:
        s.goodbye(reason)

    def on_transport_lost(self, s: RsioConnection, reason: str) -> None:
        pass  # the session already ended this connection's streams; others go on (ERR-11)

    # -- subscribing back (tck/subscribe) ----------------------------------------------

    def inner_initial_demand(self, s: RsioConnection, strategy: Strategy) -> int:
        return {"all": UNBOUNDED, "cancel": UNBOUNDED, "one": 1, "batch": strategy.n}[strategy.kind]

    def inner_subscribe(self, s: RsioConnection, back: SubscribeBack) -> None:
        back.inner = s.subscriptions.subscribe(back.spec.to, back, self.inner_initial_demand(s, back.spec.request))

    def inner_request(self, s: RsioConnection, back: SubscribeBack, n: int) -> None:
        back.request(n)

    def on_inner_elements(self, s: RsioConnection, back: SubscribeBack, elements: list[bytes], packed: bool) -> None:
        for element in elements:
            if back.cancelled:
                return  # arrived after the cancel:N cancel: not reported (STR-8)
            back.report("onNext", element=element)
            back.count_element(self)

    def on_reassembly_limit(self, s: RsioConnection, event: ReassemblyLimit) -> None:
        # The connection has sent cancel; only that subscription ends (SPLIT-5).
        s.subscriptions.on_reassembly_limit(event)

    def on_inner_end(self, s: RsioConnection, back: SubscribeBack, error: str | None) -> None:
        if error is None:
            back.report("onComplete")
        else:
            back.report("onError", error=error)
        back.inner_ended()
