"""Every deliberate fault of the reference peer: one registry, ``FAULTS``.

A fault is a name, the rule it breaks (an ID of ``rsio_tck.catalogue.RULES``), a
description, and the policy hooks it replaces.  ``build_policy`` installs the
chosen faults on a fresh ``Policy``: each replacement is called as
``hook(policy, base, *args)`` with ``base`` the method it replaces, so faults
combine.  Faults that write raw bytes (ERR-*) encode them for the session's
codec.  The peer switches off its own send checks when any fault is on.

The declarations live in this package, grouped by rule area (``connection``:
HS, EXT; ``streams``: STR, DEM, ID, PACK, SPLIT; ``closing``: BYE, ERR;
``subscriber``: the subscriber side through tck/subscribe, and the test
publishers), and register themselves here when the package is imported.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import msgpack

from rsio_tck.catalogue import RULES

from ..fault_registry import Fault, FaultRegistry, first_time
from ..policy import Policy

if TYPE_CHECKING:
    from ..flows import Outflow
    from ..session import PeerSession

Base = Callable[..., Any]

REGISTRY = FaultRegistry(Policy, RULES.__contains__, "a rule of the catalogue")
FAULTS: dict[str, Fault] = REGISTRY.faults
fault = REGISTRY.fault
build_policy = REGISTRY.build_policy


def _once(flow: Outflow, mark: str) -> bool:
    """True the first time ``mark`` is asked for on ``flow``."""
    return first_time(flow.marks, mark)


def _uint(s: PeerSession, value: int) -> bytes:
    if s.config.codec == "varint":
        from rsio_tck.bindings.rsio.wire.varint_codec import uvarint

        return uvarint(value)
    return msgpack.packb(value)


def _text(s: PeerSession, payload: bytes) -> bytes:
    """A string field whose bytes are ``payload`` (valid UTF-8 or not)."""
    if s.config.codec == "varint":
        return _uint(s, len(payload)) + payload
    return bytes((0xA0 | len(payload),)) + payload if len(payload) < 32 else b"\xd9" + bytes((len(payload),)) + payload


def _element(flow: Outflow) -> bytes:
    return bytes(flow.element_size) if flow.element_size else msgpack.packb(0)




from . import closing, connection, streams, subscriber  # noqa: E402  (each registers its faults)

_AREAS = ("HS", "EXT", "STR", "DEM", "ID", "PACK", "SPLIT", "BYE", "ERR")


def _catalogue_order(item: tuple[str, Fault]) -> tuple[int, int]:
    name, declared = item
    group = 2 if name.startswith("tck-") else 1 if name.startswith("sub-") else 0
    area = declared.rule.rsplit("-", 1)[0]
    return group, _AREAS.index(area) if area in _AREAS else len(_AREAS)


_ordered = sorted(FAULTS.items(), key=_catalogue_order)
FAULTS.clear()
FAULTS.update(_ordered)

__all__ = ["FAULTS", "Base", "Fault", "build_policy", "closing", "connection", "fault", "streams", "subscriber"]
