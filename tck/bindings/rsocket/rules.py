"""The RSocket rules, as a view of the one catalogue (``rsio_tck.catalogue``).

Every ``ProtocolViolation`` the RSocket codecs and the RSocket judge raise, and
every ``IgnoredFrame`` the codecs return, names one of these IDs.  They are
defined, with level, binds, title and source section (Protocol.md for RSocket 1.0,
seed 001 for the ReactiveSocket draft), in ``tck/catalogue/rsocket.py`` and stated in SPEC.md
("RSocket conformance rules"); this module only selects them, for the wire layer.
"""

from __future__ import annotations

from ...catalogue import RULES as CATALOGUE
from ...catalogue import Rule

PREFIX = "RS-"

RULES: dict[str, Rule] = {rule_id: rule for rule_id, rule in CATALOGUE.items() if rule_id.startswith(PREFIX)}


def rule_title(rule: str) -> str:
    """``"RS-FRAME-1: A frame is at least ..."`` for messages and reports."""
    return f"{rule}: {RULES[rule].title}"
