"""``rsio-tck fuzz``: property-based fuzzing of a target, findings written as scenarios.

Without ``--target`` it starts the reference peer (with any ``--fault``), as
``rsio-tck run`` does; a target given is reached once before the search.  Exit 1
when there are findings, 2 on usage errors, 3 when the target cannot be reached
or the run directory cannot be written.  The run directory is opened and
finished as ``run``'s: run.json (no results.jsonl lines: the findings are in
fuzz.json and fuzz-findings/) and report/; SIGINT or SIGTERM stops the search,
keeps what was confirmed, marks run.json interrupted and exits 128 + the signal.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from ..binding import DEFAULT_BINDING
from ..gate import BINDING_HELP, CODEC_HELP, PROFILE_HELP
from ..gate import console as gate_console
from ..interruption import SignalCatcher

if TYPE_CHECKING:
    from ..embedded import EmbeddedPeer
    from .engine import FuzzConfig, FuzzFinding, FuzzOutcome

console = gate_console()


def fuzz_command(
    target: str | None = typer.Option(None, metavar="URL",
                                      help="target URL; default: start the reference peer locally"),
    binding: str = typer.Option(DEFAULT_BINDING, metavar="NAME", help=BINDING_HELP),
    profile: str | None = typer.Option(None, metavar="PROFILE", help=PROFILE_HELP),
    codec: str | None = typer.Option(None, metavar="NAME", help=CODEC_HELP),
    examples: int = typer.Option(200, min=1, metavar="N", help="examples (programs) to try at most"),
    seed: int = typer.Option(0, metavar="N", help="seed: the same seed generates the same programs"),
    # 45 s: with start-up, confirming findings and writing them, a default run ends within a minute,
    # even against a target that floods (issue 15).
    time_budget: float = typer.Option(45.0, min=0.001, metavar="SECONDS",
                                      help="seconds to search at most (start-up, confirming and writing "
                                           "findings take a few more)"),
    report_dir: Path = typer.Option(Path("reports"), metavar="DIR", help="where the run directory is written"),
    fault: list[str] = typer.Option([], metavar="NAME",
                                    help="with the embedded peer: switch on a fault (repeatable)"),
    name: str | None = typer.Option(None, metavar="NAME[@VERSION]",
                                    help="the target's name on the multi-target site, for a target without a "
                                         "capabilities file"),
    stop_at_first: bool = typer.Option(False, help="stop at the first finding"),
    signal_timeout: float = typer.Option(1.0, min=0.001, metavar="SECONDS", help="seconds a signal may take"),
    wait_for_target: float = typer.Option(0.0, min=0.0, metavar="SECONDS",
                                          help="wait up to SECONDS for the target to accept a connection"),
    quiet: bool = typer.Option(False, help="no progress bar"),
) -> None:
    """Fuzz a target with generated frame sequences; exit 1 if anything was found."""
    from ..embedded import REASSEMBLY_LIMIT, EmbeddedPeer, EmbeddedPeerError, reference_peer_name
    from ..gate import (
        ExitCode,
        GateError,
        check_faults,
        check_target_name,
        check_target_url,
        check_wire,
        guard,
        one_line,
        reach_target,
    )
    from ..reference_peer.peer_binding import get_peer_binding

    # The engine (hypothesis, the scenario runner) is imported by this command only: every other command of
    # the CLI starts without it.
    from .engine import FuzzConfig, fuzz_hooks

    peer = None
    tolerated: frozenset[str] = frozenset()
    with guard():
        binding, chosen = check_wire(binding, profile, codec)
        try:
            fuzz_hooks(binding)
        except ValueError as exc:
            raise GateError(f"--binding {binding}: {exc}") from None
        faults = check_faults(fault, target, binding=binding)
        named = check_target_name(name) if name else (reference_peer_name(faults, binding) if target is None else None)
        if target is not None:
            reach_target(check_target_url(target), wait_for_target)
        else:
            try:
                tolerated = frozenset(getattr(get_peer_binding(binding), "deliberate_warnings", frozenset()))
            except ValueError as exc:
                raise GateError(f"--binding {binding}: {exc}") from None
            peer = EmbeddedPeer(binding=binding, profile=chosen, faults=faults)
            try:
                target = peer.start()
            except EmbeddedPeerError as exc:
                raise GateError(f"the embedded reference peer did not start: {one_line(exc)[:300]}",
                                ExitCode.UNRUNNABLE) from None
    config = FuzzConfig(target=target, codec=chosen, binding=binding, examples=examples, seed=seed, time_budget=time_budget,
                        stop_at_first=stop_at_first, signal_timeout=signal_timeout,
                        tolerated=tolerated,
                        reassembly_limit=REASSEMBLY_LIMIT if peer is not None else None)
    with guard(), SignalCatcher() as catcher:
        if peer is not None:
            catcher.before_exit(peer.kill_now)
        code = _search(catcher, config, peer, report_dir, named, quiet)
    raise typer.Exit(code)


def _search(catcher: SignalCatcher, config: FuzzConfig, peer: EmbeddedPeer | None, report_dir: Path,
            named: tuple[str, str | None] | None, quiet: bool) -> int:
    """Fuzz into a new run directory, opened and finished as ``run``'s (``gate.open_run``/``finish_run``): its
    run.json says whether a signal cut the search short; returns the exit code."""
    from .. import gate
    from ..gate import ExitCode, GateError
    from ..output_files import output_error_line
    from ..report.rundir import run_id
    from .engine import fuzz
    from .findings import write_findings

    ident = run_id()
    directory = report_dir / ident
    try:
        recorder = gate.open_run(directory, target=config.target, codec=config.codec, binding=config.binding,
                                 started=time.time(), seed=config.seed, target_name=named[0] if named else None,
                                 target_version=named[1] if named else None)
    except GateError:
        if peer is not None:
            peer.stop()
        raise
    try:
        with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.fields[status]}"),
                      TimeElapsedColumn(), console=console, disable=quiet) as progress:
            task = progress.add_task(f"fuzz {config.binding} {config.codec} -> {config.target}", total=config.examples,
                                     status="")

            def tick(outcome: FuzzOutcome) -> None:
                found = sum(1 for f in outcome.findings if f.count)
                rate = outcome.examples / outcome.elapsed if outcome.elapsed else 0.0
                progress.update(task, completed=outcome.examples,
                                status=f"{outcome.examples} examples, {rate:.1f}/s, {found} finding(s)")

            def found(finding: FuzzFinding, outcome: FuzzOutcome) -> None:
                progress.console.print(f"finding: {finding.rule} {finding.signature} after {outcome.examples} "
                                       f"examples: {finding.message[:100]}", markup=False, highlight=False)

            outcome = fuzz(config, on_example=tick, catcher=catcher, on_finding=found)
    finally:
        recorder.close()
        if peer is not None:
            peer.stop()
    # A search that ended on its own (its budgets) is a complete run, whenever a signal came after it.
    interruption = catcher.interruption(config.examples, outcome.examples, outcome.running) \
        if outcome.stopped else None
    try:
        path = write_findings(outcome, directory, config, ident, named)
    except OSError as exc:  # a full disk: one line naming the file, as for a run
        raise GateError(output_error_line(exc), ExitCode.UNRUNNABLE) from None
    index = gate.finish_run(recorder, config.examples, interruption)
    reported = [f for f in outcome.findings if f.count > 0]
    table = Table(title=f"fuzz findings ({outcome.examples} examples, {outcome.elapsed:.1f} s, seed {config.seed})")
    for column in ("rule", "signature", "count", "message", "scenario"):
        table.add_column(column)
    for finding in reported:
        table.add_row(finding.rule, finding.signature, str(finding.count), finding.message[:100],
                      finding.scenario_file or "")
    console.print(table)
    typer.echo(f"fuzz summary: {path}  report: {index}")
    if reported:
        console.print(f"reproduce: rsio-tck run --target {config.target if peer is None else 'URL'} "
                      f"--binding {config.binding} --profile {config.codec} --scenarios {directory / 'fuzz-findings'}")
    if interruption is not None:
        console.print(f"error: {interruption.line()}", markup=False, highlight=False)
    return catcher.exit_code(interruption, int(ExitCode.FAILED if reported else ExitCode.OK))
