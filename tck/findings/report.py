"""A finding's bug report: its facts gathered (``bug_report``) and written as markdown (``render``).

The report follows the issue template of the finding's binding (``terms``: the binding's hook
``bug_report_terms``; RSocket's is the rsocket organisation's), whose headings it uses: a title, a
summary, Expected Behavior (the finding's **Spec**, the catalogue rules it breaks with SPEC.md's statement of
each, the kit decisions it rests on), Actual Behavior (**Observed** with its frames, and the kit's verdict),
Steps to Reproduce (``repro``), Possible Solution (**Cause**, with the upstream file:line), Your Environment
(the versions), and the tracker status.  An entry that says "as F13" gets F13's text of that fact inline
(for **Spec**, **Rule** and **Tracker**, where the other entry's text applies as it stands); every F-number
a report mentions is listed at its end with its title, since an upstream reader does not have FINDINGS.md.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from jinja2 import Environment, PackageLoader, StrictUndefined

from .. import __version__
from ..scenarios.loader import Scenario
from .baselines import BaselineLine, GridCell
from .entries import FINDING_ID, Field, Finding, Findings, FindingsError, check_entry
from .repro import (
    ClientReproduction,
    GridReproduction,
    Reproduction,
    ScenarioReproduction,
    copy_items,
    grid_client_command,
    listen_command,
    outcomes,
    proxy_command,
    run_command,
    scenario_file,
    server_command,
    smoke_command,
)
from .sources import Sources
from .spec import Decision, RuleText, cited_decisions, cited_rules, decisions, rule_text
from .terms import BugReportTerms, plain_terms, terms_of
from .upstream import UPSTREAMS, Upstream

EXPANDED = ("Rule", "Spec", "Tracker")  # facts whose "as F<n>" brings the other entry's text along


@dataclass(frozen=True, slots=True)
class Fact:
    """A field of the finding as the report shows it, with the referenced entries' text of the same field."""

    field: Field
    context: str  # the field's parenthesis, as a reader outside the kit's project needs it
    text: str  # markdown, one line a paragraph, Protocol.md lines linked for **Spec**
    references: tuple[tuple[Finding, str], ...]

    @property
    def only_reference(self) -> bool:
        """The fact is nothing but a pointer to another entry's (``as F13.``)."""
        return bool(self.references) and _ONLY_REFERENCE.fullmatch(self.text) is not None

    @property
    def has_transcript(self) -> bool:
        return any(arrow in self.text for arrow in (">> ", "<< ", "-> ", "<- "))


@dataclass(frozen=True, slots=True)
class BugReport:
    finding: Finding
    upstream: Upstream | None
    title: str
    role: str  # server, client, or "client and server"
    version: str  # the version the finding was seen in
    pinned_version: str | None  # interop/run.py's, when it differs from the finding's
    kit_version: str
    facts: dict[str, tuple[Fact, ...]]  # label -> the entry's facts with that label
    rules: tuple[RuleText, ...]  # the catalogue rules the title says are broken
    reported_rules: tuple[RuleText, ...]  # those the kit's verdict names instead ("reported as")
    decisions: tuple[Decision, ...]
    reproduction: Reproduction
    mentioned: tuple[Finding, ...]  # other entries the report's text names
    binding: str | None = None  # the finding's binding (None: its baselines tell none)
    terms: BugReportTerms = plain_terms(None)  # what the report says of the binding's protocol
    own_decisions: tuple[str, ...] = ()  # the binding's decisions' prefixes (its rule prefixes)

    @property
    def file_stem(self) -> str:
        return self.finding.id

    def decision_text(self, decision: Decision) -> str:
        """A decision's text, its citations by line linked when it is one of the binding's own (whose text
        cites the binding's specification document)."""
        return self.terms.link_lines(decision.text) if decision.id.startswith(self.own_decisions) else decision.text


