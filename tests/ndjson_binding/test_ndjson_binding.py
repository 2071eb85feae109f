"""The fourth binding needs nothing outside its folder: it registers through the environment, runs the
binding-neutral contract scenarios, passes and scores the self-check against its own peer, and
appears in a run's report; its rules are stated by its own SPEC.md.

The kit's process here never registers the binding: every use of it runs in a subprocess that knows
it only from ``RSIO_TCK_BINDINGS`` (and finds it on ``PYTHONPATH``), as a user's binding would be.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ndjson_binding import rules
from ndjson_binding.peer import FAULTS

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
NAME = "ndjson"
# Documents that explain the example may name it; no file the kit or its other tests run from does.
EXPLAINED_IN = {ROOT / "docs" / "guide" / "adding-a-binding.md"}
SKIPPED_DIRS = {".git", ".venv", "build", "reports", "site", "__pycache__", ".mypy_cache", ".ruff_cache", "node_modules"}


def environment() -> dict[str, str]:
    path = os.pathsep.join(p for p in (os.environ.get("PYTHONPATH", ""), str(HERE.parent)) if p)
    return {**os.environ, "PYTHONPATH": path, "RSIO_TCK_BINDINGS": f"{NAME}=ndjson_binding"}


def kit(*args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], env=environment(), capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)


def repository_files() -> list[Path]:
    """The files of the kit's source: git's list in a checkout, tracked or not ignored (so build outputs, such as the interop
    fixtures' compiled targets, are not read), else every file outside the generated folders."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT, capture_output=True, timeout=60)
    if listed.returncode == 0 and listed.stdout:
        return [ROOT / name for name in listed.stdout.decode().split("\0") if name]
    found = []
    for directory, subdirs, files in os.walk(ROOT):
        subdirs[:] = [d for d in subdirs if d not in SKIPPED_DIRS and not d.startswith(".")]
        found.extend(Path(directory) / name for name in files)
    return found


def test_no_file_outside_the_folder_names_the_binding() -> None:
    named = []
    for path in repository_files():
        if HERE in path.parents or path in EXPLAINED_IN or not path.is_file() or path.stat().st_size > 4 << 20:
            continue
        if NAME.encode() in path.read_bytes().lower():
            named.append(str(path.relative_to(ROOT)))
    assert named == []


def test_the_kit_knows_the_binding_only_from_the_environment() -> None:
    from rsio_tck.binding import binding_names

    assert NAME not in binding_names()  # this process registered nothing
    done = kit("-c", "from rsio_tck.binding import binding_names, get_binding\n"
                     f"print(binding_names()[-1], get_binding({NAME!r}).title)", timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"{NAME} ndjson")


LOAD_SCENARIO = ("import sys\nfrom pathlib import Path\nfrom rsio_tck.binding import get_binding\n"
                 "from rsio_tck.scenarios.loader import ScenarioError, load_file\n"
                 f"get_binding({NAME!r})\n"  # its rules join the catalogue, as a run's loading them does
                 "try:\n    (scenario,) = load_file(Path(sys.argv[1]))\n    print('binding', scenario.binding)\n"
                 "except ScenarioError as error:\n    print('refused', error)\n")


def test_a_scenario_file_naming_the_binding_validates_and_one_naming_no_binding_does_not(tmp_path: Path) -> None:
    # The scenario schema lists no binding: the loader fills in the registry's, so this one's too.
    said = {}
    for binding in (NAME, "nosuch"):
        path = tmp_path / f"{binding}.yaml"
        path.write_text(f"- id: NDJ-901\n  title: a scenario of its own\n  rules: [NDJ-SUB-1]\n  level: MUST\n"
                        f"  binding: {binding}\n  steps:\n    - send: {{cancel: {{subscriber: 1}}}}\n")
        done = kit("-c", LOAD_SCENARIO, str(path), timeout=60)
        assert done.returncode == 0, done.stderr
        said[binding] = done.stdout.strip()
    assert said[NAME] == f"binding {NAME}"
    assert said["nosuch"].startswith("refused") and "binding" in said["nosuch"] and NAME in said["nosuch"]


def test_its_own_spec_states_its_own_catalogue() -> None:
    """The kit's catalogue check, on the binding's own SPEC.md: one ``### ID (LEVEL, binds)`` heading per
    rule, under its area's ``## `` heading, stating the rule's title; no heading for a rule it lacks."""
    from rsio_tck.catalogue import RULES

    text = rules.SPEC.read_text(encoding="utf-8")
    headings = re.findall(r"^### (\S+) \((\w+), (\w+)\)$", text, flags=re.MULTILINE)
    assert headings == [(rule.id, rule.level.value, rule.binds) for rule in rules.CATALOGUE]
    for rule in rules.CATALOGUE:
        assert rule.id.startswith(rules.PREFIX) and rule.id not in RULES  # its own IDs, not the kit's
        assert rule.id.rsplit("-", 1)[0] in rules.AREAS
        section = text.split(f"### {rule.id} ")[1].split("###")[0]
        assert rule.title in section and f"## {rule.id.rsplit('-', 1)[0]} " in text
    assert set(rules.CONTRACT_RULES.values()) <= {rule.id for rule in rules.CATALOGUE}
    assert {fault.rule for fault in FAULTS.values()} <= {rule.id for rule in rules.CATALOGUE}


@pytest.mark.timeout(300)
def test_a_run_passes_the_contract_scenarios_and_its_report_names_the_binding(tmp_path: Path) -> None:
    done = kit("-m", "rsio_tck.cli", "run", "--binding", NAME, "--report-dir", str(tmp_path), "--quiet",
               timeout=240)
    assert done.returncode == 0, done.stdout + done.stderr
    (run_dir,) = tmp_path.iterdir()
    run = json.loads((run_dir / "run.json").read_text())
    assert run["binding"] == NAME and run["profile"] == "lines"
    results = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]
    assert len(results) >= 30 and {r["verdict"] for r in results} == {"pass"}
    assert all(rule.startswith(rules.PREFIX) for r in results for rule in r["rules"])
    report = json.loads((run_dir / "report" / "report.json").read_text())
    assert NAME in json.dumps(report)
    assert "ndjson (the seam&#39;s test binding) compliance report" in (run_dir / "report" / "index.html").read_text()
    checked = kit("-c", "import sys\nfrom pathlib import Path\nfrom rsio_tck.report.schema import check_run_dir\n"
                        "print(check_run_dir(Path(sys.argv[1])))", str(run_dir), timeout=60)
    assert checked.stdout.strip() == "[]", checked.stdout + checked.stderr


@pytest.mark.timeout(600)
def test_the_self_check_passes_the_good_peer_and_catches_each_fault_under_its_rule() -> None:
    done = kit("-m", "rsio_tck.selfcheck", NAME, timeout=540)
    assert done.returncode == 0, done.stdout + done.stderr
    (passed, total), = re.findall(rf"^{NAME}/lines: (\d+)/(\d+) pass or skip$", done.stdout, flags=re.MULTILINE)
    assert passed == total and int(total) >= 30
    for name, fault in FAULTS.items():
        assert re.search(rf"^caught {re.escape(name)} +{re.escape(fault.rule)} by ", done.stdout, re.MULTILINE), name
    assert f"mutation score: {len(FAULTS)}/{len(FAULTS)} faults caught (100%)" in done.stdout


def test_an_unknown_fault_of_its_peer_is_one_line() -> None:
    done = kit("-m", "rsio_tck.reference_peer", "--binding", NAME, "--listen", "tcp://127.0.0.1:0",
               "--fault", "nope", timeout=60)
    assert done.returncode != 0
    assert "Traceback" not in done.stderr and "no such ndjson fault" in done.stdout + done.stderr
