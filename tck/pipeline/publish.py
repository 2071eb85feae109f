"""The published site: a static, multi-target compliance site built from the pipeline's tables.

Theory of operation: ``site_data`` shapes the derived tables (already
collected to the driver as rows) into what the pages show: the matrix of
rules against target versions, and per target its versions, history,
flakiness, wire statistics, latency and violations.  ``publish_site`` renders
it with Jinja2 (no JavaScript) and writes ``site.json``, the same data for
machines.  Each target version's latest per-run report (``report/`` of its run
directory, built with ``rsio_tck.report.build`` when the reports package is there and
the report is missing) is copied next to the target's page.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import shutil
from collections import defaultdict
from dataclasses import asdict
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape

from .. import __version__
from ..findings.sources import Sources
from ..findings.spec import rule_text
from ..output_files import is_full, write_text
from ..report.model import protocol_title
from .derive import VERDICT_ORDER
from .public import WORD_ORDER, WORDS, cut_short, run_views, slug
from .public_pages import cite_findings, public_view, write_public_pages

log = logging.getLogger(__name__)
SITE_SCHEMA = "rsio-tck/site/v1"
SPEC_FROM_REPORT = "../../../spec.html"  # from targets/<target>-<version>/report/index.html
GENERATED_FOLDERS = ("targets", "rules", "findings", "grid", "badges")  # what publish_site writes besides pages


def _when(started: float) -> str:
    return dt.datetime.fromtimestamp(started, dt.UTC).strftime("%Y-%m-%d %H:%M:%S")


def _rule_key(rule: str) -> tuple[str, int, str]:
    area, _, number = rule.rpartition("-")
    return (area, int(number), rule) if number.isdigit() else (rule, 0, rule)


# Wire statistics that only a binding whose frame names the pipeline knows as elements (RS-IO's) can have:
# shown when they say something, not as 0 or an empty value for the other bindings.
ELEMENT_FRAME_STATS = ("element_frame_bytes", "bytes_per_element", "header_overhead", "packed_share", "split_share")


def _shown(row: dict[str, Any], key: str, value: Any) -> bool:
    if value is None:
        return False
    return not (key in ELEMENT_FRAME_STATS and not row.get("element_frame_bytes"))


def _words(counts: dict[str, int]) -> dict[str, int]:
    """A run's verdict counts in the reader's words (``reader_words``): xfail counts as fail, xpass as pass."""
    out: dict[str, int] = {}
    for verdict, count in counts.items():
        if count:
            out[WORDS[verdict]] = out.get(WORDS[verdict], 0) + count
    return out


def site_data(tables: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """The site's content as plain data (also written as site.json)."""
    latest = tables["matrix_latest"]
    summary = sorted(tables["run_summary"], key=lambda r: (r["started"], r["run_id"]))
    columns: dict[tuple[str, str], dict[str, Any]] = {}
    for row in latest:
        key = (row["target"], row["target_version"])
        column = columns.setdefault(key, {"target": row["target"], "version": row["target_version"],
                                          "run_id": row["run_id"], "slug": slug(row["target"]),
                                          "key": f"{row['target']}@{row['target_version']}", "passed": 0, "failed": 0})
        word = WORDS.get(row["verdict"])  # a known failure (xfail) counts as failed, never hidden
        if word == "pass":
            column["passed"] += 1
        elif word == "fail":
            column["failed"] += 1
    targets: dict[str, dict[str, Any]] = defaultdict(lambda: {"versions": [], "history": [], "flaky": [],
                                                                "wire": None, "latency": [], "signatures": [],
                                                                "frame_types": []})
    incomplete = {run["run_id"]: cut_short(run) for run in summary}
    for (target, _version), column in sorted(columns.items()):
        column["interrupted"] = incomplete.get(column["run_id"], False)
        targets[target]["versions"].append({"version": column["version"], "run_id": column["run_id"],
                                            "report": None, "interrupted": column["interrupted"]})
    for run in summary:
        targets[run["target"]]["history"].append({
            "run_id": run["run_id"], "started": _when(run["started"]), "target_version": run["target_version"],
            "kit_version": run["kit_version"], "offline": run["offline_violations"], "path": run["path"],
            "interrupted": incomplete[run["run_id"]],
            "counts": {v: run[v] for v in VERDICT_ORDER if run.get(v)},
            "words": _words({v: run.get(v) or 0 for v in VERDICT_ORDER}),
        })
    for row in sorted(tables["flakiness"], key=lambda r: (-r["fail_rate"], r["scenario"])):
        if row["flaky"]:
            targets[row["target"]]["flaky"].append(row)
    for row in tables["wire_stats"]:
        targets[row["target"]]["wire"] = {k: v for k, v in row.items() if k != "target" and _shown(row, k, v)} or None
    for row in sorted(tables.get("frame_types", []), key=lambda r: (r["direction"], -r["frames"], r["type"])):
        targets[row["target"]]["frame_types"].append(row)
    for row in sorted(tables["latency"], key=lambda r: r["measure"]):
        targets[row["target"]]["latency"].append(row)
    for row in sorted(tables["violations_by_signature"], key=lambda r: -r["violations"]):
        targets[row["target"] or "unknown"]["signatures"].append(row)
    return {
        "schema": SITE_SCHEMA,
        "generated": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "kit_version": __version__,
        "protocols": " / ".join(sorted({protocol_title(run) for run in tables.get("runs", [])})) or "RS-IO",
        "columns": [columns[key] for key in sorted(columns)],
        "rules": sorted({row["rule"] for row in latest}, key=_rule_key),
        "matrix_latest": latest,
        "matrix_history": tables.get("matrix_history", []),
        "runs": summary,
        "targets": dict(sorted(targets.items())),
        "flakiness": tables["flakiness"],
        "wire_stats": tables["wire_stats"],
        "latency": tables["latency"],
        "violations_by_rule": sorted(tables["violations_by_rule"], key=lambda r: (_rule_key(r["rule"]), r["source"])),
        "violations_by_signature": tables["violations_by_signature"],
        "fuzz": tables["fuzz_dedup"],
        "frame_types": tables.get("frame_types", []),
    }


