"""The RSocket judge, through the whole path: frames encoded by the profile's encoder, fed to
``Monitor(profile, binding="rsocket")`` as each side's bytes, judged frame by frame.

``CASES`` holds, for every RS-* rule above the codec, a trace that breaks it: the finding must
name that rule and the side that broke it.  ``LEGAL`` holds traces that must produce no finding,
whatever the chunking (frames crossing in flight, keepalives interleaved, fragments of several
streams interleaved, N|C on one frame, request-response answered with N|C or C alone, ...).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
import test_rsocket_malformed
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rsio_tck.binding import get_binding
from rsio_tck.bindings.rsocket.codec import RSocketLimits
from rsio_tck.bindings.rsocket.frames import (
    APPLICATION_ERROR,
    CONNECTION_CLOSE,
    CONNECTION_ERROR,
    REJECTED,
    REJECTED_RESUME,
    REJECTED_SETUP,
    Cancel,
    Error,
    Ext,
    IgnoredFrame,
    Keepalive,
    Lease,
    MetadataPush,
    Payload,
    RequestChannel,
    RequestFnf,
    RequestN,
    RequestResponse,
    RequestStream,
    Resume,
    ResumeOk,
    Setup,
)
from rsio_tck.catalogue import RULES, Level
from rsio_tck.errors import Side
from rsio_tck.monitor.monitor import Monitor
from rsio_tck.testpubs import large_bytes

C, S = Side.CLIENT, Side.SERVER
V1, DRAFT = "rsocket-1.0", "reactivesocket-draft"
BINDING = get_binding("rsocket")

SETUP = Setup(keepalive_interval=30_000, max_lifetime=90_000, metadata_mime=b"application/octet-stream",
              data_mime=b"text/plain")
# The draft counts nanoseconds in 32 bits: 0.5 s between keepalives, at most 4 s of silence.
DRAFT_SETUP = replace(SETUP, major_version=0, minor_version=0, keepalive_interval=500_000_000,
                      max_lifetime=4_000_000_000)

Item = tuple[Any, ...]  # (side, frame or raw bytes[, t])


# -- trace vocabulary -------------------------------------------------------------------------

def setup(**fields: Any) -> Item:
    return (C, replace(SETUP, **fields))


def rs(sid: int, n: int, by: Side = C, data: bytes = b"app/numbers", **kw: Any) -> Item:
    return (by, RequestStream(stream_id=sid, initial_request_n=n, data=data, **kw))


def rr(sid: int, by: Side = C, data: bytes = b"app/one") -> Item:
    return (by, RequestResponse(stream_id=sid, data=data))


def fnf(sid: int, by: Side = C) -> Item:
    return (by, RequestFnf(stream_id=sid, data=b"tck/fnf?key=k"))


def rc(sid: int, n: int, by: Side = C, complete: bool = False, data: bytes = b"app/chat") -> Item:
    return (by, RequestChannel(stream_id=sid, initial_request_n=n, complete=complete, data=data))


def nxt(sid: int, by: Side = S, data: bytes = b"0", **kw: Any) -> Item:
    return (by, Payload(stream_id=sid, next=True, data=data, **kw))


def done(sid: int, by: Side = S) -> Item:
    return (by, Payload(stream_id=sid, complete=True))


def nc(sid: int, by: Side = S, data: bytes = b"9") -> Item:
    return (by, Payload(stream_id=sid, next=True, complete=True, data=data))


def rn(sid: int, n: int, by: Side = C) -> Item:
    return (by, RequestN(stream_id=sid, request_n=n))


def cancel(sid: int, by: Side = C) -> Item:
    return (by, Cancel(stream_id=sid))


def err(sid: int, code: int = APPLICATION_ERROR, by: Side = S, data: bytes = b"boom") -> Item:
    return (by, Error(stream_id=sid, error_code=code, data=data))


def ka(by: Side = C, respond: bool = True, data: bytes = b"", **kw: Any) -> Item:
    return (by, Keepalive(respond=respond, data=data, **kw))


def lease(by: Side = S, ttl: int = 60_000, n: int = 10, **kw: Any) -> Item:
    return (by, Lease(ttl=ttl, number_of_requests=n, **kw))


def at(t: float, item: Item) -> Item:
    return (*item, t)


# Raw frames (1.0, without length prefix) the decoder turns into IgnoredFrame or a wire error.
UNKNOWN_WITH_I = IgnoredFrame(frame_type=0x0F, stream_id=1, rule="RS-IGNORE-1", reason="",
                              raw=bytes.fromhex("00000001 3e00"))
BAD_METADATA_WITH_I = IgnoredFrame(frame_type=0x0A, stream_id=1, rule="RS-IGNORE-2", reason="",
                                   raw=bytes.fromhex("00000001 2b20 000010 6869"))
BAD_METADATA = bytes.fromhex("000009 00000001 2920 000010 6869")  # PAYLOAD N+M, metadata length 16 of 2 bytes
# REQUEST_STREAM with I and M on stream 1, whose metadata length runs past the frame (scenario RSERR-004).
BAD_REQUEST_WITH_I = IgnoredFrame(frame_type=0x06, stream_id=1, rule="RS-IGNORE-2", reason="",
                                  raw=bytes.fromhex("00000001 1b00 00000001 ffffff 6162"), type_name="REQUEST_STREAM")
DRAFT_BAD_METADATA = IgnoredFrame(frame_type=0x0B, stream_id=1, rule="RS-DRAFT-2", reason="",
                                  raw=bytes.fromhex("00 40 0020 0000000000000001 00 000009 6869"))


CLOSE = object()  # a trace item (side, CLOSE): that side's transport ends there


def judge(trace: list[Item], profile: str = V1, *, chunk: int | None = None, limits: Any = None,
          close: bool = True) -> list[tuple[str, Side | None]]:
    """(rule, side) of every finding of ``trace`` fed through the monitor; ``chunk``: bytes per observe."""
    monitor = Monitor(profile, limits, binding="rsocket")
    encoders = {side: BINDING.encoder(profile) for side in Side}
    t = 0.0
    closed: set[Side] = set()
    for item in trace:
        side, frame = item[0], item[1]
        t = item[2] if len(item) > 2 else t
        if frame is CLOSE:
            monitor.close(side, t)
            closed.add(side)
            continue
        data = frame if isinstance(frame, bytes) else encoders[side].encode(frame)
        if chunk is None:
            monitor.observe(side, data, t)
        else:
            for start in range(0, len(data), chunk):
                monitor.observe(side, data[start:start + chunk], t)
    if close:
        for side in (C, S):
            if side not in closed:
                monitor.close(side, t)
    return [(f.rule, f.side) for f in monitor.findings]


# -- traces that break a rule ----------------------------------------------------------------

LEASED = [setup(lease=True)]
# (rule, side, trace[, profile])
CASES: list[tuple[Any, ...]] = [
    ("RS-FRAME-10", S, [setup(), (S, Ext(stream_id=0, ignore=True, extended_type=0))]),
    ("RS-IGNORE-1", S, [setup(), (C, UNKNOWN_WITH_I), err(0, CONNECTION_ERROR)]),
    ("RS-IGNORE-2", S, [setup(), (C, BAD_METADATA_WITH_I), err(0, CONNECTION_ERROR)]),
    # The answer may come after the requester's next request (rsocket-go's, F33): still on the ignored id.
    ("RS-IGNORE-2", S, [setup(), (C, BAD_REQUEST_WITH_I), rs(3, 1), err(1), nc(3)]),
    ("RS-STREAMID-2", C, [setup(), (C, BAD_REQUEST_WITH_I), rs(5, 1)]),  # SPEC.md RS-r: 1 or 3, not 5
    ("RS-DRAFT-2", S, [(C, DRAFT_SETUP), (C, DRAFT_BAD_METADATA), err(0, CONNECTION_ERROR)], DRAFT),
    ("RS-FRAG-1", C, [setup(), rs(1, 5, follows=True), (C, RequestResponse(stream_id=1, data=b"x"))]),
    ("RS-FRAG-1", S, [setup(), rc(1, 5), nxt(1, follows=True, data=b"a"), rn(1, 1, by=S), nxt(1, data=b"b")]),
    ("RS-FRAG-2", S, [setup(), rs(1, 5), nxt(1, follows=True, data=b"ab"), nxt(1, metadata=b"m", data=b"c")]),
    ("RS-SETUP-1", C, [rs(1, 5)]),
    ("RS-SETUP-2", C, [setup(), setup()]),
    ("RS-SETUP-3", S, [setup(), (S, SETUP)]),
    ("RS-SETUP-4", C, [setup(stream_id=2)]),
    ("RS-SETUP-5", C, [setup(keepalive_interval=0)]),
    ("RS-SETUP-5", C, [setup(max_lifetime=0)]),
    ("RS-SETUP-6", S, [setup(major_version=2), (S, MetadataPush(metadata=b"m"))]),
    ("RS-SETUP-6", S, [setup(major_version=2)]),  # closed without refusing
    ("RS-SETUP-7", C, [setup(data_mime=b"")]),
    ("RS-SETUP-7", C, [setup(metadata_mime=b"text/plain\0")]),
    ("RS-SETUP-8", C, [setup(data_mime="tëxt/plain".encode())]),
    ("RS-SETUP-9", S, [rs(1, 5), nxt(1)]),
    ("RS-SETUP-9", S, [ka()]),  # closed without ERROR[INVALID_SETUP]
    ("RS-SETUP-9", S, [rs(1, 5), err(0, REJECTED_SETUP)]),  # the wrong refusal
    ("RS-SETUP-10", S, [(S, MetadataPush(metadata=b"m")), setup()]),
    ("RS-KEEPALIVE-1", C, [setup(), ka(stream_id=1)]),
    ("RS-KEEPALIVE-2", C, [at(1.0, setup()), at(50.0, ka()), at(50.0, ka(S, False)), at(200.0, rs(1, 1))]),
    ("RS-KEEPALIVE-2", C, [setup(), at(1000.0, rs(1, 1)), at(1200.0, nc(1))]),  # measured from the first time
    ("RS-KEEPALIVE-3", S, [setup(), ka(data=b"ab"), ka(S, False, b"xy")]),
    ("RS-SETUP-1", C, [(C, UNKNOWN_WITH_I), setup()]),
    ("RS-KEEPALIVE-3", S, [at(1.0, setup()), at(2.0, ka(data=b"ab")), at(80.0, ka(data=b"cd")),
                           at(95.0, ka(S, False, b"ab"))]),  # the second one is answered too late
    ("RS-KEEPALIVE-3", S, [at(1.0, (C, DRAFT_SETUP)), at(2.0, (C, Keepalive())), at(3.0, (C, Keepalive())),
                           at(6.5, (S, Keepalive())), at(7.0, (C, Keepalive()))],
     DRAFT),
    ("RS-KEEPALIVE-4", C, [setup(), ka(respond=False)]),
    ("RS-KEEPALIVE-5", C, [setup(resume_token=b"tok"), ka(last_received_position=10),
                           ka(last_received_position=5)]),
    ("RS-LEASE-1", S, [*LEASED, lease(stream_id=1), lease(C)]),
    ("RS-LEASE-2", S, [setup(), lease()]),
    ("RS-LEASE-3", C, [*LEASED, lease()]),
    ("RS-LEASE-4", S, [*LEASED, lease(), rs(2, 1, by=S)]),  # the server requests before the client's LEASE
    ("RS-LEASE-4", C, [*LEASED, rs(1, 1)]),
    ("RS-LEASE-4", C, [*LEASED, lease(n=1), lease(C), rs(1, 1), rs(3, 1)]),
    ("RS-LEASE-4", C, [at(1.0, (C, replace(SETUP, lease=True))), at(1.0, lease(ttl=1_000)), at(1.0, lease(C)),
                       at(5.0, rs(1, 1))]),
    ("RS-LEASE-5", S, [*LEASED, rs(1, 1), nc(1), lease(), lease(C)]),
    ("RS-STREAMID-1", C, [setup(), rs(2, 1)]),
    ("RS-STREAMID-1", S, [setup(), rs(3, 1, by=S)]),
    ("RS-STREAMID-2", C, [setup(), rs(3, 1)]),
    ("RS-STREAMID-2", C, [setup(), rs(1, 1), rs(5, 1)]),
    ("RS-STREAMID-3", C, [setup(), rs(1, 1), nc(1), rs(1, 1)]),
    ("RS-STREAMID-3", C, [setup(), rs(1, 1), cancel(1), rs(1, 1)]),
    ("RS-STREAMID-4", C, [setup(), rs(1, 5), rs(1, 5)]),
    ("RS-STREAMID-4", C, [setup(), rc(1, 5), done(1), (C, RequestResponse(stream_id=1))]),  # channel half open
    ("RS-FLOW-1", C, [setup(), rs(1, 0)]),
    ("RS-FLOW-1", C, [setup(), rs(1, 1), rn(1, 0)]),
    ("RS-FLOW-1", S, [setup(), rc(1, 1), rn(1, 0, by=S)]),
    ("RS-FLOW-2", S, [setup(), rs(1, 1), nxt(1), nxt(1)]),
    ("RS-FLOW-2", S, [setup(), rs(1, 2), cancel(1), nxt(1), nxt(1), nxt(1)]),  # in flight, still within credits
    ("RS-FLOW-2", S, [setup(), rs(1, 1), nxt(1, follows=True), nxt(1, follows=True), nxt(1), nxt(1)]),
    ("RS-FLOW-3", S, [setup(), rs(1, 2), rn(1, 0), nxt(1)]),
    ("RS-FLOW-3", S, [setup(), rs(1, 0)]),  # closed without reacting
    ("RS-STREAM-1", S, [setup(), rs(1, 1), (S, Payload(stream_id=1))]),
    ("RS-STREAM-2", S, [setup(), nxt(1)]),
    ("RS-STREAM-2", S, [setup(), err(5)]),
    ("RS-STREAM-3", S, [setup(), rs(1, 5), done(1), nxt(1)]),
    ("RS-STREAM-3", S, [setup(), rs(1, 5), err(1), err(1)]),
    ("RS-STREAM-4", C, [setup(), rs(1, 5), nxt(1, by=C)]),
    ("RS-RR-1", S, [setup(), rr(1), nc(1), nc(1)]),
    ("RS-RR-1", S, [setup(), rr(1), done(1), err(1)]),
    ("RS-RR-2", S, [setup(), rr(1), nxt(1)]),
    ("RS-FNF-1", S, [setup(), fnf(1), nc(1)]),
    ("RS-FNF-1", S, [setup(), fnf(1), rn(1, 1, by=S)]),
    ("RS-CHANNEL-1", C, [setup(), rc(1, 5), nxt(1, by=C)]),
    ("RS-CHANNEL-1", C, [setup(), rc(1, 5), rn(1, 1, by=S), nxt(1, by=C), nxt(1, by=C)]),
    ("RS-CHANNEL-2", C, [setup(), rc(1, 5, complete=True), rn(1, 5, by=S), nxt(1, by=C)]),
    ("RS-CHANNEL-3", S, [setup(), rc(1, 5), done(1)]),
    ("RS-CHANNEL-3", S, [setup(), rc(1, 5), err(1)]),
    ("RS-ERROR-1", S, [setup(), rs(1, 5), err(1, CONNECTION_ERROR)]),
    ("RS-ERROR-2", S, [setup(), err(0, APPLICATION_ERROR)]),
    ("RS-ERROR-3", S, [setup(), rs(1, 5), err(1, 0x05)]),
    ("RS-ERROR-3", S, [setup(), rs(1, 5), err(1, 0)]),
    ("RS-ERROR-3", S, [setup(), rs(1, 5), err(1, 0xFFFFFFFF)]),
    ("RS-ERROR-4", C, [setup(), err(0, REJECTED_SETUP, by=C)]),
    ("RS-ERROR-4", S, [setup(), rs(1, 1), nc(1), err(0, REJECTED_SETUP)]),
    ("RS-ERROR-5", S, [setup(), err(0, CONNECTION_ERROR), (S, MetadataPush(metadata=b"m"))]),
    ("RS-ERROR-6", S, [setup(), rs(1, 5), err(1, data=b"\xff\xfe")]),
    ("RS-ERROR-7", S, [setup(), rs(1, 5), err(1, data=b"boom\0")]),
    ("RS-ERROR-8", S, [setup(), (C, BAD_METADATA)]),
    ("RS-PUSH-1", C, [setup(), (C, MetadataPush(stream_id=1, metadata=b"m"))]),
    ("RS-RESUME-1", C, [setup(), (C, Resume(resume_token=b"t", last_received_server_position=0,
                                            first_available_client_position=0))]),
    ("RS-RESUME-1", S, [setup(), (S, Resume(resume_token=b"t", last_received_server_position=0,
                                            first_available_client_position=0))]),
    ("RS-RESUME-2", C, [(C, Resume(resume_token=b"t", last_received_server_position=0,
                                   first_available_client_position=0)), rs(1, 1)]),
    ("RS-RESUME-3", S, [setup(), (S, ResumeOk(last_received_client_position=0))]),
    ("RS-RESUME-3", C, [setup(), (C, ResumeOk(last_received_client_position=0))]),
    ("RS-RESUME-4", S, [(C, Resume(resume_token=b"t", last_received_server_position=0,
                                   first_available_client_position=0)), err(0, REJECTED_SETUP)]),
    ("RS-RESUME-5", C, [(C, Resume(stream_id=1, resume_token=b"t", last_received_server_position=0,
                                   first_available_client_position=0))]),
    ("RS-RESUME-6", S, [(C, Resume(resume_token=b"t", last_received_server_position=0,
                                   first_available_client_position=0)), (S, CLOSE)]),  # closed unanswered
    ("RS-RESUME-6", S, [(C, Resume(resume_token=b"t", last_received_server_position=0,
                                   first_available_client_position=0)), nxt(1)]),  # a frame, but no answer
    ("RS-UNEXPECTED-1", S, [setup(), cancel(7), err(0, CONNECTION_ERROR)]),
    ("RS-UNEXPECTED-1", S, [setup(), cancel(7), err(7)]),
    ("RS-UNEXPECTED-1", S, [setup(), rs(1, 5), rs(1, 5), err(0, CONNECTION_ERROR)]),
    ("RS-UNEXPECTED-1", C, [setup(), nxt(8), err(0, CONNECTION_ERROR, by=C)]),
    ("RS-UNEXPECTED-2", S, [setup(), setup(), err(0, CONNECTION_ERROR)]),
    ("RS-UNEXPECTED-2", C, [setup(), (S, SETUP), err(0, CONNECTION_ERROR, by=C)]),
]
ECHO = b"tck/echo"
CASES += [
    ("RS-TCK-1", S, [setup(), rs(1, 5, data=b"tck/range?count=3"), nxt(1, data=b"0"), nxt(1, data=b"2")]),
    ("RS-TCK-1", S, [setup(), rs(1, 5, data=b"tck/range?count=3"), nxt(1, data=b"0"), done(1)]),
    ("RS-TCK-1", S, [setup(), rs(1, 5, data=b"tck/range?count=1"), nxt(1, data=b"0"), nc(1, data=b"1")]),
    ("RS-TCK-1", S, [setup(), rs(1, 5, data=b"tck/range?count=1"), err(1)]),
    ("RS-TCK-2", S, [setup(), rs(1, 3, data=b"tck/infinite?start=5"), nxt(1, data=b"5"), done(1)]),
    ("RS-TCK-2", S, [setup(), rs(1, 3, data=b"tck/infinite?start=5"), nxt(1, data=b"6")]),
    ("RS-TCK-3", S, [setup(), rs(1, 5, data=b"tck/error?after=1&message=bad"), nxt(1, data=b"0"),
                     err(1, data=b"other")]),
    ("RS-TCK-3", S, [setup(), rs(1, 5, data=b"tck/error?after=1&message=bad"), nxt(1, data=b"0"), done(1)]),
    ("RS-TCK-3", S, [setup(), rs(1, 5, data=b"tck/error?after=1&message=bad"), err(1, data=b"bad")]),
    ("RS-TCK-4", S, [setup(), rs(1, 2, data=b"tck/large?size=300&count=1"), nxt(1, data=bytes(300))]),
    ("RS-TCK-4", S, [setup(), rs(1, 2, data=b"tck/large?size=3&count=2"), nxt(1, data=b"\0\1\2"), done(1)]),
    ("RS-TCK-5", S, [setup(), rs(1, 1, data=b"tck/nope"), nc(1)]),
    ("RS-TCK-5", S, [setup(), rs(1, 1, data=b"tck/range?count=x"), err(1, REJECTED)]),
    ("RS-TCK-5", S, [setup(), rs(1, 1, data=ECHO), nc(1)]),  # tck/echo is a channel publisher
    ("RS-TCK-6", S, [setup(), rr(1, data=b"tck/range?count=0"), nc(1, data=b"0")]),
    ("RS-TCK-6", S, [setup(), rr(1, data=b"tck/range?start=3&count=2"), nc(1, data=b"4")]),
    ("RS-TCK-6", S, [setup(), rr(1, data=b"tck/range?start=3&count=2"), done(1)]),
    ("RS-TCK-6", S, [setup(), rr(1, data=b"tck/error?message=x"), done(1)]),
    ("RS-TCK-7", S, [setup(), rc(1, 5, data=ECHO), rn(1, 5, by=S), nxt(1, by=C, data=b"a"), nxt(1, data=b"b")]),
    ("RS-TCK-7", S, [setup(), rc(1, 5, data=ECHO), rn(1, 5, by=S), nxt(1, data=b"a")]),
    ("RS-TCK-7", S, [setup(), rc(1, 5, data=ECHO), rn(1, 5, by=S), nxt(1, by=C, data=b"a"), nc(1, data=b"a")]),
]
PUSH = (C, MetadataPush(metadata=b"m"))
CASES += [
    ("RS-TCK-8", S, [setup(), PUSH, err(0, CONNECTION_ERROR)]),
    ("RS-TCK-8", S, [setup(), rs(1, 1), PUSH, (S, CLOSE)]),
]
CASES.append(("RS-LIMIT-1", S, [setup(), rs(1, 5), nxt(1, follows=True, data=b"x" * 400), nxt(1, data=b"y")],
              V1, RSocketLimits(max_reassembly=512)))


def _case_id(case: tuple[Any, ...]) -> str:
    return f"{case[0]}-{CASES.index(case)}"


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_a_trace_breaking_the_rule_is_reported_against_the_right_side(case: tuple[Any, ...]) -> None:
    rule, side, trace = case[:3]
    profile = case[3] if len(case) > 3 else V1
    limits = case[4] if len(case) > 4 else None
    found = judge(trace, profile, limits=limits)
    assert (rule, side) in found, found


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_a_breaking_trace_is_judged_the_same_byte_by_byte(case: tuple[Any, ...]) -> None:
    rule, side, trace = case[:3]
    profile = case[3] if len(case) > 3 else V1
    limits = case[4] if len(case) > 4 else None
    assert judge(trace, profile, chunk=1, limits=limits) == judge(trace, profile, limits=limits)


def test_every_rule_above_the_codec_has_a_breaking_trace() -> None:
    codec_only = {case[2] for case in test_rsocket_malformed.MALFORMED}
    broken = {case[0] for case in CASES}
    rs_rules = {rule for rule in RULES if rule.startswith("RS-")}
    assert rs_rules - codec_only - broken == set()


@pytest.mark.parametrize("case", test_rsocket_malformed.MALFORMED, ids=lambda c: f"{c[2]}:{c[1]}")
def test_malformed_bytes_through_the_monitor_name_the_rule_and_the_sender(case: tuple[str, str, str, bool]) -> None:
    profile, hexes, rule, eof = case
    data = test_rsocket_malformed._stream(hexes, profile)
    monitor = Monitor(profile, RSocketLimits(max_frame=64), binding="rsocket")
    encoder = BINDING.encoder(profile)
    monitor.observe(C, encoder.encode(SETUP if profile == V1 else DRAFT_SETUP))
    monitor.observe(S, data)
    monitor.close(S)
    assert (rule, S) in [(f.rule, f.side) for f in monitor.findings]


# -- legal traces ------------------------------------------------------------------------------

LEGAL: dict[str, list[Item]] = {
    "stream with requests": [setup(), rs(1, 3), nxt(1), nxt(1), nxt(1), rn(1, 2), nxt(1), done(1)],
    "REQUEST_N crossing PAYLOAD C": [setup(), rs(1, 2), nxt(1), nc(1), rn(1, 5)],
    "CANCEL crossing PAYLOADs": [setup(), rs(1, 3), cancel(1), nxt(1), nxt(1), nxt(1), done(1)],
    "CANCEL crossing ERROR": [setup(), rs(1, 3), cancel(1), err(1)],
    "keepalives interleaved": [setup(), ka(data=b"a"), rs(1, 2), nxt(1), ka(S, False, b"a"), ka(data=b"b"),
                               ka(S, True, b"s"), ka(C, False, b"s"), nxt(1), ka(S, False, b"b"), done(1)],
    "fragments of several streams interleaved": [
        setup(), rs(1, 2), rs(3, 2), nxt(1, follows=True, data=b"a"), nxt(3, follows=True, metadata=b"m"),
        ka(), nxt(1, follows=True, data=b"b"), nxt(3, data=b"c"), ka(S, False), nxt(1, data=b"d"),
        nxt(3, follows=True, data=b"e"), (S, Payload(stream_id=3, follows=True, complete=True)), nc(1)],
    "fragmented request": [setup(), rs(1, 2, follows=True, data=b"app/nu"), nxt(1, by=C, data=b"mbers"), nc(1)],
    "N|C on one frame": [setup(), rs(1, 1), nc(1)],
    "request-response answered with N|C": [setup(), rr(1), nc(1)],
    "request-response answered with C only": [setup(), rr(1), done(1)],
    "request-response answered with ERROR": [setup(), rr(1), err(1)],
    "request-response cancelled, the answer crossing": [setup(), rr(1), cancel(1), nc(1)],
    "fire-and-forget": [setup(), fnf(1), rs(3, 1), nc(3)],
    "metadata push": [setup(), (C, MetadataPush(metadata=b"m")), (S, MetadataPush(metadata=b"n"))],
    "metadata push, then the stream goes on": [setup(), rs(1, 3), nxt(1), (C, MetadataPush(metadata=b"m")),
                                               nxt(1), nxt(1), (S, CLOSE)],
    "metadata push, the kit closes first": [setup(), (C, MetadataPush(metadata=b"m")), (C, CLOSE), (S, CLOSE)],
    "channel": [setup(), rc(1, 2), rn(1, 2, by=S), nxt(1, by=C), nxt(1), nxt(1, by=C), nxt(1),
                done(1, by=C), rn(1, 1), nc(1)],
    "channel completed in its request": [setup(), rc(1, 1, complete=True), nc(1)],
    "channel error from the requester": [setup(), rc(1, 2), rn(1, 1, by=S), nxt(1), err(1, by=C), nxt(1)],
    "channel error from the responder": [setup(), rc(1, 2), rn(1, 2, by=S), err(1), nxt(1, by=C)],
    "channel cancelled by the requester": [setup(), rc(1, 2), rn(1, 2, by=S), done(1, by=C), cancel(1),
                                           nxt(1)],
    "server as requester": [setup(), rs(2, 1, by=S), nc(2, by=C), rs(4, 2, by=S), rn(4, 1, by=S),
                            nxt(4, by=C), done(4, by=C)],
    "stream error": [setup(), rs(1, 5), nxt(1), err(1, data="échec".encode())],
    "many streams": [setup(), *[rs(sid, 1) for sid in range(1, 40, 2)], *[nc(sid) for sid in range(1, 40, 2)]],
    "REQUEST_N 2^31-1 is counted": [setup(), rs(1, 2**31 - 1), rn(1, 2**31 - 1), *[nxt(1)] * 3, done(1)],
    "request N = 0 answered with ERROR": [setup(), rs(1, 2), rn(1, 0), err(1, REJECTED)],
    "lease": [at(1.0, setup(lease=True)), at(1.0, lease(ttl=10_000, n=2)), at(1.0, lease(C)),
              at(2.0, rs(1, 1)), at(2.0, rr(3)), at(3.0, nc(1)), at(3.0, err(3, REJECTED))],
    "lease renewed": [*LEASED, lease(n=1), lease(C), rs(1, 1), lease(n=1), rs(3, 1), nc(1), nc(3)],
    "request beyond the lease rejected": [*LEASED, lease(n=0), lease(C)],
    # Requests and LEASEs crossing in flight: the judge sees one order of the two directions.
    "a request crossing the server's renewed LEASE is served": [*LEASED, lease(n=1), lease(C), rs(1, 1), rs(3, 1),
                                                                lease(n=1), nc(1), nc(3)],
    "a request crossing the server's renewed LEASE is rejected": [*LEASED, lease(n=1), lease(C), rs(1, 1), rs(3, 1),
                                                                  lease(n=1), nc(1), err(3, REJECTED)],
    "a request crossing the server's revoking LEASE is rejected": [*LEASED, lease(n=5), lease(C), rs(1, 1),
                                                                   lease(n=0), err(1, REJECTED)],
    "the client closed, the server talks on": [at(1.0, setup()), at(2.0, rs(1, 1)), at(2.0, (C, CLOSE)),
                                               at(500.0, nc(1))],
    "timely keepalives": [at(1.0, setup()), at(30.0, ka()), at(31.0, ka(S, False)), at(60.0, ka()),
                          at(61.0, ka(S, False)), at(90.0, ka()), at(90.5, ka(S, False))],
    "untimed SETUP, timed frames later": [setup(lease=True), lease(), lease(C), at(1.7e9, rs(1, 1)),
                                          at(1.7e9 + 1, nc(1))],
    "resume": [(C, Resume(resume_token=b"t", last_received_server_position=0, first_available_client_position=0)),
               (S, ResumeOk(last_received_client_position=0)), rs(41, 1), nc(41)],
    "resume rejected": [(C, Resume(resume_token=b"t", last_received_server_position=0,
                                   first_available_client_position=0)), err(0, REJECTED_RESUME)],
    "setup rejected": [setup(), rs(1, 1), err(0, REJECTED_SETUP)],
    "orderly close": [setup(), rs(1, 1), nc(1), err(0, CONNECTION_CLOSE, by=C)],
    "unknown type with I ignored": [setup(), (C, UNKNOWN_WITH_I), rs(1, 1), nc(1)],
    # The test publishers of bindings.md §2, served right.
    "tck/range": [setup(), rs(1, 2, data=b"tck/range?start=7&count=3"), nxt(1, data=b"7"), nxt(1, data=b"8"),
                  rn(1, 1), nc(1, data=b"9")],
    "tck/range, last element and completion apart": [setup(), rs(1, 9, data=b"tck/range?count=1"),
                                                     nxt(1, data=b"0"), done(1)],
    "tck/range?count=0": [setup(), rs(1, 1, data=b"tck/range?count=0"), done(1)],
    "tck/infinite cancelled": [setup(), rs(1, 2, data=b"tck/infinite?start=-2"), nxt(1, data=b"-2"), cancel(1),
                               nxt(1, data=b"-1")],
    "tck/error": [setup(), rs(1, 5, data=b"tck/error?after=2&message=boom"), nxt(1, data=b"0"),
                  nxt(1, data=b"1"), err(1, data=b"boom")],
    "tck/large fragmented": [setup(), rs(1, 2, data=b"tck/large?size=300&count=2"),
                             nxt(1, follows=True, data=large_bytes(0, 0, 200)), nxt(1, data=large_bytes(0, 200, 100)),
                             nxt(1, data=large_bytes(1, 0, 300)), done(1)],
    "unknown publisher": [setup(), rs(1, 1, data=b"tck/nope"), err(1), rs(3, 1, data=b"tck/range?count=1"),
                          nc(3, data=b"0")],
    "request-response on tck/range": [setup(), rr(1, data=b"tck/range?start=4&count=2"), nc(1, data=b"4")],
    "request-response on an empty tck/range": [setup(), rr(1, data=b"tck/range?count=0"), done(1)],
    "request-response on tck/error": [setup(), rr(1, data=b"tck/error?message=no"), err(1, data=b"no"),
                                      rr(3, data=b"tck/error?after=3"), nc(3, data=b"0")],
    "tck/echo": [setup(), rc(1, 2, data=ECHO), rn(1, 2, by=S), nxt(1, by=C, data=b"a"), nxt(1, data=b"a"),
                 nxt(1, by=C, data=b"b"), done(1, by=C), nc(1, data=b"b")],
    "tck/echo completed in its request": [setup(), rc(1, 1, complete=True, data=ECHO), done(1)],
    "ERROR answering a peer's protocol error": [setup(), rs(2, 1), err(0, CONNECTION_ERROR)],
    "ids wrap after the max id": [setup(), rs(1, 1), nc(1), rs(2**31 - 1, 1), nc(2**31 - 1), rs(1, 1), nc(1),
                                  rs(3, 1), rs(3, 1)],
    # SPEC.md RS-r: whether an ignored request spent its id is open, so the next request may take either.
    "a request on the id of an ignored request": [setup(), (C, BAD_REQUEST_WITH_I), rs(1, 1), nc(1)],
    "a request on the id after an ignored request": [setup(), (C, BAD_REQUEST_WITH_I), rs(3, 1), nc(3),
                                                    rs(5, 1), nc(5)],
    # SPEC.md RS-q: once the ids wrapped, a responder may ERROR[REJECT] an id it considers still in use.
    "ERROR[REJECTED] on an id in use after the ids wrapped": [setup(), rs(1, 1), nc(1), rs(2**31 - 1, 1),
                                                              nc(2**31 - 1), rs(3, 2), nxt(3), rs(3, 1),
                                                              err(3, REJECTED)],
}
# Findings a legal-looking trace must have: exactly these (the kit's deliberate violations).
EXPECTED_ONLY: dict[str, list[tuple[str, Side]]] = {
    "request N = 0 answered with ERROR": [("RS-FLOW-1", C)],
    "ERROR answering a peer's protocol error": [("RS-STREAMID-1", C)],
    # The jump to the max id is out of order; after it a finished id may be reused, one in use still not.
    "ids wrap after the max id": [("RS-STREAMID-2", C), ("RS-STREAMID-4", C)],
    "ERROR[REJECTED] on an id in use after the ids wrapped": [("RS-STREAMID-2", C), ("RS-STREAMID-4", C)],
    # The client did send beyond the lease it had seen; the server's answer either way is legal.
    "a request crossing the server's renewed LEASE is served": [("RS-LEASE-4", C)],
    "a request crossing the server's renewed LEASE is rejected": [("RS-LEASE-4", C)],
}


@pytest.mark.parametrize("name", list(LEGAL))
def test_a_legal_trace_has_no_finding(name: str) -> None:
    assert judge(LEGAL[name]) == EXPECTED_ONLY.get(name, [])


DRAFT_LEGAL: dict[str, list[Item]] = {
    "stream": [(C, DRAFT_SETUP), rs(1, 2), nxt(1), nc(1)],
    "keepalive answered": [(C, DRAFT_SETUP), (C, Keepalive()), (S, Keepalive()), rr(3), nc(3)],
    "fragments": [(C, DRAFT_SETUP), rs(1, 1), nxt(1, follows=True, data=b"a"), nc(1)],
}


@pytest.mark.parametrize("name", list(DRAFT_LEGAL))
def test_a_legal_draft_trace_has_no_finding(name: str) -> None:
    assert judge(DRAFT_LEGAL[name], DRAFT) == []


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(sorted(LEGAL)), chunk=st.integers(min_value=1, max_value=64))
def test_legal_traces_stay_legal_whatever_the_chunking(name: str, chunk: int) -> None:
    assert judge(LEGAL[name], chunk=chunk) == EXPECTED_ONLY.get(name, [])


# -- the binding --------------------------------------------------------------------------------

def test_the_binding_names_its_profiles_rules_and_prefix() -> None:
    assert BINDING.name == "rsocket"
    assert BINDING.profiles == (V1, DRAFT)
    assert BINDING.rule_prefixes == ("RS-",)
    assert len(BINDING.rules()) >= 45 and all(rule.startswith("RS-") and rule in RULES for rule in BINDING.rules())
    assert {RULES[rule].level for rule in BINDING.rules()} == {Level.MUST, Level.SHOULD}
    with pytest.raises(ValueError, match="rsocket-1.0"):
        BINDING.judge("msgpack")


def test_findings_name_the_frame_and_the_rule_title() -> None:
    monitor = Monitor(V1, binding="rsocket")
    encoder = BINDING.encoder(V1)
    monitor.observe(C, encoder.encode(SETUP) + encoder.encode(RequestStream(stream_id=1, initial_request_n=1)))
    (finding,) = monitor.observe(S, encoder.encode(Payload(stream_id=1, next=True)) * 2)
    assert finding.rule == "RS-FLOW-2" and finding.side is S and finding.frame_index == 3
    assert finding.frame is not None and finding.frame.startswith("PAYLOAD(stream_id=1")
    assert RULES["RS-FLOW-2"].title in finding.message and "\n" not in finding.message
    assert "DEM-" not in finding.message and "STR-" not in finding.message


def test_an_error_rejected_on_an_id_in_use_answers_the_request_there_and_the_stream_goes_on() -> None:
    # SPEC.md RS-q: the second request on stream 1 must be ignored (the requester broke RS-STREAMID-4 sending it);
    # an ERROR[REJECTED] while it is unanswered is its answer (RS-UNEXPECTED-1), not the end of the running stream,
    # whose later elements are no signal after a terminal (rsocket-py, FINDINGS.md F9).  A second ERROR[REJECTED]
    # has no request left to answer: it ends the stream.
    def server(trace: list[Item]) -> list[str]:
        return [rule for rule, side in judge(trace) if side is S]

    opened = [setup(), rs(1, 2, data=b"tck/infinite"), nxt(1, data=b"0"), nxt(1, data=b"1"),
              rs(1, 5, data=b"tck/infinite?start=500"), err(1, REJECTED)]
    assert server([*opened, rn(1, 1), nxt(1, data=b"2"), cancel(1)]) == ["RS-UNEXPECTED-1"]
    ended = server([*opened, rn(1, 1), err(1, REJECTED), nxt(1, data=b"2")])
    assert ended[0] == "RS-UNEXPECTED-1" and "RS-STREAM-3" in ended, ended
    assert server([*opened[:4], err(1, REJECTED)]) == ["RS-TCK-2"]  # no request on the id in use: the end
