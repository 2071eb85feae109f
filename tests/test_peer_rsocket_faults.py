"""Each fault of the RSocket reference peer makes the monitor report exactly the rule it names.

For every fault a *trigger* (what the test client does to provoke it) runs
against the peer with that fault on; the monitor (``Monitor(profile,
binding="rsocket")``), fed both directions' bytes in the order the client saw
them, must find the server breaking that rule and no other.  The same triggers
against the fault-free peer draw no finding against the server.  Findings
against the client are the trigger's own deliberate provocations (a missing
SETUP, a malformed frame...) and are not what is judged here.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

import pytest
from test_peer_rsocket import Client, ConnectionEnded, PeerConfig, elements, judged, running_peer

from rsio_tck.bindings.rsocket.endpoint import default_setup
from rsio_tck.bindings.rsocket.frames import (
    Cancel,
    Error,
    Keepalive,
    MetadataPush,
    Payload,
    RequestChannel,
    RequestFnf,
    RequestN,
    RequestResponse,
    RequestStream,
    Resume,
)
from rsio_tck.errors import Side
from rsio_tck.protocol.events import ConnectionClosed, Ignored, ProtocolError
from rsio_tck.reference_peer.rsocket import FAULTS

Trigger = Callable[[int], Awaitable[Client]]
PROFILE: contextvars.ContextVar[str] = contextvars.ContextVar("profile", default="rsocket-1.0")  # the trigger's wire


async def connect(port: int, **options: Any) -> Client:
    return await Client.connect(port, PROFILE.get(), **options)


def setup(**options: Any) -> Any:
    return default_setup(PROFILE.get(), **options)


def _respond() -> bool:
    return PROFILE.get() == "rsocket-1.0"  # the draft's KEEPALIVE has no R flag: its server answers every one
IDLE = 100.0  # seconds the judge is told pass after the trigger: beyond the SETUP's 90 s max lifetime


def _answers(events: list[Any]) -> int:
    return sum(isinstance(e, Keepalive) or (isinstance(e, Ignored) and isinstance(e.frame, Keepalive)) for e in events)


async def _barrier(c: Client) -> None:
    """Wait until the peer answered a KEEPALIVE: everything it sent before has arrived."""
    if c.ep.state.value == "closed":
        return  # the peer ended the connection (ERROR on stream 0): nothing more will come
    before = _answers(c.events)
    await c.send(Keepalive(respond=_respond(), data=b"barrier"))
    await c.until(lambda ev: _answers(ev) > before or c.ep.state.value == "closed")


async def _ended(c: Client) -> None:
    await c.until(lambda ev: any(isinstance(e, (ConnectionClosed, ProtocolError)) for e in ev))


async def stream_and_response(port: int) -> Client:
    c = await connect(port)
    await c.send(RequestStream(stream_id=1, initial_request_n=2, data=b"tck/range?count=3"))
    await c.until(lambda ev: len(elements(c.on(1))) >= 2)
    await c.send(RequestResponse(stream_id=3, data=b"tck/range?count=1"))
    await c.ended(3)  # a barrier: whatever stream 1 sent beyond its demand of 2 came before this answer
    c.ep.send(RequestN(stream_id=1, request_n=5), check=False)  # may cross a faulty peer's completion
    await c.flush()
    await c.ended(1)
    await c.send(RequestResponse(stream_id=5, data=b"tck/large?size=100&count=1"))
    await c.ended(5)
    await _barrier(c)
    return c


async def unknown_name(port: int) -> Client:
    c = await connect(port)
    await c.send(RequestStream(stream_id=1, initial_request_n=2, data=b"tck/nothing-here"))
    await c.until(lambda ev: any(isinstance(e, Error) for e in ev))
    await _barrier(c)
    return c


async def error_publisher(port: int) -> Client:
    c = await connect(port)
    await c.send(RequestStream(stream_id=1, initial_request_n=5, data=b"tck/error?after=1&message=boom"))
    await c.ended(1)
    await _barrier(c)
    return c


async def keepalive(port: int) -> Client:
    c = await connect(port)
    await c.send(Keepalive(respond=_respond(), data=b"ping"), RequestResponse(stream_id=1, data=b"tck/range?count=1"))
    await c.ended(1)  # the answer to the KEEPALIVE, if any, came before the response
    return c


async def just_setup(port: int) -> Client:
    c = await connect(port)
    await _barrier(c)
    return c


async def lease_setup(port: int) -> Client:
    c = await connect(port, setup=setup(lease=True))
    await _barrier(c)
    if not any(type(e).__name__ == "Lease" and e.stream_id == 0 for e in c.events):
        # No LEASE came: a request anyway (this client's own RS-LEASE-4), to see the server answer it.
        c.ep.send(RequestResponse(stream_id=1, data=b"tck/range?count=1"), check=False)
        await c.flush()
        if PROFILE.get() == "rsocket-1.0":
            await c.ended(1)  # ERROR[REJECTED]
        await _barrier(c)  # (the draft's responder ignores a request beyond the lease)
    return c


async def lease_burst(port: int) -> Client:
    c = await connect(port, setup=setup(lease=True))
    await c.until(lambda ev: any(type(e).__name__ == "Lease" for e in ev))
    for sid in (1, 3, 5, 7, 9):
        c.ep.send(RequestResponse(stream_id=sid, data=b"tck/range?count=1"), check=False)
    await c.flush()
    await _barrier(c)
    if PROFILE.get() == "rsocket-1.0":  # every request answered, or ERROR[REJECTED] beyond the lease
        for sid in (1, 3, 5, 7, 9):
            await c.ended(sid)
    return c


async def wrong_version(port: int) -> Client:
    c = await connect(port, setup=False)
    c.ep.send(replace(setup(), major_version=2), check=False)
    c.ep.send(RequestResponse(stream_id=1, data=b"tck/range?count=1"), check=False)
    await c.flush()
    await c.until(lambda ev: any(isinstance(e, (Payload, Error, ConnectionClosed)) for e in ev))
    return c


async def no_setup(port: int) -> Client:
    c = await connect(port, setup=False)
    c.ep.send(RequestResponse(stream_id=1, data=b"tck/range?count=1"), check=False)
    await c.flush()
    await c.until(lambda ev: bool(ev))
    return c


async def wait_then_setup(port: int) -> Client:
    c = await connect(port, setup=False)
    await c.until(lambda ev: any(isinstance(e, Keepalive) for e in ev))  # the faulty peer speaks first
    await c.send(setup())
    await _barrier(c)
    return c


def _inner(c: Client) -> list[RequestStream]:
    """The peer's requests to the client, accepted or ignored by the client's endpoint."""
    found = [e for e in c.events if isinstance(e, RequestStream)]
    found += [e.frame for e in c.events if isinstance(e, Ignored) and isinstance(e.frame, RequestStream)]
    return found


async def subscribe_back(port: int, rounds: int = 1, *, lease: bool = False) -> Client:
    """tck/subscribe of a 2-element publisher, served by the client under the peer's demand."""
    if lease:  # the SETUP asks for leases, but this client never grants one
        c = await connect(port, setup=False)
        c.ep.send_raw(c.ep.encode(setup(lease=True)))
        c.ep.setup = setup(lease=True)
        await c.flush()
        await c.until(lambda ev: any(type(e).__name__ == "Lease" for e in ev))  # the peer's lease to this client
    else:
        c = await connect(port)
    name = b"tck/subscribe?to=tck%2Frange%3Fcount%3D2&request=all"
    for k in range(rounds):
        outer = 1 + 2 * k
        c.ep.send(RequestStream(stream_id=outer, initial_request_n=10, data=name), check=False)
        await c.flush()
        await c.until(lambda ev, k=k: len(_inner(c)) > k)
        inner = _inner(c)[k]
        if inner.initial_request_n >= 2:
            for i in range(2):
                c.ep.send(Payload(stream_id=inner.stream_id, next=True, complete=i == 1, data=str(i).encode()),
                          check=False)
            await c.flush()
            await c.ended(outer)
    await _barrier(c)
    return c


