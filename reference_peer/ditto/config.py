"""Settings of the Ditto reference peer: profile (for the log: both are served), limits, freedoms and faults."""

from __future__ import annotations

from dataclasses import dataclass, field

from rsio_tck.bindings.ditto.codec import DEFAULT_LIMITS, DittoLimits


@dataclass(frozen=True, slots=True, kw_only=True)
class PeerConfig:
    # The peer serves both profiles on every connection (the subscribe's topic decides); this one is logged.
    profile: str = "streaming"
    limits: DittoLimits = field(default_factory=lambda: DEFAULT_LIMITS)
    # Freedoms the protocol leaves to a publisher, drawn reproducibly from ``seed`` (freedoms.py).
    freedoms: bool = True
    seed: int = 0
    # Write at most this many bytes a write, each once the last left (0: off; reference_peer/tiny_writes.py).
    tiny_writes: int = 0
    # Freedoms switched on for every connection whatever the seed draws (``--freedom``; freedoms.FORCEABLE).
    forced_freedoms: tuple[str, ...] = ()
    faults: tuple[str, ...] = ()
    # Which subscriptionIds every connection gives (freedoms.ID_CHOICES); None: fresh ones.
    ids: str | None = None
    # Live subscriptions one connection may hold; one more gets created, then failed (429) on its first request.
    max_subscriptions: int = 256
    # Events one production round sends before the transport is drained and input read again.
    batch: int = 256
    # Transport write buffer: production waits while more than this is unwritten.
    write_high: int = 256 * 1024
    # Seconds the shell gives an orderly close and a lingering transport.
    goodbye_timeout: float = 2.0
    linger: float = 2.0