_BLOCK_START = re.compile(r"^\s*(?:[-*+] |\d+\. |>|#|\||```)")
_WHY_CITATION = re.compile(r"^F\d+(?:(?:, | and )F\d+)*(?: \([^)]*\))?(?::\s*|$)")
_INTERNAL_CONTEXT = re.compile(r"^issue \d+\b")
_ONLY_REFERENCE = re.compile(r"as F\d+\.?")
_REPORTED_AS = re.compile(r"\(reported as ([^)]*)\)")


def unwrap(markdown: str) -> str:
    """FINDINGS.md's hard-wrapped paragraphs as one line each: GitHub shows every newline of an issue's text as
    a line break.  Fenced code, list items, quotes, headings and table rows keep their own lines."""
    out: list[str] = []
    fenced = False
    for line in markdown.splitlines():
        if line.lstrip().startswith("```"):
            if not fenced and out and out[-1].strip():
                out.append("")  # a fence after text: a paragraph break, as a reader expects
            fenced = not fenced
            out.append(line)
            continue
        if not fenced and out and out[-1].lstrip().startswith("```") and line.strip():
            out.append("")  # text right after a closing fence
        joinable = (not fenced and out and out[-1].strip() and line.strip() and not _BLOCK_START.match(line)
                    and not out[-1].lstrip().startswith(("```", "#", "|")))
        if joinable:
            out[-1] = out[-1].rstrip() + " " + line.strip()
        else:
            out.append(line)
    return "\n".join(out)


def reader_why(why: str) -> str:
    """A baseline line's why without its leading FINDINGS.md citation (``F35 (SHOULD): ...``)."""
    return _WHY_CITATION.sub("", why, count=1).strip()


def reader_context(field: Field) -> str:
    """A fact's parenthesis, unless it only speaks of the kit's own workings: which of its issues wrote the
    fact, or how the kit's monitor replayed its transcript (for a **Kit verdict**)."""
    return "" if field.label == "Kit verdict" or _INTERNAL_CONTEXT.match(field.context) else field.context


def _fact(findings: Findings, finding: Finding, field: Field, terms: BugReportTerms) -> Fact:
    references: list[tuple[Finding, str]] = []
    if field.label in EXPANDED:
        for other_id in dict.fromkeys(FINDING_ID.findall(field.text)):
            other = next((e for e in findings.entries if e.id == other_id and e.id != finding.id), None)
            theirs = other.field(field.label) if other is not None else None
            if other is not None and theirs is not None:
                text = terms.link_lines(theirs.text) if field.label == "Spec" else theirs.text
                references.append((other, unwrap(text)))
    text = terms.link_lines(field.text) if field.label == "Spec" else field.text
    return Fact(field=field, context=reader_context(field), text=unwrap(text), references=tuple(references))


def _role(finding: Finding, lines: list[BaselineLine], cells: list[GridCell]) -> str:
    roles = {"client" if line.client_case else "server" for line in lines}
    # A cell whose client and server are both the implementation's says nothing of which side deviates.
    roles |= {"client" for cell in cells if cell.client == finding.implementation != cell.server}
    roles |= {"server" for cell in cells if cell.server == finding.implementation != cell.client}
    if not roles:
        roles = {"client" if "client" in finding.summary.split(":")[0] else "server"}
    return " and ".join(sorted(roles))


@cache
def _suite(binding: str) -> dict[str, Scenario]:
    from ..scenarios.loader import load_paths

    return {scenario.id: scenario for scenario in load_paths([], binding)}


