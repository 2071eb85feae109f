"""Reading run directories (notes/rundir.md) into table rows, one file at a time.

Theory of operation: every function here turns one file of a run directory
into plain dicts shaped like a row of one pipeline table, and does nothing
else, so the Spark jobs can call them on executors (one task per run, one per
trace) and the single-process baseline can call them in a loop.  Nothing here
imports Spark.

A run's target is named by what it claims (``fingerprint.capabilities``, else
``implementation``), because its URL carries a port that changes per run.
Pcaps are read through the reports package's capture reader when it is
installed; a pcap adds frames only for a scenario that has no trace (the two
record the same traffic), so captures made by other tools can be judged too.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ..monitor.trace import read_trace
from .framing import frame_rows

log = logging.getLogger(__name__)
DIGITS = re.compile(r"\d+")
HEX = re.compile(r"\b[0-9a-f]{8,}\b")


def is_run_dir(path: Path) -> bool:
    return (path / "run.json").is_file() or (path / "results.jsonl").is_file()


def expand_run_dirs(paths: list[Path]) -> list[Path]:
    """Run directories named, or found one level below a named directory (``reports/``)."""
    found: list[Path] = []
    for path in paths:
        if is_run_dir(path):
            found.append(path)
        elif path.is_dir():
            found.extend(sorted(child for child in path.iterdir() if child.is_dir() and is_run_dir(child)))
    seen: set[Path] = set()
    return [p for p in found if not (p.resolve() in seen or seen.add(p.resolve()))]  # type: ignore[func-returns-value]


def signature(rule: str, message: str) -> str:
    """What makes two violations the same failure: the rule and the message without its numbers."""
    text = HEX.sub("<hex>", message.strip())
    return f"{rule}: {DIGITS.sub('N', text)}"[:300]


def _load_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        log.warning("cannot read %s: %s", path, exc)
        return {}
    return data if isinstance(data, dict) else {}


def target_identity(run: dict[str, Any]) -> tuple[str, str]:
    """(target name, target version) a run's metadata claims."""
    caps = (run.get("fingerprint") or {}).get("capabilities") or {}
    implementation = run.get("implementation")
    name = version = ""
    if isinstance(implementation, dict):
        name, version = str(implementation.get("name", "")), str(implementation.get("version", ""))
    elif isinstance(implementation, str):
        name = implementation
    name = str(caps.get("implementation") or name)
    version = str(caps.get("version") or run.get("target_version") or version)
    if not name or name.startswith("(") or name == "unknown":
        url = urlsplit(str(run.get("target", "")))
        name = f"{url.scheme}://{url.hostname}" if url.hostname else str(run.get("target") or "unknown")
    return name, version or "unknown"


def run_row(run_dir: Path) -> dict[str, Any]:
    run = _load_json(run_dir / "run.json")
    target, target_version = target_identity(run)
    return {
        "run_id": str(run.get("run_id") or run_dir.name), "target": target, "target_version": target_version,
        "kit_version": str(run.get("kit_version", "unknown")), "spec_version": str(run.get("spec_version", "")),
        "codec": str(run.get("codec", "msgpack")), "target_url": str(run.get("target", "")),
        "started": float(run.get("started") or 0.0), "finished": float(run.get("finished") or 0.0),
        "host": str(run.get("host", "")), "seed": run.get("seed") if isinstance(run.get("seed"), int) else None,
        "scenarios": int(run.get("scenarios") or 0), "fuzz": (run_dir / "fuzz.json").is_file(),
        "path": str(run_dir.resolve()),
    }


def result_rows(run_dir: Path, run_id: str) -> Iterator[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """(scenario result row, its violation rows) per line of results.jsonl."""
    path = run_dir / "results.jsonl"
    if not path.is_file():
        return
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError as exc:
            log.warning("%s line %d is not JSON: %s", path, number + 1, exc)
            continue
        scenario = str(item.get("id", f"line-{number + 1}"))
        row = {
            "run_id": run_id, "scenario": scenario, "title": str(item.get("title", "")),
            "rules": [str(r) for r in item.get("rules") or []], "level": str(item.get("level", "")),
            "verdict": str(item.get("verdict", "error")), "duration": float(item.get("duration") or 0.0),
            "reason": str(item.get("reason", "")),
        }
        violations = [violation_row(run_id, scenario, None, str(v.get("source", "scenario")), v)
                      for v in item.get("violations") or [] if isinstance(v, dict)]
        yield row, violations


def violation_row(run_id: str, scenario: str | None, connection: int | None, source: str,
                  item: dict[str, Any]) -> dict[str, Any]:
    rule, message = str(item.get("rule", "")), str(item.get("message", ""))
    side = item.get("side")
    return {
        "run_id": run_id, "scenario": scenario, "connection": connection, "source": source, "rule": rule,
        "level": str(item.get("level") or "MUST"), "side": str(side) if side is not None else None,
        "message": message, "signature": signature(rule, message),
        "t": float(item["t"]) if isinstance(item.get("t"), (int, float)) else None,
    }


def fuzz_rows(run_dir: Path, run_id: str) -> list[dict[str, Any]]:
    """One row per finding of fuzz.json (schema rsio-tck/fuzz/v1)."""
    path = run_dir / "fuzz.json"
    if not path.is_file():
        return []
    fuzz = _load_json(path)
    rows = []
    for item in fuzz.get("findings") or []:
        if not isinstance(item, dict):
            continue
        rule, message = str(item.get("rule", "")), str(item.get("message", ""))
        rows.append({
            "run_id": run_id, "rule": rule, "signature": str(item.get("signature") or signature(rule, message)),
            "side": item.get("side"), "message": message, "scenario_file": item.get("scenario_file"),
            "count": int(item.get("count") or 1),
        })
    return rows


def connection_work(run_dir: Path, run_id: str, codec: str) -> list[tuple[str, str, str, int, str, str]]:
    """(kind, path, run_id, connection, scenario, codec) for every trace, and for every pcap without a trace."""
    work = []
    traces = sorted((run_dir / "traces").glob("*.trace")) if (run_dir / "traces").is_dir() else []
    for number, trace in enumerate(traces):
        work.append(("trace", str(trace), run_id, number, trace.stem, codec))
    covered = {t.stem for t in traces}
    pcaps = sorted((run_dir / "pcaps").glob("*.pcap")) if (run_dir / "pcaps").is_dir() else []
    for number, pcap in enumerate(pcaps, start=len(traces)):
        if pcap.stem not in covered:
            work.append(("pcap", str(pcap), run_id, number * 1000, pcap.stem, codec))
    return work


def connection_frames(kind: str, path: str, run_id: str, connection: int, scenario: str,
                      codec: str) -> Iterator[dict[str, Any]]:
    """Frame rows of one trace, or of each TCP connection of one pcap (numbered from ``connection``)."""
    if kind == "trace":
        recorded = [(connection, read_trace(Path(path)))]
    else:
        try:
            from ..report.pcap import read_connections
        except ImportError:
            log.warning("no pcap reader (rsio_tck.report.pcap) installed: %s skipped", path)
            return
        recorded = [(connection + n, iter(c.records)) for n, c in enumerate(read_connections(Path(path)))]
    for number, records in recorded:
        try:
            for row in frame_rows(records, codec):
                yield {"run_id": run_id, "scenario": scenario, "connection": number, "origin": kind,
                       **row.as_dict()}
        except (ValueError, OSError) as exc:
            log.warning("%s: %s; its remaining frames are skipped", path, exc)