def _copy_report(run_path: str | None, out: Path, build: bool) -> bool:
    """Copy a run directory to ``out``, its report built first if need be: the report's pages link the run's
    transcripts, traces and pcaps beside it (``../../traces/``), so the site carries them and stands alone.
    False when there is no report."""
    if not run_path:
        return False
    run_dir = Path(run_path)
    index = run_dir / "report" / "index.html"
    if not index.is_file() and build:
        try:
            from ..report import build as build_report
        except ImportError:
            log.info("rsio_tck.report is not installed: no per-run report for %s", run_dir)
            return False
        try:
            index = build_report(run_dir)
        except OSError as exc:
            if is_full(exc):  # no broken run: the disk the site goes to is full, and so is the site
                raise
            log.warning("cannot build the report of %s: %s", run_dir, exc)
            return False
        except Exception as exc:  # noqa: BLE001 - a broken run must not stop the site
            log.warning("cannot build the report of %s: %s", run_dir, exc)
            return False
    if not index.is_file():
        return False
    try:
        shutil.copytree(run_dir, out, dirs_exist_ok=True, copy_function=_copy_file)
    except _CopyFailed as failed:
        raise failed.error from None
    if build:  # the copy's rule links point into the site (its spec.html), not at the builder's SPEC.md file
        try:
            from ..report import build as build_report

            build_report(out, spec_link=SPEC_FROM_REPORT)
        except OSError:
            raise  # a full disk: publish's one error line, as for the copy
        except Exception as exc:  # noqa: BLE001 - the copied report stands as it was built
            log.warning("cannot rebuild the report of %s in the site: %s", run_dir, exc)
    return True


class _CopyFailed(Exception):
    """Carries a file copy's OSError (naming the file) out of ``copytree``, which would gather every OSError
    of the tree into one ``shutil.Error`` and go on copying onto a full disk."""

    def __init__(self, error: OSError) -> None:
        super().__init__(str(error))
        self.error = error


def _copy_file(source: str, destination: str) -> str:
    try:
        return str(shutil.copy2(source, destination))
    except OSError as exc:
        Path(destination).unlink(missing_ok=True)  # no half file
        raise _CopyFailed(OSError(exc.errno, exc.strerror or str(exc), destination)) from None


def _wire_tables(report_json: Path) -> list[dict[str, Any]]:
    """The binding's own wire statistics of a run, as its report computed them (``report.json``'s ``wire``:
    RSocket's frames, fragmentation, credit per stream, keepalive round-trips; Ditto's envelopes and demand
    per subscription; RS-IO's); none for a report without them."""
    try:
        tables = json.loads(report_json.read_text(encoding="utf-8")).get("wire") or []
    except (OSError, ValueError, AttributeError):
        return []
    return [t for t in tables if isinstance(t, dict) and t.get("rows") and t.get("columns")]


