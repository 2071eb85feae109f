"""``rsio-tck fuzz``: property-based fuzzing of a target, findings written as scenarios.

Without ``--target`` it starts the reference peer (with any ``--fault``), as
``rsio-tck run`` does.  Exit 1 when there are findings, 2 on usage errors.
"""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from .engine import FuzzConfig, FuzzOutcome, fuzz
from .findings import write_findings

console = Console(stderr=True)


def fuzz_command(
    target: str | None = typer.Option(None, help="target URL; default: start the reference peer locally"),
    codec: str = typer.Option("msgpack", help="msgpack or varint"),
    examples: int = typer.Option(200, help="examples (programs) to try at most"),
    seed: int = typer.Option(0, help="seed: the same seed generates the same programs"),
    time_budget: float = typer.Option(60.0, help="seconds to search at most"),
    report_dir: Path = typer.Option(Path("reports"), help="where the run directory is written"),
    fault: list[str] = typer.Option([], help="with the embedded peer: switch on a fault (repeatable)"),
    stop_at_first: bool = typer.Option(False, help="stop at the first finding"),
    signal_timeout: float = typer.Option(1.0, help="seconds a signal may take"),
    quiet: bool = typer.Option(False, help="no progress bar"),
) -> None:
    """Fuzz a target with generated frame sequences; exit 1 if anything was found."""
    from ..cli import run_id
    from ..embedded import REASSEMBLY_LIMIT, EmbeddedPeer
    from ..wire import CODEC_NAMES

    if codec not in CODEC_NAMES:
        console.print(f"[red]error:[/red] unknown codec {codec!r}")
        raise typer.Exit(2)
    peer = None
    if target is None:
        peer = EmbeddedPeer(codec=codec, faults=fault)
        target = peer.start()
    config = FuzzConfig(target=target, codec=codec, examples=examples, seed=seed, time_budget=time_budget,
                        stop_at_first=stop_at_first, signal_timeout=signal_timeout,
                        reassembly_limit=REASSEMBLY_LIMIT if peer is not None else None)
    ident = run_id()
    directory = report_dir / ident
    try:
        with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.fields[status]}"),
                      TimeElapsedColumn(), console=console, disable=quiet) as progress:
            task = progress.add_task(f"fuzz {codec} -> {target}", total=examples, status="")

            def tick(outcome: FuzzOutcome) -> None:
                found = sum(1 for f in outcome.findings if f.count)
                rate = outcome.examples / outcome.elapsed if outcome.elapsed else 0.0
                progress.update(task, completed=outcome.examples,
                                status=f"{outcome.examples} examples, {rate:.1f}/s, {found} finding(s)")

            outcome = fuzz(config, on_example=tick)
    finally:
        if peer is not None:
            peer.stop()
    path = write_findings(outcome, directory, config, ident)
    reported = [f for f in outcome.findings if f.count > 0]
    table = Table(title=f"fuzz findings ({outcome.examples} examples, {outcome.elapsed:.1f} s, seed {seed})")
    for column in ("rule", "signature", "count", "message", "scenario"):
        table.add_column(column)
    for finding in reported:
        table.add_row(finding.rule, finding.signature, str(finding.count), finding.message[:100],
                      finding.scenario_file or "")
    console.print(table)
    console.print(f"fuzz summary: {path}")
    if reported:
        console.print(f"reproduce: rsio-tck run --target {target if peer is None else 'URL'} "
                      f"--codec {codec} --scenarios {directory / 'fuzz-findings'}")
    raise typer.Exit(1 if reported else 0)
