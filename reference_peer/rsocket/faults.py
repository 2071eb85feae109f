"""Every deliberate fault of the RSocket reference peer: one registry, ``FAULTS``.

A fault is a name, the rule it breaks (an RSocket rule ID of the catalogue), a
description, and the policy hooks it replaces.  ``build_policy`` installs the
chosen faults on a fresh ``Policy``: each replacement is called as
``hook(policy, base, *args)`` with ``base`` the method it replaces, so faults
combine.  Faults of the connection machinery replace ``make_endpoint`` with a
subclass of the sans-IO endpoint: they wrap the core from outside, the core
has no fault switches.  The session sends unchecked while any fault is on.

The declarations live in three modules by area, each registering its faults
here when imported: ``faults_connection`` (SETUP, KEEPALIVE, LEASE, ERROR,
METADATA_PUSH, the unexpected), ``faults_streams`` (stream ids, flow control,
stream sequences, request-response, fire-and-forget, channel) and
``faults_wire`` (malformed frames, broken fragment chains).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rsio_tck.bindings.rsocket.endpoint import Endpoint
from rsio_tck.rules import RULES

from .policy import Policy

if TYPE_CHECKING:
    from .flows import Flow
    from .session import Session

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


def once_per_flow(flow: Flow, mark: str) -> bool:
    """True the first time ``mark`` is asked for on ``flow``."""
    if mark in flow.marks:
        return False
    flow.marks.add(mark)
    return True


def first_on_connection(p: Policy, mark: str) -> bool:
    """True the first time ``mark`` is asked for on this connection."""
    if p.state.get(mark):
        return False
    p.state[mark] = True
    return True


def endpoint_override(name: str, rule: str, description: str, method: str,
                      make: Callable[[Any], Callable[..., Any]]) -> Fault:
    """A fault that overrides endpoint method ``method``: ``make(parent_method)`` returns the override."""
    declared = fault(name, rule, description)

    @declared.on("make_endpoint")
    def _make(p: Policy, base: Base, s: Session, **options: Any) -> Endpoint:
        endpoint: Endpoint = base(s, **options)
        parent = type(endpoint)
        endpoint.__class__ = type(f"{parent.__name__}_{method}", (parent,), {method: make(getattr(parent, method))})
        return endpoint

    return declared


from . import faults_connection, faults_streams, faults_wire  # noqa: E402,F401  (each registers its faults)

__all__ = ["FAULTS", "Base", "Fault", "build_policy", "endpoint_override", "fault"]
