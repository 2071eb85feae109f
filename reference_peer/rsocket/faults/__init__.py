"""Every deliberate fault of the RSocket reference peer: ``FAULTS``.

A fault is a name, the rule it breaks (an RSocket rule ID of the catalogue), a
description, and the policy hooks it replaces.  ``build_policy`` installs the
chosen faults on a fresh ``Policy``: each replacement is called as
``hook(policy, base, *args)`` with ``base`` the method it replaces, so faults
combine.  Faults of the connection machinery replace ``make_endpoint`` with a
subclass of the sans-IO endpoint: they wrap the core from outside, the core
has no fault switches.  The session sends unchecked while any fault is on.

The layout is every peer's (``rsio/faults/``, ``ditto/faults/``): ``declare`` holds
the fault table and the helpers; one module per area declares its faults there
(``connection``: SETUP, KEEPALIVE, LEASE, ERROR, METADATA_PUSH, the unexpected;
``streams``: stream ids, flow control, stream sequences, request-response,
fire-and-forget, channel; ``wire``: malformed frames, broken fragment chains); this
module imports the areas, so it is the one place they are gathered.
"""

from __future__ import annotations

from . import connection, streams, wire  # each declares its faults on declare.FAULT_TABLE
from .declare import (
    FAULTS,
    Base,
    Fault,
    build_policy,
    endpoint_override,
    fault,
    first_on_connection,
    once_per_flow,
)

__all__ = ["FAULTS", "Base", "Fault", "build_policy", "connection", "endpoint_override", "fault",
           "first_on_connection", "once_per_flow", "streams", "wire"]
