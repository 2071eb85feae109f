"""The rule catalogue: every normative rule of SPEC.md, by ID.

Theory of operation.  A rule is a frozen :class:`~.model.Rule` (ID, level, which party it
binds, title, source section).  Each binding's rules and areas sit in a module of their own
(``rsio``, ``rsocket``, ``ditto``); this package assembles them into the one lookup every
other module cites rules through, :data:`RULES`, in SPEC.md's order, and :data:`AREAS`, the
area titles the reports group rules under.  These tables are the one place rule IDs are
defined: SPEC.md states the same rules in prose (``tests/test_spec_catalogue.py`` checks
that the two agree, ID by ID, with level, binds and the "Untested against a target"
phrase), and the semantics tables, the codecs, the judges, the monitor, the scenarios, the
faults and the report columns cite rules only by these IDs.
"""

from __future__ import annotations

from .ditto import DITTO_AREAS, DITTO_RULES
from .model import Level, Rule
from .rsio import GOODBYE_OBLIGATION, PROTOCOL_ERRORS, RSIO_AREAS, RSIO_RULES
from .rsocket import RSOCKET_AREAS, RSOCKET_RULES

__all__ = ["AREAS", "GOODBYE_OBLIGATION", "PROTOCOL_ERRORS", "RULES", "UNTESTED_ON_TARGET", "Level", "Rule", "rule"]


AREAS: dict[str, str] = {**RSIO_AREAS, **RSOCKET_AREAS, **DITTO_AREAS}

RULES: dict[str, Rule] = {rule.id: rule for rule in RSIO_RULES + RSOCKET_RULES + DITTO_RULES}

# The phrase SPEC.md puts in a rule's Observed bullet when no scenario can make a target
# exercise it (``tests/test_spec_catalogue.py`` checks it against ``untested_on_target``).
UNTESTED_ON_TARGET = "Untested against a target"


def rule(rule_id: str) -> Rule:
    """The rule with this ID; a KeyError names the unknown ID."""
    try:
        return RULES[rule_id]
    except KeyError:
        raise KeyError(f"unknown rule ID {rule_id!r}") from None