def _scenario_reproduction(finding: Finding, lines: list[BaselineLine], sources: Sources,
                           binding: str | None) -> ScenarioReproduction | None:
    if not lines:
        return None
    assert binding is not None  # bug_report found it for these lines
    suite = _suite(binding)
    ids = list(dict.fromkeys(line.scenario for line in lines))
    unknown = [i for i in ids if i not in suite]
    if unknown:
        raise FindingsError(f"{finding.id}: {lines[0].file} names scenario(s) {', '.join(unknown)}, "
                            f"which the kit's {binding} suite does not have")
    chosen = [suite[i] for i in ids]
    pieces: dict[str, str] = {}
    for path in dict.fromkeys(s.file for s in chosen):
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise FindingsError(f"{path}: {exc.strerror or exc}") from None
        pieces.update(copy_items(text, ids))
    file_name = f"{finding.id}-reproduction.yaml"
    command = run_command(binding, file_name)
    files = ", ".join(f"scenarios/{Path(f).name}" for f in dict.fromkeys(s.file for s in chosen))
    shown = outcomes(lines, reader_why)
    header = [f"rsio-tck {__version__}: reproduction of FINDINGS.md {finding.id}, {finding.summary}.",
              f"The scenario(s) {lines[0].file} names for it, copied from the kit's {files}.",
              f"Run: {command}",
              *[f"Expected: {o.scenario} {'fails' if o.must else 'warns on'} {o.rule_list}" for o in shown]]
    isolated = tuple((i, sources.isolated[(finding.implementation, i)]) for i in ids
                     if (finding.implementation, i) in sources.isolated)
    return ScenarioReproduction(file_name=file_name, yaml=scenario_file(header, [pieces[i] for i in ids]),
                                outcomes=shown, scenarios=tuple(chosen), command=command,
                                server_command=server_command(finding.implementation), isolated=isolated)


def _client_reproduction(finding: Finding, lines: list[BaselineLine]) -> ClientReproduction | None:
    from ..listen.cases import client_tests

    if not lines:
        return None
    binding = next(case[0] for line in lines if (case := line.client_case))
    names = list(dict.fromkeys(case[1] for line in lines if (case := line.client_case)))
    known = {test.name: test for test in client_tests(binding)}
    unknown = [name for name in names if name not in known]
    if unknown:
        raise FindingsError(f"{finding.id}: {lines[0].file} names client test case(s) "
                            f"{', '.join(unknown)}, which the kit's {binding} binding does not have")
    return ClientReproduction(outcomes=outcomes(lines, reader_why), cases=tuple((n, known[n].description) for n in names),
                              command=listen_command(binding, finding.implementation, names), binding=binding)


def _grid_reproduction(cells: list[GridCell], binding: str | None) -> GridReproduction | None:
    if not cells:
        return None
    assert binding is not None  # bug_report found it for these cells
    first = cells[0]
    rows = []
    for cell in cells:
        note = "; ".join(part for part in (reader_why(cell.why), "fails in some runs only" if cell.flaky else "")
                         if part)
        rows.append((cell, note))
    return GridReproduction(rows=tuple(rows), proxy_command=proxy_command(binding),
                            server_command=server_command(first.server), client_command=grid_client_command(first))


def implementation_binding(sources: Sources, implementation: str) -> str:
    """The binding an interop implementation's baseline lines belong to: the one their client test cases name
    (``CLIENT-<binding>-<case>``), or the one whose suite holds every scenario they name, or whose client test
    cases hold every grid case it takes part in; a FindingsError when the lines tell none, or more than one."""
    from ..binding import binding_names
    from ..listen.cases import client_tests

    lines = [line for line in sources.baseline if line.implementation == implementation]
    named = {case[0] for line in lines if (case := line.client_case)}
    scenarios = {line.scenario for line in lines if not line.client_case}
    cases = {cell.case for cell in sources.grid if implementation in (cell.client, cell.server)}
    candidates = [b for b in binding_names()
                  if (not named or b in named) and scenarios <= _suite(b).keys()
                  and cases <= {test.name for test in client_tests(b)}]
    if not (named or scenarios or cases) or len(candidates) != 1:
        raise FindingsError(f"{implementation}: its baseline lines tell no one binding "
                            f"({', '.join(candidates) or 'none fits'})")
    return candidates[0]


