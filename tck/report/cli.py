"""Bodies of the report commands of ``rsio-tck`` (registered in ``tck/cli.py``).

``report RUN_DIR`` rebuilds a run's report from its files; ``report --finding F7`` (or
``--all-findings --out-dir DIR``) writes a FINDINGS.md entry as a bug report for the implementation's
tracker instead (``rsio_tck.findings``); ``check-pcap FILE``
judges every TCP connection of a capture with the monitor (passive checking:
the client is the side that sent the SYN).
"""

from __future__ import annotations

from pathlib import Path

import typer

from ..binding import DEFAULT_BINDING
from ..gate import BINDING_HELP, CODEC_HELP, PROFILE_HELP


def report_command(
    run_dir: Path | None = typer.Argument(None, metavar="RUN_DIR",
                                          help="a run directory, e.g. reports/20261123T013000123Z"),
    check: bool = typer.Option(True, help="validate the run's JSON files against their schemas first (exit 2 if invalid)"),
    finding: str | None = typer.Option(None, "--finding", metavar="F<n>",
                                       help="instead of a run's report: the bug report of this FINDINGS.md entry, as "
                                            "markdown for the implementation's tracker"),
    all_findings: bool = typer.Option(False, "--all-findings",
                                      help="instead of a run's report: the bug report of every live finding, "
                                           "into --out-dir"),
    out: Path | None = typer.Option(None, "--out", metavar="FILE",
                                    help="with --finding: write the report to FILE (and its scenario file beside "
                                         "it), not to stdout"),
    out_dir: Path | None = typer.Option(None, "--out-dir", metavar="DIR",
                                        help="with --all-findings: write F<n>.md (and F<n>-reproduction.yaml) per "
                                             "finding here"),
    findings_file: Path = typer.Option(Path("FINDINGS.md"), "--findings", metavar="FILE",
                                       help="FINDINGS.md of the kit's checkout (the baselines are read from the "
                                            "interop/ folder beside it)"),
) -> None:
    """Rebuild report/ (and missing pcaps) of a run directory from its files alone; or, with --finding F<n> or
    --all-findings, write bug reports ready to file upstream."""
    from ..gate import ExitCode, GateError, guard, one_line
    from ..output_files import is_full, output_error_line, result_lines
    from . import build
    from .rundir import is_run_dir
    from .schema import check_run_dir

    with guard():
        if finding is not None or all_findings or out is not None or out_dir is not None:
            _check_finding_flags(run_dir, finding, all_findings, out, out_dir)
            from ..findings.cli import finding_reports

            finding_reports(finding, all_findings, out, out_dir, findings_file)
            return
        if run_dir is None:
            raise GateError("give a RUN_DIR, or --finding F<n> (or --all-findings --out-dir DIR) for bug reports")
        if not run_dir.is_dir():
            raise GateError(f"{run_dir}: not a directory")
        if not is_run_dir(run_dir):
            raise GateError(f"{run_dir}: not a run directory (it has no run.json or results.jsonl)")
        if check:  # first: a report built from files the kit did not write would mislead
            try:
                problems = check_run_dir(run_dir)
            except (OSError, ValueError) as exc:
                raise GateError(f"{run_dir}: {one_line(exc)}") from None
            if len(problems) == 1:
                raise GateError(f"{run_dir}/{problems[0]}; no report written (--no-check writes one anyway)")
            for problem in problems:
                typer.echo(f"schema: {run_dir}/{problem}", err=True)
            if problems:
                raise GateError(f"{run_dir}: {len(problems)} schema problem(s) in its files; no report written "
                                "(--no-check writes one anyway)")
        results = run_dir / "results.jsonl"
        if results.is_file():
            _, cut = result_lines(results.read_text(encoding="utf-8", errors="replace"))
            if cut is not None:
                typer.echo(f"note: {results}:{cut} is half a line (the run was cut while writing it): left out; "
                           "the results before it are whole", err=True)
        notes: list[str] = []
        try:
            index = build(run_dir, notes=notes)
        except OSError as exc:  # the message names the file; a full disk is exit 3, as for a run
            raise GateError(output_error_line(exc), ExitCode.UNRUNNABLE if is_full(exc) else ExitCode.USAGE) \
                from None
        except ValueError as exc:  # the message names the file
            raise GateError(one_line(exc)) from None
        except (KeyError, TypeError) as exc:  # a file that parses but is not what the kit wrote
            raise GateError(f"{run_dir}: its files are not what the kit writes ({type(exc).__name__}: "
                            f"{one_line(exc)})") from None
        for note in notes:
            typer.echo(f"note: {run_dir}/{note}", err=True)
        typer.echo(f"report: {index}")


