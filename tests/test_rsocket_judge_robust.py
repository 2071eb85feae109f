"""The RSocket judge never stops and never cites anything but an RSocket rule, whatever both sides send.

Hypothesis builds frame sequences of every frame type, from both sides, with stream ids, flags,
counts and codes chosen from small sets so that collisions (reused ids, frames after terminals,
unknown streams, fragments interleaved) are frequent.  The judge must take them all without an
exception, and every finding must be an RS-* rule of the catalogue attributed to a side.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rsio_tck.bindings.rsocket import frames as f
from rsio_tck.bindings.rsocket.judge import RSocketJudge
from rsio_tck.catalogue import RULES
from rsio_tck.errors import ProtocolViolation, Side

SIDS = st.sampled_from([0, 1, 2, 3, 4, 5, 2**31 - 1, 2**31 - 2])
N = st.sampled_from([0, 1, 2, 5, 2**31 - 1])
CODES = st.sampled_from([0, f.INVALID_SETUP, f.REJECTED_SETUP, f.REJECTED_RESUME, f.CONNECTION_ERROR,
                         f.CONNECTION_CLOSE, f.APPLICATION_ERROR, f.REJECTED, f.CANCELED, f.INVALID, 0x301, 0x05])
DATA = st.sampled_from([b"", b"x", b"tck/range?count=2", b"\xff", b"a\0"])
META = st.sampled_from([None, b"", b"m"])
FLAG = st.booleans()

FRAMES = st.one_of(
    st.builds(f.Setup, stream_id=st.sampled_from([0, 1]), keepalive_interval=st.sampled_from([0, 100]),
              max_lifetime=st.sampled_from([0, 1000]), lease=FLAG, resume_token=st.sampled_from([None, b"t"]),
              major_version=st.sampled_from([1, 2]), metadata_mime=DATA, data_mime=DATA),
    st.builds(f.Lease, stream_id=SIDS, ttl=N, number_of_requests=N),
    st.builds(f.Keepalive, stream_id=SIDS, respond=FLAG, last_received_position=st.sampled_from([0, 5, 9]),
              data=DATA),
    st.builds(f.RequestResponse, stream_id=SIDS, follows=FLAG, metadata=META, data=DATA),
    st.builds(f.RequestFnf, stream_id=SIDS, follows=FLAG, data=DATA),
    st.builds(f.RequestStream, stream_id=SIDS, follows=FLAG, initial_request_n=N, data=DATA),
    st.builds(f.RequestChannel, stream_id=SIDS, follows=FLAG, complete=FLAG, initial_request_n=N, data=DATA),
    st.builds(f.RequestN, stream_id=SIDS, request_n=N),
    st.builds(f.Cancel, stream_id=SIDS),
    st.builds(f.Payload, stream_id=SIDS, follows=FLAG, complete=FLAG, next=FLAG, metadata=META, data=DATA),
    st.builds(f.Error, stream_id=SIDS, error_code=CODES, data=DATA),
    st.builds(f.MetadataPush, stream_id=SIDS, metadata=DATA),
    st.builds(f.Resume, stream_id=st.sampled_from([0, 1]), resume_token=DATA, last_received_server_position=N,
              first_available_client_position=N),
    st.builds(f.ResumeOk, stream_id=st.sampled_from([0, 1]), last_received_client_position=N),
    st.builds(f.Ext, stream_id=SIDS, ignore=FLAG, extended_type=st.sampled_from([0, 1])),
    st.builds(f.IgnoredFrame, frame_type=st.just(0x0F), stream_id=SIDS, rule=st.just("RS-IGNORE-1"),
              reason=st.just(""), raw=st.just(b"")),
)
STEPS = st.lists(st.tuples(st.sampled_from(list(Side)), st.lists(FRAMES, min_size=1, max_size=4),
                           st.sampled_from([0.0, 1.0, 50.0, 500.0])), max_size=30)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=STEPS, profile=st.sampled_from(["rsocket-1.0", "reactivesocket-draft"]))
def test_the_judge_takes_any_sequence_and_reports_only_rsocket_rules(
        steps: list[tuple[Side, list[Any], float]], profile: str) -> None:
    judge = RSocketJudge(profile)
    found: list[ProtocolViolation] = []
    index, t = 0, 0.0
    for side, frames, dt in steps:
        t += dt
        index = judge.judge(side, frames, t, index, lambda violation, i, frame: found.append(violation))
    for side in Side:
        found += judge.close(side)
    assert index == sum(len(frames) for _, frames, _ in steps)
    for violation in found:
        assert violation.rule.startswith("RS-") and violation.rule in RULES, violation
        assert violation.side in (Side.CLIENT, Side.SERVER) and "\n" not in violation.message
