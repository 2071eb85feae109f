"""The RSocket peer's fault table, ``FAULT_TABLE``, and what its fault areas declare faults with.

``fault(name, rule, description)`` declares a fault on ``FAULT_TABLE`` (an RSocket rule ID
of the catalogue); ``endpoint_override`` declares one that replaces ``make_endpoint``
with a subclass of the sans-IO endpoint overriding one method, so faults of the
connection machinery wrap the core from outside.  The area modules of this package
(``connection``, ``streams``, ``wire``) call them when the package imports them.  This
module imports no area: the package's ``__init__`` gathers them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rsio_tck.bindings.rsocket.endpoint import Endpoint
from rsio_tck.catalogue import RULES

from ...fault_model import Fault, FaultTable, first_on_connection, first_time
from ..policy import Policy

if TYPE_CHECKING:
    from ..connection import RSocketConnection
    from ..flows import Flow

Base = Callable[..., Any]

FAULT_TABLE = FaultTable(Policy, lambda rule: rule in RULES and rule.startswith("RS-"),
                         "a rule of the RSocket catalogue")
FAULTS: dict[str, Fault] = FAULT_TABLE.faults
fault = FAULT_TABLE.fault
build_policy = FAULT_TABLE.build_policy


def once_per_flow(flow: Flow, mark: str) -> bool:
    """True the first time ``mark`` is asked for on ``flow``."""
    return first_time(flow.marks, mark)


def endpoint_override(name: str, rule: str, description: str, method: str,
                      make: Callable[[Any], Callable[..., Any]]) -> Fault:
    """A fault that overrides endpoint method ``method``: ``make(parent_method)`` returns the override."""
    return endpoint_overrides(name, rule, description, lambda parent: {method: make(getattr(parent, method))})


def endpoint_overrides(name: str, rule: str, description: str,
                       make: Callable[[type[Endpoint]], dict[str, Callable[..., Any]]]) -> Fault:
    """A fault that overrides several endpoint methods: ``make(parent_class)``, called once per connection (so
    the overrides may share state of that connection), returns them by name."""
    declared = fault(name, rule, description)

    @declared.on("make_endpoint")
    def _make(p: Policy, base: Base, s: RSocketConnection, **options: Any) -> Endpoint:
        endpoint: Endpoint = base(s, **options)
        parent = type(endpoint)
        methods = make(parent)
        endpoint.__class__ = type(f"{parent.__name__}_{'_'.join(methods)}", (parent,), methods)
        return endpoint

    return declared

__all__ = ["FAULTS", "Base", "Fault", "build_policy", "endpoint_override", "endpoint_overrides", "fault",
           "first_on_connection", "once_per_flow"]
