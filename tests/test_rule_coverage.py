"""Every MUST rule of SPEC.md has a test that feeds it a violation and fails if it goes unseen.

A rule counts as covered by any of:
- a violating trace the monitor must judge with that rule (``test_monitor_rules``,
  ``test_monitor_contract``);
- malformed bytes the decoder must reject with that rule (``test_wire_malformed``);
- a fault of the reference peer that breaks it: ``test_selfcheck`` requires a scenario
  citing the rule to fail against that fault, ``test_peer_faults`` that the fault
  changes what the peer does;
- a violating situation fed to the sans-IO ``Connection`` for the kit's own side
  (``test_connection_rules``);
- Ditto: a violating message sequence the Ditto judge must report (``test_ditto_judge``),
  malformed text or a bad topic the codec must reject (``test_ditto_malformed``,
  ``test_ditto_codec``), or a violation fed to the Ditto endpoint (``test_ditto_endpoint``);
- RSocket: a violating trace the RSocket judge must report with that rule and side
  (``test_rsocket_judge``), or malformed bytes the RSocket decoder must reject with it
  (``test_rsocket_malformed``).
"""

from __future__ import annotations

import test_connection_rules
import test_ditto_codec
import test_ditto_endpoint
import test_ditto_judge
import test_ditto_malformed
import test_monitor_contract
import test_monitor_rules
import test_rsocket_judge
import test_rsocket_malformed
import test_wire_malformed

from rsio_tck.bindings.ditto.schemas import SCHEMA_OF
from rsio_tck.catalogue import RULES, Level
from rsio_tck.reference_peer.rsio.faults import FAULTS


def sources() -> dict[str, set[str]]:
    return {
        "monitor trace": {case[0] for case in test_monitor_rules.CASES},
        "contract trace": {case[0] for case in test_monitor_contract.CASES},
        "malformed bytes": {case[2] for case in test_wire_malformed.CASES}
        | {case[2] for case in test_wire_malformed.MESSAGES},
        "peer fault": {fault.rule for fault in FAULTS.values()},
        "connection": set(test_connection_rules.CITED),
        "rsocket trace": {case[0] for case in test_rsocket_judge.CASES},
        "rsocket malformed bytes": {case[2] for case in test_rsocket_malformed.MALFORMED},
        "ditto trace": {case[0] for case in test_ditto_judge.CASES},
        "ditto malformed": {case[1] for case in test_ditto_malformed.MALFORMED}
        | {rule for _, rule in SCHEMA_OF.values()} | {case[1] for case in test_ditto_codec.BAD_TOPICS},
        "ditto endpoint": set(test_ditto_endpoint.CITED),
    }


def test_every_must_rule_has_a_violating_test() -> None:
    covered = set().union(*sources().values())
    missing = [rule for rule, spec in RULES.items() if spec.level is Level.MUST and rule not in covered]
    assert missing == [], f"MUST rules no test feeds a violation: {missing}"


def test_every_should_rule_has_a_deviating_test() -> None:
    covered = set().union(*sources().values())
    missing = [rule for rule, spec in RULES.items() if spec.level is Level.SHOULD and rule not in covered]
    assert missing == [], f"SHOULD rules no test feeds a deviation: {missing}"


def test_every_cited_rule_is_known() -> None:
    for source, rules in sources().items():
        assert rules <= set(RULES), f"{source} cites unknown rules {sorted(rules - set(RULES))}"
