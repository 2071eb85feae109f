"""Every fault of the reference peer visibly changes its behaviour.

For each fault, a short scripted exchange runs twice: against the peer with
that fault and against the correct peer.  Where the monitor can see the fault,
the faulty run must produce a finding of the fault's rule (by the peer) and the
correct run must not.  Where it cannot (an error where none was due, a silence,
a goodbye where an onError was due), the script returns an observation and the
two runs must differ.  A test checks every registered fault has a script.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from test_peer_support import MAX, Probe, reports, run, serving

from rsio_tck.bindings.rsio.wire import Limits
from rsio_tck.bindings.rsio.wire.frames import (
    Cancel,
    ClientHello,
    Goodbye,
    OnComplete,
    OnNext,
    OnNextLastPart,
    OnNextPart,
    OnSubscribe,
    Request,
    Subscribe,
)
from rsio_tck.catalogue import AREAS, RULES
from rsio_tck.embedded import REASSEMBLY_LIMIT
from rsio_tck.errors import Side
from rsio_tck.reference_peer import Peer
from rsio_tck.reference_peer.__main__ import list_faults
from rsio_tck.reference_peer.rsio import FAULTS, PeerConfig
from rsio_tck.reference_peer.rsio.policy import Policy
from rsio_tck.transport import TargetError


@dataclass
class Run:
    """One scripted exchange against one peer; probes opened here are closed and judged after."""

    peer: Peer
    url: str
    probes: list[Probe] = field(default_factory=list)

    async def open(self, *, hello: bool = True) -> Probe:
        probe = await Probe.open(self.url, hello=hello)
        self.probes.append(probe)
        return probe

    async def settle(self, probe: Probe, condition: Callable[[], object], timeout: float = 1.5) -> bool:
        """Wait for ``condition``; False (not an error) if it does not hold in time."""
        try:
            await probe.wait(condition, timeout)
        except AssertionError:
            return bool(condition())
        return True

    async def subscribe(self, name: str, demand: int = MAX, sid: int = 1, probe: Probe | None = None) -> Probe:
        p = probe or await self.open()
        p.send(Subscribe(publisher=name, subscriber=sid, initial_demand=demand))
        return p

    async def ends(self, p: Probe, sid: int = 1, timeout: float = 1.5) -> None:
        """Until the stream ends, the connection fails or closes."""
        await self.settle(p, lambda: p.terminal(sid) or p.protocol_error() or p.goodbye() or p.eof, timeout)


def ended(p: Probe) -> Callable[[], object]:
    return lambda: p.protocol_error() or p.goodbye() or p.eof


async def _eof(r: Run, p: Probe) -> None:
    await r.settle(p, lambda: p.eof, 2.0)


# -- the scripts: each returns None (judged by the monitor) or an observation --------------

Script = Callable[[Run], Awaitable[Any]]


async def hello_first(r: Run) -> None:
    p = await r.open(hello=False)  # read what the server sends before it has our hello
    await r.settle(p, lambda: len(p.events) >= 2 or p.protocol_error(), 0.3)


async def subscribe_range(r: Run) -> None:
    p = await r.subscribe("tck/range?count=2", 2)
    await r.ends(p)


async def bad_version(r: Run) -> None:
    p = await r.open(hello=False)
    p.send(ClientHello(version=7))
    await _eof(r, p)


async def unknown_extension(r: Run) -> str:
    p = await r.open(hello=False)
    p.send(ClientHello(version=0, extensions=(77,)))
    await r.subscribe("tck/range?count=1", 1, probe=p)
    await r.ends(p)
    return "goodbye" if p.goodbye() else type(p.terminal(1)).__name__


async def just_connect(r: Run) -> None:
    p = await r.open()
    await r.settle(p, ended(p), 0.5)


async def unknown_publisher(r: Run) -> str:
    p = await r.subscribe("unserved/nothing", 1)
    await r.ends(p)
    return "goodbye" if p.goodbye() else type(p.terminal(1)).__name__


async def cancel_barrier(r: Run) -> int:
    """Elements of a cancelled stream that arrive after a later subscription's onSubscribe.

    subscribe, cancel and the second subscribe leave in one write, so the peer reads
    the cancel before it has produced anything: a correct peer sends no element at all.
    """
    p = await r.open()
    p.monitor.keep_frames = True
    p.conn.send(Subscribe(publisher="tck/infinite", subscriber=1, initial_demand=5000))
    p.conn.send(Cancel(subscriber=1))
    p.send(Subscribe(publisher="tck/range?count=1", subscriber=2, initial_demand=1))
    await p.finish(2)
    await p.quiet(0.1)
    frames = [f.frame for f in p.monitor.frames if f.sender is Side.SERVER]
    barrier = next(i for i, f in enumerate(frames) if isinstance(f, OnSubscribe) and f.subscriber == 2)
    return sum(1 for f in frames[barrier:] if isinstance(f, OnNext) and f.subscriber == 1)


async def beyond_demand(r: Run) -> None:
    p = await r.subscribe("tck/infinite", 0)
    p.send(Request(subscriber=1, demand=2))
    await r.settle(p, lambda: len(p.elements(1)) >= 3 or p.protocol_error(), 0.5)


async def overflow(r: Run) -> str:
    p = await r.subscribe("tck/range?count=100", 0)
    p.send(Request(subscriber=1, demand=3))
    p.send(Request(subscriber=1, demand=MAX))  # the total passes 2^63-1: it saturates
    await r.ends(p)
    return type(p.terminal(1)).__name__


async def zero_request_then_more(r: Run) -> None:
    p = await r.subscribe("tck/range?count=3", 0)
    p.send(Request(subscriber=1, demand=0))
    p.send(Request(subscriber=1, demand=3))
    await r.ends(p)


async def zero_request(r: Run) -> None:
    p = await r.subscribe("tck/infinite", 0)
    p.send(Request(subscriber=1, demand=0))
    await r.ends(p)


async def negative_initial(r: Run) -> None:
    p = await r.subscribe("tck/range?count=2", -1)
    p.send(Request(subscriber=1, demand=2))
    await r.ends(p)


async def initial_demand(r: Run) -> str:
    p = await r.subscribe("tck/range?count=3", 3)
    await r.ends(p, timeout=0.5)
    return type(p.terminal(1)).__name__


async def duplicate_subscribe(r: Run) -> str:
    p = await r.subscribe("tck/infinite", 0)
    await p.wait(lambda: p.frames(OnSubscribe, 1))
    p.send(Subscribe(publisher="tck/infinite", subscriber=1, initial_demand=0), check=False)
    await r.settle(p, lambda: len(p.frames(OnSubscribe, 1)) >= 2 or p.goodbye() or p.protocol_error())
    return "goodbye" if p.goodbye() else f"{len(p.frames(OnSubscribe, 1))} onSubscribe"


async def reuse_keeps_demand(r: Run) -> None:
    p = await r.subscribe("tck/range?count=2", 10)
    await p.finish(1)
    p.send(Subscribe(publisher="tck/infinite", subscriber=1, initial_demand=1))
    await r.settle(p, lambda: p.protocol_error() or len(p.elements(1)) >= 3, 0.5)


def stream(name: str, demand: int = MAX) -> Callable[[Run], Awaitable[Probe]]:
    async def script(r: Run) -> Probe:
        p = await r.subscribe(name, demand)
        await r.ends(p)
        return p

    return script


def first(name: str, demand: int, count: int) -> Script:
    """Until ``count`` elements arrived (the demand given), or the connection failed."""

    async def script(r: Run) -> None:
        p = await r.subscribe(name, demand)
        await r.settle(p, lambda: len(p.elements(1)) >= count or p.protocol_error() or p.eof, 1.0)
        await p.quiet(0.05)

    return script


async def large_one_at_a_time(r: Run) -> None:
    p = await r.subscribe("tck/large?size=100&count=3&part=10", 1)
    await r.settle(p, lambda: len(p.elements(1)) >= 2 or p.protocol_error(), 0.5)


async def goodbye_after_stream(r: Run) -> None:
    p = await r.subscribe("tck/range?count=1", 1)
    await p.finish(1)
    p.send(Goodbye(reason="done"))
    await _eof(r, p)


async def shutdown_unacknowledged(r: Run) -> bool:
    """Does the peer close at once after its shutdown goodbye, without waiting for ours?"""
    p = await r.open()
    await r.subscribe("tck/range?count=1", 1, probe=p)
    await p.finish(1)
    p.flush = lambda: None  # type: ignore[method-assign]  # the probe never answers
    shutdown = asyncio.ensure_future(r.peer.shutdown(timeout=3.0))
    await p.wait(p.goodbye)
    closed_fast = await r.settle(p, lambda: p.eof, 0.4)
    del p.flush  # now acknowledge
    p.flush()
    await shutdown
    return closed_fast


async def garbage(r: Run) -> None:
    p = await r.open()
    p.send_raw(b"\x3f\x01\x02")
    await _eof(r, p)


async def two_connections(r: Run) -> bool:
    """Does a protocol error on one connection end another one?"""
    healthy = await r.subscribe("tck/infinite", 5)
    await healthy.collect(1, 5)
    bad = await r.open()
    bad.send_raw(b"\x3f")
    await _eof(r, bad)
    if not healthy.eof:
        healthy.send(Request(subscriber=1, demand=5))
    await r.settle(healthy, lambda: len(healthy.elements(1)) >= 10 or healthy.eof)
    return healthy.eof


async def optimistic_subscribe(r: Run) -> str:
    """clientHello and a subscribe in one write: is the subscribe served?"""
    p = await r.open(hello=False)
    p.conn.send(ClientHello(version=0))
    p.send(Subscribe(publisher="tck/range?count=1", subscriber=1, initial_demand=1))
    await r.ends(p)
    return type(p.terminal(1)).__name__


async def stale_request(r: Run) -> None:
    p = await r.open()
    p.send(Request(subscriber=42, demand=1))  # never subscribed: ignored, no answer
    await r.subscribe("tck/range?count=1", 1, probe=p)
    await r.ends(p)


async def goodbye_mid_stream(r: Run) -> bool:
    """Goodbye while a stream still has demand: is it acknowledged?"""
    p = await r.subscribe("tck/infinite", 5)
    await p.collect(1, 5)
    p.send(Request(subscriber=1, demand=200))
    await p.collect(1, 6)
    p.send(Goodbye(reason="enough"))
    return await r.settle(p, p.goodbye, 1.5)


async def reset_then_fresh_connection(r: Run) -> str:
    """Reset one connection mid-stream, then open another: is the new one served?"""
    p = await r.subscribe("tck/infinite", MAX)
    await p.collect(1, 3)
    (session,) = r.peer.connections
    p.writer.transport.abort()  # no goodbye, no FIN: a reset
    r.probes.remove(p)  # what it read last may be cut mid-frame by the reset itself: not judged
    await asyncio.wait_for(asyncio.shield(session.closed), 3.0)
    try:
        fresh = await r.subscribe("tck/range?count=1", 1)
    except (TargetError, OSError) as exc:
        return f"refused: {type(exc).__name__}"
    await r.ends(fresh)
    return type(fresh.terminal(1)).__name__


async def interleaved_subscribe_backs(r: Run) -> list[list[dict[str, Any]]]:
    """Two subscribe-backs whose split elements the probe interleaves part by part."""
    p = await r.open()
    p.serve_kit = False
    for sid, name in ((1, "kit/left"), (2, "kit/right")):
        p.send(Subscribe(publisher=f"tck/subscribe?to={name.replace('/', '%2F')}&request=all", subscriber=sid,
                         initial_demand=MAX))
    await p.wait(lambda: len(p.frames(Subscribe)) >= 2)
    inner = {f.publisher: f.subscriber for f in p.frames(Subscribe)}
    left, right = inner["kit/left"], inner["kit/right"]
    for frame in (OnSubscribe(subscriber=left, element_size=0), OnSubscribe(subscriber=right, element_size=0),
                  OnNextPart(subscriber=left, element=1, data=b"le"), OnNextPart(subscriber=right, element=1, data=b"ri"),
                  OnNextLastPart(subscriber=left, element=1, data=b"ft"),
                  OnNextLastPart(subscriber=right, element=1, data=b"ght"),
                  OnComplete(subscriber=left), OnComplete(subscriber=right)):
        p.conn.send(frame)
    p.flush()
    await r.ends(p, 1)
    await r.ends(p, 2)
    return [reports(p, 1), reports(p, 2)]


async def oversize_subscribe_back(r: Run) -> bool:
    """A split element beyond the peer's reassembly limit: does the connection survive?"""
    p = await subscribe_back(f"kit/seq?n=1&size={2 * REASSEMBLY_LIMIT}&split=65536", "all")(r)
    return bool(p.goodbye() or p.eof)


