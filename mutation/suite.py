"""One mutant's test: the scenario suite against the embedded reference peer.

``python -m mutation.suite [--codec C] [--jobs N]`` exits 0 when every scenario passes
or skips, and 2 when the peer does not start.  At the first scenario that fails, warns
or errs it prints that scenario (the killer) and exits 1, or, as the leader of its own
process group (as the runner starts it), kills the group, itself and the peer, at once.  The mutant itself is the business of the
environment: the runner sets RSIO_MUTANT_MODULE and RSIO_MUTANT_SOURCE, and this
process adds ``overlay/`` to the PYTHONPATH of the peer it starts, not to its own, so
only the peer runs mutated code and the kit judging it is the kit as it is.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
from pathlib import Path

from rsio_tck.embedded import EmbeddedPeer, EmbeddedPeerError
from rsio_tck.scenarios import RunConfig, ScenarioResult, Verdict, load_directory, run_suite
from rsio_tck.selfcheck import freedom_only

OVERLAY = Path(__file__).resolve().parent / "overlay"
PASSING = (Verdict.PASS, Verdict.SKIP)


class Killed(Exception):
    def __init__(self, result: ScenarioResult) -> None:
        super().__init__(result.id)
        self.result = result


def peer_environment() -> None:
    """Make the peer process (which inherits os.environ) load the mutant through the overlay."""
    if os.environ.get("RSIO_MUTANT_MODULE"):
        os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(OVERLAY), os.environ.get("PYTHONPATH")]))


def killer_line(result: ScenarioResult) -> str:
    why = result.violations[0]["message"] if result.violations else result.reason
    return f"killed by {result.id} ({result.verdict.value}): {why[:300]}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mutation.suite")
    parser.add_argument("--codec", default="msgpack", choices=("msgpack", "varint"))
    parser.add_argument("--jobs", type=int, default=8, help="scenarios run concurrently")
    # Longer than the kit's default 2 s: on a loaded machine a late signal must not pass for a
    # killed mutant (a survivor is never wrong that way; a kill could be).
    parser.add_argument("--signal-timeout", type=float, default=5.0)
    parser.add_argument("--peer-arg", action="append", default=[], help="an argument for the peer (repeatable)")
    args = parser.parse_args(argv)
    scenarios = load_directory()

    def on_result(result: ScenarioResult) -> None:
        if result.verdict in PASSING or freedom_only(result):  # the peer's deliberate TCK-9 kills nothing
            return
        if os.getpgrp() == os.getpid():
            # Started by the runner as a process group of its own (this process and its peer):
            # the verdict is in, so end both at once rather than wait for a mutant that may spin
            # or ignore SIGTERM to wind down the scenarios still going.
            print(killer_line(result), flush=True)
            os.killpg(os.getpid(), signal.SIGKILL)
        raise Killed(result)  # ends the run: asyncio.run cancels the scenarios still going

    peer_environment()
    try:
        with EmbeddedPeer(codec=args.codec, extra=tuple(args.peer_arg)) as url:
            asyncio.run(run_suite(scenarios, RunConfig(target=url, codec=args.codec, signal_timeout=args.signal_timeout), jobs=args.jobs, on_result=on_result))
    except EmbeddedPeerError as exc:
        print(f"peer did not start: {str(exc).splitlines()[0]}")
        return 2
    except Killed as killed:
        print(killer_line(killed.result))
        return 1
    print(f"survived: {len(scenarios)} scenarios pass or skip")
    return 0


if __name__ == "__main__":
    sys.exit(main())
