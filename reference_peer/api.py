"""The reference peer as a library: publish by name, listen, connect, subscribe with backpressure.

::

    peer = Peer()

    async def numbers(query):                  # an async generator publisher
        for i in range(int(query.get("n", "10"))):
            yield i                            # non-bytes values go out MessagePack-encoded

    peer.publish("numbers", numbers)
    server = await peer.listen("tcp://127.0.0.1:7878")

    async with await peer.connect("tcp://127.0.0.1:7878") as connection:
        async with connection.subscribe("numbers?n=5", buffer=16) as elements:
            async for element in elements:     # requests follow consumption
                print(msgpack.unpackb(element))
    await peer.shutdown()
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import ssl
from collections import deque
from collections.abc import Callable
from types import TracebackType
from typing import Any, Protocol

from rsio_tck.errors import Side

from .peer_binding import DEFAULT_PEER, get_peer_binding, peer_profile
from .tiny_writes import wrapper as tiny_writes
from .transports import Target, Wrap, connect, connect_stdio, listen

log = logging.getLogger("reference_peer")


class RemoteError(Exception):
    """A remote subscription ended in error: its onError text, or why the connection ended."""


class Subscriptions(Protocol):
    """A session's subscriptions to the remote side's publishers (see ``peer_binding``)."""

    def subscribe(self, name: str, inflow: Any, initial_demand: int) -> int: ...

    def request(self, sid: int, n: int) -> None: ...

    def cancel(self, sid: int) -> None: ...


class BindingConnection(Protocol):
    """One connection as the binding's peer serves it (see ``peer_binding`` for the shape)."""

    config: Any
    closed: asyncio.Future[str]
    ready: asyncio.Future[None]
    subscriptions: Subscriptions

    def goodbye(self, reason: str) -> None: ...

    def shutdown(self, reason: str = ...) -> None: ...

    def abort(self, reason: str) -> None: ...


def _watch_bytes(session: Any, marker: bytes, action: Callable[[], None]) -> None:
    """Wrap ``session.data_received`` so ``action`` runs once ``marker`` has arrived (across reads too).
    Over WebSocket the session's bytes are the messages' payloads, unmasked, as for any transport."""
    received = session.data_received
    keep = len(marker) - 1
    tail = b""

    def data_received(data: bytes) -> None:
        nonlocal tail
        seen = tail + bytes(data)
        if marker in seen:
            action()
        tail = seen[-keep:] if keep else b""
        received(data)

    session.data_received = data_received


