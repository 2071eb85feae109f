"""The compliance report's data: what ``report.json`` holds and the HTML pages show.

Theory of operation: a run speaks one binding (run.json's ``binding``; RS-IO for runs
older than the field), and its report is that binding's alone.  Every rule of the
binding's catalogue (``Binding.rules``) gets a row, grouped by area, whether or not a
scenario tested it; the other bindings' rules are not shown, and "rules tested X of Y"
counts the binding's rules only.  A scenario counts
once under each rule it cites, with its verdict.  A monitor violation of a rule
the scenario does not cite still counts against that rule (as fail for a MUST,
warn for a SHOULD), so a rule is never shown passing while some connection
broke it.  A rule's overall outcome is the worst of its counts in the order of
``OUTCOMES``; a rule with no count is ``untested``.  A rule that SPEC.md marks
untested against a target (``Rule.untested_on_target``) never counts a pass:
no scenario can make a target exercise it, so it shows as untested unless a
connection actually broke it.

What the report says about the wire comes from the binding too: ``notions`` (its
profile, the specification it follows and, where the binding has one, the target's
hello: ``Binding.report_notions``) and the wire statistics, tables the binding computes
from the run's traces (``Binding.report_statistics``).  This module never asks which
binding it has.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from .. import __version__
from ..binding import DEFAULT_BINDING, Binding, get_binding
from ..catalogue import AREAS, RULES, Rule
from .rundir import RunFiles, file_stem
from .traffic import run_traces

# Worst first: the order a rule's outcome is picked in, and the matrix columns.
OUTCOMES = ("fail", "error", "xpass", "warn", "xfail", "pass", "skip", "untested")
VERDICTS = ("pass", "fail", "warn", "skip", "xfail", "xpass", "error")
COLORS = {"pass": "#44cc11", "warn": "#dfb317", "fail": "#e05d44", "untested": "#9f9f9f", "interrupted": "#fe7d37"}


def spec_anchor(rule: Rule) -> str:
    """The GitHub-style anchor of the rule's SPEC.md heading ``### HS-1 (MUST, both)``."""
    return f"{rule.id.lower()}-{rule.level.value.lower()}-{rule.binds}"


def worst(counts: Counter[str]) -> str:
    for outcome in OUTCOMES:
        if counts.get(outcome):
            return outcome
    return "untested"


def _rule_counts(results: list[dict[str, Any]],
                 rules: list[str]) -> tuple[dict[str, Counter[str]], dict[str, list[str]]]:
    """Outcome counts and scenarios of each of ``rules`` (IDs the results cite outside them are not counted)."""
    counts: dict[str, Counter[str]] = {rule: Counter() for rule in rules}
    scenarios: dict[str, list[str]] = {rule: [] for rule in rules}
    for result in results:
        cited = set(result["rules"])
        for rule in result["rules"]:
            if rule in counts:
                scenarios[rule].append(result["id"])
                if result["verdict"] == "pass" and RULES[rule].untested_on_target:
                    continue  # no scenario makes a target exercise the rule: a pass proves nothing
                counts[rule][result["verdict"]] += 1
        if result["verdict"] in ("skip", "xfail"):
            continue
        for rule in {v["rule"] for v in result.get("violations", []) if v.get("source") == "monitor"} - cited:
            if rule in counts:
                counts[rule]["fail" if RULES[rule].level.value == "MUST" else "warn"] += 1
                scenarios[rule].append(result["id"])
    return counts, scenarios


def protocol_title(run: dict[str, Any]) -> str:
    """The run's protocol as reports name it (its binding's title; RS-IO for runs older than the field)."""
    name = str(run.get("binding") or DEFAULT_BINDING)
    try:
        return get_binding(name).title
    except ValueError:
        return name


def badge(counts: Counter[str], total: int, label: str, interrupted: bool = False) -> dict[str, str]:
    """The run's badge, in the reader's words: a known failure (xfail) is a failure, one that did not show
    (xpass) a pass; an error is no pass either.  A run a signal cut short is never a pass: what it did not
    reach was not judged."""
    bad = counts["fail"] + counts["xfail"] + counts["error"]
    passed = counts["pass"] + counts["xpass"]
    judged = total - counts["skip"]
    message = f"{passed}/{judged} pass"
    if bad:
        outcome, message = "fail", message + f", {bad} fail"
    elif interrupted:
        outcome, message = "interrupted", message + ", interrupted"
    elif counts["warn"]:
        outcome, message = "warn", message + f", {counts['warn']} warn"
    elif passed:
        outcome = "pass"
    else:
        outcome, message = "untested", "untested"
    return {"label": label, "message": message, "color": COLORS[outcome], "outcome": outcome}


