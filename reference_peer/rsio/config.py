"""Settings of a reference peer: codec, limits, bounds, freedoms and faults."""

from __future__ import annotations

from dataclasses import dataclass, field

from rsio_tck.bindings.rsio.wire import DEFAULT_LIMITS, Limits
from rsio_tck.semantics.demand import UNBOUNDED

__all__ = ["UNBOUNDED", "PeerConfig"]


@dataclass(frozen=True, slots=True, kw_only=True)
class PeerConfig:
    codec: str = "msgpack"
    # What this peer accepts (and, symmetrically, the most it sends in one frame).
    limits: Limits = field(default_factory=lambda: DEFAULT_LIMITS)
    # Subscriptions the remote may hold on one connection; one more is answered onSubscribe + onError.
    max_subscriptions: int = 256
    # Transport write buffer: production pauses above ``write_high`` and resumes below ``write_low``.
    write_high: int = 256 * 1024
    write_low: int = 64 * 1024
    # SO_SNDBUF of TCP/unix sockets (None: the kernel's autotuning): bounds what sits in the
    # kernel, so a cancel or a goodbye takes effect after less data in flight.
    socket_send_buffer: int | None = 64 * 1024
    # Bytes of one packed frame or one part this peer sends (also capped by ``limits``).
    frame_cap: int = 256 * 1024
    # Variable-size elements longer than this are always sent split.
    split_threshold: int = 1024 * 1024
    # tck/subscribe reports waiting for outer demand before the report stream fails.
    max_pending_reports: int = 4096
    # Elements fetched ahead from application publishers (never beyond remote demand).
    app_window: int = 64
    # Freedoms of rsio-v0 exercised at random, reproducibly from ``seed`` (see policy.Freedoms).
    freedoms: bool = True
    seed: int = 0
    # Every integer element of tck/range, tck/infinite and tck/error in its widest MessagePack
    # form (legal; the kit warns under TCK-9), whether or not the freedoms are on.
    wide_ints: bool = False
    # Write at most this many bytes a write, each once the last left (0: off; tiny_writes.py, --tiny-writes).
    tiny_writes: int = 0
    # How tck/subscribe picks its inner subscriptions' Ids (freedoms.ID_CHOICES), for every connection;
    # None: the seeded freedoms choose per connection (fresh ones with freedoms off).
    ids: str | None = None
    faults: tuple[str, ...] = ()
    # Seconds: a client must say hello within ``handshake_timeout``; an initiated goodbye
    # waits ``goodbye_timeout`` for its acknowledgement; after the last goodbye the peer
    # drains the transport for at most ``linger`` before closing.
    handshake_timeout: float = 30.0
    goodbye_timeout: float = 2.0
    linger: float = 2.0

    def frame_bytes(self) -> int:
        """The largest payload (packed data, one part) this peer puts in one frame."""
        return max(1, min(self.frame_cap, self.limits.max_frame, self.limits.max_element))
