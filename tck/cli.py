"""The ``rsio-tck`` command line."""

from __future__ import annotations

import asyncio
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from . import gate
from .binding import BINDING_NAMES, DEFAULT_BINDING
from .fuzz.cli import fuzz_command
from .gate import BINDING_HELP, CODEC_HELP, EXIT_CODES_HELP, PROFILE_HELP, ExitCode, GateError, guard
from .listen.cli import list_client_tests_command
from .output_files import FULL
from .pipeline.cli import pipeline_command, publish_command
from .proxy.cli import proxy_command
from .report.cli import check_pcap_command, report_command
from .report.rundir import run_id
from .wireshark.cli import wireshark_app

if TYPE_CHECKING:
    from .capabilities import Capabilities
    from .interruption import SignalCatcher
    from .scenarios import Scenario
    from .transport import Target

app = typer.Typer(add_completion=False, no_args_is_help=True, rich_markup_mode=None, epilog=EXIT_CODES_HELP,
                  help=f"rsio-tck: conformance test kit for Reactive Streams over the network "
                       f"(bindings: {', '.join(BINDING_NAMES)}).")
console = gate.console()


def _version(value: bool) -> None:
    if value:
        from . import SPEC_VERSION, __version__

        typer.echo(f"rsio-tck {__version__} ({SPEC_VERSION})")
        raise typer.Exit()


@app.callback()
def main_options(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                 help="print the kit's version and exit"),
) -> None:
    """rsio-tck: conformance test kit for RS-IO."""


@app.command(epilog=EXIT_CODES_HELP, cls=gate.plain_help_command())
def run(
    target: str | None = typer.Option(None, metavar="URL",
                                      help="target URL; default: start the reference peer locally"),
    binding: str = typer.Option(DEFAULT_BINDING, metavar="NAME", help=BINDING_HELP),
    profile: str | None = typer.Option(None, metavar="PROFILE", help=PROFILE_HELP),
    codec: str | None = typer.Option(None, metavar="NAME", help=CODEC_HELP),
    capabilities: Path | None = typer.Option(None, metavar="FILE", help="the target's capabilities file (JSON or YAML)"),
    name: str | None = typer.Option(None, metavar="NAME[@VERSION]",
                                    help="the target's name on the multi-target site, for a target without a "
                                         "capabilities file"),
    strict: bool = typer.Option(False, help="fail on SHOULD deviations, and on baseline entries naming no scenario"),
    baseline: Path | None = typer.Option(None, metavar="FILE", help="scenario ids known to fail (xfail)"),
    report_dir: Path = typer.Option(Path("reports"), metavar="DIR", help="where the run directory is written"),
    keyword: str = typer.Option("", "-k", metavar="EXPR", help="select scenarios, as pytest -k"),
    jobs: int = typer.Option(8, min=1, metavar="N", help="scenarios run concurrently"),
    scenarios_paths: list[Path] = typer.Option([], "--scenarios", metavar="PATH",
                                               help="scenario file or directory (*.yaml, *.yml; repeatable); "
                                                    "default: the kit's own suite"),
    signal_timeout: float = typer.Option(2.0, min=0.001, metavar="SECONDS",
                                         help="seconds of silence (no bytes from the target) before a signal "
                                              "counts as missing"),
    scenario_budget: float = typer.Option(30.0, min=0.001, metavar="SECONDS",
                                          help="seconds of a scenario within which bytes still arriving may "
                                               "stretch a wait past the signal timeout"),
    silence_window: float = typer.Option(0.05, min=0.0, metavar="SECONDS",
                                         help="seconds of silence that prove nothing arrives"),
    fault: list[str] = typer.Option([], metavar="NAME",
                                    help="with the embedded peer: switch on a fault (repeatable)"),
    wait_for_target: float = typer.Option(0.0, min=0.0, metavar="SECONDS",
                                          help="wait up to SECONDS for the target to accept a connection"),
    min_run: int = typer.Option(1, min=0, metavar="N",
                                help="exit 2 unless at least N scenarios ran (were not skipped)"),
    quiet: bool = typer.Option(False, help="no progress bar"),
    listen: str | None = typer.Option(None, metavar="URL",
                                      help="listen mode: the kit is the server at URL (tcp://host:port or "
                                           "ws://host:port/path, port 0: any) "
                                           "and judges the client started by --client-command"),
    client_command: str | None = typer.Option(None, metavar="CMD",
                                              help="listen mode: the client under test, started once per client "
                                                   "test case with RSIO_URL and RSIO_TESTCASE set"),
    client_test: list[str] = typer.Option([], metavar="NAME",
                                          help="listen mode: run only this client test case (repeatable; "
                                               "list-client-tests shows them)"),
    client_timeout: float = typer.Option(30.0, min=0.1, max=3600.0, metavar="SECONDS",
                                         help="listen mode: seconds one client test case may take"),
    client_silence: float | None = typer.Option(None, min=0.1, max=3600.0, metavar="SECONDS",
                                                help="listen mode: seconds a client's open connection may go with "
                                                     "no whole frame either way before its case ends (default: "
                                                     "the pace probe's bound, 10)"),
) -> None:
    """Run the scenario suite against a target (or, with --listen, the client test cases against a client);
    exit 0 only if something ran and nothing failed."""
    with guard():
        wire = gate.check_wire(binding, profile, codec)
        if listen is not None or client_command is not None:
            if listen is None or client_command is None:
                raise GateError("listen mode needs both --listen URL and --client-command CMD")
            if target is not None:
                raise GateError("--target and --listen exclude each other: the kit is either client or server")
            from .listen.cli import run_listen

            raise typer.Exit(run_listen(listen, client_command, wire[0], wire[1], client_test, report_dir,
                                        (client_timeout, client_silence), min_run, name, baseline))
        inputs = _run_inputs(target, wire, capabilities, name, strict, baseline, keyword, scenarios_paths, fault)
        if inputs.target is not None:
            gate.reach_target(inputs.target, wait_for_target)
        code = _run_suite(inputs, target, wire, strict, report_dir, jobs, (signal_timeout, scenario_budget),
                          silence_window, min_run, quiet)
    raise typer.Exit(code)


