"""The published site's view of the runs: verdicts in the reader's words, and a scorecard per target.

Theory of operation.  Inside the kit a result has one of seven outcomes (pass, fail, warn, skip,
error, and the baseline's xfail and xpass), kept apart because they mean different work for the kit's
developers.  A reader of the published site asks one question per rule: did this implementation break
it?  So the site speaks five words (``reader_words``, shared with the run report): a known failure (xfail) *is* a failure, labelled
"known" with the F-number of its finding where the interop baselines name one; a known failure that
did not show (xpass) *is* a pass, labelled so; warn is a "warning" (a SHOULD), skip is "not run", and
error is "not judged" (the kit could not reach a verdict, which says nothing of the rule).

The rule a failure is charged to is the rule really broken: the rules of the result's violations (the
monitor's findings against the target and the failed expectations, each citing its rule).  Only a
failure that records no violation is charged to the rules its scenario cites.  A rule passes when a
scenario citing it passed and nothing broke it; a rule SPEC.md marks untested against a target never
counts a pass (``Rule.untested_on_target``), as in the run's own report.

Everything here reads each run's ``results.jsonl``, the same file the per-run report is built from,
so a scorecard can be checked against it line by line (``tests/test_public_site.py``).
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..binding import DEFAULT_BINDING, get_binding
from ..catalogue import RULES
from ..reader_words import READER_WORDS as WORDS
from ..reader_words import WORD_ORDER

log = logging.getLogger(__name__)

RESULTS_MOST = 50 * 1024 * 1024  # bytes of results.jsonl read per run: a run of the whole suite is ~2 MB


@dataclass(frozen=True, slots=True)
class Known:
    """What the interop baselines say of a failing scenario: the findings it shows, and whether it is flaky."""

    findings: tuple[str, ...] = ()
    flaky: bool = False
    why: str = ""


@dataclass(frozen=True, slots=True)
class RunView:
    """One run as the public pages use it."""

    run_id: str
    target: str
    version: str
    kit_version: str
    started: float
    binding: str
    target_role: str  # "server" (the kit dialled it) or "client" (the kit listened)
    path: Path | None
    results: tuple[dict[str, Any], ...]
    interrupted: bool = False  # a signal cut the run short (or it never ended): not a complete run

    @property
    def date(self) -> str:
        return dt.datetime.fromtimestamp(self.started, dt.UTC).strftime("%Y-%m-%d")


@dataclass(slots=True)
class RuleOutcome:
    """A rule's word in one run, with what it rests on."""

    rule: str
    level: str
    word: str
    broken_by: list[str] = field(default_factory=list)  # scenarios whose failure or warning is charged to it
    passed_by: list[str] = field(default_factory=list)
    findings: list[str] = field(default_factory=list)  # F-numbers of the known failures among broken_by
    known: bool = False  # every scenario that broke it is a known failure (the run's baseline lists it)
    flaky: bool = False  # the baselines mark every scenario that broke it flaky: it fails in some runs only
    unshown: list[str] = field(default_factory=list)  # F-numbers of known failures that did not show this run


def slug(text: str) -> str:
    """``text`` as a file name: runs of other characters become one ``_``."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_") or "_"


def read_results(path: Path) -> tuple[dict[str, Any], ...]:
    """A run directory's results, each line an object; a line that is not one is skipped with a warning."""
    file = path / "results.jsonl"
    try:
        if file.stat().st_size > RESULTS_MOST:
            log.warning("%s: larger than %d bytes; not read", file, RESULTS_MOST)
            return ()
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        log.warning("%s: cannot be read: %s", file, exc)
        return ()
    out = []
    for number, line in enumerate(text.splitlines(), start=1):
        try:
            row = json.loads(line)
        except ValueError:
            row = None
        if isinstance(row, dict) and isinstance(row.get("id"), str) and row.get("verdict") in WORDS:
            out.append(row)
        elif line.strip():
            log.warning("%s line %d: not a result; skipped", file, number)
    return tuple(out)


