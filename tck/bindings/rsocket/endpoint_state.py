"""What the RSocket endpoint (``endpoint.py``) keeps and builds besides its own logic.

The event of a refused SETUP, the kit's default SETUP
(bindings.md §2), the stream ERROR each profile can express, and the rule IDs the endpoint
cites itself.  No logic of the connection lives here: it is the endpoint's vocabulary.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...protocol.events import ConnectionState
from .frames import (
    APPLICATION_ERROR,
    CONNECTION_CLOSE,
    CONNECTION_ERROR,
    INVALID_SETUP,
    REJECTED_RESUME,
    REJECTED_SETUP,
    UNSUPPORTED_SETUP,
    Error,
    Frame,
    RequestChannel,
    RequestFnf,
    RequestResponse,
    RequestStream,
    RequestSubscription,
    Setup,
)

REQUESTS = (RequestResponse, RequestFnf, RequestStream, RequestChannel, RequestSubscription)
SETUP_CODES = frozenset({INVALID_SETUP, UNSUPPORTED_SETUP, REJECTED_SETUP, REJECTED_RESUME})
CONNECTION_CODES = SETUP_CODES | {CONNECTION_ERROR, CONNECTION_CLOSE}
# Bytes of a fragment that are not metadata or data, at most: length prefix, header, metadata
# length and REQUEST_STREAM/CHANNEL's request N (the draft's wider fields included).
FRAGMENT_OVERHEAD = 4 + 12 + 4 + 8

# Rules the endpoint itself cites (a checked send cites whatever the judge finds).
RULE = {
    "setup-first": "RS-SETUP-1",  # a server's first frame from the client is not SETUP
    "id-exhausted": "RS-STREAMID-3",  # every stream id has been used
    "lease": "RS-LEASE-4",  # a request beyond the lease this side granted
    "ignored": "RS-UNEXPECTED-1",  # a frame the spec says to ignore
}


# The endpoint's states are the protocol's (CLOSING: ERROR[CONNECTION_CLOSE] exchanged, waiting for the
# streams to end); the name stays for the reference peer and the tests that import it.
EndpointState = ConnectionState


@dataclass(frozen=True, slots=True, kw_only=True)
class SetupRejected:
    """The server rejected the client's SETUP (the ERROR is queued; the connection closes)."""

    setup: Frame
    error_code: int
    reason: str


def default_setup(profile: str, *, keepalive_ms: int = 30_000, lifetime_ms: int = 90_000, lease: bool = False,
                  data: bytes = b"") -> Setup:
    """The kit's SETUP (bindings.md §2); the draft counts time in nanoseconds in 32 bits."""
    if profile == "reactivesocket-draft":
        cap = 2**32 - 1
        return Setup(major_version=0, minor_version=0, keepalive_interval=min(keepalive_ms * 10**6, cap),
                     max_lifetime=min(lifetime_ms * 10**6, cap), lease=lease,
                     metadata_mime=b"application/octet-stream", data_mime=b"text/plain", data=data)
    return Setup(keepalive_interval=keepalive_ms, max_lifetime=lifetime_ms, lease=lease,
                 metadata_mime=b"application/octet-stream", data_mime=b"text/plain", data=data)


def stream_error(profile: str, stream_id: int, code: int, message: str) -> Error:
    """ERROR ``code`` on a stream; the draft's ERROR has no code, so there it is always APPLICATION_ERROR."""
    return Error(stream_id=stream_id, error_code=APPLICATION_ERROR if profile == "reactivesocket-draft" else code,
                 data=message.encode())
