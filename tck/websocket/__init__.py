"""WebSocket transport for every binding: the binding's byte stream carried in WebSocket messages.

Theory of operation.  The ``websockets`` library's sans-IO protocol objects
(``ClientProtocol``, ``ServerProtocol``) do the opening handshake and RFC 6455
framing: bytes in, events out.  ``link.WebSocketLink`` puts them between the
socket and a binding: received messages become the byte stream the binding's
unchanged decoder reads on TCP, and the binding's byte stream becomes messages.
How a binding's stream maps onto messages is the binding's optional hook
``websocket_framing(profile)`` (``framing.Framing``): RS-IO a byte stream in
binary messages whose boundaries mean nothing, RSocket one frame per binary
message, Ditto one envelope per text message.  ``link.Observer`` is the passive
variant for the proxy: it reads both directions of a relayed connection without
writing anything.  ``shells`` holds the thin asyncio shells (the kit's client
side, a server wrapper for any ``asyncio.Protocol``); the raw bytes they move
are recorded, so a pcap shows the real HTTP upgrade and the (masked) frames.
"""

from .framing import Framing, WebSocketError, framing_for

__all__ = ["Framing", "WebSocketError", "framing_for"]
