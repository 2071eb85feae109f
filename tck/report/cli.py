"""Bodies of the report commands of ``rsio-tck`` (registered in ``tck/cli.py``).

``report RUN_DIR`` rebuilds a run's report from its files; ``check-pcap FILE``
judges every TCP connection of a capture with the monitor (passive checking:
the client is the side that sent the SYN).
"""

from __future__ import annotations

from pathlib import Path

import typer


def report_command(
    run_dir: Path = typer.Argument(..., help="a run directory, e.g. reports/20261123T013000123Z"),
    check: bool = typer.Option(True, help="validate the run's JSON files against their schemas"),
) -> None:
    """Rebuild report/ (and missing pcaps) of a run directory from its files alone."""
    from . import build
    from .schema import check_run_dir

    try:
        index = build(run_dir)
    except (OSError, ValueError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    typer.echo(f"report: {index}")
    if check:
        problems = check_run_dir(run_dir)
        for problem in problems:
            typer.echo(f"schema: {problem}", err=True)
        if problems:
            raise typer.Exit(1)


def check_pcap_command(
    capture: Path = typer.Argument(..., help="a pcap or pcapng file"),
    codec: str = typer.Option("msgpack", help="msgpack or varint"),
    strict: bool = typer.Option(False, help="fail on SHOULD deviations too"),
    port: int = typer.Option(0, help="judge only connections with this server port (0: all)"),
) -> None:
    """Reassemble every TCP connection of a capture and judge it with the conformance monitor."""
    from ..monitor import Monitor
    from .pcap import DEFAULT_PORT, bind_rsio_layer, read_connections

    bind_rsio_layer(port or DEFAULT_PORT, codec)  # rdpcap then dissects RS-IO payloads, when rsio_tck.dissect exists
    try:
        found = read_connections(capture)
    except (OSError, ValueError) as exc:  # scapy raises Scapy_Exception (a plain Exception) on bad files
        typer.echo(f"error: {capture}: {exc}", err=True)
        raise typer.Exit(2) from None
    except Exception as exc:
        typer.echo(f"error: {capture}: not a capture scapy can read: {exc}", err=True)
        raise typer.Exit(2) from None
    failed = False
    judged = 0
    for conn in found:
        if port and conn.server[1] != port:
            continue
        judged += 1
        monitor = Monitor(codec)
        monitor.replay(conn.records)
        typer.echo(f"connection {conn.name}: {monitor.frame_count} frames, {len(monitor.violations())} violations, "
                   f"{len(monitor.warnings())} warnings")
        for note in conn.notes:
            typer.echo(f"  note: {note}")
        for finding in monitor.findings:
            typer.echo(f"  #{finding.frame_index} {finding.rule} {finding.level.value} {finding.side}: {finding.message}")
        failed = failed or monitor.failed(strict=strict)
    typer.echo(f"{judged} connection(s) judged")
    raise typer.Exit(1 if failed else 0)
