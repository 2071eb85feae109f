"""SPEC.md states the rules of the catalogue (tck/catalogue/), the same IDs, levels and binds.

SPEC.md is parsed once: rule sections are ``### <ID> (<LEVEL>, <binds>)`` headings under
``## <AREA> ...`` area headings, each with a statement and three bullets (Source, Observed,
Binds); the final section holds the table of Reactive Streams rules.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from rsio_tck import SPEC_VERSION
from rsio_tck.catalogue import AREAS, RULES

SPEC_PATH = Path(__file__).resolve().parent.parent / "SPEC.md"

RULE_HEADING = re.compile(r"^### (?P<id>[A-Z]+(?:-[A-Z]+)*-\d+) \((?P<level>[A-Z]+), (?P<binds>[a-z]+)\)$")
BULLETS = ("Source", "Observed", "Binds")
BULLET = re.compile(r"^- (?P<name>Source|Observed|Binds): ?(?P<text>.*)$")
VERSION_LINE = re.compile(r"^SPEC version: (?P<version>.*)$")
RS_SECTION = "## Reactive Streams rules"
RS_STATUSES = frozenset({"tested on the wire", "not observable on the wire", "not applicable"})
# Rule numbers have one or two digits; scenario ids (STR-018) have three, and may be named too.
RULE_ID = re.compile(r"\b(?:" + "|".join(sorted(AREAS, key=len, reverse=True)) + r")-\d{1,2}\b")
EXPECTED_RS_RULES = (
    [f"1.{n}" for n in range(1, 12)]
    + [f"2.{n}" for n in range(1, 14)]
    + [f"3.{n}" for n in range(1, 18)]
    + ["4.1", "4.2"]
)


@dataclass(frozen=True, slots=True)
class RuleSection:
    id: str
    level: str
    binds: str
    area_heading: str  # the ``## `` heading the rule sits under
    line: int  # 1-based line of the rule heading
    statement: str
    bullets: tuple[tuple[str, str], ...]  # (name, text) in document order


@dataclass(frozen=True, slots=True)
class RsRow:
    line: int
    cells: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Spec:
    sections: tuple[RuleSection, ...]
    malformed_headings: tuple[str, ...]  # ``### `` lines that are not rule headings
    rs_rows: tuple[RsRow, ...]
    versions: tuple[str, ...]


def _split_row(line: str) -> tuple[str, ...]:
    return tuple(cell.strip() for cell in line.strip().strip("|").split("|"))


def _rule_section(match: re.Match[str], area_heading: str, line: int, body: list[str]) -> RuleSection:
    statement: list[str] = []
    bullets: list[tuple[str, str]] = []
    for text in body:
        bullet = BULLET.match(text)
        if bullet is not None:
            bullets.append((bullet["name"], bullet["text"].strip()))
        elif text.strip() and bullets and not text.startswith("- "):
            name, so_far = bullets[-1]  # a continuation line of the last bullet
            bullets[-1] = (name, f"{so_far} {text.strip()}".strip())
        elif text.strip() and not bullets:
            statement.append(text.strip())
    return RuleSection(
        id=match["id"],
        level=match["level"],
        binds=match["binds"],
        area_heading=area_heading,
        line=line,
        statement=" ".join(statement),
        bullets=tuple(bullets),
    )


def parse_spec(text: str) -> Spec:
    lines = text.splitlines()
    sections: list[RuleSection] = []
    malformed: list[str] = []
    rs_rows: list[RsRow] = []
    versions: list[str] = []
    area_heading = ""
    in_rs = False
    current: tuple[re.Match[str], str, int] | None = None
    body: list[str] = []

    def flush() -> None:
        if current is not None:
            sections.append(_rule_section(current[0], current[1], current[2], body))

    for number, line in enumerate(lines, start=1):
        version = VERSION_LINE.match(line)
        if version is not None:
            versions.append(version["version"].strip())
        if line.startswith("#"):
            flush()
            current, body = None, []
            if line.startswith("### "):
                match = RULE_HEADING.match(line.rstrip())
                if match is None:
                    malformed.append(line)
                else:
                    current = (match, area_heading, number)
            elif line.startswith("## "):
                area_heading = line.rstrip()
                in_rs = area_heading == RS_SECTION
            continue
        if current is not None:
            body.append(line)
        elif in_rs and line.startswith("|"):
            cells = _split_row(line)
            if cells[0] == "RS rule" or set("".join(cells)) <= set("-: "):
                continue  # the header row and the separator row
            rs_rows.append(RsRow(line=number, cells=cells))
    flush()
    return Spec(
        sections=tuple(sections),
        malformed_headings=tuple(malformed),
        rs_rows=tuple(rs_rows),
        versions=tuple(versions),
    )


@functools.cache
def spec() -> Spec:
    return parse_spec(SPEC_PATH.read_text(encoding="utf-8"))


def _order_key(rule_id: str) -> tuple[int, int]:
    area, _, number = rule_id.rpartition("-")
    return list(AREAS).index(area), int(number)


# -- rule sections ------------------------------------------------------------------------


def test_every_catalogue_rule_has_exactly_one_heading_with_its_level_and_binds() -> None:
    sections = spec().sections
    counts = Counter(section.id for section in sections)
    missing = sorted(set(RULES) - set(counts))
    duplicated = sorted(rule_id for rule_id, n in counts.items() if n > 1)
    assert not missing, f"catalogue rules without a heading in SPEC.md: {missing}"
    assert not duplicated, f"rules with more than one heading in SPEC.md: {duplicated}"
    wrong = [
        f"{s.id} (line {s.line}): SPEC says ({s.level}, {s.binds}), catalogue says "
        f"({RULES[s.id].level.value}, {RULES[s.id].binds})"
        for s in sections
        if s.id in RULES and (s.level, s.binds) != (RULES[s.id].level.value, RULES[s.id].binds)
    ]
    assert not wrong, "\n".join(wrong)


def test_no_rule_heading_unknown_to_the_catalogue() -> None:
    parsed = spec()
    unknown = [f"{s.id} (line {s.line})" for s in parsed.sections if s.id not in RULES]
    assert not unknown, f"SPEC.md has rule headings the catalogue does not define: {unknown}"
    assert not parsed.malformed_headings, (
        "### headings not of the form '### ID (LEVEL, binds)': " + "; ".join(parsed.malformed_headings)
    )


def test_each_rule_has_a_statement_and_the_three_bullets() -> None:
    problems: list[str] = []
    for section in spec().sections:
        if not section.statement:
            problems.append(f"{section.id}: no rule statement before the bullets")
        names = tuple(name for name, _ in section.bullets)
        if names != BULLETS:
            problems.append(f"{section.id}: bullets {names}, expected exactly {BULLETS} in that order")
        problems += [f"{section.id}: empty '- {name}:' bullet" for name, text in section.bullets if not text]
    assert not problems, "\n".join(problems)


def test_rules_appear_in_area_order_then_numeric_order() -> None:
    ids = [section.id for section in spec().sections if section.id in RULES]
    assert ids, "no rule sections parsed from SPEC.md"
    out_of_order = [
        f"{before} is followed by {after}"
        for before, after in itertools.pairwise(ids)
        if _order_key(after) <= _order_key(before)
    ]
    assert not out_of_order, "; ".join(out_of_order)


def test_each_rule_sits_under_its_area_heading() -> None:
    misplaced = [
        f"{s.id} is under {s.area_heading!r}"
        for s in spec().sections
        if s.id in RULES and s.area_heading.split()[1:2] != [RULES[s.id].area]
    ]
    assert not misplaced, "; ".join(misplaced)


# -- the Reactive Streams table -----------------------------------------------------------


def test_rs_table_lists_every_reactive_streams_rule_exactly_once() -> None:
    rows = spec().rs_rows
    assert rows, f"no table rows found under {RS_SECTION!r}"
    malformed = [f"line {row.line}: {len(row.cells)} cells" for row in rows if len(row.cells) != 4]
    assert not malformed, "RS table rows must have 4 cells: " + "; ".join(malformed)
    counts = Counter(row.cells[0] for row in rows)
    missing = [rule for rule in EXPECTED_RS_RULES if rule not in counts]
    repeated = sorted(rule for rule, n in counts.items() if n > 1)
    unknown = sorted(set(counts) - set(EXPECTED_RS_RULES))
    assert not missing, f"RS rules missing from the table: {missing}"
    assert not repeated, f"RS rules listed more than once: {repeated}"
    assert not unknown, f"rows for rules Reactive Streams does not have: {unknown}"


def test_rs_table_statuses_are_the_allowed_strings() -> None:
    rows = spec().rs_rows
    assert rows, f"no table rows found under {RS_SECTION!r}"
    bad = [f"{row.cells[0]}: {row.cells[2]!r}" for row in rows if len(row.cells) < 3 or row.cells[2] not in RS_STATUSES]
    assert not bad, f"statuses must be one of {sorted(RS_STATUSES)}: " + "; ".join(bad)
    assert all(row.cells[3].strip() for row in rows if len(row.cells) == 4), "every row needs rules or a reason"


def test_rs_tested_rows_name_existing_catalogue_rules() -> None:
    rows = [row for row in spec().rs_rows if len(row.cells) == 4]
    tested = [row for row in rows if row.cells[2] == "tested on the wire"]
    assert tested, "no RS rule is marked 'tested on the wire'"
    naming_none = [row.cells[0] for row in tested if not RULE_ID.findall(row.cells[3])]
    assert not naming_none, f"'tested on the wire' rows that name no SPEC rule: {naming_none}"
    unknown = [
        f"{row.cells[0]}: {rule_id}" for row in rows for rule_id in RULE_ID.findall(row.cells[3]) if rule_id not in RULES
    ]
    assert not unknown, f"RS table names rule IDs the catalogue does not define: {unknown}"


# -- version --------------------------------------------------------------------------------


def test_spec_version_line_matches_the_package() -> None:
    versions = spec().versions
    assert len(versions) == 1, f"expected one 'SPEC version:' line, found {len(versions)}"
    assert versions[0] == SPEC_VERSION
