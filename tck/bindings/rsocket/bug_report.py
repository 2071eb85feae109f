"""What RSocket's bug reports say of RSocket (the hook ``bug_report_terms``: ``rsio_tck.findings.terms``).

The implementations FINDINGS.md judges are the rsocket organisation's, whose repositories have no issue
template of their own and so get the organisation's (``ISSUE_TEMPLATE``): a report's sections are its
headings.  The specification is Protocol.md: FINDINGS.md and SPEC.md count the lines of the kit's reference
copy (rsocket/rsocket at ``PROTOCOL_COMMIT``), which has one header line more than the file upstream, so a
report links each ``line N`` into upstream's numbering (``link_protocol_lines``), where a maintainer who
follows the link reads the sentence cited.
"""

from __future__ import annotations

from ...findings.terms import BugReportTerms, CitedDocument, IssueTemplate

PROTOCOL_COMMIT = "0f6e5554a5f9abbb1c6c7ec2138d2f3e0ab280e8"  # the newest commit of Protocol.md upstream
PROTOCOL_MD = CitedDocument(name="Protocol.md", edition="RSocket 1.0",
                            url=f"https://github.com/rsocket/rsocket/blob/{PROTOCOL_COMMIT}/Protocol.md",
                            offset=1)  # the kit's copy starts with a provenance comment
PROTOCOL_URL = PROTOCOL_MD.url

# rsocket/.github's bug report template: "Expected Behavior", "Actual Behavior", "Steps to Reproduce",
# "Possible Solution", "Your Environment" (with the RSocket versions used).
ISSUE_TEMPLATE = IssueTemplate(url="https://github.com/rsocket/.github/blob/master/.github/ISSUE_TEMPLATE/bug_report.md",
                               versions="RSocket version(s) used")

TERMS = BugReportTerms(protocol="RSocket", specification="the RSocket 1.0 specification", profile="rsocket-1.0",
                       transport="TCP", frame_bytes="TCP: a 24-bit length first", document=PROTOCOL_MD,
                       template=ISSUE_TEMPLATE)


def link_protocol_lines(text: str) -> str:
    """``line 1252`` -> ``line [1251](upstream#L1251)``: Protocol.md citations in upstream's numbering, linked."""
    return PROTOCOL_MD.link_lines(text)
