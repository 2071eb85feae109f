"""Every deliberate fault of the RSocket reference peer: one registry, ``FAULTS``.

A fault is a name, the rule it breaks (an RSocket rule ID of the catalogue), a
description, and the policy hooks it replaces.  ``build_policy`` installs the
chosen faults on a fresh ``Policy``: each replacement is called as
``hook(policy, base, *args)`` with ``base`` the method it replaces, so faults
combine.  Faults of the connection machinery replace ``make_endpoint`` with a
subclass of the sans-IO endpoint: they wrap the core from outside, the core
has no fault switches.  The session sends unchecked while any fault is on.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from rsio_tck.rules import RULES

from .policy import Policy

Base = Callable[..., Any]


@dataclass(slots=True)
class Fault:
    name: str
    rule: str
    description: str
    hooks: dict[str, Callable[..., Any]] = field(default_factory=dict)

    def on(self, hook: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Decorator: the function replaces policy hook ``hook`` while this fault is on."""
        if not callable(getattr(Policy, hook, None)):
            raise TypeError(f"fault {self.name}: Policy has no hook {hook!r}")

        def register(function: Callable[..., Any]) -> Callable[..., Any]:
            self.hooks[hook] = function
            return function

        return register


FAULTS: dict[str, Fault] = {}


def fault(name: str, rule: str, description: str) -> Fault:
    if rule not in RULES or not rule.startswith("RS-"):
        raise ValueError(f"fault {name}: {rule} is not a rule of the RSocket catalogue")
    if name in FAULTS:
        raise ValueError(f"fault {name} is declared twice")
    declared = FAULTS[name] = Fault(name, rule, description)
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


from . import faults_table  # noqa: E402,F401  (registers every fault)

__all__ = ["FAULTS", "Base", "Fault", "build_policy", "fault"]
