"""Every fault of the Ditto reference peer changes the behaviour its rule forbids.

Each fault is switched on alone and the programs of ``test_peer_ditto`` run
against it until the client's own rule check (``ditto_peer_client.RuleCheck``)
sees the fault's rule broken; the correct peer breaks none (``test_peer_ditto``).
Every fault cites a Ditto rule of DITTO.md (the catalogue's, once the Ditto
binding is merged).
"""

from __future__ import annotations

import ditto_peer_client
import pytest
from test_peer_ditto import PROGRAMS, run

from rsio_tck.catalogue import RULES
from rsio_tck.reference_peer.ditto import FAULTS, PeerConfig
from rsio_tck.reference_peer.ditto.faults import known_rule

# Which programs show a fault's rule first (the others run only when these do not).
FIRST = {"DITTO-DEM-4": "demand_beyond_max_is_unbounded", "DITTO-DEM-2": "demand_zero_fails",
         "DITTO-CAN-1": "cancel_within_demand", "DITTO-SEARCH-6": "search_pages", "DITTO-TCK-4": "search_pages",
         "DITTO-TCK-2": "cancel_within_demand", "DITTO-TCK-3": "error_after_two", "DITTO-ERR-1": "error_after_two",
         "DITTO-SUB-2": "interleaved", "DITTO-TOPIC-6": "search_pages", "DITTO-SEARCH-3": "search_pages",
         "DITTO-SEARCH-4": "search_pages", "DITTO-SEARCH-5": "search_bad_filter_fails_after_request",
         "DITTO-STREAM-5": "error_after_two", "DITTO-SEARCH-7": "search_queries"}
# Faults that show only in one program (the first of their rule's programs cannot show them).
FIRST_OF_FAULT = {"created-needs-correlation-id": "unnamed_subscribes",
                  "search-cancel-ignored": "search_cancel_with_demand_left"}


@pytest.mark.parametrize("name", sorted(f for f in FAULTS if not f.startswith("client-")))
def test_each_fault_breaks_its_rule(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ditto_peer_client, "WAIT", 3.0)
    rule = FAULTS[name].rule
    first = FIRST_OF_FAULT.get(name, FIRST.get(rule))
    order = ([first] if first else []) + [p for p in PROGRAMS if p != first]
    seen: dict[str, str] = {}
    for program in order:
        client = run(PeerConfig(faults=(name,), seed=0), PROGRAMS[program], tolerate=True)
        seen.update(client.check.broken)
        if rule in seen:
            break
    assert rule in seen, f"{name} ({rule}) went unseen; the programs saw {seen}"


def test_every_fault_cites_a_ditto_rule_of_the_catalogue() -> None:
    assert all(known_rule(f.rule) and f.rule.startswith("DITTO-") for f in FAULTS.values())
    assert {f.rule for f in FAULTS.values()} <= set(RULES)


# The protocol rules of the Ditto design (judged above the codec); DITTO-TCK-1..4: tck/range, tck/infinite,
# tck/error, the search collection.
PROTOCOL_RULES = frozenset({
    "DITTO-SUB-1", "DITTO-SUB-2", "DITTO-SUB-3", "DITTO-SUB-4", "DITTO-SUB-5", "DITTO-SUB-6", "DITTO-SUB-7",
    "DITTO-SUB-8", "DITTO-DEM-1", "DITTO-DEM-2", "DITTO-DEM-3", "DITTO-DEM-4", "DITTO-CAN-1", "DITTO-ERR-1",
    "DITTO-SEARCH-6", "DITTO-SEARCH-7", "DITTO-TCK-1", "DITTO-TCK-2", "DITTO-TCK-3", "DITTO-TCK-4", "DITTO-WS-1",
})


def test_every_protocol_rule_of_ditto_md_has_a_fault() -> None:
    websocket_only = {"DITTO-WS-1"}  # a binary WebSocket message: the peer's bytes become text messages in the hook
    covered = {f.rule for f in FAULTS.values()}
    assert PROTOCOL_RULES - websocket_only <= covered
    client = {f.rule for name, f in FAULTS.items() if name.startswith("client-")}
    assert client == {"DITTO-SUB-7", "DITTO-SUB-8", "DITTO-DEM-3"}  # the subscriber's, through testcases.py
