"""The provisional RSocket rule table: every ID the wire layer raises is in it, and every entry is raised and tested."""

from __future__ import annotations

import re
from pathlib import Path

from rsio_tck.bindings.rsocket.rules import RULES, rule_title

ROOT = Path(__file__).resolve().parent.parent
RULE_ID = re.compile(r"RS-[A-Z]+-\d+")


def _ids_in(paths: list[Path]) -> set[str]:
    return {found for path in paths for found in RULE_ID.findall(path.read_text())}


def test_every_rule_id_in_the_wire_layer_is_in_the_table() -> None:
    code = [p for p in (ROOT / "tck" / "bindings" / "rsocket").glob("*.py") if p.name != "rules.py"]
    assert _ids_in(code) <= set(RULES)
    assert _ids_in(code) == set(RULES), "a rule in the table is never raised"


def test_every_rule_is_exercised_by_a_test() -> None:
    tests = [p for p in (ROOT / "tests").glob("test_rsocket_*.py") if p.name != "test_rsocket_rules.py"]
    assert set(RULES) - _ids_in(tests) == set()


def test_every_rule_has_a_title_and_a_source() -> None:
    for rule, entry in RULES.items():
        assert RULE_ID.fullmatch(rule)
        assert entry.title and entry.source
        assert rule_title(rule).startswith(f"{rule}: ")