def _role(path: Path | None) -> str:
    if path is None:
        return "server"
    try:
        run = json.loads((path / "run.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return "server"
    return "client" if isinstance(run, dict) and run.get("target_role") == "client" else "server"


def cut_short(run: Mapping[str, Any]) -> bool:
    """Whether a ``runs`` row is no complete run: interrupted by a signal, or null there (no run.json: the run
    never ended).  A row without the column (tables older than it) is taken as complete."""
    return "interrupted" in run and run["interrupted"] is not False


def run_views(runs: Iterable[Mapping[str, Any]]) -> list[RunView]:
    """The pipeline's ``runs`` rows (not fuzz runs) as RunViews, oldest first, results read from their folders."""
    views = []
    for run in sorted(runs, key=lambda r: (r.get("started") or 0.0, r["run_id"])):
        if run.get("fuzz"):
            continue
        path = Path(run["path"]) if run.get("path") else None
        views.append(RunView(run_id=run["run_id"], target=run.get("target") or "unknown",
                             version=run.get("target_version") or "unknown", kit_version=run.get("kit_version") or "",
                             started=float(run.get("started") or 0.0),
                             binding=run.get("binding") or DEFAULT_BINDING, target_role=_role(path), path=path,
                             results=read_results(path) if path is not None else (),
                             interrupted=cut_short(run)))
    return views


def binding_rules(binding: str) -> list[str]:
    """The catalogue's rules of ``binding``, in catalogue order."""
    prefixes = get_binding(binding).rule_prefixes
    return [rule for rule in RULES if rule.startswith(prefixes)]


def charged_rules(result: Mapping[str, Any]) -> list[str]:
    """The rules a failing or warning result is charged to: its violations' rules, else the rules it cites."""
    broken = list(dict.fromkeys(str(v["rule"]) for v in result.get("violations") or []
                                if isinstance(v, dict) and v.get("rule") in RULES))
    return broken or [rule for rule in result.get("rules") or [] if rule in RULES]


KnownLookup = Mapping[tuple[str, str], Known]  # (target, scenario id) -> what the baselines say


def rule_outcomes(run: RunView, known: KnownLookup | None = None) -> dict[str, RuleOutcome]:
    """Each rule of the run's binding that a result cites or is charged to, with its word in this run."""
    known = known or {}
    outcomes: dict[str, RuleOutcome] = {}

    def outcome(rule: str) -> RuleOutcome:
        if rule not in outcomes:
            outcomes[rule] = RuleOutcome(rule=rule, level=RULES[rule].level.value, word="not run")
        return outcomes[rule]

    words: dict[str, set[str]] = {}
    known_of: dict[str, list[bool]] = {}
    flaky_of: dict[str, list[bool]] = {}
    for result in run.results:
        word = WORDS[result["verdict"]]
        note = known.get((run.target, result["id"]))
        cited = [rule for rule in result.get("rules") or [] if rule in RULES]
        charged = charged_rules(result) if word in ("fail", "warning") else []
        if charged:
            for rule in charged:
                entry = outcome(rule)
                entry.broken_by.append(result["id"])
                words.setdefault(rule, set()).add(word)
                known_of.setdefault(rule, []).append(result["verdict"] == "xfail")
                flaky_of.setdefault(rule, []).append(note is not None and note.flaky)
                if note is not None:
                    entry.findings.extend(f for f in note.findings if f not in entry.findings)
        for rule in cited:
            entry = outcome(rule)
            if word == "pass" and not RULES[rule].untested_on_target:
                entry.passed_by.append(result["id"])
                words.setdefault(rule, set()).add("pass")
                if result["verdict"] == "xpass" and note is not None:
                    entry.unshown.extend(f for f in note.findings if f not in entry.unshown)
            elif word in ("not judged", "not run"):
                words.setdefault(rule, set()).add(word)
            elif rule not in charged:  # the scenario stopped at another rule's failure: no verdict on this one
                words.setdefault(rule, set()).add("not judged")
    for rule, entry in outcomes.items():
        seen = words.get(rule, {"not run"})
        entry.word = next(w for w in WORD_ORDER if w in seen)
        entry.known = entry.word in ("fail", "warning") and all(known_of.get(rule, [False]))
        entry.flaky = entry.word in ("fail", "warning") and all(flaky_of.get(rule, [False]))
    return outcomes


@dataclass(frozen=True, slots=True)
class Scorecard:
    """One target (an implementation in one role) in its latest run, in the reader's words."""

    target: str
    role: str
    version: str
    kit_version: str
    binding: str  # the binding's title: RSocket
    run_id: str
    date: str
    must_tested: int
    must_broken: int
    should_tested: int
    should_warnings: int
    not_judged: int  # rules with no verdict: the kit could not judge their scenarios
    findings: tuple[str, ...]  # live findings the run showed
    interrupted: bool = False  # the run was cut short: what it did not reach was not judged, so never green

    @property
    def badge_message(self) -> str:
        cut = " (interrupted)" if self.interrupted else ""
        if self.must_tested == 0:
            return "not tested" + cut
        if self.must_broken:
            return f"{self.must_broken} of {self.must_tested} MUST rules broken{cut}"
        return f"{self.must_tested} MUST rules kept{cut}"

    @property
    def colour(self) -> str:
        if self.must_tested == 0:
            return "#9f9f9f"
        if self.must_broken:
            return "#e05d44"
        if self.interrupted:
            return "#fe7d37"
        return "#dfb317" if self.should_warnings else "#44cc11"


def scorecard(run: RunView, outcomes: Mapping[str, RuleOutcome], live: frozenset[str] = frozenset()) -> Scorecard:
    """The scorecard of ``run``: MUST rules broken of those tested, SHOULD warnings, findings shown."""
    judged = [o for o in outcomes.values() if o.word in ("pass", "fail", "warning")]
    must = [o for o in judged if o.level == "MUST"]
    should = [o for o in judged if o.level == "SHOULD"]
    shown = sorted({f for o in outcomes.values() if o.word in ("fail", "warning") for f in o.findings
                    if not live or f in live}, key=lambda f: int(f[1:]) if f[1:].isdigit() else 0)
    return Scorecard(target=run.target, role=run.target_role, version=run.version, kit_version=run.kit_version,
                     binding=get_binding(run.binding).title, run_id=run.run_id, date=run.date,
                     must_tested=len(must), must_broken=sum(o.word == "fail" for o in must),
                     should_tested=len(should), should_warnings=sum(o.word in ("fail", "warning") for o in should),
                     not_judged=sum(o.word == "not judged" for o in outcomes.values()), findings=tuple(shown),
                     interrupted=run.interrupted)


def failure_rate(history: Iterable[Mapping[str, RuleOutcome]], rule: str) -> tuple[int, int]:
    """(runs in which ``rule`` failed, runs in which it was judged) over ``history``, each run's
    ``rule_outcomes`` (computed once per run by the caller, not once per rule)."""
    failed = judged = 0
    for outcomes in history:
        outcome = outcomes.get(rule)
        if outcome is None or outcome.word in ("not run", "not judged"):
            continue
        judged += 1
        failed += outcome.word == "fail"
    return failed, judged
