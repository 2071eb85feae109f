"""The Ditto rules of the catalogue (``rsio_tck.catalogue``), as the Ditto wire layer cites them.

The rules live in ``tck/catalogue/ditto.py`` (areas ``DITTO-*``) and SPEC.md ("Ditto conformance
rules"); this module gives the codec, the topic parser and the schema checks the
Ditto part of that one catalogue, so every ``ProtocolViolation`` they raise names a
catalogue ID and its title.
"""

from __future__ import annotations

from ...catalogue import RULES as CATALOGUE
from ...catalogue import Rule

PREFIX = "DITTO-"

RULES: dict[str, Rule] = {rule_id: rule for rule_id, rule in CATALOGUE.items() if rule_id.startswith(PREFIX)}


def rule_title(rule: str) -> str:
    """``"DITTO-ENV-1: A Ditto Protocol message is ..."`` for messages and reports."""
    return f"{rule}: {RULES[rule].title}"
