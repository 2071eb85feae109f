"""Scapy layer for RS-IO: build frames as packets, mutate them, dissect streams and captures.

- ``packet_class(codec, message)``: the ``Packet`` class of one message type in one codec.
- ``from_frame(frame, codec)`` / ``pkt.to_frame()``: between tck frames and packets;
  ``bytes(from_frame(f, c))`` is the tck codec's encoding of ``f``.
- ``dissect(data, codec)``: the whole frames of a byte stream, ``Raw`` for the rest.
- ``bind_rsio(port, codec)``: TCP payloads to/from ``port`` dissect as RS-IO (``rdpcap``);
  ``bind(port, profile)`` is the same under the name every binding's layer gives it
  (``rsio_tck.dissect.bind_layer`` calls it through ``RsioBinding.scapy_layer()``).

This package only builds and dissects; it never sends or sniffs.
"""

from __future__ import annotations

from .fields import IncompleteField, msgpack_header
from .layers import CLASSES, FIXED_CLASSES, MESSAGES, RSIOFrame, from_frame, packet_class, sized_class
from .stream import RSIOContinuation, RSIOStream, bind_rsio, dissect, plan


def bind(port: int, profile: str = "msgpack") -> None:
    """TCP payloads to/from ``port`` dissect as RS-IO frames of ``profile`` (the binding-neutral name)."""
    bind_rsio(port, profile)


__all__ = [
    "bind",
    "CLASSES",
    "FIXED_CLASSES",
    "IncompleteField",
    "MESSAGES",
    "RSIOContinuation",
    "RSIOFrame",
    "RSIOStream",
    "bind_rsio",
    "dissect",
    "from_frame",
    "msgpack_header",
    "packet_class",
    "plan",
    "sized_class",
]
