"""A run stopped by SIGINT (Ctrl-C) or SIGTERM: what it judged stays, and it says it was cut short.

Theory of operation.  ``SignalCatcher`` is the one owner of the process's SIGINT
and SIGTERM handlers while a run goes on.  The first signal is noted (which,
when) and handed to whatever the run is doing at that moment (``on_signal``):
during the suite that is the cancellation of the suite's asyncio task, so the
scenarios in flight stop and nothing more starts; before or after the suite
nothing needs stopping and the note is all.  The run then cleans up as after
any run -- results.jsonl closed, pcaps waited for, run.json written with
``interrupted`` -- and exits with ``128 + signal`` (``exit_code``).  A second
signal means "stop now": the process exits at once with the same code, without
cleaning up (what was written stays: each results.jsonl line is whole).

``Interruption`` is what run.json says about it: the signal, when, how many
scenarios were selected and how many finished, and the ids that were running
(not judged, so not charged to their rules).

The exit code is the shell's convention for a process ended by a signal
(130 for SIGINT, 143 for SIGTERM), not the kit's 3 ("could not run the target"):
a CI job cancelled by its runner is neither a target's failure nor a broken
target, and 128+N is what CI systems and shells already read as "cancelled".
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from types import FrameType, TracebackType
from typing import Any, TypeVar

T = TypeVar("T")

CAUGHT = (signal.SIGINT, signal.SIGTERM)


def exit_code(signum: int) -> int:
    """The exit code of a run interrupted by ``signum``: 128 + its number (130 SIGINT, 143 SIGTERM)."""
    return 128 + signum


@dataclass(frozen=True, slots=True)
class Interruption:
    """A run cut short by a signal, as run.json records it (``interruption``)."""

    signal: str  # SIGINT or SIGTERM
    at: float  # Unix time the signal arrived
    selected: int  # scenarios (or client test cases) the run set out to judge
    finished: int  # of them, those with a results.jsonl line
    running: tuple[str, ...]  # ids in flight at the signal: not judged, not charged to their rules

    def to_json(self) -> dict[str, Any]:
        return {"signal": self.signal, "at": self.at, "selected": self.selected, "finished": self.finished,
                "running": list(self.running)}

    def line(self) -> str:
        """What the kit says on stderr, one line."""
        running = f"; not judged, in flight: {', '.join(self.running[:10])}" if self.running else ""
        more = " ..." if len(self.running) > 10 else ""
        return f"interrupted after {self.finished} of {self.selected} scenarios ({self.signal}){running}{more}"


class SignalCatcher:
    """Holds SIGINT and SIGTERM for the length of a ``with`` block (main thread only); see the module."""

    def __init__(self) -> None:
        self.signum: int | None = None
        self.at: float | None = None
        self._on_signal: Callable[[], None] | None = None
        self._before_exit: list[Callable[[], None]] = []
        self._saved: dict[int, Any] = {}

    def __enter__(self) -> SignalCatcher:
        for signum in CAUGHT:
            self._saved[signum] = signal.getsignal(signum)
            signal.signal(signum, self._handle)
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        for signum, handler in self._saved.items():
            signal.signal(signum, handler)
        self._saved.clear()

    @property
    def caught(self) -> bool:
        return self.signum is not None

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name if self.signum is not None else ""

    def on_signal(self, action: Callable[[], None] | None) -> None:
        """What the first signal does from now on (None: only note it); run at once if one came already."""
        self._on_signal = action
        if action is not None and self.caught:
            action()

    def before_exit(self, action: Callable[[], None]) -> None:
        """Something quick to do before a second signal's exit at once (kill a child, never wait for it)."""
        self._before_exit.append(action)

    def interruption(self, selected: int, finished: int, running: Iterable[str]) -> Interruption | None:
        """run.json's record of the signal, or None if none came or it came when every selected scenario had
        finished (the run is complete: only its clean-up was left)."""
        running = tuple(sorted(running))
        if self.signum is None or self.at is None or (finished >= selected and not running):
            return None
        return Interruption(signal=self.name, at=self.at, selected=selected, finished=finished, running=running)

    def exit_code(self, interruption: Interruption | None, default: int) -> int:
        """The run's exit code: 128 + the signal's number if it cut the run short (``interruption``), else
        ``default`` (the verdicts' code): a signal that came after the last scenario changes nothing."""
        if interruption is not None and self.signum is not None:
            return exit_code(self.signum)
        return default

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.signum is not None:  # the second: stop now, whatever is being cleaned up
            os.write(2, f"\n{signal.Signals(signum).name} again: exiting at once\n".encode())
            for action in self._before_exit:
                try:
                    action()
                except Exception:  # noqa: BLE001,S110 - exiting at once regardless
                    pass
            os._exit(exit_code(self.signum))
        self.signum, self.at = signum, time.time()
        os.write(2, f"\n{signal.Signals(signum).name}: stopping; what finished is kept "
                    "(again to exit at once)\n".encode())
        if self._on_signal is not None:
            self._on_signal()


def ignore_signals() -> None:
    """For worker processes of a run (the pcap writers): the run, not its workers, answers a signal, so a
    Ctrl-C sent to the whole process group does not lose the pcaps of scenarios already judged."""
    for signum in CAUGHT:
        signal.signal(signum, signal.SIG_IGN)


async def until_signal(work: Awaitable[T], catcher: SignalCatcher) -> T | None:
    """``work`` to its end, or None once ``catcher``'s first signal has cancelled it (the work's own
    cancellation closes what it opened: connections, children)."""
    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(work)

    def cancel() -> None:  # from a signal handler: the loop may be waiting in select(), so wake it
        loop.call_soon_threadsafe(task.cancel)

    catcher.on_signal(cancel)
    try:
        return await task
    except asyncio.CancelledError:
        if catcher.caught and not _cancelling_me():
            return None
        raise
    finally:
        catcher.on_signal(None)


def _cancelling_me() -> bool:
    """Whether the task running ``until_signal`` is itself being cancelled (then the cancellation is not ours)."""
    me = asyncio.current_task()
    return me is not None and me.cancelling() > 0
