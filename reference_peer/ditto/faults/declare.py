"""The Ditto peer's fault table, ``FAULT_TABLE``, and what its fault areas declare faults with.

``fault(name, rule, description)`` declares a fault on ``FAULT_TABLE`` (a Ditto rule ID
of DITTO.md / the catalogue); the area modules of this package (``protocol``, ``wire``)
call it when the package imports them.  This module imports no area: the package's
``__init__`` gathers them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rsio_tck.catalogue import RULES

from ...fault_model import Fault, FaultTable, first_on_connection, first_time
from ..policy import Policy

if TYPE_CHECKING:
    from ..connection import Subscription

Base = Callable[..., Any]


def known_rule(rule: str) -> bool:
    """A Ditto rule of the catalogue (the codec's and the protocol's rules are all in tck/catalogue/ditto.py)."""
    return rule.startswith("DITTO-") and rule in RULES


FAULT_TABLE = FaultTable(Policy, known_rule, "a Ditto rule of the catalogue")
FAULTS: dict[str, Fault] = FAULT_TABLE.faults
fault = FAULT_TABLE.fault
build_policy = FAULT_TABLE.build_policy


def once(sub: Subscription, mark: str) -> bool:
    """True the first time ``mark`` is asked for on ``sub``."""
    return first_time(sub.marks, mark)

__all__ = ["FAULTS", "Base", "Fault", "build_policy", "fault", "first_on_connection", "known_rule",
           "once"]
