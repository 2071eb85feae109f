"""The finding half of ``rsio-tck report``: ``--finding F7`` (stdout or ``--out FILE``) and ``--all-findings
--out-dir DIR``.  Every report is made before anything is written, so a malformed entry leaves no half-written
folder; each problem is one ``GateError`` line.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ..gate import GateError, one_line
from .entries import FindingsError
from .report import BugReport, bug_report, render
from .sources import read_sources


def _reports(findings_file: Path, finding: str | None) -> tuple[list[BugReport], list[str]]:
    """The reports asked for, and the ids of the entries skipped as no live finding."""
    try:
        sources = read_sources(findings_file)
        if finding is not None:
            return [bug_report(sources, sources.findings.get(finding))], []
        skipped = [entry.id for entry in sources.findings.entries if not entry.live]
        return [bug_report(sources, entry) for entry in sources.findings.live()], skipped
    except FindingsError as exc:
        raise GateError(one_line(exc)) from None


def _write(path: Path, text: str) -> None:
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise GateError(f"{path}: {one_line(exc)}") from None


def _write_report(report: BugReport, markdown: Path) -> list[Path]:
    written = [markdown]
    _write(markdown, render(report))
    scenarios = report.reproduction.scenarios
    if scenarios is not None:
        written.append(markdown.parent / scenarios.file_name)
        _write(written[-1], scenarios.yaml)
    return written


def finding_reports(finding: str | None, all_findings: bool, out: Path | None, out_dir: Path | None,
                    findings_file: Path) -> None:
    """Write the bug report(s) asked for; the flags have been checked against each other by the caller."""
    reports, skipped = _reports(findings_file, None if all_findings else finding)
    if not all_findings:
        (report,) = reports
        if out is None:
            sys.stdout.write(render(report))
            return
        if out.is_dir():
            raise GateError(f"--out {out}: a directory; give a file (--all-findings --out-dir DIR writes a folder)")
        if not out.parent.is_dir():
            raise GateError(f"--out {out}: no folder {out.parent}")
        for path in _write_report(report, out):
            print(f"wrote {path}")
        return
    assert out_dir is not None
    if out_dir.exists() and not out_dir.is_dir():
        raise GateError(f"--out-dir {out_dir}: not a directory")
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise GateError(f"--out-dir {out_dir}: {one_line(exc)}") from None
    for report in reports:
        _write_report(report, out_dir / f"{report.file_stem}.md")
    print(f"wrote {len(reports)} bug reports to {out_dir} ({reports[0].file_stem}.md to {reports[-1].file_stem}.md, "
          f"each with its F<n>-reproduction.yaml where a scenario shows it); not live, no report: "
          f"{', '.join(skipped) or 'none'}")
