"""The ``rsio-tck`` command line."""

from __future__ import annotations

import asyncio
import sys
import time
from collections import Counter
from pathlib import Path

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from .fuzz.cli import fuzz_command
from .pipeline.cli import pipeline_command, publish_command
from .report.cli import check_pcap_command, report_command
from .wireshark.cli import wireshark_app

app = typer.Typer(add_completion=False, no_args_is_help=True, help="rsio-tck: conformance test kit for RS-IO.")
console = Console(stderr=True)


def run_id() -> str:
    """Sortable by time: 20261122T203300Z-1234."""
    now = time.time()
    return time.strftime("%Y%m%dT%H%M%S", time.gmtime(now)) + f"{int(now * 1000) % 1000:03d}Z"


@app.command()
def run(
    target: str | None = typer.Option(None, help="target URL; default: start the reference peer locally"),
    codec: str = typer.Option("msgpack", help="msgpack or varint"),
    capabilities: Path | None = typer.Option(None, help="the target's capabilities file"),
    strict: bool = typer.Option(False, help="fail on SHOULD deviations too"),
    baseline: Path | None = typer.Option(None, help="scenario ids known to fail (xfail)"),
    report_dir: Path = typer.Option(Path("reports"), help="where the run directory is written"),
    keyword: str = typer.Option("", "-k", help="select scenarios, as pytest -k"),
    jobs: int = typer.Option(8, help="scenarios run concurrently"),
    scenarios_dir: Path | None = typer.Option(None, "--scenarios", help="scenario directory"),
    signal_timeout: float = typer.Option(2.0, help="seconds a signal may take"),
    silence_window: float = typer.Option(0.05, help="seconds of silence that prove nothing arrives"),
    fault: list[str] = typer.Option([], help="with the embedded peer: switch on a fault (repeatable)"),
    quiet: bool = typer.Option(False, help="no progress bar"),
) -> None:
    """Run the scenario suite against a target; exit 0 only if nothing failed."""
    from .capabilities import Capabilities, CapabilitiesError
    from .embedded import EmbeddedPeer
    from .pytest_plugin import read_baseline
    from .report import RunRecorder
    from .report import build as build_report
    from .scenarios import RunConfig, ScenarioError, Verdict, load_directory, run_suite
    from .selection import SelectionError, select

    try:
        chosen = [s for s in load_directory(scenarios_dir) if select(keyword, s)]
        caps = Capabilities.load(capabilities) if capabilities else Capabilities.everything()
    except (ScenarioError, CapabilitiesError, SelectionError) as exc:
        console.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from None
    peer = None
    if target is None:
        peer = EmbeddedPeer(codec=codec, faults=fault)
        target = peer.start()
    directory = report_dir / run_id()
    directory.mkdir(parents=True, exist_ok=True)
    config = RunConfig(target=target, codec=codec, capabilities=caps, strict=strict,
                       signal_timeout=signal_timeout, silence_window=silence_window,
                       baseline=read_baseline(baseline) if baseline else frozenset(), keep_trace=True)
    started = time.time()
    recorder = RunRecorder(directory, target=target, codec=codec, started=started, capabilities=caps)
    try:
        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                      console=console, disable=quiet) as progress:
            task = progress.add_task(f"rsio-tck {codec} -> {target}", total=len(chosen))

            def done(result: object) -> None:
                from .scenarios import ScenarioResult

                assert isinstance(result, ScenarioResult)
                recorder.add(result)  # results.jsonl line, trace, pcap, transcript
                result.trace = []  # written: do not keep every trace of the run in memory
                progress.advance(task)

            results = asyncio.run(run_suite(chosen, config, jobs=jobs, on_result=done))
    finally:
        recorder.close()
        if peer is not None:
            peer.stop()
    recorder.finish(time.time(), len(chosen))
    index = build_report(directory)
    summary(results)
    failed = [r for r in results if r.verdict in (Verdict.FAIL, Verdict.ERROR, Verdict.XPASS)]
    for result in failed[:20]:
        console.print(result.explain(), markup=False, highlight=False)
    console.print(f"results: {directory / 'results.jsonl'}  report: {index}  ({time.time() - started:.2f} s)")
    raise typer.Exit(1 if failed else 0)


def summary(results: list) -> None:  # type: ignore[type-arg]
    from .rules import AREAS

    table = Table(title="rsio-tck summary by rule area")
    verdicts = ["pass", "fail", "warn", "skip", "xfail", "xpass", "error"]
    table.add_column("area")
    for verdict in verdicts:
        table.add_column(verdict, justify="right")
    by_area: dict[str, Counter[str]] = {area: Counter() for area in AREAS}
    for result in results:
        by_area.setdefault(result.rules[0].rsplit("-", 1)[0], Counter())[result.verdict.value] += 1
    total: Counter[str] = Counter()
    for area, counts in by_area.items():
        total.update(counts)
        table.add_row(f"{area} {AREAS.get(area, '')}", *[str(counts.get(v, 0) or "") for v in verdicts])
    table.add_row("total", *[str(total.get(v, 0)) for v in verdicts])
    Console().print(table)


@app.command("check-trace")
def check_trace(
    trace: Path = typer.Argument(..., help="a trace file (msgpack stream of {t, dir, bytes|eof})"),
    codec: str = typer.Option("msgpack"),
    strict: bool = typer.Option(False),
) -> None:
    """Judge a recorded trace offline with the conformance monitor."""
    from .monitor.monitor import check_trace as judge
    from .monitor.trace import TraceFormatError

    try:
        monitor = judge(trace, codec)
    except (OSError, TraceFormatError) as exc:
        console.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from None
    for finding in monitor.findings:
        print(f"#{finding.frame_index} {finding.level.value} {finding.side} {finding.message}")
    print(f"{monitor.frame_count} frames, {len(monitor.violations())} violations, {len(monitor.warnings())} warnings")
    raise typer.Exit(1 if monitor.failed(strict=strict) else 0)


app.command("report")(report_command)
app.command("check-pcap")(check_pcap_command)
app.command("fuzz")(fuzz_command)
app.command("pipeline")(pipeline_command)
app.command("publish")(publish_command)
app.add_typer(wireshark_app, name="wireshark")


def main() -> None:
    sys.exit(app())


if __name__ == "__main__":
    main()
