"""What a bug report quotes of the kit's SPEC.md.

A rule's section in SPEC.md is ``### RS-TCK-7 (MUST, target)``, then the rule's statement, then its
``- Source:``, ``- Observed:`` and ``- Binds:`` bullets; the catalogue (``rsio_tck.catalogue``) has its level and
binds.  A decision is a paragraph ``**RS-r. Title.** text`` of a "Decisions" section (its ID: a binding's rule
prefix and a lower-case letter): where the kit reads a silent or ambiguous sentence, a finding names the
decision, and the report shows it so that the implementation's authors can contest it.

A citation by line of the binding's specification document (``line 1252``) is linked by the binding's terms
(``terms.CitedDocument``); ``link_rule_source`` links a rule's source with the terms of the binding that owns it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib import resources

from ..binding import Binding, binding_names, get_binding
from ..catalogue import RULES
from .terms import terms_of

_RULE_HEADING = re.compile(r"^### (?P<id>[A-Z][A-Z0-9-]*-\d+) \((?P<level>MUST|SHOULD), (?P<binds>[^)]+)\)\s*$")
_DECISION = re.compile(r"^\*\*(?P<id>[A-Z][A-Z0-9]*-[a-z])\. (?P<title>.+?)\*\*\s*(?P<text>.*)$")
DECISION_ID = re.compile(r"\b[A-Z][A-Z0-9]*-[a-z]\b")
RULE_ID = re.compile(r"\b[A-Z]+(?:-[A-Z]+)*-\d+\b")


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
    """Every ``**RS-x. Title.** text`` decision of SPEC.md, of every binding; a decision's text runs to the
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


def rule_owner(rule_id: str) -> Binding | None:
    """The binding whose rule prefixes ``rule_id`` has (None: no binding the kit can load owns it)."""
    for name in binding_names():
        try:
            binding = get_binding(name)
        except ValueError:  # a binding registered from outside that cannot be loaded owns no rule here
            continue
        if rule_id.startswith(binding.rule_prefixes):
            return binding
    return None


def link_rule_source(rule: RuleText) -> str:
    """The rule's source with its citations by line of its binding's specification document linked."""
    return terms_of(rule_owner(rule.id)).link_lines(rule.source)