@dataclass
class _RunInputs:
    """Everything ``run`` reads before it starts anything, checked."""

    chosen: list[Scenario]  # selected by -k
    capabilities: Capabilities
    baseline: frozenset[str]
    faults: tuple[str, ...]
    target: Target | None  # None: the embedded reference peer
    named: tuple[str, str | None] | None  # --name, or the embedded peer's name; None: keyed by URL


def _run_inputs(target: str | None, wire: tuple[str, str], capabilities: Path | None, name: str | None,
                strict: bool, baseline: Path | None,
                keyword: str, scenarios_paths: list[Path], fault: list[str]) -> _RunInputs:
    from .embedded import reference_peer_name

    # Cheap checks first (the wire is checked by the caller): loading the scenarios is the slow part.
    binding, _ = wire
    parsed = gate.check_target_url(target) if target is not None else None
    faults = gate.check_faults(fault, target, binding=binding)
    named = gate.check_target_name(name) if name else (reference_peer_name(faults, binding) if target is None else None)
    caps = gate.load_capabilities(capabilities, binding)
    known = gate.read_baseline(baseline) if baseline is not None else frozenset()
    scenarios = gate.load_scenarios(scenarios_paths, binding=binding)
    chosen = gate.choose(scenarios, keyword)
    warning = gate.baseline_warning(baseline, known, scenarios, strict) if baseline is not None else None
    if warning:
        console.print(f"warning: {warning}", markup=False, highlight=False)
    return _RunInputs(chosen=chosen, capabilities=caps, baseline=known, faults=faults, target=parsed,
                      named=named)


def _run_suite(inputs: _RunInputs, target: str | None, wire: tuple[str, str], strict: bool, report_dir: Path,
               jobs: int, timeouts: tuple[float, float], silence_window: float, min_run: int,
               quiet: bool) -> int:
    """``timeouts``: the signal timeout and the scenario budget (scenarios.clock).  SIGINT and SIGTERM stop the
    run and keep what finished (``rsio_tck.interruption``); the exit code is then 128 + the signal."""
    from .interruption import SignalCatcher

    with SignalCatcher() as catcher:
        return _run_suite_caught(catcher, inputs, target, wire, strict, report_dir, jobs, timeouts, silence_window,
                                 min_run, quiet)


