"""RS-IO wire encoding: frames and the two codecs (wire profiles) of rsio-v0.

Theory of operation.  ``frames`` holds one frozen dataclass per frame type; ``codec`` the codec of a profile
(``Codec``: an incremental ``FrameDecoder`` that takes any chunking and a ``FrameEncoder``), built from
``msgpack_codec`` or ``varint_codec`` (with their integers in ``msgpack_ints`` and ``varints``); ``runs``
(``msgpack_runs``, ``varint_runs``) decodes floods of elements in one pass; ``limits`` bounds what a decoder
holds.  Nothing here does I/O: bytes in, frames out.
"""

from __future__ import annotations

from .codec import Codec, FrameDecoder, FrameEncoder
from .frames import FRAME_BY_CODE, FRAME_BY_NAME, FRAME_TYPES, ID_MAX, UNBOUNDED, Frame, describe
from .limits import DEFAULT_LIMITS, Limits

CODEC_NAMES = ("msgpack", "varint")


def get_codec(name: str) -> Codec:
    """The codec called ``name`` (``msgpack`` or ``varint``); ValueError names the choices."""
    if name == "msgpack":
        from .msgpack_codec import MsgpackCodec

        return MsgpackCodec()
    if name == "varint":
        from .varint_codec import VarintCodec

        return VarintCodec()
    raise ValueError(f"unknown codec {name!r}; choose one of {', '.join(CODEC_NAMES)}")


__all__ = [
    "CODEC_NAMES",
    "Codec",
    "DEFAULT_LIMITS",
    "FRAME_BY_CODE",
    "FRAME_BY_NAME",
    "FRAME_TYPES",
    "Frame",
    "FrameDecoder",
    "FrameEncoder",
    "ID_MAX",
    "Limits",
    "UNBOUNDED",
    "describe",
    "get_codec",
]
