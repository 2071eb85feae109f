"""The kit as a CI gate: every input checked before anything runs, and exit codes that mean one thing each.

Theory of operation.  A gate that goes green on a typo is worse than no gate, so
each command first turns its flags and files into checked values (codec,
target URL, scenarios, capabilities, baseline, faults) and only then starts
anything: a problem becomes a ``GateError``, one line naming the flag or file
and what is wrong, with the exit code it stands for.  The target is reached once
before the suite (``reach_target``, polling up to ``--wait-for-target``
seconds), so an unreachable target is one message, not one per scenario.  After
the run, ``suite_outcome`` maps the verdicts to an exit code: a run in which
nothing ran, or fewer than ``--min-run`` scenarios, is not a pass.

This module knows nothing of typer except in ``guard``, the context manager
the commands wrap their work in; the pytest plugin uses the checks directly.
"""

from __future__ import annotations

import asyncio
import difflib
import sys
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from enum import IntEnum
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .binding import BINDING_NAMES, DEFAULT_BINDING

if TYPE_CHECKING:
    from rich.console import Console

    from .capabilities import Capabilities
    from .scenarios import Scenario, ScenarioResult
    from .scenarios.result import TargetStop
    from .transport import Target


class ExitCode(IntEnum):
    OK = 0  # everything that ran passed, and something ran
    FAILED = 1  # conformance failures (violations, findings)
    USAGE = 2  # usage or input errors: flags, files, capabilities, baseline, scenarios
    UNRUNNABLE = 3  # the kit could not run the target (unreachable, stopped answering, every scenario errored),
    # or could not write its output (a full disk)
    # A run stopped by a signal: 128 + the signal, the shell's convention (``rsio_tck.interruption.exit_code``).
    INTERRUPTED_SIGINT = 130
    INTERRUPTED_SIGTERM = 143


# The table of ``--help`` and of the documentation (docs/guide/exit-codes.md).  "\b" keeps click's formatter
# from rewrapping the lines.
EXIT_CODES_HELP = (
    "\b\nExit codes:\n"
    "  0  everything that ran passed, and something ran\n"
    "  1  conformance failures (violations, fuzz findings)\n"
    "  2  usage or input errors (flags, files, capabilities, baseline, scenarios)\n"
    "  3  the kit could not run the target (unreachable, stopped answering during the run, or every\n"
    "     scenario errored), or could not write its output (disk full: one line naming the file)\n"
    "  130, 143  interrupted by SIGINT (Ctrl-C) or SIGTERM (128 + the signal): what finished is kept,\n"
    "     run.json says interrupted; a second signal exits at once"
)


class GateError(Exception):
    """An input the kit refuses: the message is one line naming the flag or file, ``code`` the exit code."""

    def __init__(self, message: str, code: ExitCode = ExitCode.USAGE) -> None:
        super().__init__(message)
        self.code = code


@cache
def plain_help_command() -> type:
    """A typer command class whose --help lists arguments without typer's ``<path>``-style type markers.

    typer 0.2x shows a ``<type>`` after every parameter; options lose it through a
    ``metavar``, arguments only here, where their help rows are written.
    """
    import re

    from typer.core import TyperCommand

    marker = re.compile(r" <[^<>]*>$")

    class PlainHelpCommand(TyperCommand):
        def format_options(self, ctx: Any, formatter: Any) -> None:
            write_dl = formatter.write_dl

            def plain(rows: Sequence[tuple[str, str]], *args: Any, **kwargs: Any) -> None:
                write_dl([(marker.sub("", name), text) for name, text in rows], *args, **kwargs)

            formatter.write_dl = plain
            try:
                super().format_options(ctx, formatter)
            finally:
                del formatter.write_dl

    return PlainHelpCommand


def console(stderr: bool = True) -> Console:
    """A rich console that does not wrap long lines (paths) at 80 columns when output is not a terminal."""
    import os

    from rich.console import Console

    out = Console(stderr=stderr, soft_wrap=True)
    if not out.is_terminal and "COLUMNS" not in os.environ:
        out.width = 200  # tables in CI logs: wide enough for paths and messages
    return out


@contextmanager
def guard() -> Iterator[None]:
    """Turn a GateError into its one-line message on stderr and the typer exit code; a Ctrl-C where no
    ``interruption.SignalCatcher`` holds SIGINT (checking inputs, loading scenarios) into one line and 130."""
    import typer

    try:
        yield
    except GateError as exc:
        print(f"error: {exc}", file=sys.stderr, flush=True)
        raise typer.Exit(int(exc.code)) from None
    except KeyboardInterrupt:
        print("error: interrupted (SIGINT)", file=sys.stderr, flush=True)
        raise typer.Exit(int(ExitCode.INTERRUPTED_SIGINT)) from None


