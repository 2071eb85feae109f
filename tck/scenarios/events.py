"""What a scenario connection's inboxes hold: ``Event``s, under the keys steps wait on.

A binding's scenario adapter turns each frame into ``(key, Event)`` pairs; ``KitSession`` sorts them
into one inbox per key, and the steps take them from there.  The keys are the connection itself
(``CONN``: hellos, goodbye, close), the target's own subscribes (``SUBSCRIBES``), and one per
subscription, ``("kit", n)`` for the kit's and ``("target", n)`` for the target's, as the adapter names them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

Key = tuple[str, int | None]
CONN: Key = ("conn", None)
SUBSCRIBES: Key = ("sub", None)


@dataclass(slots=True)
class Event:
    kind: str  # wire name; "onNext" for every delivered element; "close" for end of stream
    fields: dict[str, Any]
    index: int  # frame index in the connection (both directions)
    via: str = ""  # onNext, onNextPacked or split, for elements
    size: int = 0  # element bytes held (what the inbox's byte cap counts)
    frame: str = ""  # the wire name of the frame that carried it, where it differs from ``kind``
