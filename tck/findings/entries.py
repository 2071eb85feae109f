"""FINDINGS.md's entries, read from its text: ``### F<n>. <implementation> <version> ... — RULE`` and its bullets.

An entry's facts are bold-labelled bullets (``- **Spec:** ...``, ``- **Observed** (probe ...): ...``); a
short entry may run several labels into one bullet (``**Spec:** as F13. **Observed** ...``).  Only the
labels of ``FIELD_LABELS`` split an entry: other bold text (``**Debatable:**``) stays inside the field it
is in.  A live finding must have the labels of ``REQUIRED``; an entry whose title says it is withdrawn, or
was never a finding of its own, has none and produces no report.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# The labels FINDINGS.md uses for an entry's facts, in the order a reader meets them.
FIELD_LABELS = ("Rule", "Spec", "Observed", "Kit verdict", "Whose code", "Cause", "Tracker", "In the suite",
                "In the client x server grid")
REQUIRED = ("Spec", "Observed", "Cause", "Tracker")
NOT_LIVE = ("Withdrawn", "Never a finding")  # how the titles of entries that are no finding begin

_HEADING = re.compile(r"^### (F\d+)\. (.+?)\s*$", re.M)
_SECTION_END = re.compile(r"^#{2,3} ", re.M)
_LABEL = re.compile(r"\*\*(" + "|".join(re.escape(label) for label in FIELD_LABELS) + r")(:)?\*\*(:)?")
_VERSION = re.compile(r"v?\d+(?:\.\d+)+(?:-[\w.]+)?")
FINDING_ID = re.compile(r"\bF\d+\b")


class FindingsError(ValueError):
    """FINDINGS.md, or an entry of it, that the reports cannot be made from; the message is one line."""


@dataclass(frozen=True, slots=True)
class Field:
    """One labelled fact of an entry: ``context`` is the parenthesis after a label without a colon
    (``**Observed** (probe demand): ...``), ``text`` the markdown after it, bullet indentation removed."""

    label: str
    context: str
    text: str


@dataclass(frozen=True, slots=True)
class Finding:
    id: str  # "F7"
    title: str  # the heading after "F7. "
    line: int  # of the heading, in FINDINGS.md
    fields: tuple[Field, ...]

    @property
    def live(self) -> bool:
        return not self.title.startswith(NOT_LIVE)

    @property
    def summary(self) -> str:
        """The title without its rule part (`` — RS-TCK-7``): what happened, in words."""
        return self.title.rsplit(" — ", 1)[0]

    @property
    def rule_part(self) -> str:
        """The title's rule part, e.g. ``RS-ERROR-8, RS-IGNORE-2 (decision RS-r) (and RS-STREAM-2)``."""
        return self.title.rsplit(" — ", 1)[1] if " — " in self.title else ""

    @property
    def implementation(self) -> str:
        """The implementation as the kit's fixtures name it (``rsocket-js-1``): the title's first word."""
        return self.title.split()[0].rstrip(":")

    @property
    def version(self) -> str | None:
        """The version the title names (``v0.8.16``, ``1.0.0-alpha.3``), if its second word is one."""
        words = self.title.split()
        if len(words) < 2:
            return None
        word = words[1].rstrip(":")
        word = word.removesuffix("'s")
        return word if _VERSION.fullmatch(word) else None

    def field(self, label: str) -> Field | None:
        return next((f for f in self.fields if f.label == label), None)

    def fields_of(self, label: str) -> tuple[Field, ...]:
        return tuple(f for f in self.fields if f.label == label)


@dataclass(frozen=True, slots=True)
class Findings:
    source: str  # how messages name the file
    entries: tuple[Finding, ...]

    def get(self, finding_id: str) -> Finding:
        wanted = finding_id.strip().upper()
        if not re.fullmatch(r"F\d+", wanted):
            raise FindingsError(f"--finding {finding_id!r}: not a finding id (F1, F2, ...)")
        for entry in self.entries:
            if entry.id == wanted:
                return entry
        known = f"F1 to F{max(int(e.id[1:]) for e in self.entries)}" if self.entries else "none"
        raise FindingsError(f"{self.source} has no finding {wanted} (it has {known})")

    def live(self) -> tuple[Finding, ...]:
        return tuple(entry for entry in self.entries if entry.live)


def _split_context(value: str) -> tuple[str, str]:
    """``(probe x: y): rest`` -> (``probe x: y``, ``rest``); the parenthesis may nest and hold colons."""
    if not value.startswith("("):
        return "", value
    depth = 0
    for index, char in enumerate(value):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0:
            rest = value[index + 1:]
            if rest.startswith(":"):
                return value[1:index], rest[1:].lstrip()
            return "", value
    return "", value


def _dedent(text: str) -> str:
    """A bullet's text without its continuation indent (two spaces), fences included."""
    lines = text.splitlines()
    out = [lines[0].strip()] if lines else []
    for line in lines[1:]:
        out.append(line[2:] if line.startswith("  ") else line.lstrip(" "))
    return "\n".join(out).strip()


def _fields(body: str) -> tuple[Field, ...]:
    matches = list(_LABEL.finditer(body))
    fields = []
    for match, following in zip(matches, [*matches[1:], None]):
        value = body[match.end():following.start() if following else len(body)]
        value = re.sub(r"\n\s*-\s*$", "", value.rstrip()).strip()  # the next bullet's "- "
        context, text = ("", value) if match.group(2) or match.group(3) else _split_context(value)
        fields.append(Field(label=match.group(1), context=" ".join(context.split()), text=_dedent(text)))
    return tuple(fields)


def parse_findings(text: str, source: str = "FINDINGS.md") -> Findings:
    """Every ``### F<n>.`` entry of FINDINGS.md's text, in file order; an entry ends at the next heading."""
    entries = []
    for heading in _HEADING.finditer(text):
        end = _SECTION_END.search(text, heading.end())
        body = text[heading.end():end.start() if end else len(text)]
        entries.append(Finding(id=heading.group(1), title=heading.group(2), line=text.count("\n", 0, heading.start()) + 1,
                               fields=_fields(body)))
    if not entries:
        raise FindingsError(f"{source}: no finding entries (### F<n>. headings)")
    seen: set[str] = set()
    for entry in entries:
        if entry.id in seen:
            raise FindingsError(f"{source}:{entry.line}: {entry.id} has a second entry")
        seen.add(entry.id)
    return Findings(source=source, entries=tuple(entries))


def check_entry(findings: Findings, finding: Finding) -> None:
    """A live entry has every fact a report needs, once, and a title naming its implementation and rule."""
    where = f"{findings.source}:{finding.line}: {finding.id}"
    if not finding.live:
        raise FindingsError(f"{where} is not a live finding ({finding.title.split(':')[0]}): there is nothing to report")
    missing = [label for label in REQUIRED if finding.field(label) is None]
    if missing:
        raise FindingsError(f"{where} has no {', '.join(f'**{m}**' for m in missing)} bullet; a report needs it")
    empty = [f.label for f in finding.fields if f.label in REQUIRED and not f.text]
    if empty:
        raise FindingsError(f"{where}: its {', '.join(f'**{e}**' for e in empty)} bullet is empty")
    doubled = sorted({f.label for f in finding.fields if len(finding.fields_of(f.label)) > 1 and f.label in REQUIRED})
    if doubled:
        raise FindingsError(f"{where} has more than one {', '.join(f'**{d}**' for d in doubled)} bullet")
    if " — " not in finding.title:
        raise FindingsError(f"{where}: its title names no rule (write '### {finding.id}. <implementation> <version> "
                            f"<what happens> — RULE')")
