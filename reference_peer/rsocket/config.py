"""Settings of the RSocket reference peer: profile, MTU, lease, keepalive, freedoms and faults."""

from __future__ import annotations

from dataclasses import dataclass, field

from rsio_tck.bindings.rsocket.codec import DEFAULT_LIMITS, RSocketLimits


@dataclass(frozen=True, slots=True, kw_only=True)
class PeerConfig:
    profile: str = "rsocket-1.0"
    limits: RSocketLimits = field(default_factory=lambda: DEFAULT_LIMITS)
    # Largest frame this peer sends (without length prefix); larger payloads are fragmented.  None: no limit.
    mtu: int | None = None
    # LEASE this peer grants when the remote's SETUP asks for leases: (time-to-live ms, requests).
    lease_ttl_ms: int = 60_000
    lease_requests: int = 1000
    # As a client: the SETUP's keepalive interval and max lifetime (ms), and whether it asks for leases.
    keepalive_ms: int = 30_000
    lifetime_ms: int = 90_000
    lease: bool = False
    # Close a connection that sends nothing for its max lifetime (the spec leaves it to the application).
    enforce_lifetime: bool = False
    # Freedoms the spec leaves to an implementation, drawn reproducibly from ``seed`` (freedoms.py).
    freedoms: bool = True
    seed: int = 0
    # Write at most this many bytes a write, each once the last left (0: off; reference_peer/tiny_writes.py).
    tiny_writes: int = 0
    # How this peer picks the stream ids of its own requests (freedoms.ID_CHOICES; the draft only);
    # None: the seeded freedoms choose per connection.
    ids: str | None = None
    faults: tuple[str, ...] = ()
    # Streams the remote may hold open on one connection; one more is answered ERROR[REJECTED].
    max_streams: int = 256
    # tck/subscribe: reports waiting for outer demand before the outer stream fails.
    max_pending_reports: int = 4096
    # Transport write buffer: production waits while more than this is unwritten.
    write_high: int = 256 * 1024
    # SO_SNDBUF of the socket (None: the kernel's autotuning): bounds what sits in the kernel, so a
    # CANCEL takes effect after less data in flight.
    socket_send_buffer: int | None = 64 * 1024
    # Seconds the shell gives an orderly close (RSocket has no goodbye exchange) and a lingering transport.
    goodbye_timeout: float = 2.0
    linger: float = 2.0
    # fire-and-forget counters of tck/fnf?key=K, shared by every connection of one peer.
    fnf_counts: dict[str, int] = field(default_factory=dict, compare=False, hash=False)
