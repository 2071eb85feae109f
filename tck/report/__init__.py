"""Reports: the run directory, its JSON Schemas, pcaps, allure results and the static HTML compliance report.

``build(run_dir)`` rebuilds ``<run_dir>/report/`` (index.html, one page per
scenario, badge.svg, report.json) from the run's files alone, writing the pcap
of every trace that lacks one first.  ``RunRecorder`` writes a run directory
while a run goes on.  The layout is described in the documentation's Reports page
(docs/reports.md); the schemas are in ``tck/report/schemas``.
"""

from __future__ import annotations

from pathlib import Path

from .rundir import RunFiles, RunRecorder

__all__ = ["RunFiles", "RunRecorder", "build"]


def build(run_dir: Path, spec_link: str | None = None) -> Path:
    """Rebuild the report of ``run_dir``; returns the path of its index.html.  ``spec_link``: where its rule
    links point (a published site's ``spec.html``, relative to the report); default ``html.spec_url()``."""
    from .html import render
    from .model import report_data

    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise FileNotFoundError(f"{run_dir}: not a run directory")
    files = RunFiles.read(run_dir)
    files.restore_pcaps()
    return render(report_data(files), files, run_dir / "report", spec_link=spec_link)
