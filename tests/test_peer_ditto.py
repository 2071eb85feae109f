"""The Ditto reference peer over loopback TCP, driven by a client built from the kit's Ditto codec.

Each program below exercises one part of bindings.md §3 and DITTO.md (the test
publishers, demand, cancel, search pages, several subscriptions at once,
malformed input); ``RuleCheck`` (``ditto_peer_client``) judges every message the
peer sends, so the correct peer must break no rule in any program, under any
seed of its freedoms.  ``test_peer_ditto_faults`` runs the same programs with
each fault on.  The tests wait on messages (and on control-message barriers),
never on time; every wait is bounded.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

import pytest
from ditto_peer_client import MAX, Client, connected, running_peer

from rsio_tck.bindings.ditto import ControlMessage, DittoLimits, StreamingCreated, Target
from rsio_tck.reference_peer.ditto import PeerConfig
from rsio_tck.reference_peer.ditto.connection import DittoConnection
from rsio_tck.reference_peer.ditto.faults import build_policy
from rsio_tck.reference_peer.ditto.freedoms import Freedoms

Program = Callable[[Client], Awaitable[None]]


async def range_under_demand(c: Client) -> None:
    sub = c.subscribe("range", 5, 9)
    assert await c.opened(sub)
    c.request(sub, 2)
    assert await c.until(lambda: len(sub.items) == 2 or sub.end is not None)
    assert await c.probe()  # nothing beyond the demand of 2 meanwhile
    c.request(sub, 10)
    assert await c.until(lambda: sub.end is not None)


async def empty_range_waits_for_request(c: Client) -> None:
    sub = c.subscribe("range", 3, 2)
    assert await c.opened(sub)
    other = c.subscribe("range", 1, 1)  # a barrier that also needs production: the empty one has not ended
    assert await c.opened(other)
    c.request(other, 1)
    assert await c.until(lambda: other.end is not None)
    c.request(sub, 1)
    assert await c.until(lambda: sub.end is not None)


async def error_after_two(c: Client) -> None:
    sub = c.subscribe("error", 0, 1)
    assert await c.opened(sub)
    c.request(sub, 10)
    assert await c.until(lambda: sub.end is not None)


async def demand_zero_fails(c: Client) -> None:
    for demand in (0, -1):
        sub = c.subscribe("infinite", 0)
        assert await c.opened(sub)
        c.request(sub, demand)
        assert await c.barrier()  # the failed answers the request at once
    c.check.finish()


async def cancel_within_demand(c: Client) -> None:
    sub = c.subscribe("infinite", 0)
    assert await c.opened(sub)
    c.request(sub, 3)
    assert await c.until(lambda: len(sub.items) == 3 or sub.end is not None)
    c.cancel(sub)
    assert await c.probe()  # anything still sent for the cancelled one comes before the probe's end


async def demand_beyond_max_is_unbounded(c: Client) -> None:
    sub = c.subscribe("infinite", 0)
    assert await c.opened(sub)
    c.request(sub, MAX)
    c.request(sub, MAX)
    while len(sub.items) < 20 and sub.end is None:
        before = len(sub.items)
        assert await c.probe()
        if len(sub.items) == before:  # a probe was served and the infinite one, with all that demand, not
            c.check.bad("DITTO-DEM-4", f"nothing more after {before} items, with a cumulative demand beyond 2^63-1")
            return
    c.cancel(sub)
    await c.barrier()


async def search_pages(c: Client) -> None:
    sub = c.search(7, 3)
    assert await c.opened(sub)
    for _ in range(3):
        c.request(sub, 1)
        assert await c.until(lambda n=len(sub.items): len(sub.items) > n or sub.end is not None)
    c.request(sub, 4)  # as many pages as things may remain: a page may hold fewer than size(3) (a freedom)
    assert await c.until(lambda: sub.end is not None)


async def search_default_size_and_empty(c: Client) -> None:
    big = c.search(30)
    none = c.search(0, 5)
    assert await c.opened(big) and await c.opened(none)
    c.request(big, 5)
    c.request(none, 1)
    assert await c.until(lambda: big.end is not None and none.end is not None)


async def search_bad_filter_fails_after_request(c: Client) -> None:
    sub = c.search(3, 2, filter="eq(attributes/other,3")  # not RQL: failed 400 after the first request
    assert await c.opened(sub)
    await c.barrier()
    assert sub.end is None
    c.request(sub, 1)
    assert await c.until(lambda: sub.end is not None)


async def search_queries(c: Client) -> None:
    """A valid filter matching nothing completes; one that is not RQL fails 4xx; neither has a page (SEARCH-7)."""
    empty = c.search(0, filter='eq(thingId,"tck:no-such-thing")', kind="empty")
    invalid = c.search(0, filter="eq(attributes/tck,3", kind="invalid")
    assert await c.opened(empty) and await c.opened(invalid)
    c.request(empty, 1)
    c.request(invalid, 1)
    assert await c.until(lambda: empty.end is not None and invalid.end is not None)


async def unnamed_subscribes(c: Client) -> None:
    """Subscribes without a correlation-id still get created (DITTO-SUB-1, decision DITTO-m), and are served."""
    first = c.subscribe("range", 1, 2, named=False)
    second = c.subscribe("range", 5, 5, named=False)
    assert await c.opened(first) and await c.opened(second)
    c.request(first, 2)
    c.request(second, 1)
    assert await c.until(lambda: first.end is not None and second.end is not None)


async def search_cancel_with_demand_left(c: Client) -> None:
    """A request and the cancel in one write: the publisher holds demand at the cancel; only that may follow."""
    sub = c.search(20, 1)
    assert await c.opened(sub)
    c.request(sub, 2)
    assert await c.until(lambda: len(sub.items) == 2 or sub.end is not None)
    c.send_raw(c.request_line(sub, 5) + c.cancel_line(sub))
    assert await c.probe()  # pages beyond the 5 would come before the probe's end (or never: both judged)


async def interleaved(c: Client) -> None:
    subs = [c.subscribe("range", i * 100, i * 100 + 19) for i in range(3)]
    pages = c.search(40, 4)
    assert await c.opened(pages)
    for sub in subs:
        c.request(sub, MAX)
    c.request(pages, MAX)
    assert await c.until(lambda: all(s.end is not None for s in [*subs, pages]))


PROGRAMS: dict[str, Program] = {p.__name__: p for p in (
    range_under_demand, empty_range_waits_for_request, error_after_two, demand_zero_fails, cancel_within_demand,
    demand_beyond_max_is_unbounded, search_pages, search_default_size_and_empty, search_bad_filter_fails_after_request,
    search_queries, unnamed_subscribes, search_cancel_with_demand_left, interleaved)}


async def run_program(config: PeerConfig, program: Program, tolerate: bool) -> Client:
    async with running_peer(config) as port, connected(port) as client:
        try:
            await program(client)
        except (AssertionError, TimeoutError):
            if not tolerate:
                raise
            # a fault may stop a program; what the check found stands
        return client


def run(config: PeerConfig, program: Program, *, tolerate: bool = False) -> Client:
    """``program`` against a peer with ``config``; ``tolerate``: a program the peer's faults stop is no error."""
    return asyncio.run(asyncio.wait_for(run_program(config, program, tolerate), 60))


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4, 5])
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_the_correct_peer_breaks_no_rule(name: str, seed: int) -> None:
    client = run(PeerConfig(seed=seed), PROGRAMS[name])
    assert client.check.broken == {}
    assert all(sub.end is not None or sub.cancelled_at is not None or sub.expect[0] == "infinite"
               for sub in client.check.subs), [s for s in client.check.subs if s.end is None]


