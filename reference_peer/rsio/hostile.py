"""RS-IO's material for the hostile driver (``reference_peer.hostile``): frames only, no logic.

Theory of operation.  The driver knows no wire; it asks the RS-IO peer (``rsio.py``) for the
bytes below, built with the codec of the profile in use (``msgpack`` or ``varint``), and
writes them as each hostile mode says.  (This module sits beside ``rsio.py`` as
``rsocket/hostile.py`` sits in its package; the name ``hostile.py`` here is the driver's.)

- The answer: a serverHello of version 0, whatever the opening held.  The loose handshake
  lets a server send it before reading the clientHello (rsio-v0 section 3, HS-7), so it is
  the right first frame in every case the kit opens with; the kit sends version 0 (HS-6).
- The valid frame: onNext on Id 1, a MessagePack element.  Well formed in both codecs;
  whether the kit subscribed Id 1 yet or not, it is a publisher signal without an
  onSubscribe before it (STR-1, or STR-4 for an Id never subscribed).
- The huge header: RS-IO frames have no outer length (rsio-v0 section 1), so the largest
  length lives in a field: an onNext's element announcing the most the codec can say, a
  msgpack bin32 of 2^32-1 bytes, or a varint length of 2^64-1 (10 bytes, the longest
  varint ERR-10 allows).  A receiver judges it on the header against its limit (ERR-8).
- Its own modes: a split element that never ends (onNextPart forever, never the
  onNextLastPart, rsio-v0 section 6) and onNext for an Id the kit never subscribes (STR-4).
"""

from __future__ import annotations

import msgpack

from rsio_tck.binding import get_binding
from rsio_tck.bindings.rsio.wire.frames import OnNext, OnNextPart, ServerHello
from rsio_tck.bindings.rsio.wire.varints import uvarint

from ..hostile import Burst, HostileMaterial

# An Id no scenario subscribes (they use small numbers, 4242 and 2^63-1): 2^62 + 27, for issue 27.
NEVER = 2**62 + 27
PART = 1024  # bytes of each part of the endless split element
ONNEXT = OnNext.code  # the type byte starts every onNext in both codecs (one byte below 0x80)


def huge_element_header(profile: str) -> bytes:
    """The start of onNext(subscriber=1) whose element announces the largest length ``profile`` can write."""
    if profile == "msgpack":
        return bytes([ONNEXT, 0x01, 0xC6]) + b"\xff\xff\xff\xff"  # positive fixint 1, bin32 of 2^32-1
    return bytes([ONNEXT, 0x01]) + uvarint(2**64 - 1)  # varint Id 1, then a varint length of 2^64-1


def hostile_material(profile: str) -> HostileMaterial:
    binding = get_binding("rsio")
    encoder = binding.encoder(profile)
    element = msgpack.packb(42)  # elements of variable-size publishers are MessagePack values (section 8)
    return HostileMaterial(
        answer=lambda opening: encoder.encode(ServerHello(version=0, extensions=())),  # type: ignore[no-any-return]
        frame=encoder.encode(OnNext(subscriber=1, element=element)),
        huge_header=huge_element_header(profile),
        filler=b"\x2a",
        framing=lambda: binding.websocket_framing(profile),  # type: ignore[attr-defined]
        modes={
            "endless-split": Burst("onNextPart on Id 1 for one element, 1 KiB a part, forever: a split element "
                                   "whose onNextLastPart never comes",
                                   encoder.encode(OnNextPart(subscriber=1, element=0, data=b"\x2a" * PART))),
            "unknown-next-flood": Burst(f"onNext for Id {NEVER}, never subscribed, as fast as the socket takes them",
                                        encoder.encode(OnNext(subscriber=NEVER, element=element))),
        },
    )
