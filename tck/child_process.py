"""Child processes the kit runs (a client under test in listen mode, a client of the interop grid, an ``exec:``
target): their output read to the end with only its tail kept, and every wait bounded.

Theory of operation.  In Python 3.11, asyncio's ``Process.wait()`` returns only once the child has exited
*and* its pipes have closed (``BaseSubprocessTransport`` wakes its waiters in ``_call_connection_lost``).
A pipe closes when every process holding its write end has exited and the reader has read it to EOF.  So
waiting for a killed child hangs for ever when nobody reads its output any more (``communicate()``
cancelled by a time-out leaves a StreamReader over its limit, which pauses the transport) or when a
grandchild still holds the pipe.  This is what hung ``make interop`` on a loaded machine: rsocket-py logs a
line for every frame of a stream it cancelled, against rsocket-rust's server, which goes on sending (F1).

Hence, for a child run to its end (``run_to_end``): the output is read through asyncio's protocol calls,
which have no flow control, keeping only its last ``keep`` bytes (memory stays bounded whatever the child
prints); the child's exit is known apart from its output's end; the child leads its own process group, so
a kill reaches the grandchildren too; and the wait for the output to close is bounded (``REAP_TIMEOUT``).
A child whose output the kit's session reads (an ``exec:`` target, ``reap``) is killed as a group too, and
its pipes are dropped when they do not close within the bound.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

REAP_TIMEOUT = 5.0  # seconds for a child's output to close after it ended, and again after its group was killed


@dataclass(frozen=True, slots=True)
class Finished:
    """How a child ended: its exit code (None: killed at the time-out), the tail of what it printed
    (stdout and stderr together), and whether its output was still open when the kit gave up on it."""

    code: int | None
    output: bytes
    output_left_open: bool = False


class _Child(asyncio.SubprocessProtocol):
    """A run-to-end child seen through asyncio's protocol calls: its output's tail (stdout and stderr are one
    pipe), when it exited, and when its output closed; no flow control, so the output is always read."""

    def __init__(self, keep: int) -> None:
        self.kept = bytearray()
        self.keep = keep
        self.exited = asyncio.Event()
        self.output_closed = asyncio.Event()

    def pipe_data_received(self, fd: int, data: bytes | bytearray) -> None:
        self.kept += data
        del self.kept[:-self.keep]  # only the end is shown: what the child printed last

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        self.output_closed.set()

    def process_exited(self) -> None:
        self.exited.set()


async def _within(event: asyncio.Event, seconds: float) -> bool:
    try:
        await asyncio.wait_for(event.wait(), seconds)
    except TimeoutError:
        return False
    return True


def _kill_group(pid: int, kill: Callable[[], None]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)  # the child leads its group (start_new_session)
    with contextlib.suppress(ProcessLookupError):
        kill()


def _drop_pipes(process: asyncio.subprocess.Process) -> None:
    transport = getattr(process, "_transport", None)  # no public way to drop a pipe nobody will close
    if transport is not None:
        transport.close()


async def reap(process: asyncio.subprocess.Process, grace: float) -> None:
    """End a child whose output someone else reads (an ``exec:`` target, already sent SIGTERM): ``grace``
    seconds to end, then its group killed, then at most ``REAP_TIMEOUT`` more; after that, or as soon as it
    has exited while its output stays unread (its reader may have stopped reading for good), its pipes are
    dropped."""
    try:
        await asyncio.wait_for(asyncio.shield(process.wait()), grace)
        return
    except TimeoutError:
        if process.returncode is not None:  # exited: only the unread output keeps wait() from returning
            _drop_pipes(process)
            return
        _kill_group(process.pid, process.kill)
    try:
        await asyncio.wait_for(process.wait(), REAP_TIMEOUT)
    except TimeoutError:
        _drop_pipes(process)


async def _exit_within(child: _Child, seconds: float, stop: asyncio.Event | None) -> bool:
    """Whether the child exited within ``seconds``, unless ``stop`` came first (then False, as at the time-out)."""
    if stop is None:
        return await _within(child.exited, seconds)
    exited, stopped = asyncio.ensure_future(child.exited.wait()), asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait((exited, stopped), timeout=seconds, return_when=asyncio.FIRST_COMPLETED)
    finally:
        exited.cancel()
        stopped.cancel()
    return child.exited.is_set()


async def run_to_end(argv: Sequence[str], env: Mapping[str, str], timeout: float, keep: int,
                     stop: asyncio.Event | None = None) -> Finished:
    """Run ``argv`` with stdin from /dev/null until it exits, or kill it (and its group) after ``timeout``
    seconds, or once ``stop`` is set (the caller saw enough: as at the time-out, the code is None).  Never
    waits longer than ``timeout + 2 * REAP_TIMEOUT``."""
    loop = asyncio.get_running_loop()
    transport, child = await loop.subprocess_exec(
        lambda: _Child(keep), *argv, env=dict(env), stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT, start_new_session=True)
    try:
        pid = transport.get_pid()

        def kill() -> None:
            transport.kill()

        code: int | None = None
        if await _exit_within(child, timeout, stop):
            code = transport.get_returncode()
        else:
            _kill_group(pid, kill)
        left_open = not await _within(child.output_closed, REAP_TIMEOUT)
        if left_open:  # a grandchild still holds the output: kill the group, and wait once more
            _kill_group(pid, kill)
            left_open = not await _within(child.output_closed, REAP_TIMEOUT)
        # A killed child's exit reaches the loop from its child watcher a moment after its output closed; closing
        # the transport before that polls (reaps) the child itself, and the watcher then logs "Unknown child
        # process pid ..., will report returncode 255" on the kit's output.
        await _within(child.exited, REAP_TIMEOUT)
        return Finished(code, bytes(child.kept), left_open)
    finally:
        transport.close()