def test_range_items_and_correlation_ids() -> None:
    client = run(PeerConfig(freedoms=False), range_under_demand)
    sub = client.check.subs[0]
    assert [i["revision"] for i in sub.items] == [5, 6, 7, 8, 9]
    assert sub.end is not None and sub.end.topic.action == "complete"
    created = [m for m in client.received if isinstance(m, StreamingCreated)]
    assert created[0].correlation_id == "c-1" and created[0].subscription_id == "0"
    assert sub.end.correlation_id == f"r-{sub.sid}"  # events carry the request's correlation-id, as Ditto does


def test_search_pages_are_full_but_the_last() -> None:
    client = run(PeerConfig(), search_pages)
    sub = client.check.subs[0]
    assert [len(page) for page in sub.items] == [3, 3, 1]
    assert sub.items[0][0] == {"thingId": "tck:thing-0", "policyId": "tck:policy", "attributes": {"tck": 7}}
    big = run(PeerConfig(), search_default_size_and_empty).check.subs
    assert [len(page) for page in big[0].items] == [25, 5] and big[1].items == []


def test_failures_carry_4xx_or_5xx_and_the_protocol_code() -> None:
    client = run(PeerConfig(), demand_zero_fails)
    codes = {sub.end.error.error for sub in client.check.subs if sub.end is not None}  # type: ignore[attr-defined]
    assert codes == {"streaming.subscription.protocol.error"}
    bad = run(PeerConfig(), search_bad_filter_fails_after_request).check.subs[0]
    assert bad.end is not None and bad.end.error.status == 400  # type: ignore[attr-defined]


