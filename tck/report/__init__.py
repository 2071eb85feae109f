"""Reports: the run directory, its JSON Schemas, pcaps, allure results and the static HTML compliance report.

Theory of operation.  A run writes a run directory as it goes (``rundir.RunRecorder``:
results.jsonl, one trace per connection, transcripts); a report is a pure function of that
directory.  ``build(run_dir)`` rebuilds ``<run_dir>/report/`` (index.html, one page per
scenario, badge.svg, report.json) from the run's files alone, writing the pcap of every trace
that lacks one first (``pcap``); ``model`` joins results with the rule catalogue, per rule and
area, and ``traffic`` and the binding's own statistics describe the wire.  Every file written
is checked against its schema (``schema``, ``schemas/``).  The layout is described in the
documentation's Reports page (docs/reports.md).
"""

from __future__ import annotations

from pathlib import Path

from .rundir import RunFiles, RunRecorder

__all__ = ["RunFiles", "RunRecorder", "build"]


def build(run_dir: Path, spec_link: str | None = None, notes: list[str] | None = None) -> Path:
    """Rebuild the report of ``run_dir``; returns the path of its index.html.  ``spec_link``: where its rule
    links point (a published site's ``spec.html``, relative to the report); default ``html.spec_url()``.
    ``notes`` gets a line for each trace file cut inside a record (shown up to the cut)."""
    from .html import render
    from .model import report_data

    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise FileNotFoundError(f"{run_dir}: not a run directory")
    files = RunFiles.read(run_dir)
    files.restore_pcaps()
    data = report_data(files)
    if notes is not None:
        notes.extend(cut["line"] for cut in data["cut_traces"])
    return render(data, files, run_dir / "report", spec_link=spec_link)
