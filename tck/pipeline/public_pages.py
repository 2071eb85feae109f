"""The published site's pages for readers: scorecards and badges, the matrix in words, a page per failing rule.

Theory of operation.  ``public_view`` turns the pipeline's runs into what the pages show (``public``
gives the words and the scorecards, ``evidence`` the transcripts and commands); the interop checkout's
FINDINGS.md and baselines, when given (``Sources``), name the finding behind each known failure.
``write_public_pages`` renders, under the site's folder:

- ``badges/<target>.svg``: the scorecard as a badge an implementation can embed;
- ``rules/<target>/<RULE>.html``: for each (target, rule) that failed or warned in the latest run, the
  rule and its level, SPEC.md's statement with its source, the finding (title, cause, tracker), each
  scenario's transcript excerpt with the offending frame highlighted, and the command that reproduces it;
- ``findings/F<n>.html``: each cited finding's bug report (``rsio-tck report --finding``), rendered;
- ``spec.html``: the statements of the rules the pages cite, so that the folder stands alone.

Every link is relative and stays inside the folder: it can be copied anywhere and served as it is.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import markdown
from jinja2 import Environment

from ..findings.entries import Findings, FindingsError
from ..findings.report import bug_report, render
from ..findings.sources import Sources
from ..findings.spec import link_rule_source, rule_text
from ..output_files import write_text
from ..report.html import badge_svg
from .evidence import Evidence, evidence
from .public import (
    Known,
    KnownLookup,
    RuleOutcome,
    RunView,
    Scorecard,
    binding_rules,
    failure_rate,
    rule_outcomes,
    scorecard,
    slug,
)

log = logging.getLogger(__name__)


def known_failures(sources: Sources | None) -> dict[tuple[str, str], Known]:
    """(implementation, scenario id) -> the findings its baseline line cites, and whether it is flaky."""
    out: dict[tuple[str, str], Known] = {}
    for line in sources.baseline if sources is not None else ():
        before = out.get((line.implementation, line.scenario), Known())
        out[(line.implementation, line.scenario)] = Known(
            findings=tuple(dict.fromkeys([*before.findings, *line.findings])), flaky=before.flaky or line.flaky,
            why=before.why or line.why)
    return out


def _html(text: str) -> str:
    return markdown.markdown(text, extensions=["fenced_code"])


@dataclass(slots=True)
class FindingView:
    id: str
    title: str
    cause: str  # HTML
    tracker: str  # HTML
    page: str  # findings/F1.html, relative to the site's root
    binding: str | None  # of the run that showed it: the bug report's reproduction speaks its wire (None: the
    # binding of the finding's implementation, which the bug report finds from its baseline lines)


@dataclass(slots=True)
class RulePage:
    target: str
    role: str
    version: str
    run_id: str
    binding: str
    outcome: RuleOutcome
    statement: str
    source: str  # HTML: Protocol.md lines linked upstream
    anchor: str
    failed_runs: int
    judged_runs: int
    findings: list[FindingView] = field(default_factory=list)
    evidence: list[Evidence] = field(default_factory=list)

    @property
    def path(self) -> str:
        return f"rules/{slug(self.target)}/{self.outcome.rule}.html"


@dataclass(slots=True)
class TargetView:
    """A target's latest run: its scorecard, each rule's outcome and the pages of those that failed."""

    slug: str
    latest: RunView
    card: Scorecard
    outcomes: dict[str, RuleOutcome]
    pages: dict[str, RulePage]
    history: list[RunView]

    @property
    def badge(self) -> str:
        return f"badges/{self.slug}.svg"

    @property
    def page(self) -> str:
        """The target's page (all its versions), relative to the site's root."""
        return f"targets/{slug(self.latest.target)}.html"


@dataclass(slots=True)
class PublicView:
    targets: list[TargetView]
    rules: list[str]  # every rule some latest run judged, sorted
    findings: dict[str, FindingView]


def _rule_key(rule: str) -> tuple[str, int, str]:
    area, _, number = rule.rpartition("-")
    return (area, int(number), rule) if number.isdigit() else (rule, 0, rule)


def _finding(findings: Findings | None, finding_id: str, binding: str | None,
             cache: dict[str, FindingView]) -> FindingView | None:
    if findings is None:
        return None
    if finding_id not in cache:
        try:
            entry = findings.get(finding_id)
        except FindingsError:
            return None
        cause, tracker = entry.field("Cause"), entry.field("Tracker")
        cache[finding_id] = FindingView(id=entry.id, title=entry.summary, cause=_html(cause.text) if cause else "",
                                        tracker=_html(tracker.text) if tracker else "",
                                        page=f"findings/{entry.id}.html", binding=binding)
    return cache[finding_id]


def public_view(runs: list[RunView], sources: Sources | None = None) -> PublicView:
    """Scorecards, outcomes and rule pages of each target's latest run (a target: name and version)."""
    known: KnownLookup = known_failures(sources)
    live = frozenset(e.id for e in sources.findings.live()) if sources is not None else frozenset()
    by_target: dict[tuple[str, str], list[RunView]] = defaultdict(list)
    for run in runs:
        by_target[(run.target, run.version)].append(run)
    cache: dict[str, FindingView] = {}
    targets = []
    for (target, version), history in sorted(by_target.items()):
        latest = history[-1]
        per_run = [rule_outcomes(run, known) for run in history]
        outcomes = per_run[-1]
        results = {r["id"]: r for r in latest.results}
        pages = {}
        for rule, outcome in sorted(outcomes.items(), key=lambda item: _rule_key(item[0])):
            if outcome.word not in ("fail", "warning"):
                continue
            text = rule_text(rule)
            failed, judged = failure_rate(per_run, rule)
            page = RulePage(target=target, role=latest.target_role, version=version, run_id=latest.run_id,
                            binding=latest.binding, outcome=outcome,
                            statement=text.statement if text else rule, anchor=text.anchor if text else rule.lower(),
                            source=_html(link_rule_source(text)) if text else "",
                            failed_runs=failed, judged_runs=judged)
            page.findings = [f for f in (_finding(sources.findings if sources else None, fid, latest.binding, cache)
                                         for fid in outcome.findings) if f is not None]
            page.evidence = [evidence(latest.path, latest.binding, latest.target_role, results[s], rule)
                             for s in dict.fromkeys(outcome.broken_by) if s in results][:5]
            pages[rule] = page
        name = target if version in ("", "unknown") else f"{target}-{version}"
        targets.append(TargetView(slug=slug(name), latest=latest, card=scorecard(latest, outcomes, live),
                                  outcomes=outcomes, pages=pages, history=history))
    rules = sorted({rule for t in targets for rule in t.outcomes}, key=_rule_key)
    return PublicView(targets=targets, rules=rules, findings=cache)


