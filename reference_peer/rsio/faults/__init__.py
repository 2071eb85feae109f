"""Every deliberate fault of the RS-IO reference peer: ``FAULTS``, in catalogue order.

A fault is a name, the rule it breaks (an ID of ``rsio_tck.catalogue.RULES``), a
description, and the policy hooks it replaces.  ``build_policy`` installs the
chosen faults on a fresh ``Policy``: each replacement is called as
``hook(policy, base, *args)`` with ``base`` the method it replaces, so faults
combine.  Faults that write raw bytes (ERR-*) encode them for the session's
codec.  The peer switches off its own send checks when any fault is on.

The layout is every peer's (``rsocket/faults/``, ``ditto/faults/``): ``declare`` holds
the fault table and the helpers; one module per rule area declares its faults there
(``connection``: HS, EXT; ``streams``: STR, DEM, ID, PACK, SPLIT; ``closing``: BYE,
ERR; ``subscriber``: the subscriber side through tck/subscribe, and the test
publishers); this module imports the areas, so it is the one place they are gathered.
"""

from __future__ import annotations

from . import closing, connection, streams, subscriber  # each declares its faults on declare.FAULT_TABLE
from .declare import FAULTS, Base, Fault, build_policy, fault

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