def test_subscription_ids_vary_with_the_seed_and_never_repeat() -> None:
    styles = set()
    for seed in range(8):
        client = run(PeerConfig(seed=seed), interleaved)
        ids = [sub.sid for sub in client.check.subs]
        assert len(set(ids)) == len(ids) == 4
        styles.add("uuid" if len(ids[0] or "") == 36 else "prefixed" if (ids[0] or "").startswith("tck-sub-")
                   else "token")
    assert len(styles) >= 2


def _session(seed: int) -> DittoConnection:
    return DittoConnection(policy=build_policy(()), freedoms=Freedoms(True, seed, 1))


def _lines(session: DittoConnection) -> list[dict[str, Any]]:
    return [json.loads(line) for line in session.data_to_send().splitlines()]


def _feed(session: DittoConnection, *objects: dict[str, Any]) -> None:
    session.receive_data(b"".join(json.dumps(o).encode() + b"\n" for o in objects))


def test_freedoms_events_within_demand_after_cancel_and_complete_in_a_later_round() -> None:
    topic = "tck/range/things/twin/streaming/"
    after_cancel, apart = set(), 0
    for seed in range(40):
        s = _session(seed)
        _feed(s, {"topic": topic + "subscribeForPersistedEvents", "headers": {"correlation-id": "a"}, "path": "/",
                  "value": {"fromHistoricalRevision": 0, "toHistoricalRevision": 9}})
        sid = _lines(s)[0]["value"]["subscriptionId"]
        _feed(s, {"topic": topic + "request", "path": "/", "value": {"subscriptionId": sid, "demand": 5}},
              {"topic": topic + "cancel", "path": "/", "value": {"subscriptionId": sid}})
        while s.pump(256):
            pass
        after_cancel.add(len(_lines(s)))  # within the demand of 5, and at most 2
        t = _session(seed)
        _feed(t, {"topic": topic + "subscribeForPersistedEvents", "headers": {"correlation-id": "b"}, "path": "/",
                  "value": {"fromHistoricalRevision": 0, "toHistoricalRevision": 1}})
        sid = _lines(t)[0]["value"]["subscriptionId"]
        _feed(t, {"topic": topic + "request", "path": "/", "value": {"subscriptionId": sid, "demand": 5}})
        t.pump(256)
        first = [m["topic"].rsplit("/", 1)[1] for m in _lines(t)]
        t.pump(256)
        rest = [m["topic"].rsplit("/", 1)[1] for m in _lines(t)]
        assert first + rest == ["next", "next", "complete"]
        apart += rest == ["complete"]
    assert after_cancel == {0, 1, 2}
    assert 0 < apart < 40