async def oversize_cancelled(r: Run) -> bool:
    """A split element beyond the peer's reassembly limit: does the peer cancel it?"""
    p = await subscribe_back(f"kit/seq?n=1&size={2 * REASSEMBLY_LIMIT}&split=65536", "all")(r)
    # The kit publisher has finished by the time the cancel arrives, so it comes as Ignored.
    return any(isinstance(getattr(e, "frame", e), Cancel) for e in p.events)


async def cancel_same_number(r: Run) -> bool:
    """The kit cancels its subscription whose Id equals the peer's own inner one: does the peer
    cancel its own too?  (Its inner subscription stays open: the outer demand of 1 holds it.)"""
    p = await r.subscribe(
        "tck/subscribe?to=kit%2Fseq%3Fn%3D100000&request=one", demand=1, sid=1000)
    await r.settle(p, lambda: p.frames(Subscribe))
    inner = p.frames(Subscribe)[0].subscriber
    p.send(Subscribe(publisher="tck/infinite", subscriber=inner, initial_demand=1))
    await r.settle(p, lambda: p.elements(inner))
    p.send(Cancel(subscriber=inner))
    await p.quiet(0.2)
    return any(isinstance(getattr(e, "frame", e), Cancel) and getattr(e, "frame", e).subscriber == inner
               for e in p.events)


