"""The interop baselines (issue 16) hold only triaged, explained entries.

``interop/NAME/baseline.txt`` lists the scenarios (and client test cases, ``CLIENT-rsocket-CASE``) an
implementation is known to fail, one ``SCENARIO-ID RULE ...  # why`` per line.  A baseline hides a failure
from ``make interop``, so each line must name something that exists (a scenario of the RSocket suite or a
client test case), cite rules of the catalogue, and say why with a FINDINGS.md entry (F: a deviation; N: a
limitation that is not one) that exists.  Kit bugs are fixed, never baselined, so no line cites a K entry.
``interop/NAME/isolate.txt`` names scenarios that end the server process; each must be baselined.
Only the files are read here: the runs themselves are ``make interop``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rsio_tck.catalogue import RULES
from rsio_tck.listen.cases import client_tests
from rsio_tck.scenarios import load_directory

ROOT = Path(__file__).resolve().parent.parent
INTEROP = ROOT / "interop"
ENTRY = re.compile(r"\b([FNK]\d+)\b")
# The triaged implementations besides rsocket-py (whose baseline has its own exact test,
# tests/test_interop_rsocket_py.py).  A line is `SCENARIO-ID RULE... [flaky]  # why`.
TRIAGED = ("rsocket-java", "rsocket-js-0", "rsocket-js-1", "rsocket-go", "rsocket-rust")


def entries(path: Path) -> list[tuple[int, list[str], str]]:
    """(line number, words, why) for every non-comment line."""
    lines = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        entry, _, why = line.partition("#")
        if entry.strip():
            lines.append((number, entry.split(), why.strip()))
    return lines


def findings_entries() -> set[str]:
    text = (ROOT / "FINDINGS.md").read_text(encoding="utf-8")
    return set(re.findall(r"^### (F\d+)\.", text, re.MULTILINE)) | set(re.findall(r"^- \*\*(N\d+)\.", text, re.MULTILINE))


@pytest.mark.parametrize("name", TRIAGED)
def test_baseline_lines_name_known_scenarios_rules_and_findings(name):
    known = {s.id for s in load_directory(binding="rsocket")}
    known |= {f"CLIENT-rsocket-{case.name}" for case in client_tests("rsocket")}
    explained = findings_entries()
    lines = entries(INTEROP / name / "baseline.txt")
    assert lines, f"{name}: an empty baseline (every failure triaged away?) should be deleted, not kept"
    seen: set[str] = set()
    for number, words, why in lines:
        where = f"interop/{name}/baseline.txt:{number}"
        scenario, rules = words[0], [word for word in words[1:] if word != "flaky"]
        assert scenario in known, f"{where}: {scenario} is no RSocket scenario or client test case"
        assert " ".join(words) not in seen, f"{where}: {' '.join(words)} is listed twice"
        seen.add(" ".join(words))
        assert rules, f"{where}: name the rules the kit reports for {scenario}"
        assert not [r for r in rules if r not in RULES], f"{where}: rules not in the catalogue: {rules}"
        cited = ENTRY.findall(why)
        assert cited, f"{where}: the why must cite its FINDINGS.md entry (F.. or N..)"
        assert not [c for c in cited if c.startswith("K")], f"{where}: kit bugs are fixed, never baselined"
        missing = [c for c in cited if c not in explained]
        assert not missing, f"{where}: FINDINGS.md has no entry {missing}"


def test_isolate_lines_name_scenarios_publisher_tokens_or_a_job_count():
    """interop/NAME/isolate.txt (interop/run.py): `SCENARIO-ID`, `requires:TOKEN` or `jobs:N`, each with its why."""
    scenarios = load_directory(binding="rsocket")
    known = {s.id for s in scenarios}
    tokens = {token for s in scenarios for token in s.requires}
    for isolate in sorted(INTEROP.glob("*/isolate.txt")):
        for number, words, why in entries(isolate):
            where = f"{isolate}:{number}"
            assert len(words) == 1 and why, f"{where}: one entry per line, with its why"
            word = words[0]
            if word.startswith("requires:"):
                assert word.removeprefix("requires:") in tokens, f"{where}: no scenario requires {word}"
            elif word.startswith("jobs:"):
                assert word.removeprefix("jobs:").isdigit(), f"{where}: jobs:N takes a number"
            else:
                assert word in known, f"{where}: {word} is no RSocket scenario"


def test_entry_parser_reads_rules_and_why(tmp_path):
    path = tmp_path / "baseline.txt"
    path.write_text("# comment\n\nRSID-002 RS-FLOW-2 RS-TCK-2  # F21: why\n", encoding="utf-8")
    assert entries(path) == [(3, ["RSID-002", "RS-FLOW-2", "RS-TCK-2"], "F21: why")]