def _run_suite_caught(catcher: SignalCatcher, inputs: _RunInputs, target: str | None, wire: tuple[str, str],
                      strict: bool, report_dir: Path, jobs: int, timeouts: tuple[float, float],
                      silence_window: float, min_run: int, quiet: bool) -> int:
    signal_timeout, scenario_budget = timeouts
    from .embedded import EmbeddedPeer, EmbeddedPeerError
    from .interruption import until_signal
    from .output_files import output_error_line
    from .scenarios import ScenarioResult, Verdict, run_suite
    from .scenarios.liveness import probe_timeout

    binding, profile = wire
    chosen = inputs.chosen
    peer = None
    if target is None:
        peer = EmbeddedPeer(binding=binding, profile=profile, faults=inputs.faults)
        catcher.before_exit(peer.kill_now)
        try:
            target = peer.start()
        except EmbeddedPeerError as exc:
            raise GateError(f"the embedded reference peer did not start: {gate.one_line(exc)[:300]}",
                            ExitCode.UNRUNNABLE) from None
    directory = report_dir / run_id()
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        if peer is not None:
            peer.stop()
        raise GateError(f"--report-dir {report_dir}: {gate.one_line(exc)}",
                        ExitCode.UNRUNNABLE if exc.errno in FULL else ExitCode.USAGE) from None
    config = gate.run_config(binding, profile, target=target, capabilities=inputs.capabilities, strict=strict,
                             signal_timeout=signal_timeout, scenario_budget=scenario_budget,
                             silence_window=silence_window, baseline=inputs.baseline, keep_trace=True,
                             probe_timeout=probe_timeout(signal_timeout))
    started = time.time()
    results: list[ScenarioResult] = []  # in the order they finished
    running: dict[str, None] = {}  # ids in flight (an ordered set)
    try:
        recorder = gate.open_run(directory, target=target, codec=profile, binding=binding, started=started,
                                 capabilities=inputs.capabilities,
                                 target_name=inputs.named[0] if inputs.named else None,
                                 target_version=inputs.named[1] if inputs.named else None)
    except GateError:
        if peer is not None:
            peer.stop()
        raise
    try:
        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                      console=console, disable=quiet) as progress:
            task = progress.add_task(f"rsio-tck {binding} {profile} -> {target}", total=len(chosen))

            def start(scenario: Scenario) -> None:
                running[scenario.id] = None

            def done(result: ScenarioResult) -> None:
                recorder.add(result)  # results.jsonl line, trace, pcap, transcript
                running.pop(result.id, None)
                # Written: do not keep every trace of the run in memory (over ws:// the raw bytes too,
                # up to WIRE_MAX_BYTES a scenario: 4 MB each, kept for the whole run before).
                result.trace = []
                result.wire_trace = []
                results.append(result)
                progress.advance(task)

            asyncio.run(until_signal(run_suite(chosen, config, jobs=jobs, on_result=done, on_start=start), catcher))
    except OSError as exc:  # the run directory could not be written (a full disk): the run cannot go on
        raise GateError(output_error_line(exc), ExitCode.UNRUNNABLE) from None
    finally:
        recorder.close()
        if peer is not None:
            peer.stop()
    interruption = catcher.interruption(len(chosen), recorder.written, running if catcher.caught else ())
    index = gate.finish_run(recorder, len(chosen), interruption)
    summary(results)
    outcome = gate.suite_outcome(results, min_run)
    stopped = gate.target_stopped(results)
    if interruption is not None:
        failed = [r for r in results if r.verdict in (Verdict.FAIL, Verdict.ERROR, Verdict.XPASS)]
        gate.show_failures(console, failed, directory / "results.jsonl")
        console.print(f"error: {interruption.line()}", markup=False, highlight=False)
    elif outcome.code is ExitCode.UNRUNNABLE and stopped is None:
        console.print(f"error: {outcome.message}", markup=False, highlight=False)
    else:
        # Once the target stopped answering, the scenarios after it are errors of one cause, said once below.
        failed = [r for r in results if r.verdict in (Verdict.FAIL, Verdict.ERROR, Verdict.XPASS)
                  and (r.stopped is None or r.stopped.during == r.id)]
        gate.show_failures(console, failed, directory / "results.jsonl")
        if outcome.message:
            console.print(f"{'error' if outcome.code else 'warning'}: {outcome.message}", markup=False,
                          highlight=False)
    typer.echo(f"results: {directory / 'results.jsonl'}  report: {index}  ({time.time() - started:.2f} s)")
    return catcher.exit_code(interruption, int(outcome.code))