def subscribe_back(inner: str, strategy: str) -> Callable[[Run], Awaitable[Probe]]:
    encoded = inner.replace("%", "%25").replace("?", "%3F").replace("&", "%26").replace("=", "%3D")
    return stream(f"tck/subscribe?to={encoded}&request={strategy}")


async def cut_element(r: Run) -> list[dict[str, Any]]:
    """A subscribe-back whose split element an onError cuts short: what is reported?"""
    p = await subscribe_back("kit/seq?n=1&size=10&split=4&cut=1&error=cut", "all")(r)
    return reports(p, 1)


# fault -> (script, the rule the monitor must find, or None to compare observations)
PROBES: dict[str, tuple[Script, str | None]] = {
    "hs-stream-before-hello": (hello_first, "HS-2"),
    "hs-second-hello": (subscribe_range, "HS-3"),
    "hs-client-hello": (subscribe_range, "HS-4"),
    "hs-no-hello": (subscribe_range, "HS-1"),
    "hs-bad-version-no-goodbye": (bad_version, "HS-5"),
    "hs-wrong-version": (subscribe_range, "HS-6"),
    "hs-drop-optimistic": (optimistic_subscribe, None),
    "ext-reject-unknown": (unknown_extension, None),
    "ext-undeclared-type": (just_connect, "EXT-2"),
    "str-next-before-subscribe": (subscribe_range, "STR-1"),
    "str-unknown-goodbye": (unknown_publisher, None),
    "str-next-after-complete": (subscribe_range, "STR-3"),
    "str-signal-unsubscribed": (subscribe_range, "STR-4"),
    "str-ignore-cancel": (cancel_barrier, None),
    "str-answer-stale": (stale_request, "STR-4"),  # the onError answers an Id never subscribed
    "dem-beyond-demand": (beyond_demand, "DEM-1"),
    "dem-overflow-error": (overflow, None),
    "dem-ignore-zero-request": (zero_request_then_more, "DEM-3"),
    "dem-error-without-rule": (zero_request, "DEM-3"),
    "dem-accept-negative-initial": (negative_initial, "DEM-4"),
    "dem-ignore-initial-demand": (initial_demand, None),
    "id-duplicate-accepted": (duplicate_subscribe, None),
    "id-reuse-keeps-demand": (reuse_keeps_demand, "ID-3"),
    # PACK-1 is invisible on the wire (raw elements carry no length): the extra byte
    # desyncs the receiver, which then reads it as a type code.
    "pack-wrong-size": (stream("tck/fixed?size=8&count=4"), "ERR-7"),
    "pack-on-variable": (stream("tck/range?count=3"), "PACK-2"),
    "pack-beyond-demand": (first("tck/fixed?size=8&count=10", 3, 3), "PACK-3"),
    "pack-split-fixed": (stream("tck/fixed?size=8&count=3"), "PACK-5"),
    "split-interleave": (stream("tck/range?start=1000&count=4"), "SPLIT-2"),
    "split-without-demand": (large_one_at_a_time, "SPLIT-3"),
    "bye-frame-after-goodbye": (goodbye_after_stream, "BYE-1"),
    "bye-no-ack": (goodbye_after_stream, "BYE-2"),
    "bye-close-before-ack": (shutdown_unacknowledged, None),
    "bye-second-goodbye": (goodbye_after_stream, "BYE-4"),
    "bye-streams-outlive-goodbye": (goodbye_mid_stream, None),
    "err-close-without-goodbye": (garbage, "ERR-1"),
    "err-empty-reason": (garbage, "ERR-2"),
    "err-malformed-closes-all": (two_connections, None),
    "err-wrong-field-type": (subscribe_range, "ERR-4"),
    "err-invalid-utf8": (unknown_publisher, "ERR-5"),
    "err-truncated-frame": (subscribe_range, "ERR-6"),
    "err-garbage": (just_connect, "ERR-7"),
    "err-oversize-length": (stream("tck/range?count=3"), "ERR-8"),
    "err-id-out-of-range": (subscribe_range, "ERR-9"),
    "err-lost-connection-downs-peer": (reset_then_fresh_connection, None),
    "sub-reuse-active-id": (subscribe_back("kit/seq?n=3", "all"), "ID-1"),
    "sub-request-zero": (subscribe_back("kit/seq?n=3", "all"), "DEM-6"),
    "sub-wrong-strategy": (subscribe_back("kit/seq?n=3", "one"), "DEM-7"),
    "sub-report-after-cancel": (subscribe_back("kit/seq?n=6", "cancel:2"), "STR-8"),
    "sub-no-join": (subscribe_back("kit/seq?n=2&size=10&split=4", "all"), "SPLIT-1"),
    "sub-packed-as-one": (subscribe_back("kit/seq?n=4&fixed=2&packed=1", "all"), "PACK-4"),
    "sub-skip-complete-report": (subscribe_back("kit/seq?n=2", "all"), "TCK-6"),
    "sub-join-per-connection": (interleaved_subscribe_backs, None),
    "sub-oversize-ends-connection": (oversize_subscribe_back, None),
    "sub-deliver-cut-element": (cut_element, "TCK-6"),
    "sub-no-reassembly-limit": (oversize_cancelled, None),
    "str-cancel-in-own-space": (cancel_same_number, None),
    "tck-range-off-by-one": (stream("tck/range?count=3"), "TCK-1"),
    "tck-infinite-ignores-start": (first("tck/infinite?start=5", 3, 3), "TCK-2"),
    "tck-fixed-little-endian": (stream("tck/fixed?size=4&count=3"), "TCK-3"),
    "tck-large-oversize-parts": (stream("tck/large?size=50&count=1&part=10"), "TCK-4"),
    "tck-error-wrong-message": (stream("tck/error?after=1&message=m"), "TCK-5"),
    "tck-raw-integers": (stream("tck/range?count=2"), "TCK-8"),
    "tck-unknown-completes": (stream("tck/nope"), "TCK-7"),
}


