"""The RS-IO binding (rsio-v0; seeds 000/002): wire profiles ``msgpack`` and ``varint``.

Theory of operation.  ``wire`` holds the frames and codecs; ``model`` (``ConnectionModel``), ``handshake``
and ``split`` the parts of the connection model only RS-IO has (hello, goodbye, split elements);
``mapping`` maps each frame onto the contract's signals; ``contract`` judges the test publishers of
rsio-v0 section 8; ``adapter`` is the scenario adapter, ``endpoint`` the sans-IO endpoint, and
``binding`` the ``BINDING`` the kit's registry finds (``rsio_tck.binding_registry``), with the
optional hooks (``dissect``, ``fuzz``, the Wireshark dissector ``rsio.lua``).
"""

from .binding import BINDING

__all__ = ["BINDING"]
