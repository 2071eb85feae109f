"""The rsocket-1.0 codec against rsocket-py's frame codec, an implementation the kit did not write.

Each frame goes both ways: the kit's bytes parsed by rsocket-py (``parse_or_ignore``)
give the same fields, and rsocket-py's bytes (``serialize``) decode to the same
kit frame.  rsocket-py writes the M flag only for non-empty metadata, so the
frames here carry either none or some.  Skipped where rsocket-py is not installed.
"""

from __future__ import annotations

from typing import Any

import pytest

from rsio_tck.bindings.rsocket import Decoded, get_profile
from rsio_tck.bindings.rsocket.frames import (
    APPLICATION_ERROR,
    CONNECTION_CLOSE,
    Cancel,
    Error,
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
    describe,
)

rsocket_frame = pytest.importorskip("rsocket.frame")

V1 = get_profile("rsocket-1.0")

# kit attribute -> rsocket-py attribute, per frame class (stream_id, data, metadata are shared).
FIELDS: dict[type, tuple[str, dict[str, str]]] = {
    Setup: ("SetupFrame", {
        "major_version": "major_version", "minor_version": "minor_version",
        "keepalive_interval": "keep_alive_milliseconds", "max_lifetime": "max_lifetime_milliseconds",
        "lease": "flags_lease", "metadata_mime": "metadata_encoding", "data_mime": "data_encoding",
    }),
    Lease: ("LeaseFrame", {"ttl": "time_to_live", "number_of_requests": "number_of_requests"}),
    Keepalive: ("KeepAliveFrame", {"respond": "flags_respond", "last_received_position": "last_received_position"}),
    RequestResponse: ("RequestResponseFrame", {"follows": "flags_follows"}),
    RequestFnf: ("RequestFireAndForgetFrame", {"follows": "flags_follows"}),
    RequestStream: ("RequestStreamFrame", {"follows": "flags_follows", "initial_request_n": "initial_request_n"}),
    RequestChannel: ("RequestChannelFrame", {
        "follows": "flags_follows", "complete": "flags_complete", "initial_request_n": "initial_request_n",
    }),
    RequestN: ("RequestNFrame", {"request_n": "request_n"}),
    Cancel: ("CancelFrame", {}),
    Payload: ("PayloadFrame", {"follows": "flags_follows", "complete": "flags_complete", "next": "flags_next"}),
    Error: ("ErrorFrame", {"error_code": "error_code"}),
    MetadataPush: ("MetadataPushFrame", {}),
    Resume: ("ResumeFrame", {
        "major_version": "major_version", "minor_version": "minor_version",
        "resume_token": "resume_identification_token",
        "last_received_server_position": "last_server_position",
        "first_available_client_position": "first_client_position",
    }),
    ResumeOk: ("ResumeOKFrame", {"last_received_client_position": "last_received_client_position"}),
}

MIME = {"metadata_mime": b"application/octet-stream", "data_mime": b"text/plain"}
FRAMES: list[Decoded] = [
    Setup(keepalive_interval=30_000, max_lifetime=90_000, **MIME),
    Setup(keepalive_interval=500, max_lifetime=2_000, lease=True, metadata=b"setup md", data=b"setup data", **MIME),
    Setup(keepalive_interval=1, max_lifetime=1, resume_token=b"resume-me", **MIME),
    Lease(ttl=1_000, number_of_requests=10),
    Lease(ttl=5, number_of_requests=1, metadata=b"lease md"),
    Keepalive(respond=True, last_received_position=42, data=b"ping"),
    RequestResponse(stream_id=1, data=b"tck/range?count=1"),
    RequestFnf(stream_id=3, metadata=b"m", data=b"tck/fnf?key=k"),
    RequestStream(stream_id=5, initial_request_n=3, data=b"tck/range?count=10"),
    RequestStream(stream_id=7, follows=True, initial_request_n=2**31 - 1, metadata=b"route", data=b"x"),
    RequestChannel(stream_id=9, complete=True, initial_request_n=1, data=b"tck/echo"),
    RequestN(stream_id=5, request_n=8),
    Cancel(stream_id=5),
    Payload(stream_id=5, next=True, data=b"0"),
    Payload(stream_id=5, next=True, complete=True, metadata=b"m", data=b"last"),
    Payload(stream_id=5, complete=True),
    Payload(stream_id=2, follows=True, next=True, data=b"fragment"),
    Error(stream_id=5, error_code=APPLICATION_ERROR, data=b"boom"),
    Error(stream_id=0, error_code=CONNECTION_CLOSE, data=b"bye"),
    MetadataPush(metadata=b"routing"),
    Resume(resume_token=b"token", last_received_server_position=10, first_available_client_position=3),
    ResumeOk(last_received_client_position=99),
]


def kit_fields(frame: Decoded) -> dict[str, Any]:
    _, mapping = FIELDS[type(frame)]
    values = {theirs: getattr(frame, ours) for ours, theirs in mapping.items()}
    values["stream_id"] = frame.stream_id
    if hasattr(frame, "data") and not isinstance(frame, (Lease, MetadataPush)):
        values["data"] = frame.data
    if getattr(frame, "metadata", None) is not None:
        values["metadata"] = frame.metadata
    return values


def their_frame(frame: Decoded) -> Any:
    name, _ = FIELDS[type(frame)]
    theirs = getattr(rsocket_frame, name)()
    for attr, value in kit_fields(frame).items():
        setattr(theirs, attr, value)
    if isinstance(frame, Setup) and frame.resume_token is not None:
        theirs.flags_resume, theirs.token_length = True, len(frame.resume_token)
        theirs.resume_identification_token = frame.resume_token
    return theirs


def test_every_frame_type_but_ext_is_cross_checked() -> None:
    assert {type(f) for f in FRAMES} == set(FIELDS)  # rsocket-py has no concrete EXT frame


@pytest.mark.parametrize("frame", FRAMES, ids=lambda f: describe(f)[:60])
def test_rsocket_py_parses_the_kit_bytes(frame: Decoded) -> None:
    parsed = rsocket_frame.parse_or_ignore(V1.encode_frame(frame))
    assert type(parsed).__name__ == FIELDS[type(frame)][0]
    for attr, value in kit_fields(frame).items():
        assert getattr(parsed, attr) == value, attr
    if isinstance(frame, Setup):
        assert parsed.flags_resume == (frame.resume_token is not None)
        if frame.resume_token is not None:
            assert parsed.resume_identification_token == frame.resume_token


@pytest.mark.parametrize("frame", FRAMES, ids=lambda f: describe(f)[:60])
def test_the_kit_decodes_rsocket_py_bytes(frame: Decoded) -> None:
    raw = rsocket_frame.serialize_with_frame_size_header(their_frame(frame))
    assert V1.decoder().feed(raw) == [frame]