async def exercise(script: Script, faults: tuple[str, ...]) -> tuple[Any, set[str]]:
    """Run ``script`` against a peer with ``faults``; its observation and the rules found against the peer."""
    config = PeerConfig(faults=faults, goodbye_timeout=1.0, linger=0.3,
                        limits=Limits(max_reassembly=REASSEMBLY_LIMIT))  # as the embedded peer
    async with serving(config) as (peer, url):
        r = Run(peer, url)
        observation = await script(r)
        for probe in r.probes:
            if not probe.eof:
                try:
                    await probe.close(2.0)
                except (TimeoutError, AssertionError):
                    probe.writer.close()
        rules = set().union(*(probe.rules(Side.SERVER) for probe in r.probes)) if r.probes else set()
    return observation, rules


@pytest.mark.parametrize("name", list(FAULTS))
def test_fault_visibly_changes_behaviour(name: str) -> None:
    script, rule = PROBES[name]

    async def go() -> None:
        faulty, faulty_rules = await exercise(script, (name,))
        correct, correct_rules = await exercise(script, ())
        assert correct_rules == set(), f"the correct peer broke {correct_rules}"
        if rule is not None:
            assert rule in faulty_rules, f"{name}: expected a finding of {rule}, got {sorted(faulty_rules)}"
        else:
            assert faulty != correct, f"{name}: same observation with and without the fault: {faulty!r}"

    # A hang guard only: every wait inside has its own bound.  Two peers' lives, one with a flood of
    # tck/infinite in this same process, took over 20 s in a loaded run (two busy loops, four workers and more).
    run(go(), timeout=90)


