"""The reference peer as a library: application publishers and subscriptions with backpressure."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import msgpack
import pytest
from test_peer_support import Probe, run, serving

from rsio_tck.bindings.rsio.wire import Limits
from rsio_tck.bindings.rsio.wire.frames import OnComplete, OnSubscribe, Subscribe
from rsio_tck.reference_peer import Peer, RemoteError
from rsio_tck.reference_peer.rsio import PeerConfig, Subscriber, Subscription


def values(elements: list[bytes]) -> list[Any]:
    return [msgpack.unpackb(e) for e in elements]


def test_async_generator_publisher_with_query_and_remote_subscription() -> None:
    async def numbers(query: dict[str, str]) -> AsyncIterator[int]:
        for i in range(int(query.get("from", "0")), int(query["to"])):
            yield i

    async def go() -> None:
        async with serving() as (server, url):
            server.publish("numbers", numbers)
            client = Peer()
            async with await client.connect(url) as connection:
                async with connection.subscribe("numbers?from=3&to=50", buffer=4) as elements:
                    got = [msgpack.unpackb(e) async for e in elements]
                assert got == list(range(3, 50))
                async with connection.subscribe("tck/range?count=5&start=1") as elements:
                    assert [msgpack.unpackb(e) async for e in elements] == [1, 2, 3, 4, 5]

    run(go())


def test_requests_follow_consumption_and_never_exceed_the_buffer() -> None:
    produced = 0

    async def counter() -> AsyncIterator[bytes]:
        nonlocal produced
        while True:
            produced += 1
            yield b"x" * 10

    async def go() -> None:
        async with serving(app_window=3) as (server, url):
            server.publish("counter", counter)
            client = Peer()
            connection = await client.connect(url)
            consumed = 0
            async with connection.subscribe("counter", buffer=8) as elements:
                async for _ in elements:
                    consumed += 1
                    await asyncio.sleep(0)  # a slow consumer: let the producer run ahead if it could
                    assert elements.buffered() <= 8
                    # demand outstanding + buffered never exceed the buffer; the feeder fetches
                    # only within that demand, so production stays within one buffer of consumption.
                    assert produced <= consumed + 8 + 1
                    if consumed == 300:
                        break
            await connection.close()
            assert produced <= 300 + 8 + 1

    run(go())


class ListPublisher:
    """A minimal Reactive Streams Publisher over a list, honouring request(n)."""

    def __init__(self, items: list[Any], fail: str | None = None) -> None:
        self.items, self.fail = items, fail
        self.requests: list[int] = []
        self.cancelled = False

    def subscribe(self, subscriber: Subscriber) -> None:
        publisher = self

        class Sub:
            index = 0

            def request(self, n: int) -> None:
                publisher.requests.append(n)
                for _ in range(n):
                    if self.index >= len(publisher.items):
                        break
                    item = publisher.items[self.index]
                    self.index += 1
                    subscriber.on_next(item)
                if self.index >= len(publisher.items):
                    if publisher.fail:
                        subscriber.on_error(RuntimeError(publisher.fail))
                    else:
                        subscriber.on_complete()
                    self.index += 1  # terminal once

            def cancel(self) -> None:
                publisher.cancelled = True

        sub: Subscription = Sub()
        subscriber.on_subscribe(sub)


def test_reactive_streams_publisher_objects() -> None:
    async def go() -> None:
        ok = ListPublisher(list(range(20)))
        failing = ListPublisher(["a", "b"], fail="broken")
        async with serving(app_window=5) as (server, url):
            server.publish("list", ok)
            server.publish("failing", failing)
            client = Peer()
            async with await client.connect(url) as connection:
                async with connection.subscribe("list", buffer=6) as elements:
                    assert values([e async for e in elements]) == list(range(20))
                assert max(ok.requests) <= 5  # asked at most the feeder's window at a time
                with pytest.raises(RemoteError, match="broken"):
                    async with connection.subscribe("failing") as elements:
                        assert values([e async for e in elements]) == ["a", "b"]

    run(go())


def test_fixed_size_publisher_and_failing_generator() -> None:
    async def words() -> AsyncIterator[bytes]:
        for i in range(100):
            yield i.to_bytes(4, "big")

    async def broken() -> AsyncIterator[int]:
        yield 1
        raise ValueError("generator failed")

    async def go() -> None:
        async with serving() as (server, url):
            server.publish("words", words, element_size=4)
            server.publish("broken", broken)
            p = await Probe.open(url)
            p.send(Subscribe(publisher="words", subscriber=1, initial_demand=1000))
            assert isinstance(await p.finish(1), OnComplete)
            assert p.frames(OnSubscribe, 1)[0].element_size == 4
            assert p.elements(1) == [i.to_bytes(4, "big") for i in range(100)]
            p.send(Subscribe(publisher="broken", subscriber=2, initial_demand=10))
            error = await p.finish(2)
            assert "generator failed" in error.error  # type: ignore[union-attr]
            await p.close()
            assert p.findings() == []

    run(go())


def test_cancel_closes_the_application_generator() -> None:
    closed = asyncio.Event()

    async def endless() -> AsyncIterator[int]:
        try:
            i = 0
            while True:
                yield i
                i += 1
        finally:
            closed.set()

    async def go() -> None:
        async with serving() as (server, url):
            server.publish("endless", endless)
            client = Peer()
            async with await client.connect(url) as connection:
                async with connection.subscribe("endless", buffer=2) as elements:
                    async for element in elements:
                        if msgpack.unpackb(element) == 10:
                            break
                await asyncio.wait_for(closed.wait(), 2.0)

    run(go())


def test_an_element_over_the_reassembly_limit_ends_only_its_subscription() -> None:
    async def big() -> AsyncIterator[bytes]:
        yield bytes(300_000)

    async def go() -> None:
        async with serving(split_threshold=64 * 1024) as (server, url):
            server.publish("big", big)
            client = Peer(PeerConfig(limits=Limits(max_reassembly=100_000)))
            async with await client.connect(url) as connection:
                with pytest.raises(RemoteError, match="reassembly"):
                    async with connection.subscribe("big") as elements:
                        async for _ in elements:
                            pass
                async with connection.subscribe("tck/range?count=2") as elements:
                    assert len([e async for e in elements]) == 2  # the connection is still up

    run(go())


def test_the_client_role_serves_publishers_too() -> None:
    async def hello() -> AsyncIterator[str]:
        yield "hi from the client"

    async def go() -> None:
        async with serving() as (server, url):
            client = Peer()
            client.publish("hello", hello)
            connection = await client.connect(url)
            await connection.ready()
            session = next(iter(server.connections))
            from rsio_tck.reference_peer.api import RemoteSubscription

            reverse = RemoteSubscription(session, "hello")  # the server subscribes to the client
            assert [msgpack.unpackb(e) async for e in reverse] == ["hi from the client"]
            await connection.close()

    run(go())


def test_connection_loss_fails_open_subscriptions() -> None:
    async def go() -> None:
        async with serving() as (server, url):
            client = Peer()
            connection = await client.connect(url)
            elements = connection.subscribe("tck/infinite", buffer=4)
            await elements.__anext__()
            server.abort_all("test kills the connection")
            with pytest.raises(RemoteError, match="connection ended"):
                async for _ in elements:
                    pass
            assert "transport" in await connection.closed  # reset, or closed without goodbye

    run(go())


def test_publish_rejects_bad_names() -> None:
    async def gen() -> AsyncIterator[int]:
        yield 1

    peer = Peer()
    with pytest.raises(ValueError):
        peer.publish("tck/range", gen)
    with pytest.raises(ValueError):
        peer.publish("a?b=1", gen)
    with pytest.raises(TypeError):
        peer.publish("x", 42)  # type: ignore[arg-type]
