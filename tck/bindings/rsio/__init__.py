"""The RS-IO binding (rsio-v0; seeds 000/002): wire profiles ``msgpack`` and ``varint``.

``wire`` holds the frames and codecs; ``session``, ``handshake`` and ``split`` the parts of
the connection model only RS-IO has (hello, goodbye, split elements); ``mapping`` maps each
frame onto the contract's signals; ``contract`` judges the test publishers of rsio-v0 section 8.
"""

from .binding import BINDING

__all__ = ["BINDING"]
