"""RSocket (sans-IO): frames, the two wire profiles, fragment reassembly, the judge, and ``BINDING``.

Profiles: ``rsocket-1.0`` (Protocol.md; what real implementations speak) and
``reactivesocket-draft`` (seed 001's framing exactly as written).  Each profile
gives an encoder and an incremental decoder, with a 24-bit (1.0) or 31-bit
(draft) length prefix per frame on stream transports, or none on message
transports (WebSocket: one message is one frame, ``length_prefix=False``).
DECISIONS.md records what the wire layer decided where the specifications are
silent or ambiguous; SPEC.md ("RSocket conformance rules") holds the rules and
the decisions above the codec.  ``BINDING`` (``binding.py``) is what the rest of
the kit uses: the judge (``judge.py`` over ``model.py`` and ``interactions.py``)
is imported only when asked for.
"""

from __future__ import annotations

from .binding import BINDING
from .codec import DEFAULT_LIMITS, FrameDecoder, FrameEncoder, Profile, RSocketLimits
from .fragments import Reassembler, fragment
from .frames import FRAME_TYPES, Decoded, Frame, IgnoredFrame, describe
from .profiles import PROFILE_NAMES, get_profile

__all__ = [
    "BINDING",
    "DEFAULT_LIMITS",
    "FRAME_TYPES",
    "Decoded",
    "Frame",
    "FrameDecoder",
    "FrameEncoder",
    "IgnoredFrame",
    "PROFILE_NAMES",
    "Profile",
    "RSocketLimits",
    "Reassembler",
    "describe",
    "fragment",
    "get_profile",
]
