"""Body of ``rsio-tck proxy`` (registered in ``tck/cli.py``)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import typer

from ..binding import DEFAULT_BINDING
from ..gate import BINDING_HELP
from .budget import DEFAULT_MAX_HELD


def proxy_command(
    listen: str = typer.Option(..., metavar="URL", help="where real clients connect, e.g. tcp://127.0.0.1:7879 "
                               "or ws://127.0.0.1:7879/path (port 0: any free port, printed)"),
    target: str = typer.Option(..., metavar="URL", help="the real server, e.g. tcp://127.0.0.1:7878 "
                               "(ws://host:port/path with a ws:// --listen: the bytes pass unchanged)"),
    binding: str = typer.Option(DEFAULT_BINDING, metavar="NAME", help=BINDING_HELP),
    profile: str = typer.Option(None, metavar="NAME", help="wire profile of the binding (default: its first)"),
    out: Path = typer.Option(None, metavar="DIR", help="write conn-N.trace and conn-N.json per connection here"),
    max_connections: int = typer.Option(100, min=1, max=100_000, metavar="N",
                                        help="stop after N connections have ended"),
    duration: float = typer.Option(600.0, min=0.1, max=86_400.0, metavar="SECONDS",
                                   help="stop after this long; connections still open are cut (reset)"),
    max_held: int = typer.Option(DEFAULT_MAX_HELD >> 20, min=1, max=1_000_000, metavar="MIB",
                                 help="MiB that all connections may hold at once for judging (partial frames or "
                                 "lines, reassembly, WebSocket messages, traces); a connection whose bytes pass it "
                                 "is closed at the kit's limit, judged up to there"),
    strict: bool = typer.Option(False, help="fail on SHOULD deviations too"),
) -> None:
    """Relay real clients to a real server unchanged, judging both directions frame by frame."""
    from ..binding import get_binding, profile_of
    from ..gate import ExitCode, GateError, guard
    from ..transport import Target, TargetError
    from .relay import run_proxy

    with guard():
        try:
            chosen = get_binding(binding)
            chosen_profile = profile_of(chosen, profile)
            Target.parse(listen)
            Target.parse(target)
        except (ValueError, TargetError) as exc:
            raise GateError(str(exc)) from None

        def ready(url: str) -> None:
            typer.echo(f"proxy: listening on {url}, relaying to {target} ({chosen.name}/{chosen_profile})")

        try:
            result = asyncio.run(run_proxy(listen, target, chosen, chosen_profile, out_dir=out,
                                           max_connections=max_connections, duration=duration, on_ready=ready,
                                           max_held=max_held << 20, keep_traces=False))
        except TargetError as exc:
            raise GateError(str(exc), ExitCode.UNRUNNABLE) from None
        failed = False
        for verdict in result.connections:
            typer.echo(verdict.line())
            levels = {f["level"] for f in verdict.findings}
            failed = failed or any(verdict.monitor.must_seen.values()) or (strict and "SHOULD" in levels)
        if not result.connections:
            raise GateError("no connection reached the proxy", ExitCode.UNRUNNABLE)
        if failed:
            raise typer.Exit(int(ExitCode.FAILED))