async def subscribe_back_twice(port: int) -> Client:
    return await subscribe_back(port, 2)


async def subscribe_back_lease(port: int) -> Client:
    return await subscribe_back(port, lease=True)


async def cancel_early(port: int) -> Client:
    c = await connect(port)
    await c.send(RequestStream(stream_id=1, initial_request_n=3, data=b"tck/infinite"))
    await c.until(lambda ev: len(elements(c.on(1))) >= 1)
    await c.send(Cancel(stream_id=1))
    await _barrier(c)
    return c


async def fire_and_forget(port: int) -> Client:
    c = await connect(port)
    await c.send(RequestFnf(stream_id=1, data=b"tck/fnf?key=k"), RequestResponse(stream_id=3, data=b"tck/fnf-count?key=k"))
    await c.ended(3)
    await _barrier(c)
    return c


async def channel(port: int) -> Client:
    c = await connect(port)
    await c.send(RequestChannel(stream_id=1, initial_request_n=4, data=b"tck/echo"))
    await c.until(lambda ev: any(getattr(e, "stream_id", 0) == 1 for e in ev))
    if any(isinstance(e, RequestN) for e in c.on(1)):
        await c.send(Payload(stream_id=1, next=True, data=b"x"), Payload(stream_id=1, complete=True))
    await c.ended(1)
    await _barrier(c)
    return c


