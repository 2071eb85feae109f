"""Every deliberate fault of the Ditto reference peer: ``FAULTS``.

A fault is a name, the rule it breaks (a Ditto rule ID of DITTO.md / the
catalogue), a description, and the policy hooks it replaces.  ``build_policy``
installs the chosen faults on a fresh ``Policy``: each replacement is called as
``hook(policy, base, *args)`` with ``base`` the method it replaces, so faults
combine.  Wire faults replace ``encode``: they rewrite a message's bytes on the
way out, so the codec and the session have no fault switches.

The layout is every peer's (``rsio/faults/``, ``rsocket/faults/``): ``declare`` holds
the fault table and the helpers; one module per area declares its faults there
(``protocol``: subscriptions, demand, cancel, errors, search pages, the test
publishers; ``wire``: envelope, headers, topic, payload schemas, line framing); this
module imports the areas, so it is the one place they are gathered.
"""

from __future__ import annotations

from . import protocol, wire  # each declares its faults on declare.FAULT_TABLE
from .declare import FAULTS, Base, Fault, build_policy, fault, first_on_connection, known_rule, once

__all__ = ["FAULTS", "Base", "Fault", "build_policy", "fault", "first_on_connection", "known_rule", "once",
           "protocol", "wire"]
