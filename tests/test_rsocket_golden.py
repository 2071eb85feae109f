"""Golden byte vectors, written by hand from the specs' layouts: both profiles decode and encode them exactly."""

from __future__ import annotations

from pathlib import Path

import pytest

from rsio_tck.bindings.rsocket import Decoded, get_profile
from rsio_tck.bindings.rsocket.frames import (
    APPLICATION_ERROR,
    DRAFT_REJECTED_SETUP,
    Cancel,
    Error,
    Ext,
    Keepalive,
    Lease,
    MetadataPush,
    Payload,
    RequestChannel,
    RequestN,
    RequestStream,
    ResumeOk,
    Setup,
    SetupError,
)

DATA = Path(__file__).parent / "data" / "rsocket"
MIME = {"metadata_mime": b"application/octet-stream", "data_mime": b"text/plain"}
RANGE = b"tck/range?count=10"

EXPECTED: dict[str, dict[str, Decoded]] = {
    "rsocket-1.0": {
        "setup": Setup(keepalive_interval=30_000, max_lifetime=90_000, **MIME),
        "request_stream": RequestStream(stream_id=1, initial_request_n=3, data=RANGE),
        "request_channel_complete": RequestChannel(stream_id=7, complete=True, initial_request_n=1, data=b"tck/echo"),
        "payload_next_complete_metadata": Payload(stream_id=1, next=True, complete=True, metadata=b"m", data=b"hi"),
        "keepalive_respond": Keepalive(respond=True),
        "error_application": Error(stream_id=1, error_code=APPLICATION_ERROR, data=b"boom"),
        "request_n_max": RequestN(stream_id=1, request_n=2**31 - 1),
        "cancel": Cancel(stream_id=5),
        "metadata_push": MetadataPush(metadata=b"md"),
        "lease": Lease(ttl=1000, number_of_requests=10),
        "resume_ok": ResumeOk(last_received_client_position=7),
        "ext_ignorable": Ext(stream_id=0, ignore=True, extended_type=1),
    },
    "reactivesocket-draft": {
        "setup_lease": Setup(
            major_version=0, keepalive_interval=500_000_000, max_lifetime=2_000_000_000, lease=True, **MIME
        ),
        "request_stream": RequestStream(stream_id=1, initial_request_n=3, data=RANGE),
        "response_next_complete_metadata": Payload(stream_id=1, next=True, complete=True, metadata=b"m", data=b"hi"),
        "response_complete": Payload(stream_id=1, complete=True),
        "error": Error(stream_id=1, error_code=APPLICATION_ERROR, data=b"boom"),
        "keepalive": Keepalive(data=b"ka"),
        "request_n": RequestN(stream_id=1, request_n=5),
        "setup_error_rejected": SetupError(error_code=DRAFT_REJECTED_SETUP, data=b"no"),
        "metadata_push": MetadataPush(metadata=b"md"),
        "ext_ignorable": Ext(stream_id=0, ignore=True, extended_type=0x12345678),
    },
}


def load_vectors(path: Path) -> dict[str, bytes]:
    """``## name`` blocks of hex; text after ``#`` on a line is a comment."""
    vectors: dict[str, bytes] = {}
    name = None
    for line in path.read_text().splitlines():
        if line.startswith("## "):
            name = line[3:].strip()
            vectors[name] = b""
            continue
        hexes = line.split("#", 1)[0].split()
        if hexes:
            assert name is not None, f"{path.name}: bytes before the first vector"
            vectors[name] += bytes.fromhex("".join(hexes))
    return vectors


CASES = [
    (profile, name, raw)
    for profile in EXPECTED
    for name, raw in load_vectors(DATA / f"{profile}.hex").items()
]


def test_every_vector_has_an_expected_frame_and_back() -> None:
    for profile, expected in EXPECTED.items():
        assert set(load_vectors(DATA / f"{profile}.hex")) == set(expected)


@pytest.mark.parametrize(("profile", "name", "raw"), CASES, ids=[f"{c[0]}:{c[1]}" for c in CASES])
def test_golden_vector_decodes_and_encodes_exactly(profile: str, name: str, raw: bytes) -> None:
    codec = get_profile(profile)
    decoder = codec.decoder()
    assert decoder.feed(raw) == [EXPECTED[profile][name]]
    decoder.eof()
    assert codec.encoder().encode(EXPECTED[profile][name]) == raw
    # Over WebSocket the same frame is the bytes after the length prefix.
    assert codec.encoder(length_prefix=False).encode(EXPECTED[profile][name]) == raw[codec.prefix_size :]