class Peer:
    """A reference peer: its publishers, listeners and connections.  Both roles, every transport.

    ``binding`` names the wire (``rsio`` by default; see ``peer_binding``); ``config`` is that
    binding's peer config (RS-IO: ``PeerConfig``), by default built for ``profile``."""

    def __init__(self, config: Any = None, *, test_publishers: bool = True, binding: str = DEFAULT_PEER,
                 profile: str | None = None) -> None:
        self.binding = get_peer_binding(binding)
        self.config = config if config is not None else self.binding.config(peer_profile(self.binding, profile), {})
        self.publishers = self.binding.publishers(test_publishers=test_publishers)
        # The tiny-writes habit (every binding's config has ``tiny_writes``: 0 = off), right above each socket.
        most = int(getattr(self.config, "tiny_writes", 0) or 0)
        self._wrap: Wrap | None = tiny_writes(most, seeded=bool(getattr(self.config, "freedoms", True)),
                                              seed=int(getattr(self.config, "seed", 0))) if most else None
        self.connections: set[BindingConnection] = set()
        self.servers: list[Server] = []
        self._numbers = itertools.count(1)
        self._watched: tuple[bytes, Callable[[], None]] | None = None

    # -- publishers ------------------------------------------------------------------------

    def publish(self, name: str, source: Any, *, element_size: int = 0) -> None:
        """Serve ``source`` under ``name``: an async generator function called with the query
        parameters of each subscribe (a ``dict[str, str]``; or with no argument if it takes
        none), or an object with ``subscribe(subscriber)`` (Reactive Streams Publisher).
        ``element_size`` > 0 makes it a fixed-size publication (elements of exactly that size)."""
        self.publishers.add(name, self.binding.app_publisher(source, element_size))

    def unpublish(self, name: str) -> None:
        self.publishers.remove(name)

    # -- connections -----------------------------------------------------------------------

    def _connection(self, role: Side, label: str = "") -> Any:  # an asyncio.Protocol and a BindingConnection
        session = self.binding.connection(role, self, next(self._numbers), label)
        if self._watched is not None:
            _watch_bytes(session, *self._watched)
        return session

    def watch_for(self, marker: bytes, action: Callable[[], None]) -> None:
        """Call ``action`` as soon as ``marker`` arrives on any connection made from now on (before the
        session reads the bytes that complete it); ``rsio-peer --stop-on`` stops answering with it."""
        if not marker:
            raise ValueError("the marker to watch for is empty")
        self._watched = (marker, action)

    async def listen(self, url: str, *, ssl_context: ssl.SSLContext | None = None) -> Server:
        server = await listen(url, lambda: self._connection(Side.SERVER), ssl_context=ssl_context,
                              framing=self._framing if Target.parse(url).websocket else None, wrap=self._wrap)
        handle = Server(self, url, server)
        self.servers.append(handle)
        return handle

    def _framing(self) -> Any:
        """A fresh WebSocket framing of this peer's binding and profile (one per connection)."""
        from rsio_tck.websocket import framing_for

        profile = getattr(self.config, "profile", None) or getattr(self.config, "codec", None)
        return framing_for(self.binding.name, profile)

    async def connect(self, url: str, *, ssl_context: ssl.SSLContext | None = None,
                      timeout: float = 10.0) -> PeerConnection:
        label = url if Target.parse(url).scheme == "exec" else ""
        session: Any = await connect(url, lambda: self._connection(Side.CLIENT, label), ssl_context=ssl_context,
                                     timeout=timeout, framing=self._framing if Target.parse(url).websocket else None,
                                     wrap=self._wrap)
        return PeerConnection(session)

    async def serve_stdio(self) -> str:
        """Serve one connection on stdin/stdout (the server role); returns why it ended."""
        session = self._connection(Side.SERVER, "stdio")
        await connect_stdio(session)
        return await session.closed

    async def shutdown(self, reason: str = "peer shutting down", timeout: float | None = None) -> None:
        """Stop listening, say goodbye on every connection, wait (bounded) until all are closed."""
        for server in self.servers:
            server.close()
        for session in list(self.connections):
            session.shutdown(reason)
        pending = [session.closed for session in self.connections if not session.closed.done()]
        wait = timeout if timeout is not None else self.config.goodbye_timeout + self.config.linger + 1.0
        if pending:
            await asyncio.wait(pending, timeout=wait)
        for session in list(self.connections):
            session.abort("shutdown timed out")
        for server in self.servers:
            await server.wait_closed()

    # -- PeerContext (called by sessions) --------------------------------------------------

    def connection_started(self, session: BindingConnection) -> None:
        self.connections.add(session)

    def connection_ended(self, session: BindingConnection, reason: str) -> None:
        self.connections.discard(session)

    def abort_all(self, reason: str) -> None:
        for session in list(self.connections):
            session.abort(reason)

    def stop_serving(self, reason: str) -> None:
        """Stop listening and drop every connection at once: what a crash looks like from outside."""
        for server in self.servers:
            server.close()
        self.abort_all(reason)


class Server:
    """A listening socket of a ``Peer``; ``url`` carries the port actually bound."""

    def __init__(self, peer: Peer, url: str, server: asyncio.Server) -> None:
        self.peer = peer
        self.server = server
        target = Target.parse(url)
        self.port = 0
        self.url = url
        if target.scheme in ("tcp", "tls", "ws", "wss"):
            self.port = server.sockets[0].getsockname()[1]
            host = f"[{target.host}]" if ":" in target.host else target.host
            self.url = f"{target.scheme}://{host}:{self.port}{target.resource}"

    def close(self) -> None:
        self.server.close()

    async def wait_closed(self) -> None:
        try:
            await asyncio.wait_for(self.server.wait_closed(), 1.0)
        except TimeoutError:
            pass  # Python < 3.12 waits for every connection here; sessions are handled by the peer


