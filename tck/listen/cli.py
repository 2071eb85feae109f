"""Listen mode on the command line: ``rsio-tck run --listen URL --client-command CMD`` and
``rsio-tck list-client-tests`` (both registered in ``tck/cli.py``)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import typer

from ..gate import BINDING_HELP


def list_client_tests_command(
    binding: str = typer.Option("rsio", metavar="NAME", help=BINDING_HELP),
) -> None:
    """List the client test cases of listen mode for a binding, each with the rules it exercises."""
    from ..binding import get_binding
    from ..gate import GateError, guard
    from .cases import client_tests

    with guard():
        try:
            get_binding(binding)
        except ValueError as exc:
            raise GateError(f"--binding: {exc}") from None
        for case in client_tests(binding):
            typer.echo(f"{case.name:20} {' '.join(case.rules)}\n{'':20} {case.description}")


def serving_peer_factory(binding: str, profile: str, listen: str = "tcp://127.0.0.1:0") -> Any:
    """The context manager factory that starts the kit's serving peer for one client test case
    (``listen``: where it listens; over WebSocket the relay in front passes the frames through)."""
    from ..embedded import EmbeddedPeer

    def serving(case: Any) -> Any:
        return EmbeddedPeer(binding=binding, profile=profile, extra=tuple(case.peer_options), listen=listen)

    return serving


def serving_url(where: Any) -> str:
    """Where the serving peer listens: a free port, over WebSocket (same path) when the kit listens on ws://."""
    return f"ws://127.0.0.1:0{where.resource}" if where.websocket else "tcp://127.0.0.1:0"


def run_listen(listen: str, client_command: str, binding_name: str, profile: str | None, names: list[str],
               report_dir: Path, timeout: float, min_run: int, name: str | None, baseline: Path | None = None) -> int:
    """Run the client test cases; write a run directory and its report; return the exit code."""
    from .. import gate
    from ..binding import get_binding, profile_of
    from ..gate import ExitCode, GateError
    from ..report import RunRecorder
    from ..report import build as build_report
    from ..report.rundir import run_id
    from ..scenarios.result import apply_baseline
    from ..transport import TargetError
    from .cases import client_tests
    from .runner import run_client_tests

    try:
        binding = get_binding(binding_name)
        chosen_profile = profile_of(binding, profile)
        cases = client_tests(binding_name, names or None)
    except ValueError as exc:
        raise GateError(str(exc)) from None
    where = gate.check_target_url(listen, "--listen")
    if where.scheme not in ("tcp", "ws"):
        raise GateError(f"--listen {listen}: listen mode listens on tcp://host:port or ws://host:port/path")
    if not client_command.strip():
        raise GateError("--client-command: give the command that starts the client under test")
    directory = report_dir / run_id()
    directory.mkdir(parents=True, exist_ok=True)
    named = gate.check_target_name(name) if name else None
    known = gate.read_baseline(baseline) if baseline is not None else frozenset()
    started = time.time()
    recorder = RunRecorder(directory, target=listen, codec=chosen_profile, binding=binding_name, started=started,
                           target_name=named[0] if named else None, target_version=named[1] if named else None,
                           target_role="client")

    def done(result: Any) -> None:
        apply_baseline(result, known)
        recorder.add(result)
        result.trace = []  # written: neither trace stays in memory for the whole run
        result.wire_trace = []
        typer.echo(f"{result.id}: {result.verdict.value}" + (f" ({result.reason})" if result.reason else ""))

    try:
        results = asyncio.run(run_client_tests(cases, client_command, listen, binding, chosen_profile,
                                               serving_peer_factory(binding_name, chosen_profile, serving_url(where)),
                                               timeout=timeout, on_result=done))
    except (TargetError, OSError, RuntimeError) as exc:  # RuntimeError: the serving peer did not start
        raise GateError(f"listen mode could not run: {gate.one_line(exc)}", ExitCode.UNRUNNABLE) from None
    finally:
        recorder.close()
    recorder.finish(time.time(), len(cases))
    index = build_report(directory)
    outcome = gate.suite_outcome(results, min_run)
    failed = [r for r in results if r.verdict.value in ("fail", "error", "xpass")]
    gate.show_failures(gate.console(), failed, directory / "results.jsonl")
    if outcome.message:
        typer.echo(f"{'error' if outcome.code else 'warning'}: {outcome.message}")
    typer.echo(f"results: {directory / 'results.jsonl'}  report: {index}")
    return int(outcome.code)