async def malformed(port: int) -> Client:
    c = await connect(port)
    await c.send_raw(b"\x00\x00\x02\x00\x00")
    await _ended(c)
    return c


async def bad_metadata_length(port: int) -> Client:
    c = await connect(port)
    await c.send(RequestStream(stream_id=1, initial_request_n=1, data=b"tck/infinite"))
    # A PAYLOAD on stream 1 whose metadata length (0x100) runs past the frame, no I flag.
    header = (0x0A << 10 | 0x100 | 0x20).to_bytes(2, "big")  # PAYLOAD with M and N
    await c.send_raw(b"\x00\x00\x0b" + (1).to_bytes(4, "big") + header + b"\x00\x01\x00" + b"ab")
    await _ended(c)
    return c


async def unknown_stream_frame(port: int) -> Client:
    c = await connect(port)
    c.ep.send(RequestN(stream_id=99, request_n=1), check=False)
    await c.flush()
    await _barrier(c)
    return c


async def second_setup(port: int) -> Client:
    c = await connect(port)
    c.ep.send(setup(), check=False)
    await c.flush()
    await _barrier(c)
    return c


async def response_then_closed(port: int) -> Client:
    c = await connect(port)
    await c.send(RequestResponse(stream_id=1, data=b"tck/range?count=1"))
    await _ended(c)
    return c


async def publishers_tour(port: int) -> Client:
    """Every test publisher once, each on its own stream (bindings.md §2)."""
    c = await connect(port)
    await c.send(RequestStream(stream_id=1, initial_request_n=10, data=b"tck/range?start=4&count=3"),
                 RequestStream(stream_id=3, initial_request_n=3, data=b"tck/infinite?start=9"),
                 RequestStream(stream_id=5, initial_request_n=10, data=b"tck/error?after=1&message=boom"),
                 RequestStream(stream_id=7, initial_request_n=10, data=b"tck/large?size=300&count=2"),
                 RequestStream(stream_id=9, initial_request_n=10, data=b"tck/no-such-publisher"),
                 RequestResponse(stream_id=11, data=b"tck/range?start=20&count=3"))
    for sid in (1, 5, 7, 9, 11):
        await c.ended(sid)
    await c.until(lambda ev: len(elements(c.on(3))) == 3 or any(isinstance(e, Payload) and e.complete
                                                                  for e in c.on(3)))
    if PROFILE.get() != "rsocket-1.0":
        await _barrier(c)
        return c  # the draft has no request-channel
    await c.send(RequestChannel(stream_id=13, initial_request_n=10, data=b"tck/echo"))
    await c.until(lambda ev: any(isinstance(e, RequestN) for e in c.on(13)))
    await c.send(Payload(stream_id=13, next=True, data=b"p"), Payload(stream_id=13, next=True, data=b"q"),
                 Payload(stream_id=13, complete=True))
    await c.ended(13)
    await _barrier(c)
    return c