class PeerConnection:
    """A connection this peer opened (the client role)."""

    def __init__(self, session: BindingConnection) -> None:
        self.session = session

    async def ready(self, timeout: float = 10.0) -> None:
        """Wait for the serverHello (not needed before subscribing: sending is optimistic)."""
        await asyncio.wait_for(asyncio.shield(self.session.ready), timeout)

    def subscribe(self, name: str, *, buffer: int = 64) -> RemoteSubscription:
        return RemoteSubscription(self.session, name, buffer)

    async def close(self, reason: str = "done", timeout: float | None = None) -> str:
        """Orderly goodbye; returns why the connection ended."""
        self.session.goodbye(reason)
        wait = timeout if timeout is not None else self.session.config.goodbye_timeout + self.session.config.linger
        try:
            return await asyncio.wait_for(asyncio.shield(self.session.closed), wait + 1.0)
        except TimeoutError:
            self.session.abort("close timed out")
            return await self.session.closed

    @property
    def closed(self) -> asyncio.Future[str]:
        return self.session.closed

    async def __aenter__(self) -> PeerConnection:
        return self

    async def __aexit__(self, kind: type[BaseException] | None, value: BaseException | None,
                        tb: TracebackType | None) -> None:
        if not self.session.closed.done():
            await self.close()


class RemoteSubscription:
    """Elements of a remote publisher as an async iterator with a bounded buffer.

    At most ``buffer`` elements are ever requested and not yet consumed: the
    subscription starts with ``initialDemand = buffer`` and requests again as
    the application consumes (in batches of half the buffer).  Iteration ends
    at onComplete; onError (or the connection ending) raises ``RemoteError``
    once the elements that arrived before it are consumed.
    """

    def __init__(self, session: BindingConnection, name: str, buffer: int = 64) -> None:
        if buffer < 1:
            raise ValueError("buffer must be at least 1")
        self.name = name
        self.buffer = buffer
        self.element_size: int | None = None
        self._session = session
        self._queue: deque[bytes] = deque()
        self._consumed = 0  # consumed and not yet requested again
        self._batch = max(1, buffer // 2)
        self._ended = False
        self._error: str | None = None
        self._arrival = asyncio.Event()
        self.sid = session.subscriptions.subscribe(name, self, buffer)

    # Inflow: called by the session.
    def on_subscribe(self, element_size: int) -> None:
        self.element_size = element_size

    def on_elements(self, elements: list[bytes], packed: bool) -> None:
        self._queue.extend(elements)
        self._arrival.set()

    def on_end(self, error: str | None) -> None:
        if not self._ended:
            self._ended, self._error = True, error
            self._arrival.set()

    # The application's side.
    def __aiter__(self) -> RemoteSubscription:
        return self

    async def __anext__(self) -> bytes:
        while not self._queue:
            if self._ended:
                if self._error is not None:
                    raise RemoteError(self._error)
                raise StopAsyncIteration
            self._arrival.clear()
            await self._arrival.wait()
        element = self._queue.popleft()
        self._consumed += 1
        if self._consumed >= self._batch and not self._ended:
            self._session.subscriptions.request(self.sid, self._consumed)
            self._consumed = 0
        return element

    def buffered(self) -> int:
        return len(self._queue)

    async def cancel(self) -> None:
        if not self._ended:
            self._ended = True
            self._session.subscriptions.cancel(self.sid)
            self._queue.clear()
            self._arrival.set()

    async def __aenter__(self) -> RemoteSubscription:
        return self

    async def __aexit__(self, kind: type[BaseException] | None, value: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.cancel()