def _told_binding(sources: Sources, finding: Finding, lines: list[BaselineLine]) -> str | None:
    """The binding a finding's report speaks of when no reproduction needed one: its client test cases', or
    its implementation's (``implementation_binding``); None when its baselines tell none."""
    named = next((case[0] for line in lines if (case := line.client_case)), None)
    if named is not None:
        return named
    try:
        return implementation_binding(sources, finding.implementation)
    except FindingsError:
        return None


def bug_report(sources: Sources, finding: Finding, binding: str | None = None) -> BugReport:
    """The report of one live finding; a FindingsError if its entry or the files it points to fall short.
    ``binding``: the binding of the run that shows the finding (the published site's target); None: the one its
    implementation's baseline lines belong to (``implementation_binding``), when a reproduction needs one."""
    findings = sources.findings
    check_entry(findings, finding)
    lines = [line for line in sources.baseline if finding.id in line.findings]
    cells = [cell for cell in sources.grid if finding.id in cell.findings]
    if binding is None and (cells or any(not line.client_case for line in lines)):
        binding = implementation_binding(sources, finding.implementation)
    named = binding if binding is not None else _told_binding(sources, finding, lines)
    wire = None
    if named is not None:
        from ..binding import get_binding

        wire = get_binding(named)
    terms = terms_of(wire)
    upstream = UPSTREAMS.get(finding.implementation)
    pinned = sources.versions.get(finding.implementation)
    version = finding.version or pinned
    if version is None:
        raise FindingsError(f"{findings.source}:{finding.line}: {finding.id}'s title names no version, and "
                            f"interop/run.py's VERSIONS has none for {finding.implementation}")
    facts = {label: tuple(_fact(findings, finding, f, terms) for f in finding.fields_of(label))
             for label in dict.fromkeys(f.label for f in finding.fields)}
    every_text = " ".join([finding.title, *(f.text for f in finding.fields),
                           *(text for group in facts.values() for fact in group for _, text in fact.references)])
    mentioned_ids = set(FINDING_ID.findall(every_text)) - {finding.id}
    probed = any(f.context.startswith("probe ") for f in finding.fields_of("Observed"))
    reproduction = Reproduction(
        scenarios=_scenario_reproduction(finding, [line for line in lines if not line.client_case], sources, binding),
        clients=_client_reproduction(finding, [line for line in lines if line.client_case]),
        grid=_grid_reproduction(cells, binding),
        probe_command=smoke_command(finding.implementation) if probed else None)
    name = upstream.name if upstream else finding.implementation
    reported_ids = [r for group in _REPORTED_AS.findall(finding.rule_part) for r in cited_rules(group)]
    rules = tuple(t for r in cited_rules(finding.rule_part) if r not in reported_ids and (t := rule_text(r)))
    reported = tuple(t for r in reported_ids if (t := rule_text(r)) is not None)
    decided = " ".join([every_text, *(rule.statement for rule in rules + reported)])
    return BugReport(
        finding=finding, upstream=upstream,
        title=name + finding.summary[len(finding.implementation):],
        role=_role(finding, lines, cells), version=version,
        pinned_version=pinned if pinned and pinned != version.removeprefix("v") else None,
        kit_version=__version__, facts=facts,
        rules=rules, reported_rules=reported,
        decisions=tuple(decisions()[i] for i in cited_decisions(decided)),
        reproduction=reproduction,
        mentioned=tuple(e for e in findings.entries if e.id in mentioned_ids),
        binding=named, terms=terms, own_decisions=wire.rule_prefixes if wire is not None else ())


@cache
def _environment() -> Environment:
    return Environment(loader=PackageLoader("rsio_tck.findings", "templates"), autoescape=False,
                       keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True, undefined=StrictUndefined)


def render(report: BugReport) -> str:
    """The report as GitHub-flavoured markdown: its first line is the issue's title (``# ...``)."""
    text = _environment().get_template("bug-report.md.j2").render(
        report=report, reader_why=reader_why)
    return "\n".join(line.rstrip() for line in text.splitlines()).strip() + "\n"
