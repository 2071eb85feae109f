"""What a bug report quotes of the kit's SPEC.md, and how it points into the RSocket specification.

A rule's section in SPEC.md is ``### RS-TCK-7 (MUST, target)``, then the rule's statement, then its
``- Source:``, ``- Observed:`` and ``- Binds:`` bullets; the catalogue (``rsio_tck.catalogue``) has its level and
binds.  A decision is a paragraph ``**RS-r. Title.** text`` of a "Decisions" section: where the kit
reads a silent or ambiguous sentence, a finding names the decision, and the report shows it so that the
implementation's authors can contest it.

Protocol.md line numbers: FINDINGS.md and SPEC.md count the lines of the kit's reference copy of
Protocol.md (rsocket/rsocket at ``PROTOCOL_COMMIT``), which has one header line more than the file
upstream.  ``link_protocol_lines`` rewrites each ``line N`` / ``lines N-M`` into upstream's numbering, linked,
so that a maintainer who follows the link reads the sentence cited.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib import resources

from ..catalogue import RULES

PROTOCOL_COMMIT = "0f6e5554a5f9abbb1c6c7ec2138d2f3e0ab280e8"  # the newest commit of Protocol.md upstream
PROTOCOL_URL = f"https://github.com/rsocket/rsocket/blob/{PROTOCOL_COMMIT}/Protocol.md"
REFERENCE_COPY_OFFSET = 1  # the kit's copy starts with a provenance comment: its line N is upstream's N - 1

_RULE_HEADING = re.compile(r"^### (?P<id>[A-Z][A-Z0-9-]*-\d+) \((?P<level>MUST|SHOULD), (?P<binds>[^)]+)\)\s*$")
_DECISION = re.compile(r"^\*\*(?P<id>(?:RS|DITTO)-[a-z])\. (?P<title>.+?)\*\*\s*(?P<text>.*)$")
DECISION_ID = re.compile(r"\b(?:RS|DITTO)-[a-z]\b")
RULE_ID = re.compile(r"\b[A-Z]+(?:-[A-Z]+)*-\d+\b")
_LINES = re.compile(r"\b(?P<word>[Ll]ines?) (?P<spans>\d+(?:-\d+)?(?:, \d+(?:-\d+)?)*)\b")


@dataclass(frozen=True, slots=True)
class RuleText:
    id: str
    level: str  # MUST or SHOULD
    binds: str
    statement: str  # SPEC.md's sentence(s) before the bullets; the catalogue's title if SPEC.md has none
    source: str  # where in the specification the rule comes from
    anchor: str  # the GitHub anchor of its SPEC.md heading


@dataclass(frozen=True, slots=True)
class Decision:
    id: str  # RS-r
    title: str
    text: str


@cache
def _spec_text() -> str:
    return resources.files("rsio_tck").joinpath("SPEC.md").read_text(encoding="utf-8")


def _join(lines: list[str]) -> str:
    return " ".join(" ".join(lines).split())


@cache
def _sections() -> dict[str, tuple[str, str]]:
    """Rule id -> (statement, source) of every ``### ID (LEVEL, binds)`` section of SPEC.md."""
    out: dict[str, tuple[str, str]] = {}
    current: str | None = None
    statement: list[str] = []
    source: list[str] = []
    in_source = False
    for line in [*_spec_text().splitlines(), "## end"]:
        heading = _RULE_HEADING.match(line)
        if heading or line.startswith("#"):
            if current is not None:
                out[current] = (_join(statement), _join(source))
            current, statement, source, in_source = (heading.group("id") if heading else None), [], [], False
            continue
        if current is None:
            continue
        if line.startswith("- "):
            in_source = line.startswith("- Source:")
            if in_source:
                source.append(line.removeprefix("- Source:"))
        elif in_source and line.startswith("  "):
            source.append(line)
        elif not source and not line.startswith("- ") and not in_source:
            statement.append(line)
    return out


def rule_text(rule_id: str) -> RuleText | None:
    """The catalogue's rule with SPEC.md's statement of it; None for an id the catalogue does not have."""
    rule = RULES.get(rule_id)
    if rule is None:
        return None
    statement, source = _sections().get(rule_id, ("", ""))
    return RuleText(id=rule.id, level=rule.level.value, binds=rule.binds, statement=statement or rule.title,
                    source=source or rule.source,
                    anchor=f"{rule.id.lower()}-{rule.level.value.lower()}-{rule.binds}")


@cache
def decisions() -> dict[str, Decision]:
    """Every ``**RS-x. Title.** text`` decision of SPEC.md (RSocket and Ditto); a decision's text runs to the
    next decision or heading."""
    out: dict[str, Decision] = {}
    current: re.Match[str] | None = None
    body: list[str] = []
    for line in [*_spec_text().splitlines(), "## end"]:
        started = _DECISION.match(line)
        if started or line.startswith("#"):
            if current is not None:
                out[current.group("id")] = Decision(id=current.group("id"), title=current.group("title").rstrip("."),
                                                    text=_join([current.group("text"), *body]))
            current, body = started, []
            continue
        if current is not None:
            body.append(line)
    return out


def cited_rules(text: str) -> list[str]:
    """The catalogue's rule ids ``text`` names, in order, each once."""
    return list(dict.fromkeys(r for r in RULE_ID.findall(text) if r in RULES))


def cited_decisions(text: str) -> list[str]:
    """The decisions (``RS-r``) ``text`` names that SPEC.md has, in order, each once."""
    known = decisions()
    return list(dict.fromkeys(d for d in DECISION_ID.findall(text) if d in known))


def link_protocol_lines(text: str) -> str:
    """``line 1252`` -> ``line [1251](upstream#L1251)``: Protocol.md citations in upstream's numbering, linked.

    Only for text that cites Protocol.md alone by line (a finding's **Spec**, a decision of SPEC.md)."""

    def span(part: str) -> str:
        numbers = [int(n) - REFERENCE_COPY_OFFSET for n in part.split("-")]
        shown = "-".join(str(n) for n in numbers)
        anchor = "-".join(f"L{n}" for n in numbers)
        return f"[{shown}]({PROTOCOL_URL}?plain=1#{anchor})"

    def replace(match: re.Match[str]) -> str:
        return f"{match.group('word')} " + ", ".join(span(part) for part in match.group("spans").split(", "))

    return _LINES.sub(replace, text)