def cite_findings(view: PublicView, sources: Sources | None, ids: list[str], binding: str | None) -> None:
    """Give the findings ``ids`` (the grid's known failures) their pages too."""
    for finding_id in ids:
        _finding(sources.findings if sources else None, finding_id, binding, view.findings)


def write_public_pages(env: Environment, out: Path, view: PublicView, sources: Sources | None,
                       common: dict[str, Any], cited: Iterable[str] = ()) -> None:
    """Badges, rule pages, finding pages and spec.html of ``view`` under ``out``; ``cited``: rules other pages
    (the grid's) cite, for spec.html."""
    (out / "badges").mkdir(parents=True, exist_ok=True)
    for target in view.targets:
        write_text(out / target.badge, badge_svg(f"rsio-tck {target.card.binding}", target.card.badge_message,
                                                 target.card.colour))
        for page in target.pages.values():
            where = out / page.path
            where.parent.mkdir(parents=True, exist_ok=True)
            write_text(where, env.get_template("rule.html").render(root="../../", page=page, card=target.card,
                                                            **common))
    for finding in view.findings.values():
        if sources is None:
            break
        try:
            report = render(bug_report(sources, sources.findings.get(finding.id), finding.binding))
        except FindingsError as exc:  # an entry the bug report cannot be made from: its cause and tracker
            log.warning("finding %s: no bug report: %s", finding.id, exc)
            report = ""
        where = out / finding.page
        where.parent.mkdir(parents=True, exist_ok=True)
        write_text(where, env.get_template("finding.html").render(
            root="../", finding=finding, body=_html(report) if report else "", **common))
    # Every rule of the sites' bindings: the run reports copied into the site link each of theirs here.
    every = sorted({rule for t in view.targets for rule in (*t.outcomes, *binding_rules(t.latest.binding))}
                   | set(cited), key=_rule_key)
    statements = [statement for rule in every if (statement := rule_text(rule)) is not None]
    write_text(out / "spec.html", env.get_template("spec.html").render(
        root="", rules=[(t, _html(link_rule_source(t))) for t in statements], **common))