def _check_finding_flags(run_dir: Path | None, finding: str | None, all_findings: bool, out: Path | None,
                         out_dir: Path | None) -> None:
    from ..gate import GateError

    if run_dir is not None:
        raise GateError(f"RUN_DIR {run_dir} and --finding/--all-findings exclude each other: a run's report, or bug "
                        "reports")
    if finding is not None and all_findings:
        raise GateError("--finding and --all-findings exclude each other")
    if finding is None and not all_findings:
        raise GateError(f"{'--out' if out is not None else '--out-dir'} needs --finding F<n> or --all-findings")
    if all_findings and out is not None:
        raise GateError("--all-findings writes one file per finding: give --out-dir DIR, not --out")
    if all_findings and out_dir is None:
        raise GateError("--all-findings needs --out-dir DIR")
    if finding is not None and out_dir is not None:
        raise GateError("--finding writes one report: give --out FILE (or nothing, for stdout), not --out-dir")


def check_pcap_command(
    capture: Path = typer.Argument(..., metavar="CAPTURE", help="a pcap or pcapng file"),
    binding: str = typer.Option(DEFAULT_BINDING, metavar="NAME", help=BINDING_HELP),
    profile: str | None = typer.Option(None, metavar="PROFILE", help=PROFILE_HELP),
    codec: str | None = typer.Option(None, metavar="NAME", help=CODEC_HELP),
    strict: bool = typer.Option(False, help="fail on SHOULD deviations too"),
    port: int = typer.Option(0, min=0, max=65535, metavar="PORT",
                             help="judge only connections with this server port (0: all)"),
) -> None:
    """Reassemble every TCP connection of a capture and judge it with the conformance monitor."""
    from ..gate import ExitCode, GateError, check_wire, guard, one_line
    from ..monitor import Monitor
    from ..websocket import framing_for
    from ..websocket.link import is_websocket_trace, unwrap_trace
    from .pcap import DEFAULT_PORT, bind_layer, read_connections

    with guard():
        binding, chosen = check_wire(binding, profile, codec)
        if not capture.is_file():
            raise GateError(f"{capture}: {'a directory, not a capture' if capture.is_dir() else 'no such file'}")
        try:  # a capture read with scapy: rdpcap then dissects the binding's payloads
            found = read_connections(capture, lambda: bind_layer(port or DEFAULT_PORT, chosen, binding))
        except Exception as exc:  # scapy raises Scapy_Exception (a plain Exception) on files it cannot read
            raise GateError(f"{capture}: not a capture scapy can read: {one_line(exc)}") from None
        if not any(not port or conn.server[1] == port for conn in found):
            raise GateError(f"{capture}: no TCP connection{f' to port {port}' if port else ''} to judge")
    failed = False
    judged = 0
    for conn in found:
        if port and conn.server[1] != port:
            continue
        judged += 1
        monitor = Monitor(chosen, binding=binding)
        records = conn.records
        if is_websocket_trace(records):  # the binding's stream inside the messages (ws:// runs' pcaps)
            records, problems = unwrap_trace(records, lambda: framing_for(binding, chosen))
            conn.notes += ["WebSocket: judged the binding's stream inside the messages", *problems]
        monitor.replay(records)
        typer.echo(f"connection {conn.name}: {monitor.frame_count} frames, {len(monitor.violations())} violations, "
                   f"{len(monitor.warnings())} warnings")
        for note in conn.notes:
            typer.echo(f"  note: {note}")
        for finding in monitor.findings:
            typer.echo(f"  #{finding.frame_index} {finding.rule} {finding.level.value} {finding.side}: {finding.message}")
        failed = failed or monitor.failed(strict=strict)
    typer.echo(f"{capture}: {judged} connection(s) judged")
    raise typer.Exit(int(ExitCode.FAILED if failed else ExitCode.OK))
