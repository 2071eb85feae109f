"""The ndjson binding's rule catalogue, which the binding keeps itself (the kit's is SPEC.md's).

``CATALOGUE`` holds every rule (``rsio_tck.catalogue.model.Rule``); ``SPEC.md`` beside this file states
each in prose under the same heading shape as the kit's SPEC.md (``### ID (LEVEL, binds)``), and
the folder's test holds the two together.  ``CONTRACT_RULES`` translates the contract's rule IDs
(the stream table's, which the binding-neutral scenarios cite) into these.
"""

from __future__ import annotations

from pathlib import Path

from rsio_tck.catalogue.model import Level, Rule

SPEC = Path(__file__).with_name("SPEC.md")
PREFIX = "NDJ-"
AREAS = {
    "NDJ-LINE": "ndjson lines",
    "NDJ-SUB": "ndjson subscriptions",
    "NDJ-DEM": "ndjson demand",
    "NDJ-TCK": "ndjson test publishers",
}

M = Level.MUST
_SOURCE = "tests/ndjson_binding/SPEC.md"

CATALOGUE: tuple[Rule, ...] = (
    Rule(id="NDJ-LINE-1", level=M, binds="both", source=_SOURCE,
         title="Every line is one JSON object with an op its sender may send, and that op's fields."),
    Rule(id="NDJ-SUB-1", level=M, binds="publisher", source=_SOURCE,
         title="The publisher signals only ids the subscriber subscribed."),
    Rule(id="NDJ-SUB-2", level=M, binds="publisher", source=_SOURCE,
         title="Per id, next* then at most one complete or error; nothing follows a terminal signal."),
    Rule(id="NDJ-SUB-3", level=M, binds="publisher", source=_SOURCE,
         title="After cancel the publisher stops signalling that id; only lines already in flight may arrive."),
    Rule(id="NDJ-SUB-4", level=M, binds="publisher", source=_SOURCE,
         title="request or cancel for an unknown, cancelled or ended id is ignored: no reply."),
    Rule(id="NDJ-SUB-5", level=M, binds="subscriber", source=_SOURCE,
         title="A subscriber subscribes only with an id that is not live."),
    Rule(id="NDJ-SUB-6", level=M, binds="publisher", source=_SOURCE,
         title="A subscribe reusing a finished id starts a new subscription with fresh demand."),
    Rule(id="NDJ-DEM-1", level=M, binds="publisher", source=_SOURCE,
         title="The nexts of an id never exceed its demand; the subscribe's n counts as demand."),
    Rule(id="NDJ-DEM-2", level=M, binds="publisher", source=_SOURCE,
         title="Demand saturates at 2^63-1 (unbounded); a larger sum is no error."),
    Rule(id="NDJ-TCK-1", level=M, binds="target", source=_SOURCE,
         title="tck/range?start=S&count=N emits S..S+N-1 then complete."),
    Rule(id="NDJ-TCK-2", level=M, binds="target", source=_SOURCE,
         title="tck/infinite?start=S emits S, S+1, ... while demand lasts, without end."),
    Rule(id="NDJ-TCK-3", level=M, binds="target", source=_SOURCE,
         title="tck/error?after=N&message=M emits 0..N-1 then error with message M (default: failed)."),
    Rule(id="NDJ-TCK-4", level=M, binds="target", source=_SOURCE,
         title="A publisher name the target does not serve is answered with error."),
)

CONTRACT_RULES: dict[str, str] = {
    "STR-1": "NDJ-SUB-1", "STR-2": "NDJ-TCK-4", "STR-3": "NDJ-SUB-2", "STR-6": "NDJ-SUB-3", "STR-7": "NDJ-SUB-4",
    "ID-1": "NDJ-SUB-5", "ID-2": "NDJ-SUB-5", "ID-3": "NDJ-SUB-6", "ID-4": "NDJ-SUB-6",
    "DEM-1": "NDJ-DEM-1", "DEM-5": "NDJ-DEM-1", "PACK-3": "NDJ-DEM-1", "SPLIT-3": "NDJ-DEM-1", "DEM-2": "NDJ-DEM-2",
    "TCK-1": "NDJ-TCK-1", "TCK-2": "NDJ-TCK-2", "TCK-5": "NDJ-TCK-3", "TCK-7": "NDJ-TCK-4",
}