def one_line(exc: BaseException) -> str:
    """An exception as one line: OSError without its errno noise, anything else flattened."""
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    text = " ".join(str(exc).split())
    return text or type(exc).__name__


def _suggest(word: str, known: Sequence[str]) -> str:
    close = difflib.get_close_matches(word, known, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def check_codec(codec: str, flag: str = "--codec") -> str:
    """The default binding's wire codec (RS-IO's: its profile), checked."""
    return check_profile(DEFAULT_BINDING, codec, flag=flag)


# -- seam (H1): the binding and its wire profile -------------------------------------------------

BINDING_HELP = f"the wire binding: {', '.join(BINDING_NAMES)} (default {DEFAULT_BINDING})"
# Each binding names its own profiles (an unknown one is answered with them): loading every binding to list them
# here would cost every command's start.
PROFILE_HELP = "the binding's wire profile (RS-IO: msgpack or varint); default: the binding's first"
CODEC_HELP = "RS-IO's wire codec, msgpack or varint: the same as --profile (rsio only)"


def check_binding(name: str, flag: str = "--binding") -> str:
    """A binding of the registry (``rsio_tck.binding``) that can be loaded, checked."""
    from .binding import binding_names, get_binding

    known = binding_names()  # the registry's names now, with any registered since import
    if name not in known:
        raise GateError(f"{flag} {name!r}: unknown binding{_suggest(name, known)}; "
                        f"choose one of {', '.join(known)}")
    try:
        get_binding(name)
    except (ImportError, AttributeError, ValueError) as exc:
        raise GateError(f"{flag} {name}: this kit cannot judge it yet ({one_line(exc)})") from None
    return name


def check_profile(binding: str, profile: str | None, codec: str | None = None, *, flag: str = "--profile",
                  codec_flag: str = "--codec") -> str:
    """The wire profile of ``binding``: ``profile``, or RS-IO's ``codec`` (its old name); the
    binding's first when neither is given.  ``codec`` with another binding is an error."""
    from .binding import get_binding

    if codec is not None:
        if get_binding(binding).profile_word != "codec":  # only a binding whose profiles are codecs takes --codec
            raise GateError(f"{codec_flag} is RS-IO's wire codec; with --binding {binding} give {flag}")
        if profile is not None and profile != codec:
            raise GateError(f"{codec_flag} {codec!r} and {flag} {profile!r} disagree; give one of them")
        profile, flag = codec, codec_flag
    profiles = get_binding(binding).profiles
    if profile is None:
        return profiles[0]
    if profile not in profiles:
        noun = "codec" if flag == codec_flag else "profile"
        raise GateError(f"{flag} {profile!r}: unknown {noun} of binding {binding}{_suggest(profile, profiles)}; "
                        f"choose one of {', '.join(profiles)}")
    return profile


def check_wire(binding: str, profile: str | None, codec: str | None = None) -> tuple[str, str]:
    """(binding, profile) from ``--binding``, ``--profile`` and RS-IO's ``--codec``, checked."""
    name = check_binding(binding)
    return name, check_profile(name, profile, codec)


def run_config(binding: str, profile: str, **fields: Any) -> Any:
    """The scenario runner's ``RunConfig`` for ``binding`` and ``profile`` (the profile is its
    ``codec`` field, RS-IO's name for it)."""
    from .scenarios import RunConfig

    return RunConfig(codec=profile, binding=binding, **fields)

# -- end seam (H1) -------------------------------------------------------------------------------


def check_target_name(text: str, flag: str = "--name") -> tuple[str, str | None]:
    """``NAME[@VERSION]`` of a target without a capabilities file, checked."""
    from .capabilities import TargetNameError, parse_target_name

    try:
        return parse_target_name(text, flag)
    except TargetNameError as exc:
        raise GateError(str(exc)) from None

def check_faults(faults: Sequence[str], target: str | None, flag: str = "--fault",
                 binding: str = DEFAULT_BINDING) -> tuple[str, ...]:
    """Faults switch on in the embedded reference peer only, and must exist (for that binding's peer)."""
    if not faults:
        return ()
    if target is not None:
        raise GateError(f"{flag} works only with the embedded reference peer (no --target)")
    from .reference_peer.peer_binding import get_peer_binding

    try:
        known = get_peer_binding(binding).faults
    except ValueError as exc:
        raise GateError(f"{flag}: {exc}") from None

    for name in faults:
        if name not in known:
            raise GateError(f"{flag} {name!r}: no such fault{_suggest(name, list(known))}; "
                            f"rsio-peer --binding {binding} --list-faults lists them")
    return tuple(faults)


def check_target_url(url: str, flag: str = "--target") -> Target:
    from .transport import Target, TargetError

    try:
        return Target.parse(url)
    except (TargetError, ValueError) as exc:  # urlsplit raises ValueError on a bad port
        raise GateError(f"{flag} {one_line(exc)}") from None


async def _probe(target: Target, wait: float, attempt_timeout: float) -> str | None:
    """Connect and close, retrying until ``wait`` seconds have passed; None once connected, else why not."""
    from .transport import TargetError, open_target

    loop = asyncio.get_running_loop()
    deadline = loop.time() + max(wait, 0.0)
    while True:
        remaining = deadline - loop.time()
        try:
            _, writer = await open_target(target, timeout=max(min(attempt_timeout, remaining), 0.5))
        except TargetError as exc:
            reason = str(exc)
            remaining = deadline - loop.time()
            if remaining <= 0:
                return reason
            await asyncio.sleep(min(0.25, remaining))  # polling interval between attempts, bounded by the deadline
            continue
        close = getattr(writer, "close", None)
        if close is not None:
            close()
        wait_closed = getattr(writer, "wait_closed", None)
        if wait_closed is not None:
            try:
                await asyncio.wait_for(wait_closed(), attempt_timeout)
            except (OSError, TimeoutError):
                pass  # connected is all the probe wanted to know
        return None


def reach_target(target: Target, wait: float = 0.0, attempt_timeout: float = 5.0) -> None:
    """Connect once before anything runs; GateError (exit 3) if the target cannot be reached in time."""
    started = time.monotonic()
    reason = asyncio.run(_probe(target, wait, attempt_timeout))
    if reason is not None:
        waited = f" (waited {time.monotonic() - started:.1f} s; --wait-for-target SECONDS waits longer)" if wait else \
            " (--wait-for-target SECONDS waits for a target that starts slowly)"
        raise GateError(reason + waited, ExitCode.UNRUNNABLE)


def load_scenarios(paths: Sequence[Path], flag: str = "--scenarios", binding: str = DEFAULT_BINDING) -> list[Scenario]:
    """The scenarios of files and directories (``.yaml``/``.yml``) that run on ``binding``; the kit's own
    when none are given."""
    from .scenarios import ScenarioError
    from .scenarios.loader import load_paths

    for path in paths:
        if not path.exists():
            raise GateError(f"{flag} {path}: no such file or directory")
    try:
        scenarios = load_paths(list(paths), binding)
    except ScenarioError as exc:
        raise GateError(str(exc)) from None
    return scenarios


def choose(scenarios: list[Scenario], keyword: str) -> list[Scenario]:
    from .selection import SelectionError, select

    try:
        chosen = [s for s in scenarios if select(keyword, s)]
    except SelectionError as exc:
        raise GateError(str(exc)) from None
    if not chosen:
        raise GateError(f"-k {keyword!r} matches none of the {len(scenarios)} scenarios loaded")
    return chosen


def load_capabilities(path: Path | None, binding: str | None = None) -> Capabilities:
    """The target's claims (every claim without a file); with ``binding``, the file must be that binding's."""
    from .capabilities import Capabilities, CapabilitiesError

    if path is None:
        return Capabilities.everything(binding or DEFAULT_BINDING)
    try:
        return Capabilities.load(path, binding)
    except CapabilitiesError as exc:
        raise GateError(str(exc)) from None


def read_baseline(path: Path) -> frozenset[str]:
    """Scenario ids, one per line (``SCENARIO-ID [RULE ...]``: the first word; the rules an entry may
    name after it are for readers and for tests that hold a target to exact pairs); ``#`` starts a comment."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise GateError(f"baseline {path}: {one_line(exc)}") from None
    return frozenset(words[0] for line in text.splitlines() if (words := line.split("#", 1)[0].split()))


def baseline_warning(path: Path, baseline: frozenset[str], scenarios: Sequence[Scenario], strict: bool) -> str | None:
    """A warning about baseline entries naming no known scenario (a GateError with ``strict``); None if all known."""
    unknown = sorted(baseline - {s.id for s in scenarios})
    if not unknown:
        return None
    message = f"baseline {path}: {len(unknown)} entr{'y' if len(unknown) == 1 else 'ies'} naming no known scenario: " \
              f"{', '.join(unknown[:10])}{' ...' if len(unknown) > 10 else ''}"
    if strict:
        raise GateError(message + " (an error with --strict)")
    return message


@dataclass(frozen=True, slots=True)
class SuiteOutcome:
    code: ExitCode
    ran: int  # scenarios that ran (not skipped)
    skipped: int
    message: str | None  # what to say loudly, if anything


def target_stopped(results: Sequence[ScenarioResult]) -> str | None:
    """The one line saying the target stopped answering during the run (``scenarios.liveness``), or None."""
    stop = next((r.stopped for r in results if r.stopped is not None), None)
    if stop is None:
        return None
    who = "client under test" if results[0].target_side == "client" else "target"
    return stop_line(stop, sum(1 for r in results if r.stopped is not None and r.id != stop.during), who)


def stop_line(stop: TargetStop, after: int, who: str = "target") -> str:
    """What the kit says, once, when the target (``who``: in listen mode, the client under test) stopped
    answering; ``after``: the scenarios not judged since."""
    running = f" (with {len(stop.running)} other scenario(s) running: {', '.join(stop.running[:10])})" \
        if stop.running else ""
    return (f"the {who} {stop.what} during {stop.during}{running}: {stop.after}, {stop.why}; "
            f"{after} scenario(s) after it not judged (error)")


def suite_outcome(results: Sequence[ScenarioResult], min_run: int) -> SuiteOutcome:
    """The exit code of a suite run: 3 if the target stopped answering or every scenario that ran errored,
    1 on failures, 2 if too few ran."""
    from .scenarios import Verdict

    ran = [r for r in results if r.verdict is not Verdict.SKIP]
    skipped = len(results) - len(ran)
    stopped = target_stopped(results)
    if stopped is not None:
        return SuiteOutcome(ExitCode.UNRUNNABLE, len(ran), skipped, stopped)
    errored = [r for r in ran if r.verdict is Verdict.ERROR]
    if ran and len(errored) == len(ran):
        why = Counter(r.reason or "; ".join(f.render() for f in r.failures) for r in errored).most_common()
        return SuiteOutcome(ExitCode.UNRUNNABLE, len(ran), skipped,
                            f"every scenario that ran errored ({len(ran)}): {why[0][0]}"
                            + (f" (and {len(why) - 1} other reasons)" if len(why) > 1 else ""))
    failed = [r for r in ran if r.verdict in (Verdict.FAIL, Verdict.ERROR, Verdict.XPASS)]
    if failed:
        return SuiteOutcome(ExitCode.FAILED, len(ran), skipped, None)
    if not ran:
        skips = Counter(r.reason for r in results).most_common()
        top = f"{skips[0][1]} x {skips[0][0]}" if skips else ""
        more = f"; {len(skips) - 1} other reasons" if len(skips) > 1 else ""
        return SuiteOutcome(ExitCode.USAGE if min_run > 0 else ExitCode.OK, 0, skipped,
                            f"NOTHING WAS TESTED: all {skipped} scenarios skipped ({top}{more}); "
                            "check --capabilities and -k")
    if len(ran) < min_run:
        return SuiteOutcome(ExitCode.USAGE, len(ran), skipped,
                            f"only {len(ran)} scenario(s) ran ({skipped} skipped); --min-run asks for {min_run}")
    return SuiteOutcome(ExitCode.OK, len(ran), skipped, None)


def show_failures(out: Console, failed: Sequence[Any], results_path: Path, limit: int = 20) -> None:
    """Explain the first ``limit`` failures, then say how many more there are and where."""
    for result in failed[:limit]:
        out.print(result.explain(), markup=False, highlight=False)
    if len(failed) > limit:
        out.print(f"and {len(failed) - limit} more failures (see {results_path})", markup=False, highlight=False)


def open_run(directory: Path, **fields: Any) -> Any:
    """The run directory's ``RunRecorder``; a directory that cannot be written (a full disk) is one line, exit 3."""
    from .output_files import output_error_line
    from .report import RunRecorder

    try:
        return RunRecorder(directory, **fields)
    except OSError as exc:
        raise GateError(output_error_line(exc), ExitCode.UNRUNNABLE) from None


def finish_run(recorder: Any, total: int, interruption: Any) -> Path:
    """Write run.json (``interruption``: the signal that cut the run, if one did) and the report; its index.
    An output error (a full disk) is one line naming the file, exit 3, as for the run's own files."""
    from .output_files import output_error_line
    from .report import build

    try:
        recorder.finish(time.time(), total, interruption)
        return build(recorder.run_dir)  # type: ignore[no-any-return]
    except OSError as exc:
        raise GateError(output_error_line(exc), ExitCode.UNRUNNABLE) from None