def summary(results: list) -> None:  # type: ignore[type-arg]
    from .catalogue import AREAS

    table = Table(title="rsio-tck summary by rule area")
    verdicts = ["pass", "fail", "warn", "skip", "xfail", "xpass", "error"]
    table.add_column("area")
    for verdict in verdicts:
        table.add_column(verdict, justify="right")
    # The areas of the rules this run's scenarios cite (one binding's), in the catalogue's order.
    by_area: dict[str, Counter[str]] = {}
    for result in results:
        by_area.setdefault(result.rules[0].rsplit("-", 1)[0], Counter())[result.verdict.value] += 1
    order = list(AREAS)
    by_area = dict(sorted(by_area.items(), key=lambda item: order.index(item[0]) if item[0] in order else len(order)))
    total: Counter[str] = Counter()
    for area, counts in by_area.items():
        total.update(counts)
        table.add_row(f"{area} {AREAS.get(area, '')}", *[str(counts.get(v, 0) or "") for v in verdicts])
    table.add_row("total", *[str(total.get(v, 0)) for v in verdicts])
    gate.console(stderr=False).print(table)


@app.command("check-trace", epilog=EXIT_CODES_HELP, cls=gate.plain_help_command())
def check_trace(
    trace: Path = typer.Argument(..., metavar="TRACE", help="a trace file (msgpack stream of {t, dir, bytes|eof})"),
    binding: str = typer.Option(DEFAULT_BINDING, metavar="NAME", help=BINDING_HELP),
    profile: str | None = typer.Option(None, metavar="PROFILE", help=PROFILE_HELP),
    codec: str | None = typer.Option(None, metavar="NAME", help=CODEC_HELP),
    strict: bool = typer.Option(False, help="fail on SHOULD deviations too"),
) -> None:
    """Judge a recorded trace offline with the conformance monitor; exit 1 on a violation.  A file that ends
    inside a record (cut part-way) is judged up to there, and a note says so."""
    from .monitor.monitor import Monitor
    from .monitor.trace import TraceFormatError, read_whole

    with guard():
        binding, chosen = gate.check_wire(binding, profile, codec)
        try:
            records, cut = read_whole(trace)
        except (OSError, TraceFormatError) as exc:
            raise GateError(f"{trace}: {gate.one_line(exc)}") from None
    monitor = Monitor(chosen, binding=binding)
    monitor.replay(records)
    if cut is not None:
        print(f"note: {trace}: {cut}; judged up to there", file=sys.stderr)
    for finding in monitor.findings:
        print(f"#{finding.frame_index} {finding.level.value} {finding.side} {finding.message}")
    print(f"{trace}: {monitor.frame_count} frames, {len(monitor.violations())} violations, "
          f"{len(monitor.warnings())} warnings")
    raise typer.Exit(int(ExitCode.FAILED if monitor.failed(strict=strict) else ExitCode.OK))


app.command("report", epilog=EXIT_CODES_HELP, cls=gate.plain_help_command())(report_command)
app.command("check-pcap", epilog=EXIT_CODES_HELP, cls=gate.plain_help_command())(check_pcap_command)
app.command("fuzz", epilog=EXIT_CODES_HELP, cls=gate.plain_help_command())(fuzz_command)
app.command("pipeline", epilog=EXIT_CODES_HELP, cls=gate.plain_help_command())(pipeline_command)
app.command("publish", epilog=EXIT_CODES_HELP, cls=gate.plain_help_command())(publish_command)
app.command("proxy", epilog=EXIT_CODES_HELP, cls=gate.plain_help_command())(proxy_command)
app.command("list-client-tests", epilog=EXIT_CODES_HELP, cls=gate.plain_help_command())(list_client_tests_command)
app.add_typer(wireshark_app, name="wireshark")


def main() -> None:
    sys.exit(app())


if __name__ == "__main__":
    main()
