"""Writing a fuzz run's results: one scenario file per finding, and ``fuzz.json``.

Each finding's shrunk program becomes ``fuzz-findings/<rule>-<signature>.yaml``, a
one-scenario file valid against ``tck/scenarios/schema.json``; ``rsio-tck run
--scenarios <run>/fuzz-findings`` replays it.  The violated rule comes first in
the scenario's ``rules``, so a failing step without its own ``rule:`` reports it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from ..output_files import write_text
from .engine import FuzzConfig, FuzzFinding, FuzzOutcome

SCHEMA = "rsio-tck/fuzz/v1"


def finding_scenario(finding: FuzzFinding, number: int) -> dict[str, Any]:
    program = finding.program
    step_rules = sorted({step["rule"] for step in program["steps"] if "rule" in step} - {finding.rule})
    scenario: dict[str, Any] = {
        "id": f"FUZZ-{number:03d}",
        "title": f"fuzz finding {finding.rule}-{finding.signature}: {finding.message[:160]}",
        "rules": [finding.rule, *step_rules],
        "level": program["level"],
        **{key: program[key] for key in ("binding", "profiles") if key in program},
        **({"codecs": list(program["codecs"])} if "codecs" in program else {}),
        "handshake": program["handshake"],
        "goodbye": program["goodbye"],
        "description": "Found and shrunk by rsio-tck fuzz; the target broke "
                       f"{finding.rule}: {finding.message}",
        "steps": list(program["steps"]),
    }
    if program.get("kit_violations"):
        scenario["kit_violations"] = list(program["kit_violations"])
    return scenario


def write_findings(outcome: FuzzOutcome, run_dir: Path, config: FuzzConfig, run_id: str,
                   name: tuple[str, str | None] | None = None) -> Path:
    """Write the scenario files and ``fuzz.json`` into ``run_dir``, each whole or not at all (an OSError naming
    the file); returns the path of fuzz.json.

    ``name`` is the target's (name, version) from ``--name``, recorded for the multi-target site.
    """
    reported = [f for f in outcome.findings if f.count > 0]
    if reported:
        (run_dir / "fuzz-findings").mkdir(parents=True, exist_ok=True)
    for number, finding in enumerate(reported, start=1):
        relative = Path("fuzz-findings") / f"{finding.rule}-{finding.signature}.yaml"
        text = yaml.safe_dump([finding_scenario(finding, number)], sort_keys=False, allow_unicode=True, width=120)
        write_text(run_dir / relative, text)
        finding.scenario_file = str(relative)
    summary = {
        "schema": SCHEMA,
        "run_id": run_id,
        "target": config.target,
        "target_name": name[0] if name else None,
        "target_version": name[1] if name else None,
        "codec": config.codec,
        "binding": config.binding,
        "profile": config.codec,
        "seed": config.seed,
        "examples": outcome.examples,
        "elapsed": round(outcome.elapsed, 3),
        "findings": [f.to_json() for f in reported],
    }
    path = run_dir / "fuzz.json"
    run_dir.mkdir(parents=True, exist_ok=True)
    write_text(path, json.dumps(summary, indent=2) + "\n")
    return path
