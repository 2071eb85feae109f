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

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rsio_tck.bindings.rsocket.endpoint import Endpoint
from rsio_tck.catalogue import RULES

from ..fault_registry import Fault, FaultRegistry, first_on_connection, first_time
from .policy import Policy

if TYPE_CHECKING:
    from .flows import Flow
    from .session import Session

Base = Callable[..., Any]

REGISTRY = FaultRegistry(Policy, lambda rule: rule in RULES and rule.startswith("RS-"),
                         "a rule of the RSocket catalogue")
FAULTS: dict[str, Fault] = REGISTRY.faults
fault = REGISTRY.fault
build_policy = REGISTRY.build_policy


def once_per_flow(flow: Flow, mark: str) -> bool:
    """True the first time ``mark`` is asked for on ``flow``."""
    return first_time(flow.marks, mark)


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

__all__ = ["FAULTS", "Base", "Fault", "build_policy", "endpoint_override", "fault", "first_on_connection",
           "once_per_flow"]
