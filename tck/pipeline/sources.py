"""Reading run directories (notes/rundir.md) into table rows, one file at a time.

Theory of operation: every function here turns one file of a run directory
into plain dicts shaped like a row of one pipeline table, and does nothing
else, so the Spark jobs can call them on executors (one task per run, one per
trace) and the single-process baseline can call them in a loop.  Nothing here
imports Spark.

A run's target is named, in this order, by the name it was given (``--name
NAME[@VERSION]``, recorded as run.json's ``target_name`` / ``target_version``;
the kit names its embedded reference peer itself), by what its capabilities
file claims (``fingerprint.capabilities``, else ``implementation``), and else by
its URL, port included: two unnamed targets on one host are two targets.  A
fuzz run directory without run.json is read from its fuzz.json.
Pcaps are read through the reports package's capture reader when it is
installed; a pcap adds frames only for a scenario that has no trace (the two
record the same traffic), so captures made by other tools can be judged too.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ..binding import DEFAULT_BINDING
from ..monitor.trace import TraceCut, read_trace, whole_records
from .framing import frame_rows

log = logging.getLogger(__name__)
DIGITS = re.compile(r"\d+")
HEX = re.compile(r"\b[0-9a-f]{8,}\b")
RUN_ID_TIME = re.compile(r"^(\d{8}T\d{6})(\d{3})Z")


def is_run_dir(path: Path) -> bool:
    return any((path / name).is_file() for name in ("run.json", "results.jsonl", "fuzz.json"))


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


def _named(value: Any) -> str:
    """A claimed name or version, or "" when it claims nothing (absent, empty, a placeholder)."""
    text = str(value or "").strip()
    return "" if text.startswith("(") or text == "unknown" else text


def target_url_key(url: str) -> str:
    """An unnamed target's key: its URL with the port (``tcp://127.0.0.1:4000``); other URLs whole."""
    parts = urlsplit(url)
    if parts.scheme in ("tcp", "tls") and parts.hostname:
        host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
        return f"{parts.scheme}://{host}" + (f":{parts.port}" if parts.port is not None else "")
    return url or "unknown"


def target_identity(run: dict[str, Any]) -> tuple[str, str]:
    """(target name, target version) of a run: its given name, else its capabilities file's, else its URL."""
    caps = (run.get("fingerprint") or {}).get("capabilities") or {}
    implementation = run.get("implementation")
    claimed_name = claimed_version = ""
    if isinstance(implementation, dict):
        claimed_name, claimed_version = _named(implementation.get("name")), _named(implementation.get("version"))
    elif isinstance(implementation, str):
        claimed_name = _named(implementation)
    claimed_name = _named(caps.get("implementation")) or claimed_name
    claimed_version = _named(caps.get("version")) or claimed_version
    name = _named(run.get("target_name")) or claimed_name or target_url_key(str(run.get("target") or ""))
    return name, _named(run.get("target_version")) or claimed_version or "unknown"


def _run_record(run_dir: Path) -> dict[str, Any]:
    """run.json, or for a fuzz run without one what its fuzz.json says of the run."""
    if (run_dir / "run.json").is_file() or not (run_dir / "fuzz.json").is_file():
        return _load_json(run_dir / "run.json")
    fuzz = _load_json(run_dir / "fuzz.json")
    keys = ("run_id", "target", "target_name", "target_version", "codec", "binding", "seed")
    record = {key: fuzz[key] for key in keys if key in fuzz}
    stamp = RUN_ID_TIME.match(str(record.get("run_id") or run_dir.name))
    if stamp:  # run ids start with the UTC time the run started (rsio_tck.report.rundir.run_id)
        started = dt.datetime.strptime(stamp.group(1), "%Y%m%dT%H%M%S").replace(tzinfo=dt.UTC)
        record["started"] = started.timestamp() + int(stamp.group(2)) / 1000
    return record


