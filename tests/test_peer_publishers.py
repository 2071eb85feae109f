"""The reference peer serves every test publisher of rsio-v0 section 8, and the monitor agrees.

Each test drives an in-process peer with the kit's own ``Connection`` (client
role) while a ``Monitor`` judges both directions, and ends by asserting zero
findings: no violation and no warning by the peer, under several seeds of its
freedoms (early hello, mixed packing, chunked writes, unsolicited splits, Id
reuse) and both codecs.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import msgpack
import pytest
from test_peer_support import MAX, Probe, codecs, reports, run, serving

from rsio_tck.bindings.rsio.wire import Limits
from rsio_tck.bindings.rsio.wire.frames import (
    Cancel,
    ClientHello,
    Goodbye,
    OnComplete,
    OnError,
    OnSubscribe,
    Request,
    Subscribe,
)
from rsio_tck.errors import Side
from rsio_tck.reference_peer.rsio import PeerConfig
from rsio_tck.reference_peer.rsio.freedoms import Freedoms
from rsio_tck.testpubs import large_bytes

SEEDS = [0, 1, 2, 3, 4, 5]
CASES = [(codec, seed) for codec in codecs() for seed in SEEDS]


def _id(case: tuple[str, int]) -> str:
    return f"{case[0]}-seed{case[1]}"


async def _clean(probe: Probe, side: Side | None = None) -> None:
    """Orderly goodbye, then: no finding at all (or none by ``side``)."""
    await probe.close()
    assert probe.findings(side) == []


def values(elements: list[bytes]) -> list[int]:
    """Integer elements as values: the peer may write them in any legal MessagePack width (TCK-9)."""
    return [msgpack.unpackb(e) for e in elements]


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_range_and_error(case: tuple[str, int]) -> None:
    codec, seed = case

    async def go() -> None:
        async with serving(codec=codec, seed=seed) as (_, url):
            p = await Probe.open(url, codec)
            p.send(Subscribe(publisher="tck/range?start=5&count=10", subscriber=1, initial_demand=3))
            p.send(Subscribe(publisher="tck/range", subscriber=2, initial_demand=0))
            p.send(Subscribe(publisher="tck/range?start=-3&count=4", subscriber=3, initial_demand=MAX))
            p.send(Subscribe(publisher=f"tck/range?start={2**40}&count=2", subscriber=4, initial_demand=2))
            p.send(Subscribe(publisher="tck/error?after=3&message=it%20broke%26more", subscriber=5, initial_demand=MAX))
            p.send(Subscribe(publisher="tck/error", subscriber=6, initial_demand=0))
            assert values(await p.collect(1, 3)) == [5, 6, 7]
            await p.quiet(0.05)
            assert len(p.elements(1)) == 3  # no element beyond demand
            p.send(Request(subscriber=1, demand=4))
            p.send(Request(subscriber=1, demand=3))
            assert isinstance(await p.finish(1), OnComplete)
            assert values(p.elements(1)) == list(range(5, 15))
            assert isinstance(await p.finish(2), OnComplete) and p.elements(2) == []  # count=0: at once
            assert isinstance(await p.finish(3), OnComplete) and values(p.elements(3)) == [-3, -2, -1, 0]
            assert isinstance(await p.finish(4), OnComplete) and values(p.elements(4)) == [2**40, 2**40 + 1]
            error = await p.finish(5)
            assert isinstance(error, OnError) and error.error == "it broke&more"
            assert values(p.elements(5)) == [0, 1, 2]
            error = await p.finish(6)  # after=0: fails at once, without demand
            assert isinstance(error, OnError) and error.error == "failed"
            await _clean(p)

    run(go())


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_infinite_follows_demand_and_cancel(case: tuple[str, int]) -> None:
    codec, seed = case

    async def go() -> None:
        async with serving(codec=codec, seed=seed) as (_, url):
            p = await Probe.open(url, codec)
            p.send(Subscribe(publisher="tck/infinite?start=7", subscriber=1, initial_demand=100))
            assert values(await p.collect(1, 100)) == list(range(7, 107))
            await p.quiet(0.05)
            assert len(p.elements(1)) == 100
            p.send(Request(subscriber=1, demand=50_000))
            await p.collect(1, 1000)
            p.send(Cancel(subscriber=1))
            p.send(Subscribe(publisher="tck/range?count=1", subscriber=2, initial_demand=1))
            assert isinstance(await p.finish(2), OnComplete)
            p.send(Subscribe(publisher="tck/range?count=3", subscriber=3, initial_demand=MAX))
            p.send(Request(subscriber=3, demand=MAX))  # saturates at 2^63-1: no error
            p.send(Request(subscriber=3, demand=2**64 - 1 if codec == "msgpack" else MAX))
            assert isinstance(await p.finish(3), OnComplete)
            assert p.terminal(1) is None
            await _clean(p)

    run(go())


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_fixed_packs_within_demand(case: tuple[str, int]) -> None:
    codec, seed = case

    async def go() -> None:
        async with serving(codec=codec, seed=seed) as (_, url):
            p = await Probe.open(url, codec)
            sizes = {1: (1, 600), 2: (2, 70000), 3: (8, 1000), 4: (3, 300), 5: (20, 50), 6: (8, 0)}
            for sid, (size, count) in sizes.items():
                p.send(Subscribe(publisher=f"tck/fixed?size={size}&count={count}", subscriber=sid, initial_demand=MAX))
            p.send(Subscribe(publisher="tck/fixed?size=8&count=100", subscriber=7, initial_demand=10))
            for sid, (size, count) in sizes.items():
                assert isinstance(await p.finish(sid), OnComplete)
                assert p.frames(OnSubscribe, sid)[0].element_size == size
                assert p.elements(sid) == [(i % 256**size).to_bytes(size, "big") for i in range(count)]
            await p.collect(7, 10)
            p.send(Request(subscriber=7, demand=15))
            await p.collect(7, 25)
            await p.quiet(0.05)
            assert len(p.elements(7)) == 25 and p.terminal(7) is None
            p.send(Request(subscriber=7, demand=1000))
            assert isinstance(await p.finish(7), OnComplete) and len(p.elements(7)) == 100
            await _clean(p)

    run(go())


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_large_split_on_request_and_unsolicited(case: tuple[str, int]) -> None:
    codec, seed = case

    async def go() -> None:
        config = PeerConfig(codec=codec, seed=seed, split_threshold=64 * 1024)
        async with serving(config) as (_, url):
            p = await Probe.open(url, codec)
            shapes = {1: (1000, 3, 100), 2: (0, 2, 5), 3: (1, 2, 1), 4: (10, 2, 1000), 5: (200_000, 2, None),
                      6: (5000, 2, 4096)}
            for sid, (size, count, part) in shapes.items():
                query = f"size={size}&count={count}" + (f"&part={part}" if part else "")
                p.send(Subscribe(publisher=f"tck/large?{query}", subscriber=sid, initial_demand=1))
            await p.collect(1, 1)
            for sid in shapes:
                p.send(Request(subscriber=sid, demand=10))
            for sid, (size, count, _) in shapes.items():
                assert isinstance(await p.finish(sid), OnComplete)
                assert p.elements(sid) == [large_bytes(i, 0, size) for i in range(count)]
            await _clean(p)

    run(go())


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_subscribe_back_strategies(case: tuple[str, int]) -> None:
    codec, seed = case
    names = {
        1: ("kit/seq?n=5", "all"),
        2: ("kit/seq?n=4", "one"),
        3: ("kit/seq?n=7", "batch:3"),
        4: ("kit/seq?n=9", "cancel:3"),
        5: ("kit/seq?n=3&size=40&split=16", "one"),
        6: ("kit/seq?n=20&fixed=2&packed=1", "batch:6"),
        7: ("kit/seq?n=2&error=kit%20failed", "all"),
        8: ("kit/seq?n=0", "one"),
    }

    async def go() -> None:
        async with serving(codec=codec, seed=seed) as (_, url):
            p = await Probe.open(url, codec)
            for sid, (inner, strategy) in names.items():
                encoded = inner.replace("%", "%25").replace("?", "%3F").replace("&", "%26").replace("=", "%3D")
                p.send(Subscribe(publisher=f"tck/subscribe?to={encoded}&request={strategy}", subscriber=sid,
                                 initial_demand=MAX))
            for sid in names:
                assert isinstance(await p.finish(sid), OnComplete)
            signals = {sid: [r["signal"] for r in reports(p, sid)] for sid in names}
            assert signals[1] == ["onNext"] * 5 + ["onComplete"]
            assert signals[2] == ["onNext"] * 4 + ["onComplete"]
            assert signals[3] == ["onNext"] * 7 + ["onComplete"]
            assert signals[4] == ["onNext"] * 3  # nothing after the cancel:3 cancel
            assert [r["element"] for r in reports(p, 5)[:3]] == [bytes((i + j) % 256 for j in range(40))
                                                                 for i in range(3)]
            assert signals[6] == ["onNext"] * 20 + ["onComplete"]
            assert reports(p, 7)[-1] == {"signal": "onError", "error": "kit failed"}
            assert signals[8] == ["onComplete"]
            await _clean(p)

    run(go())


@pytest.mark.parametrize("codec", codecs())
def test_unserved_and_malformed_names_get_on_subscribe_then_on_error(codec: str) -> None:
    bad = ["unserved/x", "tck/nope", "tck/fixed", "tck/range?count=x", "tck/range?count=-1", "tck/subscribe",
           "tck/subscribe?to=a&request=bogus", "tck/range?count=1&count=2", "tck/large?size=1&part=0",
           "tck/infinite?start=%ZZ", "something/else?x=1"]

    async def go() -> None:
        async with serving(codec=codec) as (_, url):
            p = await Probe.open(url, codec)
            for sid, name in enumerate(bad, start=1):
                p.send(Subscribe(publisher=name, subscriber=sid, initial_demand=1))
            for sid in range(1, len(bad) + 1):
                assert isinstance(await p.finish(sid), OnError)
                assert len(p.frames(OnSubscribe, sid)) == 1
            p.send(Subscribe(publisher="tck/range?count=2", subscriber=99, initial_demand=2))
            assert isinstance(await p.finish(99), OnComplete)  # the connection stays up
            await _clean(p)

    run(go())


@pytest.mark.parametrize("codec", codecs())
def test_demand_errors_name_rule_3_9_and_the_connection_stays_up(codec: str) -> None:
    async def go() -> None:
        async with serving(codec=codec) as (_, url):
            p = await Probe.open(url, codec)
            p.send(Subscribe(publisher="tck/infinite", subscriber=1, initial_demand=0))
            p.send(Request(subscriber=1, demand=0))
            assert "3.9" in (await p.finish(1)).error  # type: ignore[union-attr]
            if codec == "msgpack":  # a varint Long cannot be negative
                p.send(Subscribe(publisher="tck/infinite", subscriber=2, initial_demand=1))
                await p.collect(2, 1)
                p.send(Request(subscriber=2, demand=-5))
                assert "3.9" in (await p.finish(2)).error  # type: ignore[union-attr]
                p.send(Subscribe(publisher="tck/fixed?size=4&count=3", subscriber=3, initial_demand=-1))
                error = await p.finish(3)
                assert isinstance(error, OnError) and "3.9" in error.error
                assert p.frames(OnSubscribe, 3)[0].element_size == 4
            p.send(Request(subscriber=77, demand=5))  # unknown Id: ignored
            p.send(Cancel(subscriber=78))
            p.send(Subscribe(publisher="tck/range?count=3", subscriber=4, initial_demand=MAX))
            p.send(Request(subscriber=4, demand=MAX))
            assert isinstance(await p.finish(4), OnComplete)
            p.send(Request(subscriber=4, demand=5))  # after the terminal signal: ignored
            await _clean(p, Side.SERVER)  # the kit's requests <= 0 are DEM-6 warnings against it

    run(go())


@pytest.mark.parametrize("case", CASES[:3], ids=_id)
def test_id_reuse_gets_fresh_demand(case: tuple[str, int]) -> None:
    codec, seed = case

    async def go() -> None:
        async with serving(codec=codec, seed=seed) as (_, url):
            p = await Probe.open(url, codec)
            p.send(Subscribe(publisher="tck/range?count=2", subscriber=1, initial_demand=10))
            await p.finish(1)
            p.send(Subscribe(publisher="tck/infinite?start=50", subscriber=1, initial_demand=2))
            await p.wait(lambda: len(p.frames(OnSubscribe, 1)) == 2)
            assert values(await p.collect(1, 2)) == [50, 51]
            await p.quiet(0.05)
            assert len(p.elements(1)) == 2
            p.send(Cancel(subscriber=1))
            p.send(Subscribe(publisher="tck/range?count=1&start=9", subscriber=1, initial_demand=1))
            await p.wait(lambda: len(p.frames(OnSubscribe, 1)) == 3)
            assert isinstance(await p.finish(1), OnComplete) and values(p.elements(1))[-1] == 9
            await _clean(p)

    run(go())


def test_subscriptions_per_connection_are_bounded() -> None:
    async def numbers(query: dict[str, str]) -> AsyncIterator[int]:
        for i in range(3):
            yield i

    async def go() -> None:
        async with serving(max_subscriptions=3) as (peer, url):
            peer.publish("numbers", numbers)
            p = await Probe.open(url)
            for sid in (1, 2, 3):
                p.send(Subscribe(publisher="tck/infinite", subscriber=sid, initial_demand=0))
            p.send(Subscribe(publisher="numbers", subscriber=4, initial_demand=5))  # no contract to judge
            error = await p.finish(4)
            assert isinstance(error, OnError) and "more than 3" in error.error
            assert [len(p.frames(OnSubscribe, sid)) for sid in (1, 2, 3, 4)] == [1, 1, 1, 1]
            p.send(Cancel(subscriber=1))
            p.send(Subscribe(publisher="numbers", subscriber=5, initial_demand=5))
            assert isinstance(await p.finish(5), OnComplete) and values(p.elements(5)) == [0, 1, 2]
            await _clean(p)

    run(go())


@pytest.mark.parametrize("codec", codecs())
def test_protocol_errors_get_goodbye_naming_the_problem(codec: str) -> None:
    async def go() -> None:
        async with serving(codec=codec) as (_, url):
            garbage = await Probe.open(url, codec)
            garbage.send_raw(b"\x3f\x00\x00")
            duplicate = await Probe.open(url, codec)
            duplicate.send(Subscribe(publisher="tck/infinite", subscriber=1, initial_demand=0))
            duplicate.send(Subscribe(publisher="tck/infinite", subscriber=1, initial_demand=0), check=False)
            version = await Probe.open(url, codec, hello=False)
            version.send(ClientHello(version=9))
            for probe, rule in ((garbage, "ERR-7"), (duplicate, "ID-1"), (version, None)):
                goodbye = await probe.wait(probe.goodbye)
                assert goodbye.reason.strip() and (rule is None or rule in goodbye.reason)
                await probe.wait_eof()
                assert probe.findings(Side.SERVER) == []

    run(go())


@pytest.mark.parametrize("codec", codecs())
def test_goodbye_is_acknowledged_and_hello_extensions_are_ignored(codec: str) -> None:
    async def go() -> None:
        async with serving(codec=codec) as (_, url):
            p = await Probe.open(url, codec, hello=False)
            p.send(ClientHello(version=0, extensions=(5, 2**40)))
            p.send(Subscribe(publisher="tck/infinite", subscriber=1, initial_demand=10))
            await p.collect(1, 10)
            p.send(Goodbye(reason="enough"))
            await p.wait_eof()
            assert p.closed() is not None and p.closed().orderly  # type: ignore[union-attr]
            assert p.findings(None) == []

    run(go())


def test_reassembly_limit_through_subscribe_back_cancels_and_keeps_the_connection() -> None:
    async def go() -> None:
        config = PeerConfig(limits=Limits(max_reassembly=100))
        async with serving(config) as (_, url):
            p = await Probe.open(url)
            inner = "kit%2Fseq%3Fn%3D3%26size%3D300%26split%3D50"
            p.send(Subscribe(publisher=f"tck/subscribe?to={inner}&request=one", subscriber=1, initial_demand=MAX))
            await p.finish(1)
            assert reports(p, 1)[-1]["signal"] == "onError" and "reassembly" in reports(p, 1)[-1]["error"]
            assert p.kit == {}  # the peer cancelled the inner subscription
            p.send(Subscribe(publisher="tck/range?count=1", subscriber=2, initial_demand=1))
            assert isinstance(await p.finish(2), OnComplete)
            await p.close()

    run(go())


def test_the_test_seeds_cover_every_freedom() -> None:
    habits = [Freedoms(True, seed, 1) for seed in SEEDS]  # connection #1 of each test's fresh peer
    for habit in ("early_hello", "reuse_ids", "mixed_packing", "chunk_writes"):
        assert {getattr(h, habit) for h in habits} == {True, False}, habit
    assert {h.split_rate > 0 for h in habits} == {True, False}
    assert len({h.id_choice for h in habits}) > 1  # more than one way of picking subscribe-back Ids
    fixed = Freedoms(False, 0, 1)
    assert not (fixed.early_hello or fixed.reuse_ids or fixed.mixed_packing or fixed.chunk_writes or fixed.split_rate)
    assert fixed.id_choice == "fresh"
    # mirror is never drawn (it turns STR-015's cancel check off), only forced with ids="mirror".
    assert "mirror" not in {Freedoms(True, seed, connection).id_choice for seed in range(20) for connection in range(9)}


def _seed_choosing(choice: str) -> int:
    return next(seed for seed in range(1000) if Freedoms(True, seed, 1).id_choice == choice)


# The inner Ids of three subscribe-backs in a row (each ends before the next): the choices ``--ids`` offers.
@pytest.mark.parametrize("ids, expected", [
    ("fresh", [1, 2, 3]),
    ("lowest", [0, 0, 0]),  # free again as soon as the previous one ended
    ("highest", [MAX, MAX, MAX]),
    ("mirror", [1, 2, 3]),  # the number of the remote's own (outer) subscription
])
def test_subscribe_back_picks_its_own_ids_as_told(ids: str, expected: list[int]) -> None:
    async def go() -> None:
        async with serving(ids=ids) as (_, url):
            p = await Probe.open(url)
            for sid in (1, 2, 3):
                p.send(Subscribe(publisher="tck/subscribe?to=kit%2Fseq%3Fn%3D2", subscriber=sid, initial_demand=MAX))
                assert isinstance(await p.finish(sid), OnComplete)
            assert [frame.subscriber for frame in p.frames(Subscribe)] == expected
            await _clean(p)

    run(go())


@pytest.mark.parametrize("choice", ["lowest", "fresh", "random"])
def test_subscribe_back_ids_are_a_seeded_freedom(choice: str) -> None:
    async def go() -> None:
        async with serving(seed=_seed_choosing(choice)) as (_, url):
            p = await Probe.open(url)
            for sid in (1, 2):  # both live at once: two different inner Ids, whatever the choice
                p.send(Subscribe(publisher="tck/subscribe?to=kit%2Fone", subscriber=sid, initial_demand=MAX))
            await p.wait(lambda: len(p.frames(Subscribe)) == 2, 2.0)
            inner = [frame.subscriber for frame in p.frames(Subscribe)]
            assert len(set(inner)) == 2
            assert (inner == [0, 1]) is (choice == "lowest") and (inner == [1, 2]) is (choice == "fresh")
            await p.close()

    run(go())
