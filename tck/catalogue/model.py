"""What a rule of the catalogue is (``rsio_tck.catalogue`` holds the catalogue itself)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Level(str, Enum):
    MUST = "MUST"
    SHOULD = "SHOULD"


@dataclass(frozen=True, slots=True, kw_only=True)
class Rule:
    id: str
    level: Level
    binds: str  # client, server, both, publisher, subscriber, target; RSocket also requester, responder
    title: str
    source: str  # Reactive Streams rule or draft/rsio-v0 section (RSocket: Protocol.md or seed 001 section)
    # Why no scenario can make a target exercise the rule (SPEC.md says "Untested against a
    # target"); empty for the others.  A passing scenario citing such a rule is no evidence
    # that the target follows it, so the report never counts it as a pass (a failure counts).
    untested_on_target: str = ""

    @property
    def area(self) -> str:
        return self.id.rsplit("-", 1)[0]