async def malformed(c: Client) -> None:
    c.send_raw(b"not json\n")
    c.send_raw(b'{"topic":"tck/range/things/twin/streaming/request","headers":{"correlation-id":"m-1"},'
               b'"path":"/","value":{"subscriptionId":"x"}}\n')  # no demand: the request's schema
    c.send_raw(b"\xff\xfe\n")
    c.send_raw(b'{"topic":"tck/range/things/twin/commands/retrieve","headers":{"correlation-id":"m-2"},"path":"/"}\n')
    c.send(StreamingCreated(target=Target(namespace="tck", entity_name="range"), subscription_id="s"))
    c.send_raw(b'{"topic":"tck/range/things/twin/streaming/request","path":"/","value":{"subscriptionId":"nobody",'
               b'"demand":1}}\n')  # a request for no live subscription: ignored
    c.send_control("STOP-SEND-EVENTS")
    assert await c.barrier()
    await range_under_demand(c)


def test_malformed_input_is_answered_with_error_envelopes_and_the_connection_stays() -> None:
    client = run(PeerConfig(), malformed)
    assert client.check.broken == {}
    assert [e.value["status"] for e in client.errors] == [400] * 5
    assert [e.correlation_id for e in client.errors][1:4:2] == ["m-1", "m-2"]
    assert all(str(e.topic) == "unknown/unknown/things/twin/errors" and e.status == 400 for e in client.errors)
    acks = [str(m) for m in client.received if isinstance(m, ControlMessage)]
    assert acks[0] == "STOP-SEND-EVENTS:ACK"
    assert client.check.subs[0].end is not None  # the connection still serves


def test_a_line_over_the_limit_ends_the_connection_with_413() -> None:
    config = replace(PeerConfig(), limits=DittoLimits(max_message=2048))

    async def program(c: Client) -> None:
        c.send_raw(b'{"topic":"' + b"x" * 4096)
        assert not await c.until(lambda: False)

    client = run(config, program)
    assert client.closed and [e.value["status"] for e in client.errors] == [413]


def test_a_cancel_gets_through_an_unbounded_subscription_in_full_flow() -> None:
    config = replace(PeerConfig(), write_high=16 * 1024)

    async def program(c: Client) -> None:
        sub = c.subscribe("infinite", 0)
        assert await c.opened(sub)
        c.request(sub, MAX)
        assert await c.until(lambda: len(sub.items) >= 1)
        c.cancel(sub)  # the peer is writing as fast as the client reads: it must still read the cancel
        assert await c.probe()

    client = run(config, program)
    assert client.check.broken == {}
    assert client.check.subs[1].end is not None
    assert len(client.check.subs[0].items) < 2**20  # production stopped: bounded by what was in flight


def test_the_peer_speaks_ditto_from_the_shell(tmp_path: object) -> None:
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "rsio_tck.reference_peer", "--binding", "ditto", "--list-faults"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "DITTO-SUB-1" in out.stdout
    bad = subprocess.run([sys.executable, "-m", "rsio_tck.reference_peer", "--binding", "ditto", "--fault", "nope",
                          "--listen", "tcp://127.0.0.1:0"], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "no such Ditto fault" in bad.stderr and "Traceback" not in bad.stderr


def test_the_shell_serves_ditto_over_tcp_with_the_embedded_peers_flags() -> None:
    """``python -m rsio_tck.reference_peer --binding ditto --listen tcp://...`` as the kit's embedded peer starts
    it (with the RS-IO-only flags it always passes), serving a subscription end to end."""
    import re
    import subprocess
    import sys
    import threading

    command = [sys.executable, "-m", "rsio_tck.reference_peer", "--binding", "ditto", "--listen",
               "tcp://127.0.0.1:0", "--profile", "search", "--max-reassembly", "524288", "--split-threshold", "65536"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    found: list[str] = []
    listening = threading.Event()

    def watch() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            match = re.search(r"listening on tcp://127\.0\.0\.1:(\d+)", line)
            if match and not found:
                found.append(match[1])
                listening.set()
        listening.set()

    threading.Thread(target=watch, daemon=True).start()
    try:
        assert listening.wait(30) and found, "the peer did not start"
        client = asyncio.run(asyncio.wait_for(_over_tcp(int(found[0]), search_pages), 60))
        assert client.check.broken == {} and client.check.subs[0].end is not None
    finally:
        process.terminate()
        process.wait(10)


async def _over_tcp(port: int, program: Program) -> Client:
    async with connected(port) as client:
        await program(client)
        return client