async def metadata_push(port: int) -> Client:
    c = await connect(port)
    await c.send(MetadataPush(metadata=b"hello"))
    await _barrier(c)
    return c


async def unknown_type_ignorable(port: int) -> Client:
    """A frame of type 0x30 with the I flag: the receiver ignores it."""
    c = await connect(port)
    if PROFILE.get() == "rsocket-1.0":
        await c.send_raw(b"\x00\x00\x06" + b"\x00\x00\x00\x00" + (0x30 << 10 | 0x200).to_bytes(2, "big"))
    else:  # the draft: length (with itself), version 0, flags I, 16-bit type, 64-bit stream id
        await c.send_raw((16).to_bytes(4, "big") + b"\x00\x80" + (0x30).to_bytes(2, "big") + bytes(8))
    await _barrier(c)
    return c


async def bad_metadata_ignorable(port: int) -> Client:
    """A PAYLOAD with the I flag whose metadata length runs past the frame: the receiver ignores it."""
    c = await connect(port)
    header = (0x0A << 10 | 0x200 | 0x100 | 0x20).to_bytes(2, "big")
    await c.send_raw(b"\x00\x00\x0b" + (1).to_bytes(4, "big") + header + b"\x00\x01\x00" + b"ab")
    await _barrier(c)
    return c


async def bad_metadata_ignorable_answered_late(port: int) -> Client:
    """As ``bad_metadata_ignorable``, then one more barrier: a frame after the first barrier's answer."""
    c = await bad_metadata_ignorable(port)
    await _barrier(c)
    return c


async def draft_bad_metadata(port: int) -> Client:
    """The draft: a CANCEL whose metadata length (256) runs past the frame; the receiver ignores it."""
    c = await connect(port)
    await c.send_raw((20).to_bytes(4, "big") + b"\x00\x40" + (0x16).to_bytes(2, "big") + (99).to_bytes(8, "big")
                     + b"\x00\x00\x01\x00")
    await _barrier(c)
    return c


async def resume_first(port: int) -> Client:
    c = await connect(port, setup=False)
    c.ep.send(Resume(resume_token=b"token", last_received_server_position=0, first_available_client_position=0),
              check=False)
    await c.flush()
    await _ended(c)
    return c


async def until_closed_after_setup(port: int) -> Client:
    c = await connect(port)
    await _ended(c)
    return c


