"""Rendering the static compliance report: index.html, one page per scenario, badge.svg, report.json.

Jinja2 with autoescaping on, templates in ``tck/report/templates``.  The pages
need no JavaScript and link only relatively, so the report works from
``file://`` and from any static web server.  A scenario page re-judges the
scenario's trace offline with the monitor, which gives the frame index of each
finding; transcript lines of those frames (and the lines that state a
violation) are highlighted.
"""

from __future__ import annotations

import json
import os
import re
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape

from ..monitor import Monitor
from ..output_files import write_text
from ..reader_words import KNOWN_LABELS, SHOWN_WORDS, word, word_class
from .rundir import RunFiles, file_stem

FRAME_LINE = re.compile(r"^\s*[\d.]+ms #(\d+)")


def _environment() -> Environment:
    env = Environment(loader=PackageLoader("rsio_tck.report", "templates"),
                      autoescape=select_autoescape(["html", "svg"]), keep_trailing_newline=True)
    env.filters["cell"] = cell
    env.filters["word"] = word
    env.filters["word_class"] = word_class
    return env


def shown_counts(counts: dict[str, int]) -> dict[str, int]:
    """Counts under ``SHOWN_WORDS``: a known failure counts as a failure, one that did not show as a pass."""
    out = {w: 0 for w in SHOWN_WORDS}
    for outcome, count in counts.items():
        if word(outcome) in out:
            out[word(outcome)] += count
    return out


def cell(value: Any) -> str:
    """A number of a wire statistics table as shown: an integer whole, any other to three decimals."""
    if isinstance(value, float) and not value.is_integer():
        return f"{value:.3f}"
    return str(int(value)) if isinstance(value, float) else str(value)


def spec_url() -> str | None:
    """Where SPEC.md's rule anchors are: ``$RSIO_SPEC_URL``, else the SPEC.md shipped in the package."""
    if os.environ.get("RSIO_SPEC_URL"):
        return os.environ["RSIO_SPEC_URL"]
    spec = Path(str(resources.files("rsio_tck").joinpath("SPEC.md")))  # package data: there in a wheel too
    return spec.resolve().as_uri() if spec.is_file() else None


def badge_svg(label: str, message: str, color: str) -> str:
    """A shields.io-like flat badge; text widths estimated at 7 px per character of 11 px Verdana."""
    left, right = 10 + 7 * len(label), 10 + 7 * len(message)
    return _environment().get_template("badge.svg").render(
        label=label, message=message, color=color, left=left, right=right, width=left + right)


def _time(value: Any) -> str:
    if not isinstance(value, (int, float)):
        return "?"
    return datetime.fromtimestamp(value, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def rejudge(files: RunFiles, scenario_id: str) -> list[dict[str, Any]] | None:
    """The monitor's findings on the scenario's trace, judged offline; None without a trace."""
    records = files.trace(scenario_id)
    if records is None:
        return None
    monitor = Monitor(files.profile, binding=files.binding)
    monitor.replay(records)
    return [f.to_json() for f in monitor.findings]


def transcript_lines(text: str, hit_frames: set[int]) -> list[dict[str, Any]]:
    lines = []
    for line in text.rstrip("\n").splitlines():
        match = FRAME_LINE.match(line)
        stripped = line.strip()
        hit = (match is not None and int(match.group(1)) in hit_frames) or stripped.startswith(("[", "monitor:"))
        lines.append({"text": line, "hit": hit})
    return lines


def render(report: dict[str, Any], files: RunFiles, out_dir: Path, spec_link: str | None = None) -> Path:
    """Write the report pages into ``out_dir`` (usually ``<run>/report``); returns index.html."""
    env = _environment()
    (out_dir / "scenarios").mkdir(parents=True, exist_ok=True)
    pages = {s["id"]: Path(s["page"]).name for s in report["scenarios"]}
    index = out_dir / "index.html"
    write_text(index, env.get_template("index.html").render(
        report=report, words=SHOWN_WORDS, shown=shown_counts(report["counts"]), known_labels=KNOWN_LABELS,
        shown_counts=shown_counts,
        pages=pages,
        spec_url=spec_link or spec_url(), started=_time(report["run"].get("started")), finished=_time(report["run"].get("finished")),
    ))
    page = env.get_template("scenario.html")
    for scenario in report["scenarios"]:
        # Only where something went wrong: a clean online judgement needs no second opinion (and it costs).
        judged = scenario["violations"] or scenario["verdict"] not in ("pass", "skip")
        findings = rejudge(files, scenario["id"]) if judged else None
        hits = {f["frame_index"] for f in findings or [] if f["side"] == "server" and f["frame_index"] is not None}
        text = files.transcript(scenario["id"]) or ""
        write_text(out_dir / "scenarios" / f"{file_stem(scenario['id'])}.html", page.render(
            report=report, s=scenario, lines=transcript_lines(text, hits), known_labels=KNOWN_LABELS,
            rejudged=[f for f in findings if f["side"] == "server"] if findings is not None else None,
        ))
    badge = report["badge"]
    write_text(out_dir / "badge.svg", badge_svg(badge["label"], badge["message"], badge["color"]))
    write_text(out_dir / "report.json", json.dumps(report, indent=2) + "\n")
    return index
