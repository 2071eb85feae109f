"""Application publishers: async generators and Reactive-Streams-style Publisher objects.

Either kind feeds a ``QueueSource`` that the session drains under the same
backpressure as the test publishers.  A feeder fetches ahead at most
``min(remote demand, app_window)`` elements, so an application never produces
what the remote has not asked for, and a stalled socket (which stops the
draining) stops the application too.

Elements are ``bytes`` (sent as they are); any other value is sent
MessagePack-encoded.  On a fixed-size publication every element must be
exactly ``element_size`` bytes.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any, Protocol, Union

import msgpack

from ..sources import COMPLETE, End, QueueSource
from .publishers import Opened, Rejected

if TYPE_CHECKING:
    from .connection import RsioConnection
    from .flows import Outflow


class Subscription(Protocol):
    def request(self, n: int) -> None: ...

    def cancel(self) -> None: ...


class Subscriber(Protocol):
    def on_subscribe(self, subscription: Subscription) -> None: ...

    def on_next(self, element: Any) -> None: ...

    def on_error(self, error: BaseException) -> None: ...

    def on_complete(self) -> None: ...


class Publisher(Protocol):
    """The Reactive Streams Publisher shape: ``subscribe(subscriber)``, then signals per RS rules."""

    def subscribe(self, subscriber: Subscriber) -> None: ...


# An async generator function: called with the subscribe's query parameters, or with none.
AsyncSourceFactory = Union[Callable[[dict[str, str]], AsyncIterator[Any]], Callable[[], AsyncIterator[Any]]]
PublisherSource = Union[Publisher, AsyncSourceFactory]


def to_element(value: Any, element_size: int) -> bytes:
    data = bytes(value) if isinstance(value, (bytes, bytearray, memoryview)) else msgpack.packb(value)
    if element_size and len(data) != element_size:
        raise ValueError(f"element of {len(data)} bytes on a publisher of element_size {element_size}")
    return data


class Feeder:
    """Moves application elements into a flow's queue, never beyond remote demand."""

    def __init__(self, s: RsioConnection, flow: Outflow, queue: QueueSource) -> None:
        self.s, self.flow, self.queue = s, flow, queue
        self.window = s.config.app_window
        queue.on_taken = self.wanted
        queue.on_stop = self.stop
        flow.on_demand = self.wanted

    def want(self) -> int:
        """Elements to fetch now: remote demand not yet covered by the queue, up to the window."""
        if self.flow.done or self.queue.ended is not None:
            return 0
        return max(0, min(self.flow.demand, self.window) - len(self.queue.items))

    def push(self, value: Any) -> bool:
        try:
            self.queue.push(to_element(value, self.flow.element_size))
        except (ValueError, TypeError) as exc:
            self.fail(f"publisher {self.flow.name!r}: {exc}")
            return False
        self.s.wake(self.flow)
        return True

    def fail(self, text: str) -> None:
        self.queue.finish(End(error=text))
        self.s.wake(self.flow)
        self.stop()

    def complete(self) -> None:
        self.queue.finish(COMPLETE)
        self.s.wake(self.flow)

    def wanted(self) -> None:
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError


class AsyncFeeder(Feeder):
    def __init__(self, s: RsioConnection, flow: Outflow, queue: QueueSource, iterator: AsyncIterator[Any]) -> None:
        super().__init__(s, flow, queue)
        self.iterator = iterator
        self.wake = asyncio.Event()
        self.task = asyncio.get_running_loop().create_task(self.run())

    def wanted(self) -> None:
        if self.want():
            self.wake.set()

    async def run(self) -> None:
        try:
            while True:
                while not self.want():
                    if self.flow.done or self.queue.ended is not None:
                        return
                    self.wake.clear()
                    await self.wake.wait()
                try:
                    value = await self.iterator.__anext__()
                except StopAsyncIteration:
                    self.complete()
                    return
                if not self.push(value):
                    return
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the application's publisher failed: that is its onError
            self.fail(f"{type(exc).__name__}: {exc}")
        finally:
            closer = getattr(self.iterator, "aclose", None)
            if closer is not None and self.flow.done:
                try:
                    await closer()
                except Exception:  # noqa: BLE001 - an application's cleanup failing is not ours
                    pass

    def stop(self) -> None:
        if not self.task.done() and self.task is not asyncio.current_task():
            self.task.cancel()


class PublisherFeeder(Feeder):
    """A Reactive Streams Publisher: requests follow what the session drains."""

    def __init__(self, s: RsioConnection, flow: Outflow, queue: QueueSource, publisher: Publisher) -> None:
        super().__init__(s, flow, queue)
        self.subscription: Subscription | None = None
        self.requested = 0  # asked of the local publisher, not yet received
        self.finished = False
        publisher.subscribe(self)

    # Subscriber side, called by the application's publisher.
    def on_subscribe(self, subscription: Subscription) -> None:
        if self.subscription is not None or self.finished:
            subscription.cancel()  # RS 2.5
            return
        self.subscription = subscription
        self.wanted()

    def on_next(self, element: Any) -> None:
        if self.finished:
            return
        if self.requested <= 0:
            self.fail(f"publisher {self.flow.name!r} signalled more elements than requested (RS 1.1)")
            return
        self.requested -= 1
        self.push(element)

    def on_error(self, error: BaseException) -> None:
        if not self.finished:
            self.finished = True
            self.fail(f"{type(error).__name__}: {error}")

    def on_complete(self) -> None:
        if not self.finished:
            self.finished = True
            self.complete()

    def wanted(self) -> None:
        if self.subscription is None or self.finished:
            return
        more = self.want() - self.requested
        if more > 0:
            self.requested += more
            self.subscription.request(more)

    def stop(self) -> None:
        if not self.finished:
            self.finished = True
            if self.subscription is not None:
                self.subscription.cancel()


class AppPublisher:
    """A registered application publisher (see ``Peer.publish``)."""

    def __init__(self, source: PublisherSource, element_size: int = 0) -> None:
        if not (hasattr(source, "subscribe") or callable(source)):
            raise TypeError("a publisher is an async generator function or an object with subscribe(subscriber)")
        self.source = source
        self.element_size = element_size

    def open(self, query: dict[str, str]) -> Opened | Rejected:
        queue = QueueSource(self.element_size)
        source = self.source
        if hasattr(source, "subscribe"):
            publisher: Publisher = source  # type: ignore[assignment]
            return Opened(queue, lambda s, flow: _keep(PublisherFeeder(s, flow, queue, publisher)))
        factory: Callable[..., Any] = source  # type: ignore[assignment]
        try:
            produced = factory(query) if _takes_argument(factory) else factory()
        except Exception as exc:  # noqa: BLE001 - rejected, not crashed
            return Rejected(f"publisher failed to start: {type(exc).__name__}: {exc}", self.element_size)
        if not hasattr(produced, "__anext__"):
            produced = produced.__aiter__() if hasattr(produced, "__aiter__") else None
        if produced is None:
            return Rejected("publisher factory did not return an async iterator", self.element_size)
        iterator: AsyncIterator[Any] = produced
        return Opened(queue, lambda s, flow: _keep(AsyncFeeder(s, flow, queue, iterator)))


def _keep(feeder: Feeder) -> None:
    """Feeders live as long as their flow (the queue's callbacks hold them)."""


def _takes_argument(factory: Callable[..., Any]) -> bool:
    try:
        parameters = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):
        return True
    return any(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL) for p in parameters)