def run_row(run_dir: Path) -> dict[str, Any]:
    run = _run_record(run_dir)
    target, target_version = target_identity(run)
    return {
        "run_id": str(run.get("run_id") or run_dir.name), "target": target, "target_version": target_version,
        "kit_version": str(run.get("kit_version", "unknown")), "spec_version": str(run.get("spec_version", "")),
        "codec": str(run.get("codec", "msgpack")), "target_url": str(run.get("target", "")),
        "started": float(run.get("started") or 0.0), "finished": float(run.get("finished") or 0.0),
        "host": str(run.get("host", "")), "seed": run.get("seed") if isinstance(run.get("seed"), int) else None,
        "scenarios": int(run.get("scenarios") or 0), "fuzz": (run_dir / "fuzz.json").is_file(),
        "path": str(run_dir.resolve()), "binding": str(run.get("binding") or DEFAULT_BINDING),
        "interrupted": _interrupted(run_dir, run),
    }


def _interrupted(run_dir: Path, run: dict[str, Any]) -> bool | None:
    """run.json's interrupted (False for run directories older than the field); None without run.json, when
    the run never ended (a fuzz run has no run.json: it ended if its fuzz.json was written)."""
    if not (run_dir / "run.json").is_file():
        return None if not (run_dir / "fuzz.json").is_file() else False
    return bool(run.get("interrupted"))


def ended_early(run_dir: Path) -> bool:
    """Whether the run did not run to its end: run.json says a signal interrupted it, or there is none (the run
    never ended; a fuzz run without one ended if its fuzz.json was written).  Such a run's last files may have
    been cut in the middle of a write."""
    return _interrupted(run_dir, _run_record(run_dir)) is not False


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


def connection_work(run_dir: Path, run_id: str, codec: str,
                    binding: str = DEFAULT_BINDING) -> list[tuple[str, str, str, int, str, str, str]]:
    """(kind, path, run_id, connection, scenario, codec, binding) for every trace, and for every pcap
    without a trace."""
    work = []
    traces = sorted((run_dir / "traces").glob("*.trace")) if (run_dir / "traces").is_dir() else []
    for number, trace in enumerate(traces):
        work.append(("trace", str(trace), run_id, number, trace.stem, codec, binding))
    covered = {t.stem for t in traces}
    pcaps = sorted((run_dir / "pcaps").glob("*.pcap")) if (run_dir / "pcaps").is_dir() else []
    for number, pcap in enumerate(pcaps, start=len(traces)):
        if pcap.stem not in covered:
            work.append(("pcap", str(pcap), run_id, number * 1000, pcap.stem, codec, binding))
    return work


def connection_frames(kind: str, path: str, run_id: str, connection: int, scenario: str,
                      codec: str, binding: str = DEFAULT_BINDING, problems: list[str] | None = None,
                      cut: list[str] | None = None) -> Iterator[dict[str, Any]]:
    """Frame rows of one trace, or of each TCP connection of one pcap (numbered from ``connection``).  A file
    that cannot be read whole gives the rows before the fault; why goes to the log and onto ``problems``.  A
    trace file that ends inside a record gives the rows of its whole records, as if it ended there, and says
    where it was cut onto ``cut`` (the driver decides whether that was to be expected: ``completeness``)."""
    def skipped(why: str, then: str) -> None:
        log.warning("%s: %s; %s", path, why, then)
        if problems is not None:
            problems.append(why)

    cuts: list[TraceCut] = []
    if kind == "trace":
        recorded = [(connection, whole_records(read_trace(Path(path)), cuts))]
    else:
        try:
            from ..report.pcap import read_connections
        except ImportError as exc:
            skipped(f"no pcap reader (rsio_tck.report.pcap: {exc})", "skipped")
            return
        try:
            recorded = [(connection + n, iter(c.records)) for n, c in enumerate(read_connections(Path(path)))]
        except (ValueError, OSError) as exc:
            skipped(str(exc), "skipped")
            return
    for number, records in recorded:
        try:
            for row in frame_rows(records, codec, binding):
                yield {"run_id": run_id, "scenario": scenario, "connection": number, "origin": kind,
                       **row.as_dict()}
        except (ValueError, OSError) as exc:
            skipped(str(exc), "its remaining frames are skipped")
    for found in cuts:
        log.info("%s: %s", path, found)
        if cut is not None:
            cut.append(str(found))