def test_every_fault_has_a_probe_and_cites_a_known_rule() -> None:
    assert set(PROBES) == set(FAULTS)
    assert len(FAULTS) >= 20
    for name, fault in FAULTS.items():
        assert fault.name == name and fault.rule in RULES and fault.description
        for hook in fault.hooks:
            assert callable(getattr(Policy, hook, None)), f"{name} overrides unknown hook {hook}"
    covered = {fault.rule.rsplit("-", 1)[0] for fault in FAULTS.values()}
    # The RS-IO peer's faults cover RS-IO's areas; the RSocket (RS-*) and Ditto (DITTO-*) areas belong to
    # those bindings' peers (tests/test_peer_rsocket*.py, tests/test_peer_ditto_faults.py).
    assert {area for area in AREAS if not area.startswith(("RS-", "DITTO-"))} <= covered
    assert any(name.startswith("sub-") for name in FAULTS)  # the subscriber side, via tck/subscribe


def test_list_faults_names_each_fault_and_its_rule() -> None:
    lines = list_faults().splitlines()
    assert len(lines) == len(FAULTS)
    for line, (name, fault) in zip(lines, FAULTS.items()):
        assert line.split()[:2] == [name, fault.rule]


def test_faults_combine() -> None:
    async def go() -> None:
        _, rules = await exercise(subscribe_range, ("hs-second-hello", "tck-range-off-by-one"))
        assert {"HS-3"} <= rules

    run(go())
