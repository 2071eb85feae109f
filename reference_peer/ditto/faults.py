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

import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rsio_tck.bindings.ditto.rules import RULES as CODEC_RULES
from rsio_tck.rules import RULES as CATALOGUE

from .policy import Policy

if TYPE_CHECKING:
    from .session import Subscription

Base = Callable[..., Any]

# The protocol rules of DITTO.md, judged above the codec (the ditto-kit helper writes their texts into
# tck/rules.py and SPEC.md); the codec's own rules are CODEC_RULES.  The DITTO-TCK numbering is the
# order of DITTO.md's sentence: 1 tck/range, 2 tck/infinite, 3 tck/error, 4 the search collection.
PROTOCOL_RULES = frozenset({
    "DITTO-SUB-1", "DITTO-SUB-2", "DITTO-SUB-3", "DITTO-SUB-4", "DITTO-SUB-5", "DITTO-SUB-6", "DITTO-SUB-7",
    "DITTO-SUB-8", "DITTO-DEM-1", "DITTO-DEM-2", "DITTO-DEM-3", "DITTO-DEM-4", "DITTO-CAN-1", "DITTO-ERR-1",
    "DITTO-SEARCH-6", "DITTO-TCK-1", "DITTO-TCK-2", "DITTO-TCK-3", "DITTO-TCK-4", "DITTO-WS-1",
})


def known_rule(rule: str) -> bool:
    return rule in CATALOGUE or rule in CODEC_RULES or rule in PROTOCOL_RULES


@dataclass(slots=True)
class Fault:
    name: str
    rule: str
    description: str
    hooks: dict[str, Callable[..., Any]] = field(default_factory=dict)
    # The profiles whose subscriptions show the fault (the self-check runs only those); empty: both.
    profiles: tuple[str, ...] = ()

    def on(self, hook: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Decorator: the function replaces policy hook ``hook`` while this fault is on."""
        if not callable(getattr(Policy, hook, None)):
            raise TypeError(f"fault {self.name}: Policy has no hook {hook!r}")

        def register(function: Callable[..., Any]) -> Callable[..., Any]:
            self.hooks[hook] = function
            return function

        return register


FAULTS: dict[str, Fault] = {}


def fault(name: str, rule: str, description: str, profiles: tuple[str, ...] = ()) -> Fault:
    if not rule.startswith("DITTO-") or not known_rule(rule):
        raise ValueError(f"fault {name}: {rule} is not a Ditto rule")
    if name in FAULTS:
        raise ValueError(f"fault {name} is declared twice")
    declared = FAULTS[name] = Fault(name, rule, description, profiles=profiles)
    return declared


def build_policy(names: Iterable[str]) -> Policy:
    policy = Policy()
    chosen = tuple(names)
    for name in chosen:
        if name not in FAULTS:
            raise ValueError(f"unknown fault {name!r}; --list-faults shows them all")
        for hook, function in FAULTS[name].hooks.items():
            setattr(policy, hook, functools.partial(function, policy, getattr(policy, hook)))
    policy.faults = chosen
    return policy


def once(sub: Subscription, mark: str) -> bool:
    """True the first time ``mark`` is asked for on ``sub``."""
    if mark in sub.marks:
        return False
    sub.marks.add(mark)
    return True


def first_on_connection(p: Policy, mark: str) -> bool:
    """True the first time ``mark`` is asked for on this connection."""
    if p.state.get(mark):
        return False
    p.state[mark] = True
    return True


from . import faults_protocol, faults_wire  # noqa: E402,F401  (each registers its faults)

__all__ = ["FAULTS", "PROTOCOL_RULES", "Base", "Fault", "build_policy", "fault", "first_on_connection", "known_rule",
           "once"]
