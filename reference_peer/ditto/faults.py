"""Every deliberate fault of the Ditto reference peer: one registry, ``FAULTS``.

A fault is a name, the rule it breaks (a Ditto rule ID of DITTO.md / the
catalogue), a description, and the policy hooks it replaces.  ``build_policy``
installs the chosen faults on a fresh ``Policy``: each replacement is called as
``hook(policy, base, *args)`` with ``base`` the method it replaces, so faults
combine.  Wire faults replace ``encode``: they rewrite a message's bytes on the
way out, so the codec and the session have no fault switches.

The declarations live in two modules, each registering its faults here when
imported: ``faults_protocol`` (subscriptions, demand, cancel, errors, search
pages, the test publishers) and ``faults_wire`` (envelope, headers, topic,
payload schemas, line framing).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rsio_tck.catalogue import RULES

from ..fault_registry import Fault, FaultRegistry, first_on_connection, first_time
from .policy import Policy

if TYPE_CHECKING:
    from .session import Subscription

Base = Callable[..., Any]


def known_rule(rule: str) -> bool:
    """A Ditto rule of the catalogue (the codec's and the protocol's rules are all in tck/catalogue/ditto.py)."""
    return rule.startswith("DITTO-") and rule in RULES


REGISTRY = FaultRegistry(Policy, known_rule, "a Ditto rule of the catalogue")
FAULTS: dict[str, Fault] = REGISTRY.faults
fault = REGISTRY.fault
build_policy = REGISTRY.build_policy


def once(sub: Subscription, mark: str) -> bool:
    """True the first time ``mark`` is asked for on ``sub``."""
    return first_time(sub.marks, mark)


from . import faults_protocol, faults_wire  # noqa: E402,F401  (each registers its faults)

__all__ = ["FAULTS", "Base", "Fault", "build_policy", "fault", "first_on_connection", "known_rule",
           "once"]
