"""Listen mode on the command line: ``rsio-tck run --listen URL --client-command CMD`` and
``rsio-tck list-client-tests`` (both registered in ``tck/cli.py``)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from ..binding import DEFAULT_BINDING
from ..gate import BINDING_HELP

if TYPE_CHECKING:
    from ..interruption import SignalCatcher


def list_client_tests_command(
    binding: str = typer.Option(DEFAULT_BINDING, metavar="NAME", help=BINDING_HELP),
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
               report_dir: Path, bounds: tuple[float, float | None], min_run: int, name: str | None,
               baseline: Path | None = None) -> int:
    """Run the client test cases; write a run directory and its report; return the exit code.  ``bounds``: the
    seconds a case may take, and the seconds its client's open connection may go without progress."""
    from .. import gate
    from ..binding import get_binding, profile_of
    from ..gate import GateError
    from ..interruption import SignalCatcher
    from ..report.rundir import run_id
    from .cases import client_tests

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
    named = gate.check_target_name(name) if name else None
    known = gate.read_baseline(baseline) if baseline is not None else frozenset()
    with SignalCatcher() as catcher:
        return _run_cases(catcher, cases, client_command, listen, binding, chosen_profile, where, directory, bounds,
                          min_run, named, known)


def _run_cases(catcher: SignalCatcher, cases: list[Any], client_command: str, listen: str, binding: Any,
               profile: str, where: Any, directory: Path, bounds: tuple[float, float | None], min_run: int,
               named: tuple[str, str | None] | None, known: frozenset[str]) -> int:
    """Listen mode's run, with SIGINT and SIGTERM held (``rsio_tck.interruption``): what finished is kept."""
    from .. import gate
    from ..gate import ExitCode, GateError
    from ..interruption import until_signal
    from ..output_files import output_error_line
    from ..scenarios.result import apply_baseline
    from ..transport import TargetError
    from .cases import result_id
    from .runner import CLIENT_SILENCE, run_client_tests

    timeout, silence = bounds[0], CLIENT_SILENCE if bounds[1] is None else bounds[1]
    started = time.time()
    results: list[Any] = []
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise GateError(output_error_line(exc), ExitCode.UNRUNNABLE) from None
    recorder = gate.open_run(directory, target=listen, codec=profile, binding=binding.name, started=started,
                             target_name=named[0] if named else None, target_version=named[1] if named else None,
                             target_role="client")

    def done(result: Any) -> None:
        apply_baseline(result, known)
        recorder.add(result)
        result.trace = []  # written: neither trace stays in memory for the whole run
        result.wire_trace = []
        results.append(result)
        typer.echo(f"{result.id}: {result.verdict.value}" + (f" ({result.reason})" if result.reason else ""))

    peers = serving_peer_factory(binding.name, profile, serving_url(where))

    def serving(case: Any) -> Any:
        peer = peers(case)
        catcher.before_exit(peer.kill_now)  # a second signal exits at once: leave no peer listening
        return peer

    try:
        asyncio.run(until_signal(run_client_tests(cases, client_command, listen, binding, profile, serving,
                                                  timeout=timeout, silence=silence, on_result=done),
                                 catcher))
    except OSError as exc:
        if exc.filename:  # writing the run directory (a full disk); any other OSError is the network's
            raise GateError(output_error_line(exc), ExitCode.UNRUNNABLE) from None
        raise GateError(f"listen mode could not run: {gate.one_line(exc)}", ExitCode.UNRUNNABLE) from None
    except (TargetError, RuntimeError) as exc:  # RuntimeError: the serving peer did not start
        raise GateError(f"listen mode could not run: {gate.one_line(exc)}", ExitCode.UNRUNNABLE) from None
    finally:
        recorder.close()
    # The cases run one at a time: the one in flight at a signal is the first without a result.
    running = [result_id(binding.name, cases[len(results)].name)] if catcher.caught and len(results) < len(cases) \
        else []
    interruption = catcher.interruption(len(cases), len(results), running)
    index = gate.finish_run(recorder, len(cases), interruption)
    outcome = gate.suite_outcome(results, min_run)
    failed = [r for r in results if r.verdict.value in ("fail", "error", "xpass")]
    gate.show_failures(gate.console(), failed, directory / "results.jsonl")
    if interruption is not None:
        typer.echo(f"error: {interruption.line()}", err=True)
    elif outcome.message:
        typer.echo(f"{'error' if outcome.code else 'warning'}: {outcome.message}")
    typer.echo(f"results: {directory / 'results.jsonl'}  report: {index}")
    return catcher.exit_code(interruption, int(outcome.code))
