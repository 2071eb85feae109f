"""Bodies of the report commands of ``rsio-tck`` (registered in ``tck/cli.py``).

``report RUN_DIR`` rebuilds a run's report from its files; ``check-pcap FILE``
judges every TCP connection of a capture with the monitor (passive checking:
the client is the side that sent the SYN).
"""

from __future__ import annotations

from pathlib import Path

import typer

from ..gate import BINDING_HELP, CODEC_HELP, PROFILE_HELP


def report_command(
    run_dir: Path = typer.Argument(..., metavar="RUN_DIR", help="a run directory, e.g. reports/20261123T013000123Z"),
    check: bool = typer.Option(True, help="validate the run's JSON files against their schemas first (exit 2 if invalid)"),
) -> None:
    """Rebuild report/ (and missing pcaps) of a run directory from its files alone."""
    from ..gate import GateError, guard, one_line
    from . import build
    from .rundir import is_run_dir
    from .schema import check_run_dir

    with guard():
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
        try:
            index = build(run_dir)
        except (OSError, ValueError) as exc:  # the message names the file
            raise GateError(one_line(exc)) from None
        except (KeyError, TypeError) as exc:  # a file that parses but is not what the kit wrote
            raise GateError(f"{run_dir}: its files are not what the kit writes ({type(exc).__name__}: "
                            f"{one_line(exc)})") from None
        typer.echo(f"report: {index}")


def check_pcap_command(
    capture: Path = typer.Argument(..., metavar="CAPTURE", help="a pcap or pcapng file"),
    binding: str = typer.Option("rsio", metavar="NAME", help=BINDING_HELP),
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
        bind_layer(port or DEFAULT_PORT, chosen, binding)  # rdpcap then dissects the binding's payloads
        try:
            found = read_connections(capture)
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