# fault -> the trigger that provokes it
TRIGGERS: dict[str, Trigger] = {
    "setup-any-version": wrong_version,
    "setup-not-required": no_setup,
    "setup-server-speaks-first": wait_then_setup,
    "setup-from-server": just_setup,
    "keepalive-unanswered": keepalive,
    "keepalive-on-stream": keepalive,
    "lease-never-granted": lease_setup,
    "lease-unasked": just_setup,
    "lease-on-stream": lease_setup,
    "lease-not-enforced": lease_burst,
    "lease-ignored-as-requester": subscribe_back_lease,
    "streamid-odd": subscribe_back,
    "streamid-skip": subscribe_back,
    "streamid-in-use": subscribe_back,
    "streamid-reuse": subscribe_back_twice,
    "flow-request-zero": subscribe_back,
    "flow-beyond-demand": stream_and_response,
    "flow-ignore-cancel": cancel_early,
    "stream-payload-no-flags": stream_and_response,
    "stream-unrequested": stream_and_response,
    "stream-next-after-complete": stream_and_response,
    "rr-two-responses": stream_and_response,
    "fnf-answered": fire_and_forget,
    "channel-no-request-n": channel,
    "error-connection-code-on-stream": unknown_name,
    "error-stream-code-on-zero": unknown_name,
    "error-reserved-code": unknown_name,
    "error-frames-after-connection-error": malformed,
    "error-null-terminated": error_publisher,
    "error-setup-code-after-accept": response_then_closed,
    "error-silent-close": bad_metadata_length,
    "push-on-stream": just_setup,
    "frame-push-without-m": until_closed_after_setup,
    "frame-unknown-type": until_closed_after_setup,
    "frame-short": until_closed_after_setup,
    "frame-trailing-bytes": until_closed_after_setup,
    "frame-truncated-field": until_closed_after_setup,
    "frame-metadata-overrun": until_closed_after_setup,
    "frame-ext-type-zero": just_setup,
    "frame-reserved-bit": stream_and_response,
    "frame-transport-ends-inside": stream_and_response,
    "frag-interrupted": stream_and_response,
    "frag-metadata-after-data": stream_and_response,
    "unexpected-answered": unknown_stream_frame,
    "unexpected-second-setup-answered": second_setup,
    "tck-range-wrong-element": publishers_tour,
    "tck-infinite-completes": publishers_tour,
    "tck-error-wrong-message": publishers_tour,
    "tck-large-wrong-byte": publishers_tour,
    "tck-unknown-completes": publishers_tour,
    "tck-response-second-element": publishers_tour,
    "tck-echo-drops-first": publishers_tour,
    "tck-push-closes": metadata_push,
    "ignore-flag-answered": unknown_type_ignorable,
    "ignore-bad-metadata-answered": bad_metadata_ignorable,
    "ignore-bad-metadata-answered-late": bad_metadata_ignorable_answered_late,
    "resume-ok-unasked": just_setup,
    "resume-refused-with-setup-code": resume_first,
    "frame-over-limit": until_closed_after_setup,
    "draft-header-version": until_closed_after_setup,
    "draft-bad-metadata-answered": draft_bad_metadata,
}
# Triggers the fault-free peer must come through without a finding (those needing a faulty peer to end are left out).
# (subscribe_back_lease never completes against a correct peer: it waits for the lease this client never grants).
CLEAN_TRIGGERS = sorted({t.__name__: t for t in TRIGGERS.values() if t not in (
    until_closed_after_setup, wait_then_setup, response_then_closed, subscribe_back_lease)}.items())


def server_rules(config: PeerConfig, trigger: Trigger, *, contract: bool = True) -> set[str]:
    """The rules the monitor finds the server breaking, the connection then left idle past its max lifetime.

    ``contract``: also judge the test-publisher contract (RS-TCK-*).  A fault of a protocol rule is
    judged without it: what it sends wrong often also changes what a test publisher emits.
    """
    async def main() -> Any:
        PROFILE.set(config.profile)
        async with running_peer(config) as port:
            try:
                client = await trigger(port)
            except ConnectionEnded as ended:  # the fault ended the connection: judge what crossed
                client = ended.client
            still_open = not client.eof and client.ep.state.value == "open"
            await client.close()
            return judged(client, config.profile, idle=IDLE if still_open else 0.0, contract=contract)
    monitor = asyncio.run(main())
    return {f.rule for f in monitor.findings if f.side is Side.SERVER}


def test_every_fault_has_a_trigger() -> None:
    """Every fault of the peer as server; those of the peer as client are judged in test_peer_rsocket_client."""
    assert set(TRIGGERS) == {name for name in FAULTS if not name.startswith("client-")}


# Faults the monitor cannot see yet, each for a reason in the judge (strict: the test fails once it sees them).
FAULT_GAPS: dict[str, str] = {}


