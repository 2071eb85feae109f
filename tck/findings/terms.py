"""What a bug report says of the finding's binding: the words that are the binding's, not the kit's.

A report is neutral (``report``, ``templates/bug-report.md.j2``); what it says of the protocol, the
specification it cites and where the report is filed comes from the finding's binding, through the optional
hook ``bug_report_terms()`` (``rsio_tck.binding.OptionalHooks``), a ``BugReportTerms``.  A binding without
the hook gets ``plain_terms(binding)``: its title for the protocol, its first profile, no document linked by
line and the kit's own section headings.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..binding import Binding

_LINES = re.compile(r"\b(?P<word>[Ll]ines?) (?P<spans>\d+(?:-\d+)?(?:, \d+(?:-\d+)?)*)\b")


@dataclass(frozen=True, slots=True)
class CitedDocument:
    """The specification's document that FINDINGS.md and SPEC.md cite by line (``line 1252``), as upstream has it."""

    name: str  # "Protocol.md"
    edition: str  # which specification it is, for the reader: "RSocket 1.0"
    url: str  # upstream's file, at the commit the kit's reference copy was taken from
    offset: int = 0  # the kit's copy's line N is upstream's N - offset (a provenance header)

    def link_lines(self, text: str) -> str:
        """``line 1252`` -> ``line [1251](url?plain=1#L1251)``: citations in upstream's numbering, linked.

        Only for text that cites this document alone by line (a finding's **Spec**, the binding's decisions)."""

        def span(part: str) -> str:
            numbers = [int(n) - self.offset for n in part.split("-")]
            shown = "-".join(str(n) for n in numbers)
            anchor = "-".join(f"L{n}" for n in numbers)
            return f"[{shown}]({self.url}?plain=1#{anchor})"

        def replace(match: re.Match[str]) -> str:
            return f"{match.group('word')} " + ", ".join(span(part) for part in match.group("spans").split(", "))

        return _LINES.sub(replace, text)


@dataclass(frozen=True, slots=True)
class IssueTemplate:
    """The issue template of the organisation that publishes the binding's implementations, when it has one:
    where it is, and its section headings, which a report uses as they stand."""

    url: str
    versions: str  # its environment's version line: "RSocket version(s) used"
    expected: str = "Expected Behavior"
    actual: str = "Actual Behavior"
    steps: str = "Steps to Reproduce"
    solution: str = "Possible Solution"
    environment: str = "Your Environment"


# A report for a binding whose implementations' organisation has no template: the same sections, no link.
PLAIN_TEMPLATE = IssueTemplate(url="", versions="Version used")


@dataclass(frozen=True, slots=True)
class BugReportTerms:
    """What a binding's bug reports say of it (``bug_report_terms()``)."""

    protocol: str  # what the implementations are implementations of: "RSocket" ("judges RSocket implementations")
    specification: str  # the specification as its readers know it: "the RSocket 1.0 specification"
    profile: str  # the profile the kit's findings were seen with, for the environment line
    transport: str | None = None  # what they ran over: "TCP" (None: not said)
    frame_bytes: str | None = None  # how a transcript's hex bytes are framed: "TCP: a 24-bit length first"
    document: CitedDocument | None = None  # None: no citation by line is linked
    template: IssueTemplate = PLAIN_TEMPLATE

    def link_lines(self, text: str) -> str:
        """``text``'s citations by line of the specification's document, linked (unchanged without a document)."""
        return self.document.link_lines(text) if self.document is not None else text


def plain_terms(binding: Binding | None) -> BugReportTerms:
    """The terms of a binding without the hook (None: a finding whose binding the baselines do not tell)."""
    if binding is None:
        return BugReportTerms(protocol="Reactive Streams", specification="its specification", profile="")
    return BugReportTerms(protocol=binding.title, specification=f"the {binding.title} specification",
                          profile=binding.profiles[0])


def terms_of(binding: Binding | None) -> BugReportTerms:
    """The binding's terms: its hook's, or ``plain_terms``."""
    from ..binding import hooks_of

    if binding is not None and hasattr(binding, "bug_report_terms"):
        return hooks_of(binding).bug_report_terms()
    return plain_terms(binding)
