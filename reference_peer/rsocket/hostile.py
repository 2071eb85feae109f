"""RSocket's material for the hostile driver (``reference_peer.hostile``): frames only, no logic.

A server answers no SETUP (Protocol.md: the connection is set up by the client's SETUP alone),
so the opening gets nothing back.  A hostile client (``--connect``) opens with the kit's own
SETUP (its scenario adapter's), so what follows is hostile, not the opening.  The valid frame is PAYLOAD NEXT on stream 1, which the kit
opened or not: either way it is well formed.  The huge header is the length prefix of the
largest frame (16 MiB - 1) and the start of a PAYLOAD frame.
"""

from __future__ import annotations

from rsio_tck.binding import get_binding
from rsio_tck.bindings.rsocket.codec import FRAME_MAX
from rsio_tck.bindings.rsocket.frames import Keepalive, Lease, Payload

from ..hostile import Burst, HostileMaterial


def hostile_material(profile: str) -> HostileMaterial:
    binding = get_binding("rsocket")
    encoder = binding.encoder(profile)
    bare = binding.encoder(profile, length_prefix=False)  # type: ignore[call-arg]
    start = bare.encode(Payload(stream_id=1, next=True))
    fragment = encoder.encode(Payload(stream_id=1, follows=True, next=True, data=b"\x2a" * 1024))
    return HostileMaterial(
        answer=lambda opening: b"",
        frame=encoder.encode(Payload(stream_id=1, next=True, data=b"\x2a" * 16)),
        huge_header=encoder.profile.build_prefix(FRAME_MAX) + start,  # type: ignore[attr-defined]
        filler=b"\x2a",
        framing=lambda: binding.websocket_framing(profile),  # type: ignore[attr-defined]
        hello=b"".join(encoder.encode(frame) for frame in
                       binding.scenario_adapter(profile, {}).opening()),  # type: ignore[attr-defined]
        modes={
            "endless-fragments": Burst("PAYLOAD with the F flag on stream 1, forever: a payload that never ends",
                                       fragment),
            "keepalive-storm": Burst("KEEPALIVE with R (respond) as fast as the socket takes them, never reading "
                                     "the answers", encoder.encode(Keepalive(respond=True))),
            "lease-storm": Burst("LEASE frames as fast as the socket takes them, to a client that asked for none",
                                 encoder.encode(Lease(ttl=1000, number_of_requests=1))),
        },
    )