# Faults with no form on the draft's wire, or whose rule the draft does not have (the reason for each).
_RAW = "writes rsocket-1.0 frame layouts as raw bytes"
_CODES = "needs an error code, which the draft's ERROR does not carry"
DRAFT_NOT_APPLICABLE = {
    "setup-any-version": "the draft's version is in every frame header: a SETUP of another version does not decode",
    "channel-no-request-n": "the draft has no request-channel",
    "tck-echo-drops-first": "the draft has no request-channel",
    "stream-payload-no-flags": "the draft's RESPONSE has no N flag: a PAYLOAD with neither N nor C cannot be written",
    "streamid-odd": "the draft does not fix the parity of stream ids", "streamid-skip": "RS-STREAMID-2 is 1.0-only",
    "error-connection-code-on-stream": _CODES, "error-stream-code-on-zero": _CODES, "error-reserved-code": _CODES,
    "error-setup-code-after-accept": _CODES, "error-null-terminated": "RS-ERROR-7 is 1.0-only",
    "error-frames-after-connection-error": "its trigger " + _RAW, "error-silent-close": "its trigger " + _RAW,
    **{name: _RAW for name in TRIGGERS if name.startswith("frame-") and name != "frame-over-limit"},
    "ignore-bad-metadata-answered": "its trigger " + _RAW + " (the draft's own rule is RS-DRAFT-2)",
    "ignore-bad-metadata-answered-late": "its trigger " + _RAW + " (the draft's own rule is RS-DRAFT-2)",
    "resume-ok-unasked": "the draft has no resumption", "resume-refused-with-setup-code": "the draft has no resumption",
}
# Faults of the draft's own framing, with no form on rsocket-1.0.
V1_NOT_APPLICABLE = {
    "frame-over-limit": "rsocket-1.0's 24-bit length cannot exceed the 16,777,215-byte limit",
    "draft-header-version": "rsocket-1.0's header carries no version",
    "draft-bad-metadata-answered": "rsocket-1.0's own rule for it is RS-IGNORE-2 (with the I flag) or RS-FRAME-5",
}
V1_CLEAN_NOT_APPLICABLE = {"draft_bad_metadata"}
DRAFT_CLEAN_NOT_APPLICABLE = {"wrong_version", "malformed", "bad_metadata_length", "channel", "bad_metadata_ignorable",
                              "bad_metadata_ignorable_answered_late",
                              "resume_first"}


def _cases() -> list[Any]:
    cases = []
    for profile in ("rsocket-1.0", "reactivesocket-draft"):
        for name in sorted(TRIGGERS):
            if name in (V1_NOT_APPLICABLE if profile == "rsocket-1.0" else DRAFT_NOT_APPLICABLE):
                continue
            marks = [pytest.mark.xfail(strict=True, reason=FAULT_GAPS[name])] if name in FAULT_GAPS else []
            cases.append(pytest.param(profile, name, marks=marks, id=f"{profile}-{name}"))
    return cases


@pytest.mark.parametrize("profile, name", _cases())
def test_fault_breaks_exactly_its_rule(profile: str, name: str) -> None:
    config = PeerConfig(profile=profile, faults=(name,), lease_requests=2)
    rule = FAULTS[name].rule
    assert server_rules(config, TRIGGERS[name], contract=rule.startswith("RS-TCK-")) == {rule}


@pytest.mark.parametrize("profile, trigger", [
    pytest.param(profile, t, id=f"{profile}-{n}") for profile in ("rsocket-1.0", "reactivesocket-draft")
    for n, t in CLEAN_TRIGGERS
    if n not in (V1_CLEAN_NOT_APPLICABLE if profile == "rsocket-1.0" else DRAFT_CLEAN_NOT_APPLICABLE)])
def test_fault_free_peer_draws_no_finding(profile: str, trigger: Trigger) -> None:
    assert server_rules(PeerConfig(profile=profile, lease_requests=2), trigger) == set()


@pytest.mark.parametrize("profile", ["rsocket-1.0", "reactivesocket-draft"])
@pytest.mark.parametrize("seed", range(6))
def test_fault_free_peer_draws_no_finding_whatever_its_freedoms(profile: str, seed: int) -> None:
    """Seeded legal freedoms (N|C or a separate C, chunked writes, fragment sizes under a small MTU)."""
    config = PeerConfig(profile=profile, seed=seed, mtu=64, lease_requests=2)
    assert server_rules(config, publishers_tour) == set()