def target_stopped(results: list[dict[str, Any]], role: str = "server") -> dict[str, Any] | None:
    """Where the target (``role`` "client": the client under test, in listen mode) stopped answering (a
    result's ``target_stopped``) and how many scenarios after it were not judged; None if it never stopped."""
    stop = next((r["target_stopped"] for r in results if r.get("target_stopped")), None)
    if stop is None:
        return None
    after = sum(1 for r in results if r.get("target_stopped") and r["id"] != stop["during"])
    slow = bool(stop.get("slow"))  # the words of ``TargetStop.what`` and ``after``, from its JSON
    return {"during": stop["during"], "why": stop["why"], "running": list(stop.get("running", [])),
            "not_judged": after, "what": "answered too slowly to judge" if slow else "stopped answering",
            "after": stop.get("after", "after its time-out"),
            "who": "client under test" if role == "client" else "target"}


def interruption(run: dict[str, Any]) -> dict[str, Any] | None:
    """How far an interrupted run got (run.json's ``interruption``), with the line its banner says; None for a
    run that ran to its end (and for run directories older than the field)."""
    if not run.get("interrupted"):
        return None
    found = run.get("interruption") or {}
    signal, selected = str(found.get("signal") or "a signal"), found.get("selected", run.get("scenarios"))
    finished = found.get("finished", sum(int(n) for n in (run.get("counts") or {}).values()))
    return {"signal": signal, "selected": selected, "finished": finished, "running": list(found.get("running", [])),
            "line": f"interrupted after {finished} of {selected} scenarios ({signal})"}


def cut_traces(files: RunFiles) -> list[dict[str, Any]]:
    """The traces read so far (``RunFiles.trace``) whose file ends inside a record, each with the line the report
    and ``rsio-tck report`` say: expected of a run that did not run to its end, else records lost."""
    early = bool(files.run.get("interrupted")) or not (files.run_dir / "run.json").is_file()
    why = ("the run did not run to its end: it is shown and judged up to there" if early else
           "the run is not marked interrupted: the rest of its connection was lost; it is shown and judged up to there")
    return [{"id": scenario, "trace": files.relative("traces", scenario), "cut": cut, "expected": early,
             "line": f"{files.relative('traces', scenario)}: {cut}; {why}"}
            for scenario, cut in sorted(files.cut_traces.items())]


def _areas(binding: Binding, results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The binding's rules by area (areas without one of its rules left out), each with its outcome."""
    own = binding.rules()
    per_rule, per_rule_scenarios = _rule_counts(results, own)
    chosen = set(own)
    areas: list[dict[str, Any]] = []
    for area, title in AREAS.items():
        rows: list[dict[str, Any]] = []
        for rule in (r for r in RULES.values() if r.area == area and r.id in chosen):
            counts = per_rule[rule.id]
            rows.append({
                "id": rule.id, "level": rule.level.value, "binds": rule.binds, "title": rule.title,
                "anchor": spec_anchor(rule), "outcome": worst(counts),
                "counts": {o: counts.get(o, 0) for o in OUTCOMES if o != "untested"},
                "scenarios": sorted(set(per_rule_scenarios[rule.id])),
            })
        if rows:
            areas.append({"id": area, "title": title, "rules": rows})
    return areas


def report_data(files: RunFiles) -> dict[str, Any]:
    """The whole report, as plain JSON data (validated by ``schemas/report.schema.json``)."""
    binding = get_binding(files.binding)
    totals: Counter[str] = Counter({v: 0 for v in VERDICTS})
    totals.update(result["verdict"] for result in files.results)
    areas = _areas(binding, files.results)
    scenarios = []
    for result in sorted(files.results, key=lambda r: r["id"]):
        scenarios.append({
            "id": result["id"], "title": result["title"], "rules": result["rules"], "level": result["level"],
            "verdict": result["verdict"], "duration": result["duration"], "reason": result.get("reason", ""),
            "violations": result.get("violations", []), "page": f"scenarios/{file_stem(result['id'])}.html",
            "files": {key: files.relative(kind, result["id"])
                      for key, kind in (("trace", "traces"), ("pcap", "pcaps"), ("transcript", "transcripts"))},
        })
    all_rows = [row for area in areas for row in area["rules"]]
    wire = [table.to_json() for table in binding.report_statistics(files.profile, run_traces(files))]  # reads traces
    return {
        "schema": "rsio-tck/report/v1",
        "run_id": files.run.get("run_id", files.run_dir.name),
        "generated_by": f"rsio-tck {__version__}",
        "run": files.run,
        "binding": binding.name,
        "profile": files.profile,
        "notions": [{"label": label, "value": value} for label, value in binding.report_notions(files.run)],
        "counts": dict(totals),
        "stopped": target_stopped(files.results, files.run.get("target_role", "server")),
        "total": len(files.results),
        "interrupted": interruption(files.run),
        "badge": badge(totals, len(files.results), binding.title, interrupted=bool(files.run.get("interrupted"))),
        "outcomes": list(OUTCOMES),
        "rules_total": len(all_rows),
        "rules_tested": sum(1 for row in all_rows if row["outcome"] not in ("untested", "skip")),
        "areas": areas,
        "scenarios": scenarios,
        "wire": wire,
        "cut_traces": cut_traces(files),
        "fuzz": files.fuzz,
    }