def publish_site(tables: dict[str, list[dict[str, Any]]], out: Path, *, build_reports: bool = True,
                 grid: list[dict[str, Any]] | None = None, sources: Sources | None = None) -> Path:
    """Render the site into ``out`` (with ``grid``, the client x server page too; with ``sources``, the
    findings behind known failures); returns its index.html."""
    data = site_data(tables)
    view = public_view(run_views(tables["runs"]), sources)
    data["scorecards"] = [{**asdict(t.card), "badge": t.badge, "page": t.page, "badge_message": t.card.badge_message,
                           "rule_pages": {rule: page.path for rule, page in t.pages.items()}} for t in view.targets]
    out.mkdir(parents=True, exist_ok=True)
    for folder in GENERATED_FOLDERS:  # an earlier publish's pages (another layout, a target since gone) must not stay
        shutil.rmtree(out / folder, ignore_errors=True)
    (out / "targets").mkdir(exist_ok=True)
    paths = {run["run_id"]: run["path"] for run in data["runs"]}
    for target, page in data["targets"].items():
        for version in page["versions"]:
            where = out / "targets" / f"{slug(target)}-{slug(version['version'])}"
            if _copy_report(paths.get(version["run_id"]), where, build_reports):
                version["report"] = f"{where.name}/report/index.html"  # relative to targets/<target>.html
                version["wire"] = _wire_tables(where / "report" / "report.json")
    env = Environment(loader=PackageLoader("rsio_tck.pipeline", "templates"), autoescape=select_autoescape(["html"]))
    common = {"generated": data["generated"], "kit_version": data["kit_version"], "runs": data["runs"],
              "has_grid": grid is not None, "protocols": data["protocols"]}
    shape = None
    if grid is not None:
        from .grid import grid_shape

        data["grid"] = grid
        known_cells = {(c.client, c.server, c.case): c for c in sources.grid} if sources is not None else {}
        shape = grid_shape(grid, known_cells)
        # Each cell's findings are cited with the binding its cell was judged with; a matrix.json from before the
        # binding column names none: then the site's first target's, and without targets the finding's own (None).
        fallback = view.targets[0].latest.binding if view.targets else None
        cited: dict[str | None, set[str]] = {}
        for cell in shape["cells"].values():
            cited.setdefault(cell.get("binding") or fallback, set()).update(cell["findings"])
        for binding, ids in sorted(cited.items(), key=lambda item: item[0] or ""):
            cite_findings(view, sources, sorted(ids), binding)
        data["grid_cells"] = [{key: cell[key] for key in ("client", "server", "word", "passed", "failed", "findings",
                                                          "page")} for cell in shape["cells"].values()]
    grid_rules = sorted({r for pair in grid or [] for r in [*pair["client_rules"], *pair["server_rules"]]})
    write_public_pages(env, out, view, sources, common, grid_rules)
    texts = {rule: rule_text(rule) for rule in view.rules}
    write_text(out / "index.html", env.get_template("index.html").render(
        root="", view=view, anchors={rule: text.anchor if text else "" for rule, text in texts.items()},
        levels={rule: text.level if text else "" for rule, text in texts.items()},
        offline={(row["target"], row["target_version"], row["rule"]): row["offline_violations"]
                 for row in data["matrix_latest"] if row.get("offline_violations")},
        violations_by_rule=data["violations_by_rule"], fuzz=data["fuzz"], **common))
    for target, page in data["targets"].items():
        write_text(out / "targets" / f"{slug(target)}.html", env.get_template("target.html").render(
            root="../", target=target, words=WORD_ORDER, **page, **common))
    if shape is not None:
        anchors = {rule: text.anchor for rule in grid_rules if (text := rule_text(rule)) is not None}
        write_text(out / "grid.html", env.get_template("grid.html").render(
            root="", grid=shape, findings=view.findings, **common))
        (out / "grid").mkdir(exist_ok=True)
        for (client, server), cell in shape["cells"].items():
            write_text(out / cell["page"], env.get_template("grid_cell.html").render(
                root="../", client=client, server=server, cell=cell, anchors=anchors, findings=view.findings,
                grid_runs=1,  # a site holds one grid: make interop's matrix.json
                **common))
    write_text(out / "site.json", json.dumps(data, indent=1, default=str, sort_keys=True))
    return out / "index.html"
