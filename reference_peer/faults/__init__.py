"""Every deliberate fault of the reference peer: one registry, ``FAULTS``.

A fault is a name, the rule it breaks (an ID of ``rsio_tck.rules.RULES``), a
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

import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import msgpack

from rsio_tck.rules import RULES

from ..policy import Policy

if TYPE_CHECKING:
    from ..flows import Outflow
    from ..session import PeerSession

Base = Callable[..., Any]


@dataclass(slots=True)
class Fault:
    name: str
    rule: str
    description: str
    tolerate: frozenset[str] = frozenset()
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


def fault(name: str, rule: str, description: str, *, tolerate: Iterable[str] = ()) -> Fault:
    if rule not in RULES:
        raise ValueError(f"fault {name}: unknown rule {rule}")
    declared = FAULTS[name] = Fault(name, rule, description, frozenset(tolerate))
    return declared


def build_policy(names: Iterable[str]) -> Policy:
    policy = Policy()
    chosen = tuple(names)
    for name in chosen:
        if name not in FAULTS:
            raise ValueError(f"unknown fault {name!r}; --list-faults shows them all")
        declared = FAULTS[name]
        for hook, function in declared.hooks.items():
            setattr(policy, hook, functools.partial(function, policy, getattr(policy, hook)))
        policy.tolerate |= declared.tolerate
    policy.faults = chosen
    return policy


def _once(flow: Outflow, mark: str) -> bool:
    """True the first time ``mark`` is asked for on ``flow``."""
    if mark in flow.marks:
        return False
    flow.marks.add(mark)
    return True


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
