"""The shape every binding's reference peer gives its deliberate faults: one fault table per peer.

A fault is a name, the catalogue rule it breaks, a description, and the hooks of
the peer's ``Policy`` it replaces.  ``FaultTable.build_policy`` installs the
chosen faults on a fresh policy: each replacement is called as
``hook(policy, base, *args)`` with ``base`` the method it replaces, so faults
combine and the sans-IO core has no fault switches.  ``profiles`` names the
wire profiles a fault shows on (the self-check runs only those; empty: all);
``tolerate`` names rules the peer's own send checks let pass while it is on.
``window`` marks a fault that shows only if the peer acts within a time window the
scenario gives it (``hs-stream-before-hello``: its early frame must arrive before the
kit's clientHello, 0.1 s after connecting): a starved peer process misses it, so the
self-check tries such a fault again rather than calling it missed.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class Fault:
    name: str
    rule: str
    description: str
    policy: type  # the peer's Policy class, whose hooks the fault may replace
    hooks: dict[str, Callable[..., Any]] = field(default_factory=dict)
    profiles: tuple[str, ...] = ()
    tolerate: frozenset[str] = frozenset()
    window: bool = False

    def on(self, hook: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Decorator: the function replaces policy hook ``hook`` while this fault is on."""
        if not callable(getattr(self.policy, hook, None)):
            raise TypeError(f"fault {self.name}: Policy has no hook {hook!r}")

        def register(function: Callable[..., Any]) -> Callable[..., Any]:
            self.hooks[hook] = function
            return function

        return register


class FaultTable:
    """One peer's faults by name; ``accepts(rule)`` says which catalogue rules its faults may cite."""

    def __init__(self, policy: type, accepts: Callable[[str], bool], rules_are: str) -> None:
        self.policy, self.accepts, self.rules_are = policy, accepts, rules_are
        self.faults: dict[str, Fault] = {}

    def fault(self, name: str, rule: str, description: str, *, profiles: tuple[str, ...] = (),
              tolerate: Iterable[str] = (), window: bool = False) -> Fault:
        if not self.accepts(rule):
            raise ValueError(f"fault {name}: {rule} is not {self.rules_are}")
        if name in self.faults:
            raise ValueError(f"fault {name} is declared twice")
        declared = self.faults[name] = Fault(name, rule, description, self.policy, profiles=profiles,
                                             tolerate=frozenset(tolerate), window=window)
        return declared

    def build_policy(self, names: Iterable[str]) -> Any:
        policy = self.policy()
        chosen = tuple(names)
        for name in chosen:
            if name not in self.faults:
                raise ValueError(f"unknown fault {name!r}; --list-faults shows them all")
            declared = self.faults[name]
            for hook, function in declared.hooks.items():
                setattr(policy, hook, functools.partial(function, policy, getattr(policy, hook)))
            if declared.tolerate:
                policy.tolerate |= declared.tolerate
        policy.faults = chosen
        return policy


def first_time(marks: Any, mark: str) -> bool:
    """True the first time ``mark`` is asked for in ``marks`` (a set kept on a flow, a subscription, ...)."""
    if mark in marks:
        return False
    marks.add(mark)
    return True


def first_on_connection(policy: Any, mark: str) -> bool:
    """True the first time ``mark`` is asked for on this connection (the policy's per-connection ``state``)."""
    if policy.state.get(mark):
        return False
    policy.state[mark] = True
    return True
